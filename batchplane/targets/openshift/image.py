"""Building the quota webhook image in an OpenShift stack: pushed to the cluster's internal registry (pure data).

The internal registry stores images in ImageStreams, one per project; a push needs ``get``/``update`` on
``imagestreams/layers`` of the project (ClusterRole ``system:image-pusher``) and an existing ImageStream (the pusher
role cannot create one), and reaches the registry from outside through its default route once
``configs.imageregistry.operator.openshift.io/cluster`` sets ``spec.defaultRoute: true``. Inside the cluster the
registry is ``image-registry.openshift-image-registry.svc:5000/<project>/<image>``; a pod pulls from another
project when its service accounts hold ``system:image-puller`` there (OpenShift "Image Registry", "Accessing the
registry"; "Managing image streams"; "Exposing the registry":
https://docs.redhat.com/en/documentation/openshift_container_platform/4.18/html/registry/securing-exposing-registry).
Without ``webhook.build.registryHost`` the push host is the default route's, found at deploy time. The registry is ``InternalRegistry`` in ``batchplane/targets/openshift/deploy.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from batchplane.config.webhook import WebhookConfig

#: The image (ImageStream) name.
IMAGE_NAME = "quota-webhook"
#: The registry's in-cluster address (the Service of the image registry operator).
INTERNAL_REGISTRY = "image-registry.openshift-image-registry.svc:5000"
#: The ServiceAccount that pushes.
PUSHER = "batchplane-image-pusher"


@dataclass(frozen=True)
class OpenShiftImageBuild:
    """What the OpenShift image component needs.

    Attributes:
        project: the project (namespace) that holds the ImageStream, created by the stack.
        push_host: the registry route host ``pulumi up`` pushes to (``webhook.build.registryHost``), or ``None``: the
            host of Route ``default-route`` in ``openshift-image-registry``, read from the cluster at deploy time.
        tag: the pushed tag (``webhook.image``'s, or ``build`` when that is pinned by digest).
        platforms: BuildKit platforms.
        objects: the namespace, ImageStream, pusher ServiceAccount and its token Secret, and the RoleBindings
            (pusher; the webhook namespace's service accounts as pullers), in creation order.
        pull_prefix: ``<internal registry>/<project>/quota-webhook`` (the Deployment adds ``@<digest>``).
        in_cluster: built by a BuildConfig binary build in the cluster (then :attr:`objects` holds the BuildConfig
            instead of the pusher ServiceAccount and token). Defaults to false.
    """

    project: str
    push_host: str | None
    tag: str
    platforms: list[str]
    objects: list[dict[str, Any]]
    pull_prefix: str
    in_cluster: bool = False


def openshift_image_build(webhook: WebhookConfig) -> OpenShiftImageBuild | None:
    """The build of ``webhook.build: {registry: openshift}``, or None when the stack does not build on OpenShift."""
    build = webhook.build
    if build is None or build.registry != "openshift":
        return None
    project = build.repository
    labels = {"app.kubernetes.io/managed-by": "batchplane", "app.kubernetes.io/component": "webhook-image"}

    def binding(name: str, role: str, subject: dict[str, str]) -> dict[str, Any]:
        return {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": name, "namespace": project, "labels": labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [subject],
        }

    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": project, "labels": labels}},
        {
            "apiVersion": "image.openshift.io/v1",
            "kind": "ImageStream",
            "metadata": {"name": IMAGE_NAME, "namespace": project, "labels": labels},
            "spec": {"lookupPolicy": {"local": False}},
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": PUSHER, "namespace": project, "labels": labels},
        },
        binding(
            f"{PUSHER}",
            "system:image-pusher",
            {"kind": "ServiceAccount", "name": PUSHER, "namespace": project},
        ),
        binding(
            f"{webhook.namespace}-image-puller",
            "system:image-puller",
            {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Group",
                "name": f"system:serviceaccounts:{webhook.namespace}",
            },
        ),
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/service-account-token",
            "metadata": {
                "name": PUSHER,
                "namespace": project,
                "labels": labels,
                "annotations": {"kubernetes.io/service-account.name": PUSHER},
            },
        },
    ]
    reference = webhook.resolved_image.split("@", 1)[0]
    name, _, tag = reference.rpartition(":")
    if not name or "/" in tag:
        tag = "build"
    if (
        build.in_cluster
    ):  # a BuildConfig binary build: no pusher, no route; the builder pushes to the ImageStream
        objects = [o for o in objects if o["kind"] not in ("ServiceAccount", "Secret")]
        objects = [o for o in objects if o["metadata"]["name"] != PUSHER]
        objects.append(build_config(project, tag, labels))
    return OpenShiftImageBuild(
        project=project,
        push_host=build.registry_host,
        tag=tag,
        platforms=list(build.platforms),
        objects=objects,
        pull_prefix=f"{INTERNAL_REGISTRY}/{project}/{IMAGE_NAME}",
        in_cluster=build.in_cluster,
    )


def build_config(project: str, tag: str, labels: dict[str, str]) -> dict[str, Any]:
    """The ``build.openshift.io/v1`` BuildConfig of an in-cluster build (``webhook.build.inCluster``): a binary source
    (the context ``pulumi up`` uploads), the Docker strategy with ``webhook/Dockerfile``, output the ImageStream tag
    ``quota-webhook:<tag>``, one build at a time (OpenShift "Builds using BuildConfig": "Binary (local) source",
    "Docker build"; the API of openshift/api ``build/v1/types.go``)."""
    return {
        "apiVersion": "build.openshift.io/v1",
        "kind": "BuildConfig",
        "metadata": {"name": IMAGE_NAME, "namespace": project, "labels": labels},
        "spec": {
            "runPolicy": "Serial",
            "source": {"type": "Binary", "binary": {}},
            "strategy": {"type": "Docker", "dockerStrategy": {"dockerfilePath": "webhook/Dockerfile"}},
            "output": {"to": {"kind": "ImageStreamTag", "name": f"{IMAGE_NAME}:{tag}"}},
        },
    }

"""OpenShiftWebhookImage: build the quota webhook image and push it to the cluster's internal registry.

Children (``parent=self``, named ``<name>-<role>``), through the cluster's Kubernetes provider: the project's
Namespace, the ``quota-webhook`` ImageStream, the pusher ServiceAccount, its ``system:image-pusher`` RoleBinding,
a ``system:image-puller`` RoleBinding for the webhook namespace's service accounts, the pusher's token Secret and
a :class:`~batchplane.operators.readiness_gate.ReadinessGate` that outputs the token (secret); then
``pulumi_docker_build.Image`` pushing ``<route host>/<project>/quota-webhook:<tag>`` with that token.

:attr:`OpenShiftWebhookImage.ref` is the in-cluster reference pinned by digest
(``image-registry.openshift-image-registry.svc:5000/<project>/quota-webhook@sha256:…``).
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

import pulumi
import pulumi_docker_build as docker_build

from batchplane.kubernetes_object import KubernetesObject
from batchplane.operators.readiness_gate import ReadinessGate
from batchplane.targets.openshift.image import IMAGE_NAME, PUSHER, OpenShiftImageBuild

TYPE_TOKEN = "batchplane:openshift:WebhookImage"

_ROLES = {
    "Namespace": "namespace",
    "ImageStream": "imagestream",
    "ServiceAccount": "pusher",
    "Secret": "pusher-token",
}


class OpenShiftWebhookImageArgs(TypedDict):
    """Inputs of :class:`OpenShiftWebhookImage`."""

    build: OpenShiftImageBuild
    """Required. From :func:`batchplane.targets.openshift.image.openshift_image_build`."""
    context: str
    """Required. The Docker build context: the repository root (holds ``webhook/Dockerfile``)."""
    kube_context: pulumi.Input[str | None]
    """Required (``None`` = current context). The provider's kubeconfig context, for the token gate."""
    kubeconfig: NotRequired[pulumi.Input[str | None]]
    """The provider's kubeconfig (content or path), for the token gate. Defaults to none."""


class OpenShiftWebhookImage(pulumi.ComponentResource):
    """The webhook image, pushed to the internal registry by the stack.

    Attributes:
        resources: the Kubernetes objects by role.
        token_gate: waits for the pusher's token and outputs it.
        image: the BuildKit image.
        ref: the in-cluster image reference pinned by digest.
    """

    resources: dict[str, pulumi.Resource]
    token_gate: ReadinessGate
    image: docker_build.Image
    ref: pulumi.Output[str]

    def __init__(
        self, name: str, args: OpenShiftWebhookImageArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        build = args["build"]
        self.resources = {}
        namespace: list[pulumi.Resource] = []
        for obj in build.objects:
            kind = obj["kind"]
            role = _ROLES.get(kind) or obj["metadata"]["name"]
            deps = namespace + ([self.resources["pusher"]] if kind == "Secret" else [])
            resource = KubernetesObject(
                f"{name}-{role}", obj, opts=pulumi.ResourceOptions(parent=self, depends_on=deps)
            )
            self.resources[role] = resource
            if kind == "Namespace":
                namespace = [resource]
        self.token_gate = ReadinessGate(
            f"{name}-pusher-token-ready",
            {
                "gate": "service-account-token",
                "namespace": build.project,
                "secret": PUSHER,
                "timeout_seconds": 120,
                "interval_seconds": 2,
                "context": args["kube_context"],
                "kubeconfig": args.get("kubeconfig"),
            },
            pulumi.ResourceOptions(parent=self, depends_on=[self.resources["pusher-token"]]),
        )
        context = args["context"]
        self.image = docker_build.Image(
            f"{name}-image",
            push=True,
            context=docker_build.BuildContextArgs(location=context),
            dockerfile=docker_build.DockerfileArgs(location=f"{context}/webhook/Dockerfile"),
            platforms=[docker_build.Platform(platform) for platform in build.platforms],
            tags=[f"{build.push_host}/{build.project}/{IMAGE_NAME}:{build.tag}"],
            registries=[
                {
                    "address": build.push_host,
                    "username": PUSHER,
                    "password": pulumi.Output.secret(self.token_gate.token),
                }
            ],
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[self.resources["imagestream"], *self.resources.values()]
            ),
        )
        self.ref = pulumi.Output.concat(build.pull_prefix, "@", self.image.digest)
        self.register_outputs({"ref": self.ref})

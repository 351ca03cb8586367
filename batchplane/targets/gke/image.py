"""Building the quota webhook image in a GKE stack: an Artifact Registry repository the stack owns, and the push.

Plain keyword arguments for ``gcp.artifactregistry.Repository`` (pulumi-gcp 10.2.0) and the parts of the
image reference; the registry (``ArtifactRegistry`` in ``batchplane/targets/gke/deploy.py``) and the one image component build with ``pulumi_docker_build.Image``
(BuildKit) and the Deployment runs the pushed image by digest. Artifact Registry Docker hosts are
``<location>-docker.pkg.dev`` and images ``<host>/<project>/<repository>/<image>:<tag>`` (Artifact Registry
"Push and pull images"); pushing with an OAuth access token uses the user name ``oauth2accesstoken``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from batchplane.config.webhook import WebhookConfig, WebhookImageBuild
from batchplane.targets.gke.config import GkeTarget

#: The image name inside the repository.
IMAGE_NAME = "quota-webhook"
#: Artifact Registry's user name for OAuth access tokens.
TOKEN_USER = "oauth2accesstoken"
#: The label the stack puts on the repository it creates: which Pulumi stack owns it (``batchplane preflight``
#: reports a repository of the same id the stack does not own: ``pulumi up`` would fail with 409).
OWNER_LABEL = "batchplane-stack"
#: The suffix of the default repository id, after the cluster name.
REPOSITORY_SUFFIX = "-images"

_LABEL_VALUE_MAX = 63


def default_repository_id(target: GkeTarget) -> str:
    """The repository id when ``webhook.build.repository`` is not given: ``<clusterName>-images``.

    One repository per cluster, so two stacks (or a MultiKueue manager and its workers) in one project and region
    never declare the same repository, whose second creation fails with 409 ``ALREADY_EXISTS``. GKE cluster names
    (``[a-z]([-a-z0-9]*[a-z0-9])?``, at most 40 characters) plus the suffix always satisfy Artifact Registry's
    repository id rules: lowercase letters, digits and hyphens, starting with a letter, not ending with a hyphen, at
    most 63 characters (Artifact Registry "Create standard repositories", cloud.google.com/artifact-registry/docs/
    repositories/create-repos; REST ``projects.locations.repositories.create`` ``repositoryId``).
    """
    return f"{target.cluster_name}{REPOSITORY_SUFFIX}"


def repository_id(target: GkeTarget, build: WebhookImageBuild) -> str:
    """``webhook.build.repository`` when the stack sets it, else :func:`default_repository_id`."""
    if "repository" in build.model_fields_set:
        return build.repository
    return default_repository_id(target)


def owner_label(stack: str) -> str:
    """The :data:`OWNER_LABEL` value of a Pulumi stack name: lowercased, every character a label value may not hold
    (lowercase letters, digits, ``_`` and ``-``; at most 63 characters — Resource Manager "Requirements for labels")
    replaced by ``-``, cut to 63."""
    text = "".join(
        c if c.isascii() and (c.isdigit() or c.islower() or c in "-_") else "-" for c in stack.lower()
    )
    return text[:_LABEL_VALUE_MAX]


@dataclass(frozen=True)
class ImageBuild:
    """Everything the webhook image component needs.

    Attributes:
        repository: ``gcp.artifactregistry.Repository`` keyword arguments.
        host: the registry host, ``<region>-docker.pkg.dev``.
        tag: the pushed tag (the version of ``webhook.image``, or ``build`` when it is pinned by digest).
        platforms: BuildKit platforms, e.g. ``["linux/amd64"]``.
    """

    repository: dict[str, Any]
    host: str
    tag: str
    platforms: list[str]


def image_build(target: GkeTarget, webhook: WebhookConfig) -> ImageBuild | None:
    """The build of ``webhook.build`` on a GKE target, or None when the stack does not build the image."""
    build = webhook.build
    if build is None:
        return None
    region = target.cluster_region()
    repository: dict[str, Any] = {
        "repository_id": repository_id(target, build),
        "location": region,
        "format": "DOCKER",
        "description": "Images built by the Batchplane stack (the quota webhook)",
    }
    if target.project is not None:
        repository["project"] = target.project
    reference = webhook.resolved_image.split("@", 1)[0]
    name, _, tag = reference.rpartition(":")
    if not name or "/" in tag:
        tag = "build"
    return ImageBuild(repository, f"{region}-docker.pkg.dev", tag, list(build.platforms))

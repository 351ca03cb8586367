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

from batchplane.config.webhook import WebhookConfig
from batchplane.targets.gke.config import GkeTarget

#: The image name inside the repository.
IMAGE_NAME = "quota-webhook"
#: Artifact Registry's user name for OAuth access tokens.
TOKEN_USER = "oauth2accesstoken"


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
        "repository_id": build.repository,
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

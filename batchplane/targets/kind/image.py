"""Building the quota webhook image in a kind stack: built into the local Docker engine, loaded into the nodes.

kind nodes pull nothing from the machine's Docker engine: an image built locally reaches them only through
``kind load docker-image <image> --name <cluster>`` (kind "Quick Start", Loading an Image Into Your Cluster). The
Deployment then runs it by tag with ``imagePullPolicy: IfNotPresent`` (a tag that is not ``latest``), which is
what the webhook's Deployment uses. Plain data for the registry (``KindNodes`` in ``batchplane/targets/kind/deploy.py``).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from batchplane.config.webhook import WebhookConfig
from batchplane.targets.kind.config import KindTarget


@dataclass(frozen=True)
class KindImageBuild:
    """What the kind image component needs.

    Attributes:
        tag: the image name and tag to build and load (``webhook.image``).
        cluster_name: the kind cluster (``kind load … --name``).
        platforms: BuildKit platforms (the local engine's own architecture is the usual one).
        load_command: the shell command that loads the image into every node of the cluster.
    """

    tag: str
    cluster_name: str
    platforms: list[str]
    load_command: str


def kind_image_build(target: KindTarget, webhook: WebhookConfig) -> KindImageBuild | None:
    """The build of ``webhook.build: {registry: kind}`` on a kind target, or None when the stack does not build."""
    build = webhook.build
    if build is None or build.registry != "kind":
        return None
    command = f"kind load docker-image {shlex.quote(webhook.resolved_image)} --name {shlex.quote(target.cluster_name)}"
    return KindImageBuild(webhook.resolved_image, target.cluster_name, list(build.platforms), command)

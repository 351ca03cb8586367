"""The kind platform's Pulumi half (:class:`~batchplane.targets.deploy.PlatformDeploy`): a provider for the kind
context, the shared Helm operators, and :class:`KindNodes`, the "registry" that is the cluster's nodes.

:class:`KindNodes` builds into the local Docker engine (``load: true``, tagged ``webhook.image``, never pushed) and
then runs ``kind load docker-image <image> --name <cluster>`` (``<name>-load``, ``pulumi_command.local.Command``),
replaced — so run again — whenever the build context changes (``triggers``: the image's ``contextHash``). The
reference is the tag, known only once the load has run, so the Deployment starts after the nodes have the image.
"""

from __future__ import annotations

import pulumi
import pulumi_command as command
import pulumi_docker_build as docker_build

from batchplane.config.webhook import WebhookConfig
from batchplane.targets.deploy import (
    ClusterConnection,
    ClusterNeeds,
    ImagePush,
    ImageRegistry,
    Placement,
    PlatformDeploy,
)
from batchplane.targets.kind.image import KindImageBuild, kind_image_build
from batchplane.targets.kind.platform import KindPlatform


class KindNodes(ImageRegistry):
    """The kind cluster's nodes: build locally, ``kind load`` into every node."""

    legacy_type = "batchplane:kind:WebhookImage"
    reference_tracks_build = False  # the loaded tag stays the same across rebuilds

    def __init__(self, build: KindImageBuild) -> None:
        self.build = build
        self.load: command.local.Command | None = None

    def prepare(self, name: str, parent: pulumi.Resource) -> ImagePush:
        return ImagePush(tags=[self.build.tag], push=False, load=True, platforms=list(self.build.platforms))

    def reference(self, name: str, image: docker_build.Image, parent: pulumi.Resource) -> pulumi.Output[str]:
        self.load = command.local.Command(
            f"{name}-load",
            create=self.build.load_command,
            triggers=[image.context_hash],
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[image]),
        )
        tag = self.build.tag
        return self.load.stdout.apply(lambda _: tag)


class KindDeploy(PlatformDeploy):
    """A local kind cluster."""

    platform: KindPlatform

    def declare_cluster(self, needs: ClusterNeeds, place: Placement) -> ClusterConnection:
        return self.connect_existing(place)

    def image_registry(self, webhook: WebhookConfig, connection: ClusterConnection) -> ImageRegistry | None:
        build = kind_image_build(self.platform.target, webhook)
        return None if build is None else KindNodes(build)

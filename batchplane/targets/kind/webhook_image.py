"""KindWebhookImage: build the quota webhook image locally and load it into a kind cluster's nodes.

Children (``parent=self``, named ``<name>-<role>``):

* ``<name>-image`` — ``pulumi_docker_build.Image`` (BuildKit) from ``webhook/Dockerfile`` with the repository root
  as context, ``load: true`` (into the local Docker engine, tagged ``webhook.image``), never pushed;
* ``<name>-load`` — ``pulumi_command.local.Command`` running ``kind load docker-image <image> --name <cluster>``,
  replaced (so run again) whenever the build context changes (``triggers``: the image's ``contextHash``).

:attr:`KindWebhookImage.ref` is the tag, known only once the load has run: give it to
:class:`batchplane.components.quota_webhook.QuotaWebhook` so the Deployment starts after the nodes have the image.
"""

from __future__ import annotations

from typing import TypedDict

import pulumi
import pulumi_command as command
import pulumi_docker_build as docker_build

from batchplane.targets.kind.image import KindImageBuild

TYPE_TOKEN = "batchplane:kind:WebhookImage"


class KindWebhookImageArgs(TypedDict):
    """Inputs of :class:`KindWebhookImage`."""

    build: KindImageBuild
    """Required. From :func:`batchplane.targets.kind.image.kind_image_build`."""
    context: str
    """Required. The Docker build context: the repository root (holds ``webhook/Dockerfile``)."""


class KindWebhookImage(pulumi.ComponentResource):
    """The webhook image, built locally and loaded into the kind cluster.

    Attributes:
        image: the BuildKit image (loaded into the local engine).
        load: the ``kind load docker-image`` command.
        ref: the image tag, resolved after the load.
    """

    image: docker_build.Image
    load: command.local.Command
    ref: pulumi.Output[str]

    def __init__(
        self, name: str, args: KindWebhookImageArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        build = args["build"]
        context = args["context"]
        self.image = docker_build.Image(
            f"{name}-image",
            push=False,
            load=True,
            context=docker_build.BuildContextArgs(location=context),
            dockerfile=docker_build.DockerfileArgs(location=f"{context}/webhook/Dockerfile"),
            platforms=[docker_build.Platform(platform) for platform in build.platforms],
            tags=[build.tag],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.load = command.local.Command(
            f"{name}-load",
            create=build.load_command,
            triggers=[self.image.context_hash],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.image]),
        )
        self.ref = self.load.stdout.apply(lambda _: build.tag)
        self.register_outputs({"ref": self.ref})

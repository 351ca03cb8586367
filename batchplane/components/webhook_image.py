"""WebhookImage: build the quota webhook image with BuildKit and hand it to a registry — one component for every
platform, parameterised by the registry the platform supplies (:class:`~batchplane.targets.deploy.ImageRegistry`).

Children (``parent=self``, named ``<name>-<role>``): what the registry declares before the build (GKE: the Artifact
Registry ``<name>-repository``; OpenShift: the project, ImageStream, pusher ServiceAccount, RoleBindings, token
Secret and ``<name>-pusher-token-ready`` gate), the ``pulumi_docker_build.Image`` ``<name>-image`` from
``webhook/Dockerfile`` with the project directory as context, and what follows the build (kind: the ``kind load``
command ``<name>-load``).

:attr:`WebhookImage.ref` is what the Deployment runs: the pushed image by digest (Artifact Registry, the internal
registry's in-cluster address) or the loaded tag (kind), known once the image is where the nodes pull it.

**Deployed stacks keep their resources.** Each platform had its own component before (type tokens
``batchplane:gke:WebhookImage``, ``batchplane:kind:WebhookImage``, ``batchplane:openshift:WebhookImage``); this one
carries ``Alias(type_=<that token>)`` — combined with every alias the caller passes (the single-cluster layout's
``Alias(parent=ROOT_STACK_RESOURCE)``) — and keeps the child names, so the engine maps every old URN to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import pulumi
import pulumi_docker_build as docker_build

from batchplane.targets.deploy import ImageRegistry

TYPE_TOKEN = "batchplane:image:WebhookImage"


class WebhookImageArgs(TypedDict):
    """Inputs of :class:`WebhookImage`."""

    registry: ImageRegistry
    """Required. Where the image goes (a platform's :meth:`~batchplane.targets.deploy.PlatformDeploy.image_registry`)."""
    context: str
    """Required. The Docker build context: the project directory (holds ``webhook/Dockerfile``)."""


def legacy_aliases(legacy_type: str, given: Sequence[object]) -> list[pulumi.Alias]:
    """``Alias(type_=legacy_type)`` and, for each alias the caller gives, the same alias with the legacy type: the
    engine applies each alias on its own, so the old type under an old parent needs an alias of both."""
    out = [pulumi.Alias(type_=legacy_type)]
    for alias in given:
        if isinstance(alias, pulumi.Alias):
            out.append(
                pulumi.Alias(
                    name=alias.name,
                    type_=legacy_type,
                    parent=alias.parent,
                    stack=alias.stack,
                    project=alias.project,
                )
            )
    return out


class WebhookImage(pulumi.ComponentResource):
    """The webhook image, built by the stack and put where the cluster pulls it.

    Attributes:
        image: the BuildKit image, or None when the registry builds in the cluster (``build_in_cluster``).
        ref: the image reference the Deployment runs (pinned by digest, or the loaded tag on kind).
        revision: what changes with every rebuild when :attr:`ref` does not (kind's tag): the build's context hash
            (``docker_build.Image.context_hash``); None where :attr:`ref` is a digest.
    """

    image: docker_build.Image | None
    ref: pulumi.Output[str]
    revision: pulumi.Output[str] | None

    def __init__(self, name: str, args: WebhookImageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        registry = args["registry"]
        given = list(opts.aliases or []) if opts is not None else []
        opts = pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(aliases=legacy_aliases(registry.legacy_type, given))
        )
        super().__init__(TYPE_TOKEN, name, {}, opts)
        context = args["context"]
        in_cluster = registry.build_in_cluster(name, str(context), self)
        if (
            in_cluster is not None
        ):  # built by the cluster (OpenShift binary build): no Docker, no docker-build Image
            self.image = None
            self.ref = in_cluster
            self.revision = None
            self.register_outputs({"ref": self.ref})
            return
        push = registry.prepare(name, self)
        kwargs: dict[str, object] = {}
        if push.load is not None:
            kwargs["load"] = push.load
        if push.registries is not None:
            kwargs["registries"] = push.registries
        self.image = docker_build.Image(  # type: ignore[call-overload]
            f"{name}-image",
            push=push.push,
            context=docker_build.BuildContextArgs(location=context),
            dockerfile=docker_build.DockerfileArgs(location=f"{context}/webhook/Dockerfile"),
            platforms=[docker_build.Platform(platform) for platform in push.platforms],
            tags=push.tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=push.depends_on),
            **kwargs,
        )
        self.ref = registry.reference(name, self.image, self)
        self.revision = None if registry.reference_tracks_build else self.image.context_hash
        self.register_outputs({"ref": self.ref})

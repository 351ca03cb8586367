"""WebhookImage: build the quota webhook image and push it to an Artifact Registry repository the stack owns.

Children (``parent=self``, named ``<name>-<role>``):

* ``<name>-repository`` — ``gcp.artifactregistry.Repository`` (Docker, the cluster's region);
* ``<name>-image`` — ``pulumi_docker_build.Image`` (BuildKit) from ``webhook/Dockerfile`` with the repository
  root as context, pushed as ``<region>-docker.pkg.dev/<project>/<repository>/quota-webhook:<tag>`` with an
  OAuth access token of the GCP provider's credentials.

:attr:`WebhookImage.ref` is the pushed image pinned by digest (``...@sha256:...``): give it to
:class:`batchplane.components.quota_webhook.QuotaWebhook` so the Deployment runs exactly what was built.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

import pulumi
import pulumi_docker_build as docker_build
import pulumi_gcp as gcp

from batchplane.targets.gke.image import IMAGE_NAME, TOKEN_USER, ImageBuild

TYPE_TOKEN = "batchplane:gke:WebhookImage"


class WebhookImageArgs(TypedDict):
    """Inputs of :class:`WebhookImage`."""

    build: ImageBuild
    """Required. From :func:`batchplane.targets.gke.image.image_build`."""
    context: str
    """Required. The Docker build context: the repository root (holds ``webhook/Dockerfile``)."""
    project: NotRequired[pulumi.Input[str] | None]
    """The GCP project of the repository. Defaults to the GCP provider's project."""


class WebhookImage(pulumi.ComponentResource):
    """The webhook image, built and pushed by the stack.

    Attributes:
        repository: the Artifact Registry repository.
        image: the BuildKit image.
        ref: the pushed image reference, pinned by digest.
    """

    repository: gcp.artifactregistry.Repository
    image: docker_build.Image
    ref: pulumi.Output[str]

    def __init__(self, name: str, args: WebhookImageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        build = args["build"]
        self.repository = gcp.artifactregistry.Repository(
            f"{name}-repository", **build.repository, opts=pulumi.ResourceOptions(parent=self)
        )
        client = gcp.organizations.get_client_config_output(opts=pulumi.InvokeOutputOptions(parent=self))
        project = args.get("project") or build.repository.get("project") or client.project
        tag = pulumi.Output.concat(
            build.host, "/", project, "/", self.repository.repository_id, f"/{IMAGE_NAME}:{build.tag}"
        )
        context = args["context"]
        self.image = docker_build.Image(
            f"{name}-image",
            push=True,
            context=docker_build.BuildContextArgs(location=context),
            dockerfile=docker_build.DockerfileArgs(location=f"{context}/webhook/Dockerfile"),
            platforms=[docker_build.Platform(platform) for platform in build.platforms],
            tags=[tag],
            registries=[
                {
                    "address": build.host,
                    "username": TOKEN_USER,
                    "password": pulumi.Output.secret(client.access_token),
                }
            ],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.repository]),
        )
        self.ref = self.image.ref
        self.register_outputs({"ref": self.ref})

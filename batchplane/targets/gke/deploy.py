"""The GKE platform's Pulumi half (:class:`~batchplane.targets.deploy.PlatformDeploy`): the cluster and its
provider, and the Artifact Registry the webhook image is pushed to.

* :meth:`GkeDeploy.declare_cluster` — :class:`~batchplane.targets.gke.cluster.GkeCluster` (``<cluster>-gke``: the
  cluster, its system and GPU pools, private nodes' router, NAT and webhook firewall rule) and the Kubernetes
  provider (``<cluster>-k8s``) from the kubeconfig it outputs, after the system pool exists;
* operators: the shared Helm path (the platform's default tolerations put them on the system pool);
* :class:`ArtifactRegistry` — ``<name>-repository`` (``gcp.artifactregistry.Repository``, Docker, the cluster's
  region, id ``<clusterName>-images`` unless ``webhook.build.repository`` says, labelled ``batchplane-stack: <stack>``) and the push as ``<region>-docker.pkg.dev/<project>/<repository>/quota-webhook:<tag>`` with an OAuth
  access token of the GCP provider's credentials; ``<name>-repository-reader``
  (``gcp.artifactregistry.RepositoryIamMember``): ``roles/artifactregistry.reader`` on that repository for the
  account the system pool runs as (:meth:`~batchplane.targets.gke.cluster.GkeCluster.system_pool_member`), so the
  nodes can pull the image. The reference is the pushed image pinned by digest, known once the grant exists: the
  webhook Deployment waits for both.
"""

from __future__ import annotations

import pulumi
import pulumi_docker_build as docker_build
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from batchplane.config.webhook import WebhookConfig
from batchplane.targets.deploy import (
    ClusterConnection,
    ClusterNeeds,
    ImagePush,
    ImageRegistry,
    Placement,
    PlatformDeploy,
)
from batchplane.targets.gke.cluster import GkeCluster, GkeClusterArgs
from batchplane.targets.gke.config import GkeTarget
from batchplane.targets.gke.image import (
    IMAGE_NAME,
    OWNER_LABEL,
    TOKEN_USER,
    ImageBuild,
    image_build,
    owner_label,
)
from batchplane.targets.gke.network import webhook_ports
from batchplane.targets.gke.platform import GkePlatform
from batchplane.targets.gke.resources import REGISTRY_READER_ROLE


def cluster_webhook_ports(needs: ClusterNeeds) -> list[int]:
    """:func:`~batchplane.targets.gke.network.webhook_ports` for what the stack installs (Kueue, the training
    operator, the quota webhook): the ports the control plane must reach on private nodes."""
    ops = needs.operators
    return webhook_ports(
        kueue=ops is not None and ops.kueue.enabled,
        quota_webhook_port=needs.webhook.port if needs.webhook_enabled else None,
        training=ops is not None and ops.training.kind != "none",
    )


def gke_cluster_args(target: GkeTarget, needs: ClusterNeeds) -> GkeClusterArgs:
    """The :class:`~batchplane.targets.gke.cluster.GkeCluster` inputs of a validated GKE target."""
    ops = needs.operators
    return GkeClusterArgs.from_target(
        target,
        environment=needs.environment,
        ray_addon=ops is not None and ops.gke_ray_addon,
        webhook_ports=cluster_webhook_ports(needs),
    )


class ArtifactRegistry(ImageRegistry):
    """An Artifact Registry repository the stack owns, pushed to with the GCP provider's access token.

    Args:
        build: the repository and push (:func:`~batchplane.targets.gke.image.image_build`).
        project: the project of the repository. Defaults to the repository's, else the GCP provider's.
        reader: the IAM member (``serviceAccount:<email>``) that pulls the image — the system pool's nodes; it gets
            ``roles/artifactregistry.reader`` on the repository. Defaults to none (no grant).
    """

    legacy_type = "batchplane:gke:WebhookImage"

    def __init__(
        self,
        build: ImageBuild,
        project: pulumi.Input[str] | None = None,
        reader: pulumi.Input[str] | None = None,
    ) -> None:
        self.build = build
        self.project = project
        self.reader = reader
        self.repository: gcp.artifactregistry.Repository | None = None
        self.reader_grant: gcp.artifactregistry.RepositoryIamMember | None = None

    def prepare(self, name: str, parent: pulumi.Resource) -> ImagePush:
        build = self.build
        labels = {**build.repository.get("labels", {}), OWNER_LABEL: owner_label(pulumi.get_stack())}
        self.repository = gcp.artifactregistry.Repository(
            f"{name}-repository",
            **{**build.repository, "labels": labels},
            opts=pulumi.ResourceOptions(parent=parent),
        )
        client = gcp.organizations.get_client_config_output(opts=pulumi.InvokeOutputOptions(parent=parent))
        project = self.project or build.repository.get("project") or client.project
        if self.reader is not None:
            self.reader_grant = gcp.artifactregistry.RepositoryIamMember(
                f"{name}-repository-reader",
                project=project,
                location=build.repository["location"],
                repository=self.repository.repository_id,
                role=REGISTRY_READER_ROLE,
                member=self.reader,
                opts=pulumi.ResourceOptions(parent=parent),
            )
        tag = pulumi.Output.concat(
            build.host, "/", project, "/", self.repository.repository_id, f"/{IMAGE_NAME}:{build.tag}"
        )
        return ImagePush(
            tags=[tag],
            push=True,
            platforms=list(build.platforms),
            registries=[
                {
                    "address": build.host,
                    "username": TOKEN_USER,
                    "password": pulumi.Output.secret(client.access_token),
                }
            ],
            depends_on=[self.repository],
        )

    def reference(self, name: str, image: docker_build.Image, parent: pulumi.Resource) -> pulumi.Output[str]:
        """The pushed image by digest, once the nodes may pull it (the reader grant exists): whatever runs it
        waits for the grant too."""
        grant = self.reader_grant
        if grant is None:
            return image.ref
        return pulumi.Output.all(image.ref, grant.id).apply(lambda parts: str(parts[0]))


class GkeDeploy(PlatformDeploy):
    """The GKE cluster Batchplane declares."""

    platform: GkePlatform

    def declare_cluster(self, needs: ClusterNeeds, place: Placement) -> ClusterConnection:
        cluster = GkeCluster(
            place.role("gke"), gke_cluster_args(self.platform.target, needs), opts=place.options()
        )
        provider = k8s.Provider(
            place.role("k8s"),
            kubeconfig=cluster.kubeconfig,
            opts=place.options(depends_on=[cluster.system_pool]),
        )
        return ClusterConnection(
            provider,
            kubeconfig=cluster.kubeconfig,
            context=None,
            cluster=cluster,
            name=cluster.cluster.name,
            endpoint=cluster.cluster.endpoint,
        )

    def image_registry(self, webhook: WebhookConfig, connection: ClusterConnection) -> ImageRegistry | None:
        build = image_build(self.platform.target, webhook)
        if build is None:
            return None
        cluster = connection.cluster
        reader = cluster.system_pool_member() if isinstance(cluster, GkeCluster) else None
        return ArtifactRegistry(build, self.platform.target.project, reader)

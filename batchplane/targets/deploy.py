"""The Pulumi half of the platform interface: what a platform declares for one cluster.

:class:`~batchplane.targets.platform.Platform` (pure) decides; :class:`PlatformDeploy` declares. Each platform
implements it once in ``batchplane/targets/<platform>/deploy.py``:

* :meth:`PlatformDeploy.declare_cluster` — the cluster (GKE) or none, and the Kubernetes provider, returned as one
  :class:`ClusterConnection` (provider + the kubeconfig and context it was built from), so every readiness gate
  polls the cluster the provider deploys to;
* :meth:`PlatformDeploy.declare_operators` — the operator install path: Helm installs
  (:class:`~batchplane.operators.helm_installs.Operators`, the default here) or OLM on OpenShift, ending in the Kueue
  readiness gate;
* :meth:`PlatformDeploy.image_registry` — where the webhook image goes (:class:`ImageRegistry`: Artifact Registry,
  the kind nodes, OpenShift's internal registry); the one image component
  (:class:`~batchplane.components.webhook_image.WebhookImage`) builds with it.

Inputs are plain data (:class:`ClusterNeeds`) so platforms import neither the stack loader nor each other.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pulumi
import pulumi_docker_build as docker_build
import pulumi_kubernetes as k8s

from batchplane.config.operators import OperatorsConfig
from batchplane.config.webhook import WebhookConfig
from batchplane.operators import operator_installs
from batchplane.operators.helm_installs import Operators
from batchplane.targets.platform import Platform

__all__ = ["ClusterConnection", "ClusterNeeds", "ImagePush", "ImageRegistry", "Placement", "PlatformDeploy"]


@dataclass(frozen=True)
class ClusterConnection:
    """One cluster as a Pulumi program reaches it: the provider, and the kubeconfig and context that provider was
    built from (the readiness gates poll with these, so they watch the cluster the provider deploys to).

    Attributes:
        provider: the cluster's Kubernetes provider.
        kubeconfig: the kubeconfig the provider uses (content or path; secret on GKE), or ``None`` for the
            provider's default (``$KUBECONFIG`` or ``~/.kube/config``).
        context: the kubeconfig context the provider uses, or ``None`` for the kubeconfig's current context.
        cluster: the component that declares the cluster (GKE), or ``None`` for an existing cluster.
        name: the cluster's name (GKE: the cluster resource's ``name``), or ``None`` when unknown.
        endpoint: the cluster API server's host (GKE: the cluster's ``endpoint``), or ``None`` when unknown.
    """

    provider: k8s.Provider
    kubeconfig: pulumi.Input[str] | None = None
    context: pulumi.Input[str] | None = None
    cluster: pulumi.Resource | None = None
    name: pulumi.Input[str] | None = None
    endpoint: pulumi.Input[str] | None = None


@dataclass(frozen=True)
class ClusterNeeds:
    """What the stack needs of the platform's cluster (plain data, derived from the public config models).

    Attributes:
        environment: ``dev``, ``staging`` or ``production``.
        operators: ``batchplane:operators``, or ``None`` (nothing installed with Helm).
        kueue_api_version: the Kueue API version of the objects (the Kueue gate's dry-run ResourceFlavor).
        tenant_namespaces: the namespaces of the stack's LocalQueues (Kueue's ``managedJobsNamespaceSelector``).
        webhook: ``batchplane:webhook``.
        webhook_enabled: whether the stack deploys the quota webhook (its port must be reachable).
    """

    environment: str
    operators: OperatorsConfig | None
    kueue_api_version: str
    tenant_namespaces: tuple[str, ...]
    webhook: WebhookConfig
    webhook_enabled: bool


@dataclass(frozen=True)
class Placement:
    """How a platform names and places BatchCluster's children.

    Attributes:
        role: a child's name for a role (``gke`` → ``<cluster>-gke``, or the bare role in the single-cluster
            layout).
        options: resource options of a direct child of the BatchCluster (its parent and aliases), with extra
            keyword arguments of :class:`pulumi.ResourceOptions`.
    """

    role: Callable[[str], str]
    options: Callable[..., pulumi.ResourceOptions]


@dataclass
class ImagePush:
    """What a registry gives the one image build (``pulumi_docker_build.Image`` keyword arguments).

    Attributes:
        tags: the image references to tag (and push).
        push: push to the registry.
        load: load into the local Docker engine (``None``: not set).
        registries: registry credentials (address, username, secret password), or ``None``.
        depends_on: what the build waits for (the repository, the ImageStream, …).
        platforms: BuildKit platforms (``linux/amd64``).
    """

    tags: list[pulumi.Input[str]]
    push: bool
    platforms: list[str]
    load: bool | None = None
    registries: list[dict[str, Any]] | None = None
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class ImageRegistry(ABC):
    """Where the webhook image goes; the image component asks it for the pieces around the build.

    Class attributes:
        legacy_type: the type token of this platform's own image component before the one image component
            (``batchplane:gke:WebhookImage``, …); the component aliases it, so deployed stacks keep their URNs.
        in_cluster: the registry's children go through the cluster's Kubernetes provider (OpenShift).
        reference_tracks_build: the reference changes whenever the build does (a digest: Artifact Registry, the
            OpenShift internal registry). False for a reference that stays the same tag across rebuilds (kind loads
            the image under ``webhook.image``'s tag): the Deployment then carries the build's context hash as a pod
            template annotation, so a rebuilt image rolls its pods.
    """

    legacy_type: ClassVar[str]
    in_cluster: ClassVar[bool] = False
    reference_tracks_build: ClassVar[bool] = True

    @abstractmethod
    def prepare(self, name: str, parent: pulumi.Resource) -> ImagePush:
        """Declare what the push needs (children of ``parent`` named ``<name>-<role>``) and describe the build."""

    @abstractmethod
    def reference(self, name: str, image: docker_build.Image, parent: pulumi.Resource) -> pulumi.Output[str]:
        """After the build: declare what follows it (``kind load``) and return the reference the Deployment runs."""

    def build_in_cluster(self, name: str, context: str, parent: pulumi.Resource) -> pulumi.Output[str] | None:
        """Build the image in the cluster, without Docker where ``pulumi up`` runs (children of ``parent`` named
        ``<name>-<role>``), and return the reference the Deployment runs; ``None`` (the default): build with Docker
        (:meth:`prepare`, then :meth:`reference`)."""
        return None


class PlatformDeploy(ABC):
    """The Pulumi half of one platform (see the module docstring).

    Attributes:
        platform: the platform (its validated target).
    """

    def __init__(self, platform: Platform) -> None:
        self.platform = platform

    @abstractmethod
    def declare_cluster(self, needs: ClusterNeeds, place: Placement) -> ClusterConnection:
        """Declare the cluster (or none) and its Kubernetes provider."""

    def connect_existing(self, place: Placement) -> ClusterConnection:
        """A provider for an existing cluster from the platform's :meth:`~batchplane.targets.platform.Platform.
        connection` (context, kubeconfig, upsert), named ``<cluster>-k8s``."""
        connection = self.platform.connection()
        assert connection is not None, f"target kind {self.platform.kind} declares its cluster"
        provider = k8s.Provider(
            place.role("k8s"),
            context=connection.context,
            kubeconfig=connection.kubeconfig,
            upsert_existing_objects=True if connection.upsert_existing_objects else None,
            opts=place.options(),
        )
        return ClusterConnection(provider, kubeconfig=connection.kubeconfig, context=connection.context)

    def declare_operators(
        self, needs: ClusterNeeds, connection: ClusterConnection, place: Placement
    ) -> list[pulumi.Resource]:
        """Install the operators and return the Kueue readiness gate(s) Kueue objects wait for. Defaults to the Helm
        path: :class:`~batchplane.operators.helm_installs.Operators` (``<cluster>-operators``) when the stack has
        ``batchplane:operators``, else nothing (Kueue installed outside the stack)."""
        if needs.operators is None:
            return []
        plan = operator_installs(needs.operators, self.platform.operator_host, list(needs.tenant_namespaces))
        return Operators(
            place.role("operators"),
            {"plan": plan, "context": connection.context, "kubeconfig": connection.kubeconfig},
            opts=place.options(providers=[connection.provider]),
        ).kueue_ready

    def image_registry(self, webhook: WebhookConfig, connection: ClusterConnection) -> ImageRegistry | None:
        """The registry the stack builds the webhook image for (``webhook.build``), or ``None``. Defaults to none."""
        return None

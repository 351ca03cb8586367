"""The preflight model: what one stack needs before ``pulumi up`` (:class:`Requirements`, offline) and how a run
reaches the world (:class:`Environment`).

Plain data, importing no stack: :func:`batchplane.preflight.requirements.stack_requirements` fills a
:class:`Requirements` from a validated stack, and each platform's preflight half
(:class:`~batchplane.targets.preflight.PlatformPreflight`) is handed one, so the platforms name this model, not the
stack that fills it (issue #40: no import circle).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from batchplane.operators.olm_lookup import StackInstall
from batchplane.preflight.kube import KubeContext
from batchplane.targets.gke.requirements import (
    ApiRequirement,
    ArtifactRepository,
    GkeCluster,
    IamRole,
    OrgPolicyRequirement,
    PermissionNeed,
    QuotaNeed,
    ZoneOffering,
)
from batchplane.targets.kind.requirements import KindCluster
from batchplane.targets.openshift.machines import MachineSetSource
from batchplane.targets.openshift.requirements import (
    FeatureGateNeed,
    KueueApiNeed,
    KueueCrNeed,
    OlmPackage,
    UpgradeTarget,
)

if TYPE_CHECKING:
    from requests.adapters import BaseAdapter

__all__ = ["Environment", "ImageRequirement", "Requirements"]


@dataclass(frozen=True)
class ImageRequirement:
    """A container image some registry must serve (the stack runs it and does not build it).

    Attributes:
        reference: the image reference as configured.
        path: its config key path.
    """

    reference: str
    path: str


@dataclass
class Requirements:
    """Everything one stack needs before ``pulumi up``.

    Attributes:
        stack: the stack name.
        platform: the stack's own target kind.
        platforms: the target kinds among the stack's targets (its own first, then its declared workers'), each
            once.
        project: the GCP project (``target.project`` or ``gcp:project``), or None (preflight then asks ADC).
        project_path: where the project comes from.
        apis: APIs to enable (GKE).
        quotas: Compute Engine quota needs (GKE), aggregated over every declared cluster.
        org_policies: org-policy constraints the stack depends on (GKE).
        clusters: the GKE clusters the stack declares.
        offerings: machine/accelerator types each zone must offer (GKE).
        images: images a registry must serve.
        olm_packages: OLM packages and channels (OpenShift).
        contexts: kubeconfig contexts (OpenShift, kind, existing).
        kind: the kind cluster, or None.
        roles: IAM roles (GKE).
        unsized: key paths of pools whose machine type's vCPUs Batchplane does not know (their vCPUs are left out
            of the CPU quotas; preflight warns).
        other_projects: ``(key path, project)`` of declared clusters in another project than :attr:`project`
            (preflight checks one project per run and warns about these).
        builds_image: the registry ``pulumi up`` builds the webhook image for (``webhook.build.registry``: Docker
            with BuildKit where it runs), or None.
        registry_route: OpenShift: the key path (``batchplane:webhook.build.registryHost``) whose omission makes
            ``pulumi up`` push through the internal registry's default route, which must then exist; or None.
        permissions: GKE: the deployer's permissions on the project, one entry per resource type the stack declares
            (:data:`RESOURCE_PERMISSIONS`).
        repositories: GKE: the Artifact Registry repositories the stack creates (none must exist unless it owns them).
        olm_namespaces: OpenShift: what the stack declares in each operator namespace, with the key path of the
            operator's settings (the deploy-time ``olm-namespace`` lookup decides the same from the same answers).
        machine_set_sources: OpenShift: the GPU pools that copy a worker MachineSet at deploy time.
        upgrade_targets: OpenShift: the ``Manual``-approval Subscriptions' target CSVs.
        feature_gates: OpenShift feature gates the stack depends on (``ProvisioningRequestAvailable`` for GPU pools
            with ProvisioningRequests).
        kueue_cr: OpenShift: the frameworks the ``Kueue`` CR ``cluster`` must enable, or None (embedded Kueue).
        pod_security: what the cluster's pod admission asks of the stack's own pods (a sentence), or None.
        kueue_api: OpenShift: the Kueue API version and ClusterQueues the stack declares (checked against a Kueue that
            already runs), or None.
        user_workload_monitoring: OpenShift with observability on: the key path (``batchplane:observability``)
            whose objects need user-workload monitoring; or None.
        prometheus_operator: kind/existing with ``observability.prometheus: operator``: the key path whose objects
            need the Prometheus Operator's CRDs; or None.
        grafana_operator: dashboards delivered as GrafanaDashboard CRs: the key path
            (``batchplane:observability.dashboards``) and the labels their ``instanceSelector`` matches; or None.
    """

    stack: str
    platform: str
    platforms: list[str] = field(default_factory=list)
    project: str | None = None
    project_path: str = "gcp:project"
    apis: list[ApiRequirement] = field(default_factory=list)
    quotas: list[QuotaNeed] = field(default_factory=list)
    org_policies: list[OrgPolicyRequirement] = field(default_factory=list)
    clusters: list[GkeCluster] = field(default_factory=list)
    offerings: list[ZoneOffering] = field(default_factory=list)
    images: list[ImageRequirement] = field(default_factory=list)
    olm_packages: list[OlmPackage] = field(default_factory=list)
    contexts: list[KubeContext] = field(default_factory=list)
    kind: KindCluster | None = None
    roles: list[IamRole] = field(default_factory=list)
    unsized: list[str] = field(default_factory=list)
    other_projects: list[tuple[str, str]] = field(default_factory=list)
    builds_image: str | None = None
    registry_route: str | None = None
    permissions: list[PermissionNeed] = field(default_factory=list)
    repositories: list[ArtifactRepository] = field(default_factory=list)
    olm_namespaces: list[tuple[StackInstall, str]] = field(default_factory=list)
    machine_set_sources: list[MachineSetSource] = field(default_factory=list)
    upgrade_targets: list[UpgradeTarget] = field(default_factory=list)
    feature_gates: list[FeatureGateNeed] = field(default_factory=list)
    kueue_cr: KueueCrNeed | None = None
    pod_security: str | None = None
    kueue_api: KueueApiNeed | None = None
    user_workload_monitoring: str | None = None
    prometheus_operator: str | None = None
    grafana_operator: tuple[str, dict[str, str]] | None = None


@dataclass
class Environment:
    """How preflight reaches the world.

    Attributes:
        gcp_credentials: ``google.auth`` credentials, or None for Application Default Credentials.
        gcp_project: the project when neither the stack nor ``gcp:project`` gives one (ADC's project by default).
        adapter: a ``requests`` adapter for every HTTPS call (Google APIs and registries), or None for the network.
        check_images: ask registries about images. Defaults to true.
    """

    gcp_credentials: Any = None
    gcp_project: str | None = None
    adapter: BaseAdapter | None = None
    check_images: bool = True

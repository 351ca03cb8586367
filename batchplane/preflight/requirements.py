"""What a validated stack needs from the world before ``pulumi up``: a pure model, computed offline.

:func:`stack_requirements` turns a :class:`~batchplane.stack.Stack` (and the MultiKueue workers it declares) into
:class:`Requirements`. Each platform among its targets adds its own part through its preflight half, in its home
(:class:`~batchplane.targets.preflight.PlatformPreflight`): GKE the Google Cloud APIs, quotas, org policies, zone
offerings, versions, permissions and repositories (:mod:`batchplane.targets.gke.requirements`, where the quota
arithmetic is documented), OpenShift its OLM packages, operator namespaces, MachineSets, feature gates and Kueue
(:mod:`batchplane.targets.openshift.requirements`), kind its cluster (:mod:`batchplane.targets.kind.requirements`), and
every platform reached through a kubeconfig its context. The stack adds the images a registry must serve, the image
build and what its observability objects need. Every item carries the config key path it comes from. The checkers
compare it with what the world answers (:mod:`batchplane.preflight.run`); the generated requirements pages
(:mod:`batchplane.preflight.docs`) print it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from batchplane.components.quota_webhook.manifests import webhook_enabled
from batchplane.observability.dashboards import dashboards_config, resolve_delivery
from batchplane.operators.olm_lookup import StackInstall
from batchplane.preflight.kube import KubeContext
from batchplane.stack import Stack
from batchplane.targets.existing.config import ExistingTarget
from batchplane.targets.gke.config import GkeTarget
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
from batchplane.targets.kind.config import KindTarget
from batchplane.targets.kind.requirements import KindCluster
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.machines import MachineSetSource
from batchplane.targets.openshift.requirements import (
    FeatureGateNeed,
    KueueApiNeed,
    KueueCrNeed,
    OlmPackage,
    UpgradeTarget,
)
from batchplane.targets.preflight import PlatformPreflight, StackFacts
from batchplane.targets.registry import descriptor

__all__ = ["ImageRequirement", "KubeContext", "Requirements", "stack_facts", "stack_requirements"]


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


TARGET = "batchplane:target"


def stack_requirements(stack: Stack) -> Requirements:
    """The requirements of a validated stack and of the MultiKueue workers it declares.

    Each platform among the targets (the stack's own, then every declared worker's) adds its part through its
    preflight half (:meth:`~batchplane.targets.preflight.PlatformPreflight.add_requirements`, named by the platform
    registry :data:`~batchplane.targets.registry.REGISTRY`); the images and the monitoring needs are the stack's own.

    Args:
        stack: a stack from :func:`batchplane.stack.load_stack` / ``load_stack_file``.

    Returns:
        :class:`Requirements`; GKE quotas are summed over every declared cluster (per region for regional
        quotas, over the project for ``*_ALL_REGIONS``).
    """
    target = stack.config.target
    req = Requirements(stack=stack.name, platform=target.kind)
    targets: list[tuple[ExistingTarget | GkeTarget | KindTarget | OpenShiftTarget, str]] = [(target, TARGET)]
    mk = stack.config.multi_kueue
    if mk is not None:
        for i, worker in enumerate(mk.workers):
            if worker.name in stack.workers and worker.target is not None:
                targets.append(
                    (stack.workers[worker.name].config.target, f"batchplane:multiKueue.workers[{i}].target")
                )
    by_kind: dict[str, list[tuple[Any, str]]] = {}
    for t, p in targets:
        by_kind.setdefault(t.kind, []).append((t, p))
    facts = stack_facts(stack)
    for kind, group in by_kind.items():
        req.platforms.append(kind)
        preflight_half(kind).add_requirements(facts, group, req)
    build = stack.config.webhook.build
    if webhook_enabled(stack):
        if build is None:
            req.images.append(
                ImageRequirement(stack.config.webhook.resolved_image, "batchplane:webhook.image")
            )
        elif not build.in_cluster:  # an in-cluster build (OpenShift BuildConfig) needs no Docker and no route
            req.builds_image = build.registry
    _monitoring_requirements(stack, req)
    return req


def stack_facts(stack: Stack) -> StackFacts:
    """What the platforms' requirements read from the stack (:class:`~batchplane.targets.preflight.StackFacts`)."""
    value = stack.other_config.get("gcp:project")
    return StackFacts(
        name=stack.name,
        environment=stack.config.environment,
        gcp_project=value if isinstance(value, str) and value else None,
        webhook=stack.config.webhook,
        webhook_enabled=webhook_enabled(stack),
        operators=stack.config.operators,
        kueue_api_version=stack.kueue.api_version,
        cluster_queues=tuple(cq.obj.name for cq in stack.kueue.cluster_queues),
    )


def preflight_half(kind: str) -> PlatformPreflight:
    """A new preflight half of the platform with ``kind`` tag (its registry descriptor's, imported now)."""
    return descriptor(kind).preflight_class()()


def _monitoring_requirements(stack: Stack, req: Requirements) -> None:
    """What the observability objects need on the cluster (:mod:`batchplane.preflight.monitoring`)."""
    section = stack.config.observability
    if not section.enabled:
        return
    monitoring = stack.platform.monitoring
    if monitoring == "user-workload-monitoring":
        req.user_workload_monitoring = "batchplane:observability"
    elif monitoring == "prometheus-operator" and section.prometheus == "operator":
        req.prometheus_operator = "batchplane:observability.prometheus"
    dashboards = dashboards_config(stack)
    if dashboards.enabled and resolve_delivery(dashboards, stack.platform) == "grafana-operator":
        req.grafana_operator = ("batchplane:observability.dashboards", dict(dashboards.grafana_selector))

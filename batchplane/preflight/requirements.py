"""What a validated stack needs from the world before ``pulumi up``: a pure model, computed offline.

:func:`stack_requirements` turns a :class:`~batchplane.stack.Stack` (and the MultiKueue workers it declares) into
:class:`Requirements`: the Google Cloud APIs to enable, the Compute Engine quotas the pools need at their maximum
size, the org-policy constraints the template depends on, the network, the machine and accelerator types each zone
must offer, the GKE release channel and version, the images a registry must serve, the OLM packages and channels a
catalog must carry, and the kubeconfig contexts and local tools. Every item carries the config key path it comes
from. The checkers (:mod:`batchplane.preflight.gcp`, :mod:`~batchplane.preflight.olm`,
:mod:`~batchplane.preflight.kind`, :mod:`~batchplane.preflight.images`) compare it with what the APIs answer; the
generated requirements pages (:mod:`batchplane.preflight.docs`) print it.

Quota arithmetic (Compute Engine "Allocation quotas", cloud.google.com/compute/resource-usage; "GPU quota"):

* GPUs per family and region: ``maxNodes`` (× zones when ``autoscalingLimits: per-zone``; ``nodeCount`` × zones for
  a static pool) × GPUs per node, summed over the pools of one region and family.
* Spot, flex-start and queued-provisioning pools count against the *preemptible* GPU quota of the family ("Flex-start
  VMs ... consume preemptible quota", Google Cloud blog "GPUs when you need them: Introducing Flex-start VMs",
  2025-09-25; "DWS Flex Start consumes the preemptible version of the GPU quota pool rather than the standard pool",
  docs.cloud.google.com/managed-spark/docs/guides/dws-serverless; GKE's queued provisioning is "flex-start with
  queued provisioning", cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest); on-demand pools against
  the standard quota. Reservation pools consume capacity the reservation already holds and need no new quota.
* Where the project has **no** preemptible quota of the family in the region (limit 0), Spot VMs use the standard
  quotas instead ("To prevent Spot VMs from consuming your quotas for standard VMs' CPUs, GPUs, and disks, consider
  requesting preemptible quota", cloud.google.com/compute/docs/instances/create-use-spot): the checker moves the spot
  pools' GPUs (:attr:`QuotaNeed.spot_gpus`) to the standard quota then. No such fallback is documented for
  flex-start, so flex-start and queued pools stay on the preemptible quota.
* ``GPUS_ALL_REGIONS``: every GPU of every pool of every declared cluster of the project.
* vCPUs per region: every pool (system and GPU) at its maximum, against ``CPUS`` (and, when the project has one,
  the machine family's own quota, e.g. ``A2_CPUS`` or ``cpus_per_vm_family``), and ``CPUS_ALL_REGIONS``. Once a
  project has ``PREEMPTIBLE_CPUS`` quota in a region, "all preemptible VMs count against that quota, and all standard
  VMs continue to count against the standard CPU quota"; without it "you can use standard CPU quota to launch
  preemptible VMs" (cloud.google.com/compute/docs/instances/create-use-preemptible, "Preemptible CPU quotas"): the
  checker moves the spot pools' vCPUs (:attr:`QuotaNeed.spot_vcpus`) from ``CPUS`` to ``PREEMPTIBLE_CPUS`` exactly
  when the latter is granted (not 0) in the region. Which vCPU quota flex-start VMs use is not documented (only
  their GPUs are said to use the preemptible quota): their vCPUs stay on ``CPUS``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from batchplane.components.quota_webhook.manifests import webhook_enabled
from batchplane.stack import Stack
from batchplane.targets.existing.config import ExistingTarget
from batchplane.targets.gke.config import (
    FLEX_START_MIN_VERSION,
    QUEUED_PROVISIONING_MIN_VERSION,
    GkeTarget,
    GpuPool,
)
from batchplane.targets.gke.machines import MACHINE_SHAPES
from batchplane.targets.kind.config import KindTarget
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.olm import openshift_plan

Platform = Literal["gke", "openshift", "kind", "existing"]

#: Compute Engine accelerator type → the GPU family name its quotas use (``NVIDIA_L4_GPUS``,
#: ``gpu_family: NVIDIA_L4``). Source: the Compute Engine ``Quota.metric`` enum (google-cloud-compute 1.57
#: ``compute_v1.Quota.Metric``: ``NVIDIA_L4_GPUS``, ``NVIDIA_A100_80GB_GPUS``, ``NVIDIA_H100_GPUS``,
#: ``NVIDIA_H100_MEGA_GPUS``, ``NVIDIA_H200_GPUS``, ``NVIDIA_B200_GPUS`` …) and the Cloud Quotas
#: ``GPUS-PER-GPU-FAMILY-per-project-region`` ``gpu_family`` dimension values.
GPU_FAMILIES: dict[str, str] = {
    "nvidia-l4": "NVIDIA_L4",
    "nvidia-tesla-t4": "NVIDIA_T4",
    "nvidia-tesla-p4": "NVIDIA_P4",
    "nvidia-tesla-p100": "NVIDIA_P100",
    "nvidia-tesla-v100": "NVIDIA_V100",
    "nvidia-tesla-a100": "NVIDIA_A100",
    "nvidia-a100-80gb": "NVIDIA_A100_80GB",
    "nvidia-h100-80gb": "NVIDIA_H100",
    "nvidia-h100-mega-80gb": "NVIDIA_H100_MEGA",
    "nvidia-h200-141gb": "NVIDIA_H200",
    "nvidia-b200": "NVIDIA_B200",
}

#: Pool provisioning modes whose VMs use preemptible quota (see the module docstring).
PREEMPTIBLE_MODES = frozenset({"spot", "flex-start", "queued"})

#: Service Usage names of the APIs a GKE stack calls (what ``pulumi up`` with pulumi-gcp needs enabled).
GKE_APIS: dict[str, str] = {
    "container.googleapis.com": "the GKE cluster and node pools (gcp.container.Cluster, NodePool)",
    "compute.googleapis.com": "node VMs, the network, and for private nodes the Cloud Router and NAT",
    "iam.googleapis.com": "Workload Identity and the nodes' service account",
}
ARTIFACT_REGISTRY_API = "artifactregistry.googleapis.com"


@dataclass(frozen=True)
class ApiRequirement:
    """A Google Cloud API that must be enabled in the project.

    Attributes:
        service: the Service Usage name, e.g. ``container.googleapis.com``.
        why: what the stack uses it for.
        path: the config key path that makes it needed.
    """

    service: str
    why: str
    path: str


@dataclass(frozen=True)
class QuotaNeed:
    """How much of one Compute Engine quota the stack needs at its maximum size.

    Attributes:
        kind: ``gpus`` (per family and region), ``gpus-all-regions``, ``cpus`` (per region), ``cpus-all-regions``.
        amount: GPUs or vCPUs (CPU cores) needed.
        region: the region, or None for project-wide quotas.
        gpu_family: ``NVIDIA_L4`` … for ``gpus``; else None.
        preemptible: True when the need is on the preemptible quota (spot, flex-start, queued pools).
        vm_family: the machine family of the vCPUs (``G2``, ``E2``, ``A3`` …) for ``cpus``; None when mixed.
        paths: the config key paths of the pools that add up to it.
        spot_gpus: for preemptible ``gpus``: how many of :attr:`amount` come from spot pools (what moves to the
            standard quota where the project has no preemptible quota of the family in the region). Defaults to 0.
        spot_paths: the key paths of those spot pools. Defaults to none.
        spot_vcpus: for ``cpus``: how many of :attr:`amount` come from spot pools (what counts against
            ``PREEMPTIBLE_CPUS`` where the project has that quota in the region). Defaults to 0.
        spot_vcpu_paths: the key paths of those pools. Defaults to none.
    """

    kind: Literal["gpus", "gpus-all-regions", "cpus", "cpus-all-regions"]
    amount: int
    region: str | None = None
    gpu_family: str | None = None
    preemptible: bool = False
    vm_family: str | None = None
    paths: tuple[str, ...] = ()
    spot_gpus: int = 0
    spot_paths: tuple[str, ...] = ()
    spot_vcpus: int = 0
    spot_vcpu_paths: tuple[str, ...] = ()

    @property
    def metric(self) -> str:
        """The Compute Engine quota metric name: ``NVIDIA_L4_GPUS``, ``PREEMPTIBLE_NVIDIA_L4_GPUS``, ``CPUS``,
        ``G2_CPUS``-style family names are not used here (see :attr:`vm_family`), ``GPUS_ALL_REGIONS``,
        ``CPUS_ALL_REGIONS``."""
        if self.kind == "gpus":
            return f"{'PREEMPTIBLE_' if self.preemptible else ''}{self.gpu_family}_GPUS"
        if self.kind == "gpus-all-regions":
            return "GPUS_ALL_REGIONS"
        if self.kind == "cpus-all-regions":
            return "CPUS_ALL_REGIONS"
        return "PREEMPTIBLE_CPUS" if self.preemptible else "CPUS"


@dataclass(frozen=True)
class OrgPolicyRequirement:
    """An organization-policy constraint the stack depends on.

    Attributes:
        constraint: e.g. ``compute.vmExternalIpAccess``.
        expectation: ``not-enforced`` (a boolean constraint that must be off), ``allows-values`` (a list
            constraint that must not deny all values), or ``informs`` (explains another finding).
        why: what breaks while the policy is in force.
        fix: what the user or org admin can do.
        path: the config key path that makes it relevant.
    """

    constraint: str
    expectation: Literal["not-enforced", "allows-values", "informs"]
    why: str
    fix: str
    path: str


@dataclass(frozen=True)
class ZoneOffering:
    """A machine type (and accelerator) that a zone must offer.

    Attributes:
        zone: e.g. ``us-central1-a``.
        machine_type: e.g. ``g2-standard-4``.
        accelerator_type: e.g. ``nvidia-l4``, or None.
        accelerator_count: GPUs per node (0 without an accelerator).
        path: the pool's config key path.
    """

    zone: str
    machine_type: str
    accelerator_type: str | None
    accelerator_count: int
    path: str


@dataclass(frozen=True)
class VersionRequirement:
    """The GKE release channel and version the cluster asks for.

    Attributes:
        channel: ``RAPID``, ``REGULAR``, ``STABLE`` or ``EXTENDED``.
        version: ``minMasterVersion`` (a prefix or a full version), or None for the channel default.
        floor: the lowest version the pools need (queued provisioning / flex-start), or None.
        path: the target's key path.
    """

    channel: str
    version: str | None
    floor: str | None
    path: str


@dataclass(frozen=True)
class GkeCluster:
    """One GKE cluster the stack declares (the stack's own target or a MultiKueue worker's).

    Attributes:
        name: the cluster name.
        location: its region or zone.
        region: its region.
        zones: every zone named by its pools (the system pool's, the GPU pools').
        network: the VPC network name (``default`` when not given).
        public_nodes: True when nodes get external IPs (no ``privateNodes``, or ``enabled: false``).
        default_service_account: True when the pools run as the Compute Engine default service account
            (``nodeServiceAccount: default``).
        creates_node_account: True when the stack creates the nodes' service account (``nodeServiceAccount``
            omitted) and grants it its project role.
        version: the channel and version.
        path: the target's key path.
    """

    name: str
    location: str
    region: str
    zones: tuple[str, ...]
    network: str
    public_nodes: bool
    default_service_account: bool
    creates_node_account: bool
    version: VersionRequirement
    path: str


@dataclass(frozen=True)
class ImageRequirement:
    """A container image some registry must serve (the stack runs it and does not build it).

    Attributes:
        reference: the image reference as configured.
        path: its config key path.
    """

    reference: str
    path: str


@dataclass(frozen=True)
class OlmPackage:
    """An operator the cluster's OLM catalog must carry.

    Attributes:
        package: the OLM package name (Subscription ``spec.name``).
        channel: the channel (``spec.channel``).
        source: the CatalogSource name (``spec.source``).
        source_namespace: its namespace (``spec.sourceNamespace``).
        starting_csv: ``spec.startingCSV``, or None.
        path: the config key path of the subscription settings.
    """

    package: str
    channel: str
    source: str
    source_namespace: str
    starting_csv: str | None
    path: str


@dataclass(frozen=True)
class KubeContext:
    """A kubeconfig context the stack uses.

    Attributes:
        context: the context name.
        kubeconfig: an explicit kubeconfig file, or None for ``$KUBECONFIG`` / ``~/.kube/config``.
        path: the config key path.
    """

    context: str
    kubeconfig: str | None
    path: str


@dataclass(frozen=True)
class KindCluster:
    """A local kind cluster the stack deploys to.

    Attributes:
        cluster_name: ``kind create cluster --name`` value.
        loads_image: the image ``webhook.build: {registry: kind}`` builds and loads, or None.
        path: the target's key path.
    """

    cluster_name: str
    loads_image: str | None
    path: str


@dataclass(frozen=True)
class IamRole:
    """An IAM role a principal needs.

    Attributes:
        role: e.g. ``roles/container.admin``.
        principal: ``deployer`` (whoever runs ``pulumi up``) or ``nodes`` (the node service account).
        why: what it is for.
    """

    role: str
    principal: Literal["deployer", "nodes"]
    why: str


@dataclass
class Requirements:
    """Everything one stack needs before ``pulumi up``.

    Attributes:
        stack: the stack name.
        platform: the stack's own target kind.
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
        user_workload_monitoring: OpenShift with observability on: the key path (``batchplane:observability``)
            whose objects need user-workload monitoring; or None.
        prometheus_operator: kind/existing with ``observability.prometheus: operator``: the key path whose objects
            need the Prometheus Operator's CRDs; or None.
    """

    stack: str
    platform: Platform
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
    user_workload_monitoring: str | None = None
    prometheus_operator: str | None = None


# --- the model ------------------------------------------------------------------------------------

TARGET = "batchplane:target"


def stack_requirements(stack: Stack) -> Requirements:
    """The requirements of a validated stack and of the MultiKueue workers it declares.

    Args:
        stack: a stack from :func:`batchplane.stack.load_stack` / ``load_stack_file``.

    Returns:
        :class:`Requirements`; GKE quotas are summed over every declared cluster (per region for regional
        quotas, over the project for ``*_ALL_REGIONS``).
    """
    target = stack.config.target
    req = Requirements(stack=stack.name, platform=target.kind)
    targets: list[tuple[object, str]] = [(target, TARGET)]
    mk = stack.config.multi_kueue
    if mk is not None:
        for i, worker in enumerate(mk.workers):
            if worker.name in stack.workers and worker.target is not None:
                targets.append(
                    (stack.workers[worker.name].config.target, f"batchplane:multiKueue.workers[{i}].target")
                )
    by_kind: dict[str, list[tuple[Any, str]]] = {}
    for t, p in targets:
        by_kind.setdefault(getattr(t, "kind", ""), []).append((t, p))
    for kind, group in by_kind.items():
        _PLATFORM_REQUIREMENTS[kind](stack, group, req)
    build = stack.config.webhook.build
    if webhook_enabled(stack):
        if build is None:
            req.images.append(
                ImageRequirement(stack.config.webhook.resolved_image, "batchplane:webhook.image")
            )
        else:
            req.builds_image = build.registry
        if build is not None and build.registry == "openshift" and build.registry_host is None:
            req.registry_route = "batchplane:webhook.build.registryHost"
    _monitoring_requirements(stack, req)
    return req


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


def _openshift_requirements(
    stack: Stack, targets: list[tuple[OpenShiftTarget, str]], req: Requirements
) -> None:
    target, path = targets[0]
    req.olm_packages = olm_packages(target)
    req.contexts.append(KubeContext(target.kube_context(), target.kubeconfig, f"{path}.context"))


def _existing_requirements(
    stack: Stack, targets: list[tuple[ExistingTarget, str]], req: Requirements
) -> None:
    target, path = targets[0]
    req.contexts.append(KubeContext(target.kube_context(), target.kubeconfig, f"{path}.context"))


def _kind_requirements(stack: Stack, targets: list[tuple[KindTarget, str]], req: Requirements) -> None:
    target, path = targets[0]
    build = stack.config.webhook.build
    loads = stack.config.webhook.resolved_image if build is not None and build.registry == "kind" else None
    req.kind = KindCluster(target.cluster_name, loads, path)
    req.contexts.append(KubeContext(target.kube_context(), None, f"{path}.context"))


def _gke_requirements(stack: Stack, targets: list[tuple[GkeTarget, str]], req: Requirements) -> None:
    # Each cluster is in its target.project, else gcp:project; the run checks the first GKE cluster's project.
    value = stack.other_config.get("gcp:project")
    default = value if isinstance(value, str) and value else None
    effective = [(t, p, t.project or default) for t, p in targets]
    first_target, first_path, project = effective[0]
    req.project = project
    if first_target.project is not None:
        req.project_path = f"{first_path}.project"
    req.other_projects = [(f"{p}.project", other) for _, p, other in effective if other and other != project]
    targets = [(t, p) for t, p, other in effective if other == project or other is None]
    first = targets[0][1]
    for service, why in GKE_APIS.items():
        req.apis.append(ApiRequirement(service, why, first))
    build = stack.config.webhook.build
    if build is not None and build.registry == "artifact-registry":
        why = "the Docker repository the stack pushes the webhook image to"
        req.apis.append(ApiRequirement(ARTIFACT_REGISTRY_API, why, "batchplane:webhook.build.registry"))
    for target, path in targets:
        req.clusters.append(_cluster(target, path))
        req.offerings.extend(_offerings(target, path))
    req.quotas = gke_quotas(targets)
    req.unsized = unsized_pools(targets)
    req.org_policies = _org_policies(req.clusters)
    req.roles = _roles(req, build is not None and build.registry == "artifact-registry")


def _cluster(target: GkeTarget, path: str) -> GkeCluster:
    zones: list[str] = []
    for zone in [
        *target.system_pool.node_locations,
        *(z for p in target.gpu_pools for z in p.node_locations),
    ]:
        if zone not in zones:
            zones.append(zone)
    if target.zone and target.zone not in zones:
        zones.insert(0, target.zone)
    private = target.private_nodes is not None and target.private_nodes.enabled
    # The system pool runs as target.nodeServiceAccount (GPU pools may override it for themselves).
    mode = target.node_account_mode()
    return GkeCluster(
        name=target.cluster_name,
        location=target.location(),
        region=target.cluster_region(),
        zones=tuple(zones),
        network=_short_name(target.network) if target.network else "default",
        public_nodes=not private,
        default_service_account=mode == "default",
        creates_node_account=mode == "create",
        version=VersionRequirement(
            target.release_channel, target.min_master_version, version_floor(target), path
        ),
        path=path,
    )


def _short_name(network: str) -> str:
    """``projects/p/global/networks/vpc`` or a self link → ``vpc``."""
    return network.rstrip("/").rsplit("/", 1)[-1]


def version_floor(target: GkeTarget) -> str | None:
    """The lowest GKE version the pools need: flex-start's, else queued provisioning's, else None
    (the same floors :func:`batchplane.targets.gke.config.check_gke_target` checks)."""
    if any(p.provisioning == "flex-start" for p in target.gpu_pools):
        return FLEX_START_MIN_VERSION
    if any(p.is_queued() for p in target.gpu_pools):
        return QUEUED_PROVISIONING_MIN_VERSION
    return None


def _offerings(target: GkeTarget, path: str) -> list[ZoneOffering]:
    out: list[ZoneOffering] = []
    system = target.system_pool
    system_zones = system.node_locations or ([target.zone] if target.zone else [])
    for zone in system_zones:
        out.append(ZoneOffering(zone, system.machine_type, None, 0, f"{path}.systemPool.machineType"))
    for i, pool in enumerate(target.gpu_pools):
        acc = pool.resolved_accelerator()
        for zone in pool.node_locations:
            out.append(
                ZoneOffering(
                    zone,
                    pool.machine_type,
                    None if acc is None else acc.type,
                    0 if acc is None else acc.count,
                    f"{path}.gpuPools[{i}]",
                )
            )
    return out


def max_nodes(pool: GpuPool) -> int:
    """The most nodes a GPU pool can have: ``maxNodes`` (× zones when per-zone), or ``nodeCount`` × zones."""
    zones = max(1, len(pool.node_locations))
    if pool.node_count is not None:
        return pool.node_count * zones
    most = pool.max_nodes or 0
    return most * zones if pool.autoscaling_limits == "per-zone" else most


def vm_family(machine_type: str) -> str:
    """The machine family of a machine type, as Compute Engine's family quotas name it: ``g2-standard-4`` → ``G2``."""
    return machine_type.split("-", 1)[0].upper()


def gke_quotas(targets: list[tuple[GkeTarget, str]]) -> list[QuotaNeed]:
    """The quota needs of GKE clusters at their maximum size (see the module docstring for the arithmetic).

    Args:
        targets: ``(target, key path)`` of every GKE cluster in one project.

    Returns:
        One :class:`QuotaNeed` per GPU family × region × standard/preemptible, per region for vCPUs, and the
        project-wide ``GPUS_ALL_REGIONS`` / ``CPUS_ALL_REGIONS`` totals; ordered for stable output.
    """
    gpus: dict[tuple[str, str, bool], tuple[int, list[str]]] = {}
    spot: dict[tuple[str, str], tuple[int, list[str]]] = defaultdict(lambda: (0, []))
    cpus: dict[tuple[str, str], tuple[int, list[str]]] = defaultdict(lambda: (0, []))
    spot_cpus: dict[tuple[str, str], tuple[int, list[str]]] = defaultdict(lambda: (0, []))
    for target, path in targets:
        region = target.cluster_region()
        system = target.system_pool
        shape = MACHINE_SHAPES.get(system.machine_type)
        if shape is not None:
            _add(
                cpus,
                (region, vm_family(system.machine_type)),
                system.max_nodes * shape.vcpus,
                f"{path}.systemPool",
            )
        for i, pool in enumerate(target.gpu_pools):
            ppath = f"{path}.gpuPools[{i}]"
            nodes = max_nodes(pool)
            if pool.provisioning == "reservation" or nodes == 0:
                continue
            shape = MACHINE_SHAPES.get(pool.machine_type)
            preemptible = pool.provisioning in PREEMPTIBLE_MODES
            if shape is not None:
                _add(cpus, (region, vm_family(pool.machine_type)), nodes * shape.vcpus, ppath)
                if pool.provisioning == "spot":
                    _add(spot_cpus, (region, vm_family(pool.machine_type)), nodes * shape.vcpus, ppath)
            acc = pool.resolved_accelerator()
            family = None if acc is None else GPU_FAMILIES.get(acc.type)
            if acc is None or family is None:
                continue
            key = (region, family, preemptible)
            have, paths = gpus.get(key, (0, []))
            gpus[key] = (have + nodes * acc.count, [*paths, ppath])
            if pool.provisioning == "spot":
                _add(spot, (region, family), nodes * acc.count, ppath)
    out: list[QuotaNeed] = []
    all_gpus, gpu_paths = 0, list[str]()
    for (region, family, pre), (amount, paths) in sorted(gpus.items()):
        spot_gpus, spot_paths = spot[(region, family)] if pre else (0, [])
        out.append(
            QuotaNeed("gpus", amount, region, family, pre, None, tuple(paths), spot_gpus, tuple(spot_paths))
        )
        all_gpus += amount
        gpu_paths.extend(p for p in paths if p not in gpu_paths)
    if all_gpus:
        out.append(QuotaNeed("gpus-all-regions", all_gpus, paths=tuple(gpu_paths)))
    by_region: dict[str, tuple[int, list[str]]] = {}
    for (region, family), (amount, paths) in sorted(cpus.items()):
        spot_amount, spot_vcpu_paths = spot_cpus[(region, family)]
        out.append(
            QuotaNeed(
                "cpus",
                amount,
                region,
                vm_family=family,
                paths=tuple(paths),
                spot_vcpus=spot_amount,
                spot_vcpu_paths=tuple(spot_vcpu_paths),
            )
        )
        have, seen = by_region.get(region, (0, []))
        by_region[region] = (have + amount, [*seen, *(p for p in paths if p not in seen)])
    total = sum(a for a, _ in by_region.values())
    if total:
        all_paths = tuple(p for _, ps in by_region.values() for p in ps)
        out.append(QuotaNeed("cpus-all-regions", total, paths=all_paths))
    return out


def unsized_pools(targets: list[tuple[GkeTarget, str]]) -> list[str]:
    """Key paths of pools whose machine type is not in :data:`~batchplane.targets.gke.machines.MACHINE_SHAPES`."""
    out: list[str] = []
    for target, path in targets:
        if target.system_pool.machine_type not in MACHINE_SHAPES:
            out.append(f"{path}.systemPool.machineType")
        for i, pool in enumerate(target.gpu_pools):
            if pool.machine_type not in MACHINE_SHAPES and pool.provisioning != "reservation":
                out.append(f"{path}.gpuPools[{i}].machineType")
    return out


def _add(
    table: dict[tuple[str, str], tuple[int, list[str]]], key: tuple[str, str], amount: int, path: str
) -> None:
    have, paths = table[key]
    table[key] = (have + amount, [*paths, path])


def _org_policies(clusters: list[GkeCluster]) -> list[OrgPolicyRequirement]:
    out: list[OrgPolicyRequirement] = []
    public = [c for c in clusters if c.public_nodes]
    if public:
        out.append(
            OrgPolicyRequirement(
                "compute.vmExternalIpAccess",
                "allows-values",
                "nodes without privateNodes get external IP addresses, so GKE cannot create them",
                "set privateNodes: {enabled: true} (the stack adds Cloud NAT), or ask an org policy admin to allow "
                "external IPs for this project",
                f"{public[0].path}.privateNodes",
            )
        )
    default_net = [c for c in clusters if c.network == "default"]
    if default_net:
        out.append(
            OrgPolicyRequirement(
                "compute.skipDefaultNetworkCreation",
                "informs",
                "the project gets no `default` network, which the cluster uses when target.network is not set",
                "create a VPC network and set target.network (and subnetwork), or create `default`: gcloud compute "
                "networks create default --subnet-mode=auto",
                f"{default_net[0].path}.network",
            )
        )
    default_sa = [c for c in clusters if c.default_service_account]
    if default_sa:
        out.append(
            OrgPolicyRequirement(
                "iam.automaticIamGrantsForDefaultServiceAccounts",
                "informs",
                "the Compute Engine default service account (the nodes' identity) gets no roles, so nodes cannot "
                "write logs and metrics",
                "grant roles/container.defaultNodeServiceAccount to PROJECT_NUMBER-compute@developer.gserviceaccount"
                ".com, or remove nodeServiceAccount: default (the stack then creates a node account with that role; "
                "the pools are replaced)",
                f"{default_sa[0].path}.nodeServiceAccount",
            )
        )
    regions = sorted({c.region for c in clusters})
    out.append(
        OrgPolicyRequirement(
            "gcp.resourceLocations",
            "allows-values",
            f"a location policy that excludes {', '.join(regions)} refuses the cluster",
            "choose an allowed region, or ask an org policy admin to allow it",
            f"{clusters[0].path}.region",
        )
    )
    return out


def _roles(req: Requirements, builds: bool) -> list[IamRole]:
    """The deployer's and the nodes' roles. Sources: IAM "Roles for managing and impersonating service accounts"
    (https://cloud.google.com/iam/docs/service-account-permissions: Service Account Admin creates and deletes accounts,
    Service Account User's ``iam.serviceAccounts.actAs`` attaches one to a resource such as a node VM), "Manage access
    to projects" (Project IAM Admin sets the project's allow policy), Artifact Registry "Access control with IAM"
    (the Administrator role manages a repository's allow policy)."""
    creates = any(c.creates_node_account for c in req.clusters)
    roles = [
        IamRole("roles/container.admin", "deployer", "create the GKE cluster and node pools"),
        IamRole(
            "roles/compute.networkAdmin", "deployer", "Cloud Router, NAT and firewall rules of private nodes"
        ),
        IamRole(
            "roles/iam.serviceAccountUser",
            "deployer",
            "run node pools as their service account (iam.serviceAccounts.actAs on it)",
        ),
        IamRole(
            "roles/serviceusage.serviceUsageConsumer",
            "deployer",
            "call the APIs on the project (and `batchplane preflight`'s read-only checks)",
        ),
    ]
    if creates:
        roles.append(
            IamRole("roles/iam.serviceAccountAdmin", "deployer", "create the nodes' service account")
        )
        roles.append(
            IamRole(
                "roles/resourcemanager.projectIamAdmin",
                "deployer",
                "grant the nodes' service account roles/container.defaultNodeServiceAccount on the project",
            )
        )
    if all(c.creates_node_account for c in req.clusters):
        why = "nodes write logs and metrics (granted by the stack to the account it creates)"
    else:
        why = "nodes write logs and metrics (grant it to the account nodeServiceAccount names)"
    roles.append(IamRole("roles/container.defaultNodeServiceAccount", "nodes", why))
    if builds:
        roles.append(
            IamRole(
                "roles/artifactregistry.admin",
                "deployer",
                "create the webhook image repository and let the nodes read it",
            )
        )
        roles.append(
            IamRole(
                "roles/artifactregistry.reader",
                "nodes",
                "pull the webhook image (granted by the stack on its repository only)",
            )
        )
    return roles


def olm_packages(target: OpenShiftTarget) -> list[OlmPackage]:
    """The OLM packages an OpenShift target subscribes to, with the key path of each subscription's settings."""
    paths = {
        "cert-manager": f"{TARGET}.certManager",
        "kueue": f"{TARGET}.kueue",
        "openshift-ai": f"{TARGET}.openshiftAi",
        "nfd": f"{TARGET}.gpuOperator.nfd",
        "gpu-operator": f"{TARGET}.gpuOperator.nvidia",
    }
    out: list[OlmPackage] = []
    for install in openshift_plan(target).installs:
        spec = install.subscription["spec"]
        out.append(
            OlmPackage(
                package=str(spec["name"]),
                channel=str(spec["channel"]),
                source=str(spec["source"]),
                source_namespace=str(spec["sourceNamespace"]),
                starting_csv=spec.get("startingCSV"),
                path=paths.get(install.role, TARGET),
            )
        )
    return out


#: What each platform (by its target's ``kind`` tag) adds to the requirements: the GKE clusters' APIs, quotas, org
#: policies and offerings (summed over a MultiKueue manager and its workers), OpenShift's OLM packages and context,
#: an existing cluster's context, the kind cluster and its loaded image.
_PLATFORM_REQUIREMENTS: dict[str, Callable[[Stack, list[tuple[Any, str]], Requirements], None]] = {
    "gke": _gke_requirements,
    "openshift": _openshift_requirements,
    "existing": _existing_requirements,
    "kind": _kind_requirements,
}

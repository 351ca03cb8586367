"""The ``batchplane:target`` section for GKE: a cluster, its system pool and typed GPU node pools.

``target: {kind: gke, ...}`` declares a Standard GKE cluster (default pool removed, release channel,
Workload Identity, optional private nodes, deletion protection) with a small system CPU pool and a
list of GPU pools, each with a provisioning mode:

* ``queued`` — Dynamic Workload Scheduler queued provisioning (``queued_provisioning.enabled``):
  nodes exist only for ProvisioningRequests, which Kueue's provisioning admission check creates.
* ``flex-start`` — flex-start VMs (``node_config.flex_start``), optionally with queued provisioning.
* ``on-demand``, ``spot``, ``reservation`` — ordinary autoscaled pools.

Field names mirror pulumi-gcp 10.2.0 ``gcp.container.Cluster``/``NodePool`` arguments
(https://github.com/pulumi/pulumi-gcp/tree/v10.2.0). GKE's rules for these modes
(https://cloud.google.com/kubernetes-engine/docs/concepts/dws and cluster-toolkit's ``gke-node-pool``
preconditions, https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/main/modules/compute/gke-node-pool/main.tf)
are checked by :func:`check_gke_target`, which returns every problem at once with its key path.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from batchplane.config.base import ConfigModel, DnsLabel, DnsSubdomain, LabelValue, QualifiedName
from batchplane.config.kueue import RetryStrategy, Taint
from batchplane.config.rules import topology_level_problems
from batchplane.errors import ConfigIssue
from batchplane.targets.gke.machines import (
    FIXED_GPU_MACHINES,
    FixedGpu,
    accelerator_attach_problem,
    is_fixed_gpu_family,
)
from batchplane.targets.gke.rules import deletion_protection_refused
from batchplane.wellknown import GKE_NODEPOOL_LABEL

_PROJECT_ID_RE = re.compile(r"^(?:[a-z][a-z0-9.-]*[a-z0-9]:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$")


def project_id_problem(value: str) -> str | None:
    """Why ``value`` is not a Google Cloud project ID, or None.

    Rule (Resource Manager "Creating and managing projects"): 6 to 30 characters, lowercase letters, digits
    and hyphens, starting with a letter and not ending with a hyphen; legacy domain-scoped IDs
    (``example.com:my-project``) keep their ``domain:`` prefix.
    """
    if _PROJECT_ID_RE.match(value):
        return None
    return (
        f'"{value}" is not a Google Cloud project ID: 6 to 30 lowercase letters, digits or hyphens, starting '
        "with a letter and not ending with a hyphen"
    )


def _check_project_id(value: str | None) -> str | None:
    why = None if value is None else project_id_problem(value)
    if why is not None:
        raise ValueError(why)
    return value


ProjectId = Annotated[str, AfterValidator(_check_project_id)]
"""A Google Cloud project ID (see :func:`project_id_problem`)."""

_SERVICE_ACCOUNT_EMAIL_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*@[a-z0-9][a-z0-9.:-]*\.gserviceaccount\.com$")

DEFAULT_NODE_SERVICE_ACCOUNT = "default"
"""The ``nodeServiceAccount`` value that keeps the Compute Engine default service account."""


def service_account_email_problem(value: str) -> str | None:
    """Why ``value`` is not a Google service account email, or None.

    Service account emails end in ``.gserviceaccount.com``: ``NAME@PROJECT.iam.gserviceaccount.com`` for
    user-managed accounts, ``PROJECT_NUMBER-compute@developer.gserviceaccount.com`` for the Compute Engine default
    one (IAM "Service accounts overview", https://cloud.google.com/iam/docs/service-account-overview).
    """
    if _SERVICE_ACCOUNT_EMAIL_RE.match(value):
        return None
    return (
        f'"{value}" is not a service account email (ACCOUNT@PROJECT.iam.gserviceaccount.com, or '
        "PROJECT_NUMBER-compute@developer.gserviceaccount.com)"
    )


def _check_service_account_email(value: str) -> str:
    why = service_account_email_problem(value)
    if why is not None:
        raise ValueError(why)
    return value


def _check_node_service_account(value: str) -> str:
    if value == DEFAULT_NODE_SERVICE_ACCOUNT:
        return value
    why = service_account_email_problem(value)
    if why is not None:
        raise ValueError(
            f'{why}, or "{DEFAULT_NODE_SERVICE_ACCOUNT}" for the Compute Engine default service account'
        )
    return value


ServiceAccountEmail = Annotated[str, AfterValidator(_check_service_account_email)]
"""A Google service account email (see :func:`service_account_email_problem`)."""

NodeServiceAccount = Annotated[str, AfterValidator(_check_node_service_account)]
"""A service account email, or ``default`` (see :attr:`GkeTarget.node_service_account`)."""

GKE_NODE_POOL_NAME_MAX = 40
"""GKE node pool and cluster names are at most 40 characters (GKE API)."""

QUEUED_PROVISIONING_MIN_VERSION = "1.31.1"
"""Kueue ≥ 0.13 creates ``autoscaling.x-k8s.io/v1`` ProvisioningRequests; GKE's cluster autoscaler
serves v1 from 1.31.1 (release note of https://github.com/kubernetes-sigs/kueue/pull/4444)."""

FLEX_START_MIN_VERSION = "1.32.2-gke.1652000"
"""Flex-start needs GKE 1.32.2-gke.1652000 or later (GKE "About flex-start provisioning mode")."""

MAX_RUN_DURATION_SECONDS = 7 * 24 * 3600
"""GKE caps a flex-start / queued node's run time at seven days (604800 s)."""

QUEUED_PROVISIONING_CLASS = "queued-provisioning.gke.io"
"""The ProvisioningRequest class GKE's queued provisioning serves."""

_VERSION_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+)(?:-gke\.(\d+))?)?$")
_REGION_RE = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
_ZONE_RE = re.compile(r"^([a-z]+-[a-z]+[0-9]+)-[a-z]$")

ClusterName = Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[a-z]([-a-z0-9]*[a-z0-9])?$")]
_Error = Callable[[str, str], None]
"""An ``error(path suffix, message)`` collector."""


def _gke_version(value: str) -> str:
    if not _VERSION_RE.match(value):
        raise ValueError(f'"{value}" is not a GKE version (e.g. 1.33 or 1.32.2-gke.1652000)')
    return value


GkeVersion = Annotated[str, AfterValidator(_gke_version)]
"""A GKE version or version prefix: ``1.33``, ``1.33.5``, ``1.32.2-gke.1652000``."""

PoolName = Annotated[DnsLabel, Field(max_length=GKE_NODE_POOL_NAME_MAX)]
Provisioning = Literal["queued", "flex-start", "on-demand", "spot", "reservation"]
RunDurationSeconds = Annotated[int, Field(ge=1, le=MAX_RUN_DURATION_SECONDS, strict=True)]
MergePolicy = Literal["IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements"]


class PrivateNodes(ConfigModel):
    """Private nodes (``private_cluster_config``): nodes get internal IP addresses only."""

    enabled: bool = True
    """Whether nodes have internal IPs only (``enable_private_nodes``). Defaults to true."""
    private_endpoint: bool = False
    """Also make the control plane reachable only privately (``enable_private_endpoint``). Defaults
    to false, so ``pulumi up`` from a workstation can still reach the API server."""
    master_ipv4_cidr_block: str = "172.16.0.0/28"
    """The control plane's /28 range (``master_ipv4_cidr_block``, "must be a /28"). Defaults to
    ``172.16.0.0/28``."""


class Accelerator(ConfigModel):
    """The GPUs of each node (``node_config.guest_accelerators[0]``)."""

    type: Annotated[str, Field(min_length=1, pattern=r"^[a-z0-9-]+$")]
    """Required. Compute Engine accelerator type, e.g. ``nvidia-l4``, ``nvidia-h100-80gb``."""
    count: Annotated[int, Field(ge=1, le=16, strict=True)]
    """Required. GPUs per node."""


class Reservation(ConfigModel):
    """Which Compute Engine reservation a ``provisioning: reservation`` pool consumes
    (``node_config.reservation_affinity``)."""

    affinity: Literal["SPECIFIC_RESERVATION", "ANY_RESERVATION"] = "SPECIFIC_RESERVATION"
    """``SPECIFIC_RESERVATION`` (the named one) or ``ANY_RESERVATION`` (any matching one).
    Defaults to ``SPECIFIC_RESERVATION``."""
    name: Annotated[str, Field(min_length=1)] | None = None
    """The reservation's name; required with ``SPECIFIC_RESERVATION``. Emitted as the value of key
    ``compute.googleapis.com/reservation-name``."""
    project: ProjectId | None = None
    """Project owning a shared reservation; emitted as ``projects/<project>/reservations/<name>``.
    Defaults to none (a reservation in the cluster's project)."""
    block: (
        Annotated[str, Field(min_length=1, max_length=63, pattern=r"^[a-z]([-a-z0-9]*[a-z0-9])?$")] | None
    ) = None
    """One block of the reservation (A3 Ultra, A4, A4X reservations come in blocks), e.g. ``my-res-block-0001``;
    emitted as ``<reservation>/reservationBlocks/<block>``, the value GKE's ``--reservation`` takes for a block
    (``gcloud compute reservations blocks list`` lists them). Only with ``SPECIFIC_RESERVATION``. Defaults to none
    (any block of the reservation)."""


TOPOLOGY_BLOCK_LABEL = "cloud.google.com/gce-topology-block"
TOPOLOGY_SUBBLOCK_LABEL = "cloud.google.com/gce-topology-subblock"
TOPOLOGY_HOST_LABEL = "cloud.google.com/gce-topology-host"
HOSTNAME_LABEL = "kubernetes.io/hostname"
GKE_TOPOLOGY_LABELS = (TOPOLOGY_BLOCK_LABEL, TOPOLOGY_SUBBLOCK_LABEL, TOPOLOGY_HOST_LABEL)
"""The physical-topology node labels GKE sets on A3 Mega, A3 Ultra, A4 and A4X nodes (GKE, "View the physical
topology of GKE nodes": block, sub-block and host of the VM)."""


@dataclass(frozen=True)
class DefaultTopology:
    """The Topology a machine family's pools get when ``topology`` gives no ``levels``.

    Attributes:
        name: the Topology object's name.
        levels: node labels from the widest domain to the narrowest.
    """

    name: str
    levels: tuple[str, ...]


_GKE_DEFAULT = DefaultTopology("gke-default", (*GKE_TOPOLOGY_LABELS, HOSTNAME_LABEL))
DEFAULT_TOPOLOGIES: dict[str, DefaultTopology] = {
    "a3-megagpu-": _GKE_DEFAULT,
    "a3-ultragpu-": _GKE_DEFAULT,
    "a4-highgpu-": _GKE_DEFAULT,
    "a4x-": DefaultTopology(
        "a4x-default",
        (
            TOPOLOGY_BLOCK_LABEL,
            TOPOLOGY_SUBBLOCK_LABEL,
            GKE_NODEPOOL_LABEL,
            TOPOLOGY_HOST_LABEL,
            HOSTNAME_LABEL,
        ),
    ),
}
"""Machine-type prefix → default Topology, as the anchors write it: xpk's ``gke-default`` (block, sub-block, host,
hostname) for A3 Mega/Ultra and A4, and cluster-toolkit's ``a4x-default``, which puts ``cloud.google.com/gke-nodepool``
between sub-block and host (``examples/gke-a4x/kueue-configuration.yaml.tftpl`` and
``examples/gke-a3-ultragpu/kueue-configuration.yaml.tftpl`` in GoogleCloudPlatform/cluster-toolkit)."""


def default_topology(machine_type: str) -> DefaultTopology | None:
    """The machine family's default Topology (:data:`DEFAULT_TOPOLOGIES`), or None when GKE sets no topology
    labels on its nodes."""
    for prefix, topology in DEFAULT_TOPOLOGIES.items():
        if machine_type.startswith(prefix):
            return topology
    return None


class PoolTopology(ConfigModel):
    """Topology-aware scheduling on a pool: the Kueue ``Topology`` its flavor names in ``topologyName``."""

    name: DnsSubdomain | None = None
    """The Topology object's name. Defaults to the machine family's (``gke-default`` for A3 Mega/Ultra and A4,
    ``a4x-default`` for A4X), else ``<flavor name>-topology``. Pools with the same levels may share one name."""
    levels: Annotated[list[QualifiedName], Field(min_length=1, max_length=16)] | None = None
    """Node labels from the widest domain to the narrowest: 1–16, unique, ``kubernetes.io/hostname`` only last
    (Kueue's Topology rules). Every one must be a label the pool's nodes carry. Defaults to the machine family's
    levels (:data:`DEFAULT_TOPOLOGIES`); required for other machine types."""


class Placement(ConfigModel):
    """Compact placement (``placement_policy``): nodes physically close for low latency."""

    type: Literal["COMPACT"] = "COMPACT"
    """The only policy type GKE supports: ``COMPACT``."""
    policy_name: str | None = None
    """A custom resource policy name (``policy_name``). Defaults to none (GKE creates one)."""


class ProvisioningRequestSettings(ConfigModel):
    """How Kueue asks for this queued pool's nodes: the generated ProvisioningRequestConfig."""

    max_run_duration_seconds: RunDurationSeconds | None = None
    """ProvisioningRequest parameter ``maxRunDurationSeconds``: nodes are removed after this long.
    At most 604800 (7 days, GKE's cap and default). Defaults to none (GKE's seven days). Jobs can
    override it with the annotation ``provreq.kueue.x-k8s.io/maxRunDurationSeconds``."""
    retry_strategy: RetryStrategy | None = None
    """Retries of failed ProvisioningRequests. Defaults to Kueue's (3 retries, 60 s base, 1800 s max),
    emitted explicitly."""
    pod_set_merge_policy: MergePolicy | None = "IdenticalWorkloadSchedulingRequirements"
    """Merge GPU PodSets with identical scheduling requirements into one ProvisioningRequest PodSet
    (GKE accepts one PodSet per request). Defaults to ``IdenticalWorkloadSchedulingRequirements``;
    ``null`` turns merging off. See docs/gke.md "RayJobs and the one-PodSet limit"."""


class SystemPool(ConfigModel):
    """The small CPU pool for operators, webhooks and Ray heads (no GPUs, no taints)."""

    name: PoolName = "system"
    """Node pool name. Defaults to ``system``."""
    machine_type: Annotated[str, Field(min_length=1)] = "e2-standard-4"
    """Compute Engine machine type. Defaults to ``e2-standard-4`` (4 vCPU, 16 GiB)."""
    min_nodes: Annotated[int, Field(ge=0, strict=True)] = 1
    """Autoscaling minimum (``total_min_node_count``). Defaults to 1."""
    max_nodes: Annotated[int, Field(ge=1, strict=True)] = 3
    """Autoscaling maximum (``total_max_node_count``). Defaults to 3."""
    node_locations: list[str] = Field(default_factory=list)
    """Zones for the pool. Defaults to none (the cluster's zones)."""
    disk_size_gb: Annotated[int, Field(ge=10, strict=True)] | None = None
    """Boot disk size in GB. Defaults to GKE's (100)."""


class GpuPool(ConfigModel):
    """One GPU node pool (``gcp.container.NodePool``) and the Kueue ResourceFlavor derived from it."""

    name: PoolName
    """Required. Node pool name (≤ 40 characters); nodes carry ``cloud.google.com/gke-nodepool: <name>``."""
    provisioning: Provisioning
    """Required. ``queued`` (DWS queued provisioning), ``flex-start``, ``on-demand``, ``spot`` or
    ``reservation``."""
    machine_type: Annotated[str, Field(min_length=1, pattern=r"^[a-z0-9-]+$")]
    """Required. Compute Engine machine type, e.g. ``g2-standard-4``, ``a3-highgpu-8g``."""
    accelerator: Accelerator | None = None
    """GPUs per node. Defaults to the machine type's fixed GPUs for a2/a3/a4/g2 machine types
    (where, if given, it must match); required for other machine types (``n1-*`` + T4/V100)."""
    node_locations: Annotated[list[str], Field(min_length=1)]
    """Required. Zones of the cluster's region where the accelerator is offered
    (``node_locations``); stated, never guessed — check ``gcloud compute accelerator-types list``."""
    min_nodes: Annotated[int, Field(ge=0, strict=True)] = 0
    """Autoscaling minimum. Defaults to 0. Must be 0 for queued pools."""
    max_nodes: Annotated[int, Field(ge=0, strict=True)] | None = None
    """Autoscaling maximum; required unless ``nodeCount`` is given. Total over all zones unless
    ``autoscalingLimits: per-zone``."""
    autoscaling_limits: Literal["total", "per-zone"] = "total"
    """Whether min/maxNodes are totals (``total_min/max_node_count``) or per zone
    (``min/max_node_count``). Defaults to ``total``; queued pools require totals."""
    node_count: Annotated[int, Field(ge=0, strict=True)] | None = None
    """A static node count per zone (``node_count``) instead of autoscaling. Not for queued or
    flex-start pools. Defaults to none (autoscaling)."""
    initial_node_count: Annotated[int, Field(ge=0, strict=True)] | None = None
    """Nodes created with the pool (``initial_node_count``). Defaults to 0 for queued and flex-start
    pools (required) and to none otherwise."""
    location_policy: Literal["ANY", "BALANCED"] | None = None
    """Autoscaler zone policy. Defaults to ``ANY`` for queued and flex-start pools (required) and to
    GKE's ``BALANCED`` otherwise."""
    auto_repair: bool | None = None
    """Node auto-repair (``management.auto_repair``). Defaults to false for queued and flex-start
    pools (required) and true otherwise."""
    auto_upgrade: bool = True
    """Node auto-upgrade (``management.auto_upgrade``). Defaults to true, and must stay true: the cluster is
    always on a release channel, and GKE refuses to turn node auto-upgrade off on a channel."""
    gpu_driver: Literal["DEFAULT", "LATEST", "INSTALLATION_DISABLED"] | None = None
    """GKE's NVIDIA driver installation (``gpu_driver_installation_config.gpu_driver_version``).
    Defaults to ``DEFAULT``, or ``INSTALLATION_DISABLED`` when ``target.gpuOperator`` is true."""
    queued_provisioning: bool | None = None
    """Flex-start pools only: also use queued provisioning (nodes only via ProvisioningRequests).
    Defaults to false for flex-start; queued pools always use it."""
    max_run_duration_seconds: RunDurationSeconds | None = None
    """Flex-start pools only: each node's run time (``node_config.max_run_duration``), ≤ 7 days.
    Defaults to none (GKE's seven days)."""
    provisioning_request: ProvisioningRequestSettings | None = None
    """Queued pools only: the generated ProvisioningRequestConfig's settings. Defaults to
    ``ProvisioningRequestSettings()``."""
    reservation: Reservation | None = None
    """``provisioning: reservation`` only (required there): the reservation to consume."""
    topology: PoolTopology | None = None
    """Topology-aware scheduling: the derived flavor gets ``topologyName`` and the stack declares the Topology.
    ``{}`` takes the machine family's default. Changing it replaces the flavor (Kueue makes ``topologyName``,
    ``nodeLabels`` and ``tolerations`` immutable once ``topologyName`` is set). Defaults to none (no TAS)."""
    placement: Placement | None = None
    """Compact placement. Not with queued provisioning. Defaults to none."""
    labels: Annotated[dict[QualifiedName, LabelValue], Field(max_length=32)] = Field(default_factory=dict)
    """Extra Kubernetes node labels (``node_config.labels``). Defaults to none."""
    taints: Annotated[list[Taint], Field(max_length=16)] = Field(default_factory=list)
    """Extra node taints (``node_config.taints``; Kubernetes effect names). The ``nvidia.com/gpu``
    taint is always added. The derived flavor tolerates all of them. Defaults to none."""
    flavor_name: DnsSubdomain | None = None
    """Name of the ResourceFlavor derived from this pool. Defaults to the pool name. A hand-written
    flavor with this name, or whose nodeLabels select this pool, is used instead (and checked)."""
    disk_size_gb: Annotated[int, Field(ge=10, strict=True)] | None = None
    """Boot disk size in GB. Defaults to GKE's (100)."""
    disk_type: str | None = None
    """Boot disk type, e.g. ``pd-ssd``, ``hyperdisk-balanced``. Defaults to GKE's."""
    service_account: ServiceAccountEmail | None = None
    """This pool's node service account email, overriding ``target.nodeServiceAccount`` for this pool only (the
    stack grants it nothing). Defaults to none: the cluster's node service account. Changing it replaces the pool
    (``node_config.service_account`` is force-new)."""

    def is_queued(self) -> bool:
        """True when nodes are obtained through ProvisioningRequests (queued, or flex-start + queued)."""
        flex_queued = self.provisioning == "flex-start" and bool(self.queued_provisioning)
        return self.provisioning == "queued" or flex_queued

    def dws_like(self) -> bool:
        """True for queued and flex-start pools (they share GKE's autoscaling/repair/reservation rules)."""
        return self.provisioning in ("queued", "flex-start")

    def fixed_gpu(self) -> FixedGpu | None:
        """The GPUs the machine type fixes (a2/a3/a4/g2), or None."""
        return FIXED_GPU_MACHINES.get(self.machine_type)

    def resolved_accelerator(self) -> Accelerator | None:
        """The accelerator as emitted: as configured, else the machine type's fixed GPUs, else None."""
        if self.accelerator is not None:
            return self.accelerator
        fixed = self.fixed_gpu()
        return None if fixed is None else Accelerator(type=fixed.accelerator_type, count=fixed.count)

    def resolved_flavor_name(self) -> str:
        """The derived ResourceFlavor's name (``flavorName`` or the pool name)."""
        return self.flavor_name or self.name

    def resolved_topology(self) -> DefaultTopology | None:
        """The pool's Topology as declared (name and levels), or None without ``topology`` or when no levels are
        given and the machine family has no default."""
        if self.topology is None:
            return None
        family = default_topology(self.machine_type)
        if self.topology.levels is not None:
            levels = tuple(self.topology.levels)
        elif family is not None:
            levels = family.levels
        else:
            return None
        if self.topology.name is not None:
            name = self.topology.name
        elif family is not None and family.levels == levels:
            name = family.name
        else:
            name = f"{self.resolved_flavor_name()}-topology"
        return DefaultTopology(name, levels)

    def resolved_auto_repair(self) -> bool:
        """Auto-repair as emitted."""
        return (not self.dws_like()) if self.auto_repair is None else self.auto_repair

    def resolved_gpu_driver(self, gpu_operator: bool) -> str:
        """The GPU driver version as emitted."""
        if self.gpu_driver is not None:
            return self.gpu_driver
        return "INSTALLATION_DISABLED" if gpu_operator else "DEFAULT"


class GkeTarget(ConfigModel):
    """A GKE Standard cluster Batchplane creates (pulumi-gcp), with a system pool and GPU pools."""

    kind: Literal["gke"]
    """Required tag: ``gke``."""
    project: ProjectId | None = None
    """GCP project ID. Defaults to the ``gcp:project`` stack config (``pulumi config set gcp:project``)."""
    region: str | None = None
    """Region of a regional cluster, e.g. ``us-central1``. Give region or zone."""
    zone: str | None = None
    """Zone of a zonal cluster, e.g. ``us-central1-a``. Give region or zone."""
    cluster_name: ClusterName = "batchplane"
    """GKE cluster name (≤ 40 characters). Defaults to ``batchplane``."""
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = "REGULAR"
    """Release channel (``release_channel.channel``). Defaults to ``REGULAR``."""
    min_master_version: GkeVersion | None = None
    """Minimum control-plane version (``min_master_version``), a full version
    (``1.32.2-gke.1652000``) or a prefix (``1.33``: the newest 1.33 patch). Checked against the pool
    modes' floors (queued: 1.31.1, flex-start: 1.32.2-gke.1652000) here, and against what the location's channel
    offers when ``pulumi up`` runs. Defaults to none: the channel's default version, checked against the floors at
    deploy time — versions leave a channel within months, so a template that pins one stops working."""
    deletion_protection: bool | None = None
    """``deletion_protection``. Defaults to true when ``environment`` is ``production``, else false;
    must be true in production."""
    workload_identity: bool = True
    """Workload Identity (``workload_identity_config.workload_pool = <project>.svc.id.goog`` and
    ``GKE_METADATA`` on every pool). Defaults to true."""
    private_nodes: PrivateNodes | None = None
    """Private nodes. Defaults to none (nodes get public IPs)."""
    network: str | None = None
    """VPC network name or self link. Defaults to the project's ``default`` network."""
    subnetwork: str | None = None
    """Subnetwork name or self link. Defaults to GKE's choice."""
    gpu_operator: bool = False
    """True when the NVIDIA GPU Operator installs drivers (then pools use ``INSTALLATION_DISABLED``).
    Defaults to false: GKE installs the driver."""
    secure_boot: bool = False
    """Shielded GKE nodes with Secure Boot and integrity monitoring on every pool, the cluster's initial default pool
    included (``node_config.shielded_instance_config``: ``enable_secure_boot``, ``enable_integrity_monitoring``). Needed
    where the org policy ``constraints/compute.requireShieldedVm`` is enforced: Compute Engine refuses every node VM
    without Secure Boot ("Constraint constraints/compute.requireShieldedVm violated … Secure Boot is not enabled in
    the 'shielded_instance_config' field"; GoogleCloudPlatform/cluster-toolkit pull 3507 sets it on the default pool
    for the same reason); ``batchplane preflight`` reports the policy. GKE-installed GPU drivers are signed and load
    under Secure Boot. ``shielded_instance_config`` is force-new: on a deployed stack every pool is replaced.
    Defaults to false (GKE's default: integrity monitoring on, Secure Boot off)."""
    system_pool: SystemPool = SystemPool()
    """The system CPU pool. Defaults to ``SystemPool()`` (``system``, e2-standard-4, 1–3 nodes)."""
    gpu_pools: list[GpuPool] = Field(default_factory=list)
    """GPU pools. Defaults to none."""
    node_service_account: NodeServiceAccount | None = None
    """The IAM service account the cluster's nodes run as (``node_config.service_account`` of every pool, the system
    pool included: the operators and the quota webhook run there). Omitted (the default): the stack creates one
    account per cluster, id ``<clusterName>-nodes`` (names over 24 characters: their first 21 characters, ``-`` and 8
    hex digits of their SHA-256), and grants it ``roles/container.defaultNodeServiceAccount`` on the project and
    nothing else project-wide — GKE's least-privilege node account ("Use least privilege IAM service accounts",
    https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster); the cluster and its pools wait
    for that grant. A service account email: every pool runs as it and the stack grants it no project role (give it
    ``roles/container.defaultNodeServiceAccount`` yourself). ``default``: the Compute Engine default service account
    (``service_account`` unset, the behaviour before this setting), which has no roles in organizations created
    since 2024-05-03 (``iam.automaticIamGrantsForDefaultServiceAccounts``); keep it for a stack deployed before this
    setting whose pools must not be replaced — ``node_config.service_account`` is force-new, so a deployed pool moved
    to another account is deleted and re-created (``NODE_POOL_REPLACE`` in ``batchplane/targets/gke/rules.py``;
    ``batchplane diff`` reports it). When the stack builds the webhook image into Artifact Registry, the system
    pool's account gets ``roles/artifactregistry.reader`` on that repository only. ``gpuPools[].serviceAccount``
    overrides it for one pool; Workload Identity is unchanged. Defaults to none (create)."""

    def node_account_mode(self) -> Literal["create", "email", "default"]:
        """How the nodes' service account is chosen: ``create`` (omitted), ``email`` (given) or ``default``."""
        if self.node_service_account is None:
            return "create"
        return "default" if self.node_service_account == DEFAULT_NODE_SERVICE_ACCOUNT else "email"

    def location(self) -> str:
        """The cluster location: the region, else the zone."""
        return self.region or self.zone or ""

    def kube_context(self) -> str:
        """The context name of the kubeconfig :class:`batchplane.targets.gke.cluster.GkeCluster` generates
        (the cluster name)."""
        return self.cluster_name

    def cluster_region(self) -> str:
        """The region the cluster is in (the zone's region for a zonal cluster)."""
        if self.region:
            return self.region
        match = _ZONE_RE.match(self.zone or "")
        return match.group(1) if match else ""

    def resolved_deletion_protection(self, environment: str) -> bool:
        """deletion_protection as emitted (defaults per environment)."""
        return environment == "production" if self.deletion_protection is None else self.deletion_protection


# --- versions ----------------------------------------------------------------------------------


def parse_gke_version(text: str) -> tuple[int, int, int, int] | None:
    """``"1.32.2-gke.1652000"`` → ``(1, 32, 2, 1652000)``; a prefix gets its lowest version
    (``"1.33"`` → ``(1, 33, 0, 0)``). None when the text is not a GKE version."""
    match = _VERSION_RE.match(text)
    if match is None:
        return None
    major, minor, patch, gke = match.groups()
    return int(major), int(minor), int(patch or 0), int(gke or 0)


# --- rules -------------------------------------------------------------------------------------


def check_gke_target(
    target: GkeTarget, environment: str, base: str = "batchplane:target"
) -> list[ConfigIssue]:
    """Every GKE rule for the cluster and its pools; all issues at once, with key paths.

    Args:
        target: the validated GKE target.
        environment: the stack's ``environment`` (``production`` requires deletion protection).
        base: the key path of the target.

    Returns:
        Errors and warnings (severity ``warning`` for an unchecked version floor).
    """
    out: list[ConfigIssue] = []

    def error(path: str, message: str) -> None:
        out.append(ConfigIssue(f"{base}{path}", message))

    _check_cluster(target, environment, error)
    _check_version(target, base, out)
    names: dict[str, str] = {target.system_pool.name: f"{base}.systemPool"}
    region = target.cluster_region()
    _check_zones(target.system_pool.node_locations, ".systemPool.nodeLocations", region, error)
    _check_system_pool_start(target, error)
    for i, pool in enumerate(target.gpu_pools):
        p = f".gpuPools[{i}]"
        if pool.name in names:
            first = names[pool.name]
            error(f"{p}.name", f'duplicate node pool name "{pool.name}" (first defined at {first})')
        else:
            names[pool.name] = f"{base}{p}"
        _check_pool_mode(pool, p, error)
        _check_pool_size(pool, p, error)
        _check_accelerator(pool, p, error)
        if not pool.auto_upgrade:
            error(
                f"{p}.autoUpgrade",
                f"must be true: the cluster is on the {target.release_channel} release channel and GKE does not "
                "allow node auto-upgrade to be turned off on a channel (use a maintenance exclusion to hold "
                "upgrades)",
            )
        _check_zones(pool.node_locations, f"{p}.nodeLocations", region, error)
        _check_driver(pool, p, target.gpu_operator, error)
        _check_topology(pool, p, error)
    _check_topology_names(target, error)
    return out


def _check_cluster(target: GkeTarget, environment: str, error: _Error) -> None:
    if target.region and target.zone:
        error(".zone", "give either region (a regional cluster) or zone (a zonal cluster), not both")
    elif not target.region and not target.zone:
        error(".region", "region or zone is required: the cluster's location")
    elif target.region and not _REGION_RE.match(target.region):
        error(".region", f'"{target.region}" is not a region (e.g. us-central1)')
    elif target.zone and not _ZONE_RE.match(target.zone):
        error(".zone", f'"{target.zone}" is not a zone (e.g. us-central1-a)')
    if deletion_protection_refused(target.deletion_protection, production=environment == "production"):
        error(
            ".deletionProtection",
            "must be true when environment is production: a production cluster must not be deletable "
            "by pulumi destroy or a replacement",
        )
    if target.private_nodes is not None:
        cidr = target.private_nodes.master_ipv4_cidr_block
        try:
            network = ipaddress.IPv4Network(cidr)
        except ValueError:
            error(".privateNodes.masterIpv4CidrBlock", f'"{cidr}" is not an IPv4 CIDR range')
        else:
            if network.prefixlen != 28:
                error(
                    ".privateNodes.masterIpv4CidrBlock",
                    f'"{cidr}" must be a /28 range: GKE reserves a /28 for the private control plane',
                )


def version_floor(target: GkeTarget) -> tuple[str, str] | None:
    """The lowest GKE version the target's pools work on, and why, or None.

    Flex-start pools need :data:`FLEX_START_MIN_VERSION`, queued pools :data:`QUEUED_PROVISIONING_MIN_VERSION`;
    the first flex-start pool wins, else the first queued one.

    Returns:
        ``(version, reason naming the pool)``, or None when no pool needs a floor.
    """
    floor: tuple[str, str] | None = None
    for i, pool in enumerate(target.gpu_pools):
        where = f'gpuPools[{i}] "{pool.name}"'
        if pool.provisioning == "flex-start":
            return (FLEX_START_MIN_VERSION, f"the minimum GKE version for flex-start node pools ({where})")
        if pool.is_queued() and floor is None:
            floor = (
                QUEUED_PROVISIONING_MIN_VERSION,
                "the minimum GKE version for queued provisioning with Kueue ≥ 0.13 "
                f"(autoscaling.x-k8s.io/v1 ProvisioningRequests; {where})",
            )
    return floor


def _check_version(target: GkeTarget, base: str, out: list[ConfigIssue]) -> None:
    floor = version_floor(target)
    if floor is None:
        return
    version, why = floor
    path = f"{base}.minMasterVersion"
    if target.min_master_version is None:  # the channel's default is checked when `pulumi up` runs
        return  # (batchplane.targets.gke.versions.deploy_version_problems)
    have = parse_gke_version(target.min_master_version)
    need = parse_gke_version(version)
    if have is not None and need is not None and have < need:
        have_text = target.min_master_version
        out.append(ConfigIssue(path, f'"{have_text}" is below {version}, {why}; use {version} or later'))


def _check_pool_mode(pool: GpuPool, p: str, error: _Error) -> None:
    _check_queued_flag(pool, p, error)
    _check_reservation(pool, p, error)
    if pool.provisioning_request is not None and not pool.is_queued():
        error(
            f"{p}.provisioningRequest",
            "only queued pools (provisioning: queued, or flex-start with queuedProvisioning) "
            "create ProvisioningRequests",
        )
    if pool.max_run_duration_seconds is not None and pool.provisioning != "flex-start":
        error(
            f"{p}.maxRunDurationSeconds",
            "only flex-start pools take a node run duration; "
            "for queued pools use provisioningRequest.maxRunDurationSeconds",
        )
    if pool.dws_like():
        _check_dws_pool(pool, p, error)


def _check_queued_flag(pool: GpuPool, p: str, error: _Error) -> None:
    mode, flag = pool.provisioning, pool.queued_provisioning
    if flag is None:
        return
    if mode == "spot" and flag:
        error(
            f"{p}.queuedProvisioning",
            "Spot VMs cannot use queued provisioning; use provisioning: queued or flex-start",
        )
    elif mode == "queued" and not flag:
        error(
            f"{p}.queuedProvisioning",
            "queued pools always use queued provisioning; "
            "remove queuedProvisioning or use provisioning: flex-start",
        )
    elif mode in ("on-demand", "reservation") and flag:
        error(
            f"{p}.queuedProvisioning", f"only flex-start pools take queuedProvisioning (this pool is {mode})"
        )


def _check_reservation(pool: GpuPool, p: str, error: _Error) -> None:
    mode = pool.provisioning
    if pool.reservation is not None and mode != "reservation":
        if pool.dws_like():
            error(
                f"{p}.reservation",
                f"{mode} pools must not consume reservations: GKE requires reservation affinity "
                "NO_RESERVATION for queued provisioning and flex-start",
            )
        else:
            error(
                f"{p}.reservation",
                f"only pools with provisioning: reservation consume reservations (this pool is {mode})",
            )
    if mode == "reservation":
        if pool.reservation is None:
            error(f"{p}.reservation", "required when provisioning is reservation: the reservation to consume")
        elif pool.reservation.affinity == "SPECIFIC_RESERVATION" and pool.reservation.name is None:
            error(f"{p}.reservation.name", "required when affinity is SPECIFIC_RESERVATION")
        if (
            pool.reservation is not None
            and pool.reservation.block
            and pool.reservation.affinity != "SPECIFIC_RESERVATION"
        ):
            error(
                f"{p}.reservation.block",
                "only with affinity SPECIFIC_RESERVATION: a block belongs to a named reservation",
            )


def _check_dws_pool(pool: GpuPool, p: str, error: _Error) -> None:
    kind = pool.provisioning
    if pool.auto_repair:
        error(
            f"{p}.autoRepair",
            f"must be false for {kind} pools: GKE requires auto-repair off (--no-enable-autorepair)",
        )
    if pool.node_count is not None:
        error(
            f"{p}.nodeCount",
            f"{kind} pools autoscale from 0: a static node count is not allowed; use maxNodes",
        )
    if pool.initial_node_count:
        error(f"{p}.initialNodeCount", f"must be 0 for {kind} pools (GKE: --num-nodes=0)")
    if pool.location_policy == "BALANCED":
        error(
            f"{p}.locationPolicy",
            f"must be ANY for {kind} pools: nodes come from whichever zone has capacity",
        )
    if not pool.is_queued():
        return
    if pool.min_nodes:
        error(
            f"{p}.minNodes",
            "must be 0 for queued pools: nodes exist only for ProvisioningRequests "
            "(GKE requires total min 0)",
        )
    if pool.autoscaling_limits != "total":
        error(
            f"{p}.autoscalingLimits",
            "must be total for queued pools: GKE's queued provisioning needs total node limits",
        )
    if pool.placement is not None:
        error(f"{p}.placement", "COMPACT placement is not supported for GPU pools with queued provisioning")


def _check_pool_size(pool: GpuPool, p: str, error: _Error) -> None:
    if pool.node_count is not None:
        if pool.max_nodes is not None:
            error(
                f"{p}.maxNodes", "give either nodeCount (a static pool) or maxNodes (autoscaling), not both"
            )
        return
    if pool.max_nodes is None:
        error(f"{p}.maxNodes", "required: the autoscaling maximum (or give nodeCount for a static pool)")
    elif pool.min_nodes > pool.max_nodes:
        error(f"{p}.minNodes", f"{pool.min_nodes} must be less than or equal to maxNodes ({pool.max_nodes})")


def _check_accelerator(pool: GpuPool, p: str, error: _Error) -> None:
    fixed = pool.fixed_gpu()
    if fixed is None and is_fixed_gpu_family(pool.machine_type):
        family = pool.machine_type.split("-", 1)[0]
        known = ", ".join(sorted(m for m in FIXED_GPU_MACHINES if m.startswith(family + "-")))
        error(
            f"{p}.machineType", f'"{pool.machine_type}" is not a known {family} machine type (known: {known})'
        )
        return
    if fixed is None:
        if pool.accelerator is None:
            error(
                f"{p}.accelerator",
                f"required for machine type {pool.machine_type}: "
                "only a2/a3/a4/g2 machine types come with GPUs",
            )
            return
        why = accelerator_attach_problem(pool.machine_type, pool.accelerator.type, pool.accelerator.count)
        if why is not None:
            error(f"{p}.accelerator", f"cannot be attached to machine type {pool.machine_type}: {why}")
        return
    if pool.accelerator is None:
        return
    comes_with = f"does not match machine type {pool.machine_type}, which comes with {fixed.count} × "
    comes_with += fixed.accelerator_type
    if pool.accelerator.type != fixed.accelerator_type:
        error(f"{p}.accelerator.type", f'"{pool.accelerator.type}" {comes_with}')
    if pool.accelerator.count != fixed.count:
        error(f"{p}.accelerator.count", f"{pool.accelerator.count} {comes_with}")


#: Zones a regional cluster's node pool spans when ``node_locations`` is not set: "By default, GKE replicates each
#: node pool across three zones of the control plane's region" (GKE, "About regional clusters",
#: https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters).
REGIONAL_DEFAULT_ZONES = 3


def _check_system_pool_start(target: GkeTarget, error: _Error) -> None:
    """The system pool starts with one node in each of its zones (``initial_node_count: 1`` per zone, see
    :func:`~batchplane.targets.gke.resources.system_pool_args`): more zones than ``maxNodes`` starts the pool above
    its own total maximum, and the autoscaler removes nodes the first Helm releases are scheduled on."""
    pool = target.system_pool
    zones = len(pool.node_locations) or (REGIONAL_DEFAULT_ZONES if target.region else 1)
    if zones > pool.max_nodes:
        where = (
            f"its {zones} nodeLocations"
            if pool.node_locations
            else f"the {zones} zones GKE spreads a regional cluster's pool over"
        )
        error(
            ".systemPool.maxNodes",
            f"{pool.max_nodes} is fewer than the {zones} nodes the pool starts with (one in each of {where}): set "
            f"maxNodes to at least {zones} or list fewer systemPool.nodeLocations",
        )
    if pool.min_nodes > pool.max_nodes:
        error(
            ".systemPool.minNodes",
            f"{pool.min_nodes} must be less than or equal to maxNodes ({pool.max_nodes})",
        )


def _check_zones(zones: list[str], path: str, region: str, error: _Error) -> None:
    seen: set[str] = set()
    for i, zone in enumerate(zones):
        match = _ZONE_RE.match(zone)
        if match is None:
            error(f"{path}[{i}]", f'"{zone}" is not a zone (e.g. us-central1-a)')
        elif region and match.group(1) != region:
            error(f"{path}[{i}]", f'"{zone}" is not a zone of the cluster\'s region {region}')
        if zone in seen:
            error(f"{path}[{i}]", f'"{zone}" is listed twice')
        seen.add(zone)


def _carries_label(pool: GpuPool, label: str) -> bool:
    """Whether every node of the pool carries ``label``: Kubernetes' hostname, GKE's node-pool label, the
    topology labels on the families GKE sets them on (:data:`DEFAULT_TOPOLOGIES`), and the pool's own labels."""
    if label in (HOSTNAME_LABEL, GKE_NODEPOOL_LABEL) or label in pool.labels:
        return True
    return label in GKE_TOPOLOGY_LABELS and default_topology(pool.machine_type) is not None


def topology_problems(pool: GpuPool) -> list[tuple[str, str]]:
    """Why the pool's ``topology`` cannot be declared: ``(key path suffix, message)`` pairs, all at once.

    Kueue's level rules (:func:`~batchplane.config.rules.topology_level_problems`, ``kubernetes-sigs/kueue`` v0.19.2
    ``apis/kueue/v1beta2/topology_types.go`` L113-117), levels required where the machine family has no default,
    and every level a label the pool's nodes carry (a level whose label no node has puts no node in the Topology:
    Kueue then finds no domain to place a pod in).
    """
    if pool.topology is None:
        return []
    if pool.topology.levels is None and default_topology(pool.machine_type) is None:
        families = ", ".join(prefix.rstrip("-") for prefix in DEFAULT_TOPOLOGIES)
        return [
            (
                ".topology.levels",
                f"required for machine type {pool.machine_type}: GKE sets the topology labels "
                f"({', '.join(GKE_TOPOLOGY_LABELS)}) only on {families} nodes, so there is no default; list the "
                f"levels (e.g. [{HOSTNAME_LABEL}])",
            )
        ]
    resolved = pool.resolved_topology()
    levels = resolved.levels if resolved is not None else ()
    out = [(f".topology.levels[{i}]", message) for i, message in topology_level_problems(levels)]
    for i, label in enumerate(levels):
        if not _carries_label(pool, label):
            out.append(
                (
                    f".topology.levels[{i}]",
                    f'the nodes of pool "{pool.name}" ({pool.machine_type}) do not carry the label "{label}", so '
                    "Kueue would find no topology domain for them; add it to this pool's labels or drop the level",
                )
            )
    return out


def _check_topology(pool: GpuPool, p: str, error: _Error) -> None:
    for suffix, message in topology_problems(pool):
        error(f"{p}{suffix}", message)


def _check_topology_names(target: GkeTarget, error: _Error) -> None:
    """Pools that name the same Topology must declare the same levels (one object per name)."""
    first: dict[str, tuple[int, tuple[str, ...]]] = {}
    for i, pool in enumerate(target.gpu_pools):
        topology = pool.resolved_topology()
        if topology is None or topology_problems(pool):
            continue
        seen = first.setdefault(topology.name, (i, topology.levels))
        if seen[1] != topology.levels:
            error(
                f".gpuPools[{i}].topology.name",
                f'Topology "{topology.name}" is declared by gpuPools[{seen[0]}] with levels {list(seen[1])}, '
                f"this pool's levels are {list(topology.levels)}: give this pool's topology another name",
            )


def _check_driver(pool: GpuPool, p: str, gpu_operator: bool, error: _Error) -> None:
    if pool.gpu_driver == "INSTALLATION_DISABLED" and not gpu_operator:
        error(
            f"{p}.gpuDriver",
            "INSTALLATION_DISABLED installs no NVIDIA driver: set target.gpuOperator: true if the "
            "NVIDIA GPU Operator installs it, or use DEFAULT or LATEST",
        )
    elif pool.gpu_driver in ("DEFAULT", "LATEST") and gpu_operator:
        error(
            f"{p}.gpuDriver",
            "must be INSTALLATION_DISABLED when target.gpuOperator is true: "
            "GKE and the GPU Operator would both install drivers",
        )

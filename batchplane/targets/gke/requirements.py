"""What a GKE stack needs from Google Cloud before ``pulumi up``: a pure model, computed offline from the validated
GKE targets (the stack's own and its declared MultiKueue workers').

:func:`batchplane.targets.gke.preflight.add_gke_requirements` adds to the stack's
:class:`~batchplane.preflight.model.Requirements` what this module computes: the Google Cloud APIs to enable, the Compute Engine quotas the pools need at their maximum size, the org-policy constraints the
template depends on, the network, the machine and accelerator types each zone must offer, the GKE release channel
and version, the deployer's permissions and roles and the Artifact Registry repositories. Every item carries the
config key path it comes from. :mod:`batchplane.targets.gke.preflight` compares it with what the APIs answer; the
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
  the machine family's own quota, e.g. ``A2_CPUS`` or ``cpus_per_vm_family``), and ``CPUS_ALL_REGIONS``. Spot,
  flex-start and queued VMs consume preemptible quota for the whole VM, vCPUs as well as GPUs (Compute Engine
  "Flex-start VMs": "Flex-start VMs consume preemptible quota", cloud.google.com/compute/docs/instances/flex-start-vms;
  queued provisioning obtains flex-start VMs). Once a project has ``PREEMPTIBLE_CPUS`` quota in a region, "all
  preemptible VMs count against that quota, and all standard VMs continue to count against the standard CPU quota";
  without it "you can use standard CPU quota to launch preemptible VMs"
  (cloud.google.com/compute/docs/instances/create-use-preemptible, "Preemptible CPU quotas"): the checker moves
  those pools' vCPUs (:attr:`QuotaNeed.preemptible_part`) from ``CPUS`` to ``PREEMPTIBLE_CPUS`` exactly when the
  latter is granted (not 0) in the region. Local SSD bundled with the machine type (an a3-highgpu-8g carries
  16 × 375 GB: :data:`~batchplane.targets.gke.machines.LOCAL_SSD_GB`) moves from ``LOCAL_SSD_TOTAL_GB`` to
  ``PREEMPTIBLE_LOCAL_SSD_GB`` the same way.
* Boot disks per region: every node's boot disk (``diskSizeGb``, default 100 GB) against ``SSD_TOTAL_GB`` for
  ``pd-balanced`` (GKE's default), ``pd-ssd`` and ``pd-extreme``, ``DISKS_TOTAL_GB`` for ``pd-standard`` (Compute
  Engine "Allocation quotas", "Disk quotas", cloud.google.com/compute/resource-usage#disk_quota).
* Public nodes (no ``privateNodes``) each hold an ephemeral external IPv4 address: ``IN_USE_ADDRESSES`` per region
  ("In-use IP addresses", cloud.google.com/compute/resource-usage#external_ip_addresses).
* At deploy time or later: ``pulumi up`` creates the system pool's initial node per zone, static pools, and pools
  with a minimum (:attr:`QuotaNeed.at_deploy`); everything above that appears only when the autoscaler or a
  ProvisioningRequest scales up. A quota below what ``pulumi up`` creates is a blocker; a quota that covers that but
  not every pool at ``maxNodes`` is a warning (scale-up fails later, visible as an unprovisioned
  ProvisioningRequest or a pending pod).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal, cast

from batchplane.targets.gke.config import (
    FLEX_START_MIN_VERSION,
    QUEUED_PROVISIONING_MIN_VERSION,
    GkeTarget,
    GpuPool,
)
from batchplane.targets.gke.machines import LOCAL_SSD_GB, MACHINE_SHAPES
from batchplane.targets.gke.network import private_network_args

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


#: The project whose images GKE nodes boot (Container-Optimized OS and Ubuntu node images): GKE "Node images",
#: "Node image source projects" (cloud.google.com/kubernetes-engine/docs/concepts/node-images#node_image_source_projects).
GKE_NODE_IMAGE_PROJECT = "projects/gke-node-images"


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


QuotaKind = Literal[
    "gpus", "gpus-all-regions", "cpus", "cpus-all-regions", "ssd-gb", "disks-gb", "local-ssd-gb", "addresses"
]


#: Per-region quota kinds → (Cloud Quotas id, Compute Engine metric) for the kinds with one quota each.
REGION_QUOTAS: dict[str, tuple[str, str]] = {
    "ssd-gb": ("SSD-TOTAL-GB-per-project-region", "SSD_TOTAL_GB"),
    "disks-gb": ("DISKS-TOTAL-GB-per-project-region", "DISKS_TOTAL_GB"),
    "local-ssd-gb": ("LOCAL-SSD-TOTAL-GB-per-project-region", "LOCAL_SSD_TOTAL_GB"),
    "addresses": ("IN-USE-ADDRESSES-per-project-region", "IN_USE_ADDRESSES"),
}


@dataclass(frozen=True)
class QuotaNeed:
    """How much of one Compute Engine quota the stack needs at its maximum size, and how much of it ``pulumi up``
    itself creates.

    Attributes:
        kind: ``gpus`` (per family and region), ``gpus-all-regions``, ``cpus`` (per region), ``cpus-all-regions``,
            ``ssd-gb`` / ``disks-gb`` (boot disks per region: SSD-backed types / ``pd-standard``), ``local-ssd-gb``
            (local SSD bundled with the machine type), ``addresses`` (external IPv4 addresses of public nodes).
        amount: GPUs, vCPUs, GB or addresses needed at every pool's maximum.
        region: the region, or None for project-wide quotas.
        gpu_family: ``NVIDIA_L4`` … for ``gpus``; else None.
        preemptible: True when the need is on the preemptible quota (spot, flex-start, queued pools).
        vm_family: the machine family of the vCPUs (``G2``, ``E2``, ``A3`` …) for ``cpus``; None when mixed.
        paths: the config key paths of the pools that add up to it.
        spot_gpus: for preemptible ``gpus``: how many of :attr:`amount` come from spot pools (what moves to the
            standard quota where the project has no preemptible quota of the family in the region). Defaults to 0.
        spot_paths: the key paths of those spot pools. Defaults to none.
        preemptible_part: for ``cpus`` and ``local-ssd-gb``: how much of :attr:`amount` comes from spot, flex-start
            and queued pools (what counts against ``PREEMPTIBLE_CPUS`` / ``PREEMPTIBLE_LOCAL_SSD_GB`` where the
            project has that quota in the region). Defaults to 0.
        preemptible_paths: the key paths of those pools. Defaults to none.
        at_deploy: how much of :attr:`amount` the nodes ``pulumi up`` creates need (system pool's initial nodes,
            static pools, pools with a minimum): a shortfall below it fails ``pulumi up`` (a blocker); between it
            and :attr:`amount` only a later scale-up fails (a warning). Defaults to None: all of it.
        spot_at_deploy: the part of :attr:`spot_gpus` created at deploy time. Defaults to 0.
        preemptible_at_deploy: the part of :attr:`preemptible_part` created at deploy time. Defaults to 0.
    """

    kind: QuotaKind
    amount: int
    region: str | None = None
    gpu_family: str | None = None
    preemptible: bool = False
    vm_family: str | None = None
    paths: tuple[str, ...] = ()
    spot_gpus: int = 0
    spot_paths: tuple[str, ...] = ()
    preemptible_part: int = 0
    preemptible_paths: tuple[str, ...] = ()
    at_deploy: int | None = None
    spot_at_deploy: int = 0
    preemptible_at_deploy: int = 0

    @property
    def deploy_amount(self) -> int:
        """:attr:`at_deploy`, or :attr:`amount` when unknown."""
        return self.amount if self.at_deploy is None else self.at_deploy

    @property
    def metric(self) -> str:
        """The Compute Engine quota metric name: ``NVIDIA_L4_GPUS``, ``PREEMPTIBLE_NVIDIA_L4_GPUS``, ``CPUS``,
        ``PREEMPTIBLE_CPUS``, ``GPUS_ALL_REGIONS``, ``CPUS_ALL_REGIONS``, ``SSD_TOTAL_GB``, ``DISKS_TOTAL_GB``,
        ``LOCAL_SSD_TOTAL_GB``, ``PREEMPTIBLE_LOCAL_SSD_GB``, ``IN_USE_ADDRESSES`` (family CPU quotas are named by
        :attr:`vm_family`)."""
        if self.kind == "gpus":
            return f"{'PREEMPTIBLE_' if self.preemptible else ''}{self.gpu_family}_GPUS"
        if self.kind == "gpus-all-regions":
            return "GPUS_ALL_REGIONS"
        if self.kind == "cpus-all-regions":
            return "CPUS_ALL_REGIONS"
        if self.kind == "local-ssd-gb" and self.preemptible:
            return "PREEMPTIBLE_LOCAL_SSD_GB"
        if self.kind in REGION_QUOTAS:
            return REGION_QUOTAS[self.kind][1]
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
        secure_boot: True when every pool's nodes boot with Secure Boot (``secureBoot``).
        nat_router: the Cloud Router the stack creates for private nodes' Cloud NAT (``<clusterName>-router``),
            or None without private nodes. Defaults to None.
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
    secure_boot: bool = False
    nat_router: str | None = None


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


@dataclass(frozen=True)
class ArtifactRepository:
    """An Artifact Registry repository the stack creates (``webhook.build`` on GKE).

    Attributes:
        region: its location (the cluster's region).
        repository_id: its id (``webhook.build.repository``, else ``<clusterName>-images``).
        owner: the ``batchplane-stack`` label value the stack gives it (the Pulumi stack name, normalised).
        path: the config key that names it.
    """

    region: str
    repository_id: str
    owner: str
    path: str


@dataclass(frozen=True)
class ResourcePermissions:
    """What the deployer needs to create, update and delete one kind of resource.

    Attributes:
        permissions: the IAM permissions, as ``projects.testIamPermissions`` names them.
        role: the predefined role that grants them all (the fix to suggest).
        source: where the permissions are documented.
    """

    permissions: tuple[str, ...]
    role: str
    source: str


_GKE_API_PERMISSIONS = "https://cloud.google.com/kubernetes-engine/docs/reference/api-permissions"


#: Pulumi type token (pulumi-gcp 10.2.0) → what ``pulumi up`` needs on the project to manage it. One row per
#: resource type the GKE stacks declare; ``iam.serviceAccounts.actAs`` is the nodes' account attached to the cluster
#: and its pools. Sources: GKE "API permissions" (cluster and node-pool methods, node pools are
#: ``container.clusters.update``), Compute Engine API reference "Authorization" of ``routers.insert``/``patch`` and
#: ``firewalls.insert`` (which also needs ``compute.networks.updatePolicy``), IAM ``projects.serviceAccounts.create``,
#: Resource Manager ``projects.setIamPolicy``, Artifact Registry "Access control with IAM" (permissions by role). The
#: roles: IAM "Compute Engine roles" (cloud.google.com/iam/docs/roles-permissions/compute: Compute Network Admin
#: creates, modifies and deletes networking resources "except for firewall rules and SSL certificates", which
#: Compute Security Admin manages), "Kubernetes Engine roles", "Service accounts roles", "Artifact Registry roles".
RESOURCE_PERMISSIONS: dict[str, ResourcePermissions] = {
    "gcp:container/cluster:Cluster": ResourcePermissions(
        (
            "container.clusters.create",
            "container.clusters.get",
            "container.clusters.update",
            "container.clusters.delete",
            "container.operations.get",
        ),
        "roles/container.admin",
        _GKE_API_PERMISSIONS,
    ),
    "gcp:container/nodePool:NodePool": ResourcePermissions(
        ("container.clusters.get", "container.clusters.update", "container.operations.get"),
        "roles/container.admin",
        _GKE_API_PERMISSIONS,
    ),
    "Kubernetes objects of the operator installs (CRDs, ClusterRoles, ClusterRoleBindings)": ResourcePermissions(
        (
            "container.customResourceDefinitions.create",
            "container.clusterRoles.create",
            "container.clusterRoles.bind",
            "container.clusterRoles.escalate",
            "container.clusterRoleBindings.create",
        ),
        "roles/container.admin",
        # roles/container.clusterAdmin holds only container.clusters.* and container.operations.* (iann0036/
        # iam-dataset 1818bc70 gcp/roles/container.clusterAdmin.json); roles/container.admin holds these
        # (gcp/roles/container.admin.json). GKE authorizes Kubernetes API requests with IAM as well as RBAC.
        "https://cloud.google.com/kubernetes-engine/docs/how-to/iam",
    ),
    "node service account (attached to the node VMs)": ResourcePermissions(
        ("iam.serviceAccounts.actAs",),
        "roles/iam.serviceAccountUser",
        "https://cloud.google.com/iam/docs/service-account-permissions",
    ),
    "gcp:serviceaccount/account:Account": ResourcePermissions(
        (
            "iam.serviceAccounts.create",
            "iam.serviceAccounts.get",
            "iam.serviceAccounts.update",
            "iam.serviceAccounts.delete",
        ),
        "roles/iam.serviceAccountAdmin",
        "https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts/create",
    ),
    "gcp:projects/iAMMember:IAMMember": ResourcePermissions(
        ("resourcemanager.projects.getIamPolicy", "resourcemanager.projects.setIamPolicy"),
        "roles/resourcemanager.projectIamAdmin",
        "https://cloud.google.com/resource-manager/reference/rest/v3/projects/setIamPolicy",
    ),
    "gcp:compute/router:Router": ResourcePermissions(
        ("compute.routers.create", "compute.routers.get", "compute.routers.update", "compute.routers.delete"),
        "roles/compute.networkAdmin",
        "https://cloud.google.com/compute/docs/reference/rest/v1/routers/insert",
    ),
    "gcp:compute/routerNat:RouterNat": ResourcePermissions(
        ("compute.routers.get", "compute.routers.update"),
        "roles/compute.networkAdmin",
        "https://cloud.google.com/compute/docs/reference/rest/v1/routers/patch",
    ),
    "gcp:compute/firewall:Firewall": ResourcePermissions(
        (
            "compute.firewalls.create",
            "compute.firewalls.get",
            "compute.firewalls.update",
            "compute.firewalls.delete",
            "compute.networks.updatePolicy",
        ),
        "roles/compute.securityAdmin",
        "https://cloud.google.com/compute/docs/reference/rest/v1/firewalls/insert",
    ),
    "gcp:artifactregistry/repository:Repository": ResourcePermissions(
        (
            "artifactregistry.repositories.create",
            "artifactregistry.repositories.get",
            "artifactregistry.repositories.update",
            "artifactregistry.repositories.delete",
            "artifactregistry.repositories.uploadArtifacts",
        ),
        "roles/artifactregistry.admin",
        "https://cloud.google.com/artifact-registry/docs/access-control#permissions",
    ),
    "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember": ResourcePermissions(
        ("artifactregistry.repositories.getIamPolicy", "artifactregistry.repositories.setIamPolicy"),
        "roles/artifactregistry.admin",
        "https://cloud.google.com/artifact-registry/docs/access-control#permissions",
    ),
}


@dataclass(frozen=True)
class PermissionNeed:
    """The permissions the deployer needs on the project for one kind of resource the stack declares.

    Attributes:
        resource_type: the key of :data:`RESOURCE_PERMISSIONS` (a Pulumi type token).
        permissions: its permissions.
        role: the predefined role that grants them.
        path: the config key that makes the stack declare it (the first one, when several do).
        created_here: the resource is created by the same ``pulumi up`` (the node service account the stack
            creates), so no grant on the resource itself can exist yet. Defaults to false.
    """

    resource_type: str
    permissions: tuple[str, ...]
    role: str
    path: str
    created_here: bool = False


def gke_permissions(
    targets: list[tuple[GkeTarget, str]], ports: list[int], builds: bool
) -> list[PermissionNeed]:
    """The deployer's permissions for the resources GKE clusters declare, one entry per resource type, each with
    the config key of the first cluster (or pool) that declares it.

    Args:
        targets: ``(target, key path)`` of the clusters in the project.
        ports: the webhook ports private nodes' firewall rule opens (:func:`_webhook_ports`).
        builds: the stack builds the webhook image into Artifact Registry.

    Returns:
        :class:`PermissionNeed` per resource type, in :data:`RESOURCE_PERMISSIONS` order.
    """
    declared: dict[str, str] = {}

    def declare(resource_type: str, path: str) -> None:
        declared.setdefault(resource_type, path)

    for target, path in targets:
        declare("gcp:container/cluster:Cluster", path)
        declare("gcp:container/nodePool:NodePool", f"{path}.systemPool")
        declare("Kubernetes objects of the operator installs (CRDs, ClusterRoles, ClusterRoleBindings)", path)
        declare("node service account (attached to the node VMs)", f"{path}.nodeServiceAccount")
        if target.node_account_mode() == "create":
            declare("gcp:serviceaccount/account:Account", f"{path}.nodeServiceAccount")
            declare("gcp:projects/iAMMember:IAMMember", f"{path}.nodeServiceAccount")
        network = private_network_args(target, ports)
        if network is not None:
            declare("gcp:compute/router:Router", f"{path}.privateNodes")
            declare("gcp:compute/routerNat:RouterNat", f"{path}.privateNodes")
            if network.get("firewall") is not None:
                declare("gcp:compute/firewall:Firewall", f"{path}.privateNodes")
    if builds:
        declare("gcp:artifactregistry/repository:Repository", "batchplane:webhook.build")
        declare("gcp:artifactregistry/repositoryIamMember:RepositoryIamMember", "batchplane:webhook.build")
    creates_node_account = any(target.node_account_mode() == "create" for target, _ in targets)
    return [
        PermissionNeed(
            kind,
            row.permissions,
            row.role,
            declared[kind],
            created_here=creates_node_account and kind == "node service account (attached to the node VMs)",
        )
        for kind, row in RESOURCE_PERMISSIONS.items()
        if kind in declared
    ]


def gke_cluster(target: GkeTarget, path: str) -> GkeCluster:
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
        secure_boot=target.secure_boot,
        nat_router=f"{target.cluster_name}-router" if private else None,
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


def zone_offerings(target: GkeTarget, path: str) -> list[ZoneOffering]:
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


#: GKE's boot disk when ``diskSizeGb`` / ``diskType`` are not set: 100 GB ``pd-balanced`` (pulumi-gcp 10.2.0
#: ``NodePoolNodeConfig`` ``disk_size_gb``/``disk_type``: "Defaults to 100GB", "Defaults to 'pd-balanced'").
DEFAULT_BOOT_DISK_GB = 100


DEFAULT_BOOT_DISK_TYPE = "pd-balanced"


#: Boot disk types whose size counts against ``SSD_TOTAL_GB``; ``pd-standard`` counts against ``DISKS_TOTAL_GB``
#: (Compute Engine "Allocation quotas", "Disk quotas": "Persistent Disk SSD (GB)" covers SSD and balanced persistent
#: disks, "Persistent Disk Standard (GB)" standard ones; cloud.google.com/compute/resource-usage#disk_quota). Hyperdisk
#: types have quotas of their own that Batchplane does not check.
SSD_BOOT_DISKS = frozenset({"pd-balanced", "pd-ssd", "pd-extreme"})


#: A regional cluster without ``nodeLocations`` runs its pools in this many of the region's zones (GKE's default for
#: regional clusters: "three zones", cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters).
REGIONAL_DEFAULT_ZONES = 3


@dataclass
class _Tally:
    """A quota need being summed: at maximum, at deploy time, and which pools."""

    amount: int = 0
    at_deploy: int = 0
    paths: list[str] = field(default_factory=list)

    def add(self, amount: int, at_deploy: int, path: str) -> None:
        self.amount += amount
        self.at_deploy += at_deploy
        if path not in self.paths:
            self.paths.append(path)


def initial_nodes(pool: GpuPool) -> int:
    """The nodes ``pulumi up`` creates for a GPU pool: ``nodeCount`` × zones, else ``initialNodeCount`` per zone, else
    0 for DWS-like pools (created empty), else ``minNodes`` (× zones when limits are per zone)."""
    zones = max(1, len(pool.node_locations))
    if pool.node_count is not None:
        return pool.node_count * zones
    if pool.initial_node_count is not None:
        return pool.initial_node_count * zones
    if pool.dws_like():
        return 0
    return pool.min_nodes * zones if pool.autoscaling_limits == "per-zone" else pool.min_nodes


def _system_zones(target: GkeTarget) -> int:
    if target.system_pool.node_locations:
        return len(target.system_pool.node_locations)
    return 1 if target.zone else REGIONAL_DEFAULT_ZONES


@dataclass
class _Tallies:
    """Every quota need of one project being summed, keyed by region (and family)."""

    gpus: dict[tuple[str, str, bool], _Tally] = field(default_factory=lambda: defaultdict(_Tally))
    spot: dict[tuple[str, str], _Tally] = field(default_factory=lambda: defaultdict(_Tally))
    cpus: dict[tuple[str, str], _Tally] = field(default_factory=lambda: defaultdict(_Tally))
    preemptible_cpus: dict[tuple[str, str], _Tally] = field(default_factory=lambda: defaultdict(_Tally))
    region: dict[tuple[str, str], _Tally] = field(
        default_factory=lambda: defaultdict(_Tally)
    )  # (kind, region)
    preemptible_local: dict[str, _Tally] = field(default_factory=lambda: defaultdict(_Tally))


def gke_quotas(targets: list[tuple[GkeTarget, str]]) -> list[QuotaNeed]:
    """The quota needs of GKE clusters at their maximum size (see the module docstring for the arithmetic).

    Args:
        targets: ``(target, key path)`` of every GKE cluster in one project.

    Returns:
        One :class:`QuotaNeed` per GPU family × region × standard/preemptible, per region and machine family for
        vCPUs, per region for boot disks (SSD-backed, standard), local SSD and public nodes' addresses, and the
        project-wide ``GPUS_ALL_REGIONS`` / ``CPUS_ALL_REGIONS`` totals; ordered for stable output. Each carries
        what ``pulumi up`` itself creates (:attr:`QuotaNeed.at_deploy`).
    """
    tallies = _Tallies()
    for target, path in targets:
        _tally_system_pool(target, path, tallies)
        for i, pool in enumerate(target.gpu_pools):
            _tally_gpu_pool(target, pool, f"{path}.gpuPools[{i}]", tallies)
    return [*_gpu_needs(tallies), *_cpu_needs(tallies), *_region_needs(tallies)]


def _tally_system_pool(target: GkeTarget, path: str, t: _Tallies) -> None:
    region = target.cluster_region()
    system = target.system_pool
    spath = f"{path}.systemPool"
    most, deploy = system.max_nodes, _system_zones(target)
    shape = MACHINE_SHAPES.get(system.machine_type)
    if shape is not None:
        t.cpus[(region, vm_family(system.machine_type))].add(most * shape.vcpus, deploy * shape.vcpus, spath)
    size = system.disk_size_gb or DEFAULT_BOOT_DISK_GB
    t.region[(_boot_disk_kind(None), region)].add(most * size, deploy * size, spath)
    if target.private_nodes is None or not target.private_nodes.enabled:
        t.region[("addresses", region)].add(most, deploy, spath)


def _tally_gpu_pool(target: GkeTarget, pool: GpuPool, ppath: str, t: _Tallies) -> None:
    region = target.cluster_region()
    nodes = max_nodes(pool)
    if pool.provisioning == "reservation" or nodes == 0:
        return
    deploy = min(initial_nodes(pool), nodes)
    preemptible = pool.provisioning in PREEMPTIBLE_MODES
    family = vm_family(pool.machine_type)
    shape = MACHINE_SHAPES.get(pool.machine_type)
    if shape is not None:
        t.cpus[(region, family)].add(nodes * shape.vcpus, deploy * shape.vcpus, ppath)
        if preemptible:
            t.preemptible_cpus[(region, family)].add(nodes * shape.vcpus, deploy * shape.vcpus, ppath)
    size = pool.disk_size_gb or DEFAULT_BOOT_DISK_GB
    t.region[(_boot_disk_kind(pool.disk_type), region)].add(nodes * size, deploy * size, ppath)
    if target.private_nodes is None or not target.private_nodes.enabled:
        t.region[("addresses", region)].add(nodes, deploy, ppath)
    local = LOCAL_SSD_GB.get(pool.machine_type, 0)
    if local:
        t.region[("local-ssd-gb", region)].add(nodes * local, deploy * local, ppath)
        if preemptible:
            t.preemptible_local[region].add(nodes * local, deploy * local, ppath)
    acc = pool.resolved_accelerator()
    gpu_family = None if acc is None else GPU_FAMILIES.get(acc.type)
    if acc is None or gpu_family is None:
        return
    t.gpus[(region, gpu_family, preemptible)].add(nodes * acc.count, deploy * acc.count, ppath)
    if pool.provisioning == "spot":
        t.spot[(region, gpu_family)].add(nodes * acc.count, deploy * acc.count, ppath)


def _total(tallies: list[_Tally]) -> _Tally:
    out = _Tally()
    for tally in tallies:
        out.amount += tally.amount
        out.at_deploy += tally.at_deploy
        out.paths.extend(p for p in tally.paths if p not in out.paths)
    return out


def _gpu_needs(t: _Tallies) -> list[QuotaNeed]:
    out: list[QuotaNeed] = []
    for (region, gpu_family, preemptible), tally in sorted(t.gpus.items()):
        spot = t.spot[(region, gpu_family)] if preemptible else _Tally()
        out.append(
            QuotaNeed(
                "gpus",
                tally.amount,
                region,
                gpu_family,
                preemptible,
                paths=tuple(tally.paths),
                spot_gpus=spot.amount,
                spot_paths=tuple(spot.paths),
                at_deploy=tally.at_deploy,
                spot_at_deploy=spot.at_deploy,
            )
        )
    total = _total([tally for _, tally in sorted(t.gpus.items())])
    if total.amount:
        out.append(
            QuotaNeed("gpus-all-regions", total.amount, paths=tuple(total.paths), at_deploy=total.at_deploy)
        )
    return out


def _cpu_needs(t: _Tallies) -> list[QuotaNeed]:
    out: list[QuotaNeed] = []
    for (region, family), tally in sorted(t.cpus.items()):
        pre = t.preemptible_cpus[(region, family)]
        out.append(
            QuotaNeed(
                "cpus",
                tally.amount,
                region,
                vm_family=family,
                paths=tuple(tally.paths),
                preemptible_part=pre.amount,
                preemptible_paths=tuple(pre.paths),
                at_deploy=tally.at_deploy,
                preemptible_at_deploy=pre.at_deploy,
            )
        )
    total = _total([tally for _, tally in sorted(t.cpus.items())])
    if total.amount:
        out.append(
            QuotaNeed("cpus-all-regions", total.amount, paths=tuple(total.paths), at_deploy=total.at_deploy)
        )
    return out


def _region_needs(t: _Tallies) -> list[QuotaNeed]:
    out: list[QuotaNeed] = []
    for (kind, region), tally in sorted(t.region.items()):
        pre = t.preemptible_local[region] if kind == "local-ssd-gb" else _Tally()
        out.append(
            QuotaNeed(
                cast(QuotaKind, kind),
                tally.amount,
                region,
                paths=tuple(tally.paths),
                preemptible_part=pre.amount,
                preemptible_paths=tuple(pre.paths),
                at_deploy=tally.at_deploy,
                preemptible_at_deploy=pre.at_deploy,
            )
        )
    return out


def _boot_disk_kind(disk_type: str | None) -> str:
    """``ssd-gb`` or ``disks-gb``: the quota a boot disk of this type counts against (:data:`SSD_BOOT_DISKS`)."""
    return "ssd-gb" if (disk_type or DEFAULT_BOOT_DISK_TYPE) in SSD_BOOT_DISKS else "disks-gb"


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


def org_policy_needs(clusters: list[GkeCluster]) -> list[OrgPolicyRequirement]:
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
    creating = [c for c in clusters if c.creates_node_account]
    if creating:
        out.append(
            OrgPolicyRequirement(
                "iam.disableServiceAccountCreation",
                "not-enforced",
                "the stack creates the nodes' service account (nodeServiceAccount omitted), which the policy refuses",
                "set nodeServiceAccount to the email of an existing account that has roles/container."
                "defaultNodeServiceAccount, or ask an org policy admin to exempt the project",
                f"{creating[0].path}.nodeServiceAccount",
            )
        )
    unshielded = [c for c in clusters if not c.secure_boot]
    if unshielded:
        out.append(
            OrgPolicyRequirement(
                "compute.requireShieldedVm",
                "not-enforced",
                "Compute Engine refuses node VMs without Secure Boot, and the pools do not turn it on",
                "set secureBoot: true (Shielded nodes with Secure Boot on every pool; a deployed stack's pools are "
                "replaced)",
                f"{unshielded[0].path}.secureBoot",
            )
        )
    out.append(
        OrgPolicyRequirement(
            "compute.trustedImageProjects",
            "allows-values",
            f"GKE node VMs boot images of {GKE_NODE_IMAGE_PROJECT}, which the policy does not trust",
            f"ask an org policy admin to add {GKE_NODE_IMAGE_PROJECT} to constraints/compute.trustedImageProjects "
            "for this project",
            clusters[0].path,
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


def iam_roles(clusters: list[GkeCluster], permissions: list[PermissionNeed], builds: bool) -> list[IamRole]:
    """The deployer's and the nodes' roles. Sources: IAM "Roles for managing and impersonating service accounts"
    (https://cloud.google.com/iam/docs/service-account-permissions: Service Account Admin creates and deletes accounts,
    Service Account User's ``iam.serviceAccounts.actAs`` attaches one to a resource such as a node VM), "Manage access
    to projects" (Project IAM Admin sets the project's allow policy), Artifact Registry "Access control with IAM"
    (the Administrator role manages a repository's allow policy)."""
    creates = any(c.creates_node_account for c in clusters)
    roles = [
        IamRole("roles/container.admin", "deployer", "create the GKE cluster and node pools"),
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
    declared = {p.resource_type for p in permissions}
    if "gcp:compute/router:Router" in declared:
        roles.append(
            IamRole(
                "roles/compute.networkAdmin", "deployer", "the Cloud Router and Cloud NAT of private nodes"
            )
        )
    if "gcp:compute/firewall:Firewall" in declared:
        # Compute Network Admin manages networking resources "except for firewall rules and SSL certificates"
        # (IAM "Compute Engine roles"); Compute Security Admin manages firewall rules.
        roles.append(
            IamRole(
                "roles/compute.securityAdmin",
                "deployer",
                "the firewall rule that lets the control plane reach the webhooks on private nodes",
            )
        )
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
    if all(c.creates_node_account for c in clusters):
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

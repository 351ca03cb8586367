"""Node pools that back Kueue ResourceFlavors: derived flavors, consistency, DWS wiring, capacity.

A :class:`BackedPool` is the platform-neutral picture of "a group of identical GPU nodes that a
ResourceFlavor stands for": the node label that selects exactly those nodes, every label and taint
the nodes carry, how many nodes there can be and what each node has, and — for pools whose nodes
are only obtainable through ProvisioningRequests — how Kueue must ask for them. GKE node pools
(:mod:`batchplane.targets.gke.node_pools`) and OpenShift GPU MachineSets (:mod:`batchplane.targets.openshift.machines`)
map onto it, so both targets share every function below.

Everything here is pure and works on the expanded Kueue model (:class:`ExpandedKueue`), so derived
objects flow through the same rules (:func:`batchplane.config.rules.check_kueue`) and builders as
hand-written ones:

* :func:`attach_pool_flavors` adds a ResourceFlavor for every pool that has no hand-written one;
* :func:`wire_provisioning` gives every ClusterQueue flavor backed by a queued pool a
  ProvisioningRequest AdmissionCheck (Kueue's ``kueue.x-k8s.io/provisioning-request`` controller,
  ``apis/kueue/v1beta2/provisioningrequestconfig_types.go`` at https://github.com/kubernetes-sigs/kueue/tree/v0.19.2),
  unless the queue already has one covering that flavor;
* :func:`check_pool_flavors`, :func:`check_provisioning` and :func:`check_quota_against_pool_capacity` report flavors
  that disagree with their pool, provisioning checks that cannot work, and quota that nodes can never
  back (or that leaves most of a pool unused).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from batchplane.accounting.model import from_stored, to_stored
from batchplane.config.kueue import (
    AdmissionCheck,
    AdmissionCheckRef,
    ClusterQueue,
    ProvisioningRequestConfig,
    ResourceFlavor,
    ResourceGroup,
    RetryStrategy,
    Taint,
    Toleration,
    Topology,
    TopologyLevel,
)
from batchplane.config.rules import ExpandedKueue, KeyPath, Located
from batchplane.errors import ConfigIssue
from batchplane.quantity import QuantityError, format_quantity, parse_quantity
from batchplane.wellknown import PROVISIONING_CONTROLLER

GPU_RESOURCE = "nvidia.com/gpu"
"""The NVIDIA device plugin's extended resource name."""

LOW_USE_THRESHOLD = Decimal("0.5")
"""Capacity check: warn when a pool's flavors carry less than this share of its capacity in quota
(the pool's autoscaling maximum is then mostly out of reach of Kueue-admitted workloads)."""

KUEUE_RETRY_DEFAULTS = RetryStrategy(backoff_limit_count=3, backoff_base_seconds=60, backoff_max_seconds=1800)
"""Kueue's ProvisioningRequestConfig retryStrategy defaults (``provisioningrequestconfig_types.go``)."""


@dataclass(frozen=True)
class NodeTaint:
    """A taint every node of a pool carries (Kubernetes effect names).

    Attributes:
        key: taint key, e.g. ``nvidia.com/gpu``.
        value: taint value, or None for an empty value.
        effect: ``NoSchedule``, ``PreferNoSchedule`` or ``NoExecute``.
    """

    key: str
    value: str | None
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value or ''}:{self.effect}"


@dataclass(frozen=True)
class ProvisioningSpec:
    """How Kueue obtains a pool's nodes through ProvisioningRequests (the generated
    ProvisioningRequestConfig, ``kueue.x-k8s.io`` ``ProvisioningRequestConfigSpec``).

    Attributes:
        class_name: ``provisioningClassName``, e.g. ``queued-provisioning.gke.io``.
        managed_resources: only PodSets requesting one of these go into the request.
        parameters: ProvisioningRequest parameters (``maxRunDurationSeconds`` ...), string values.
        retry_strategy: emitted retryStrategy.
        pod_set_merge_policy: ``podSetMergePolicy`` or None.
        check_suffix: the generated AdmissionCheck and ProvisioningRequestConfig are named
            ``<pool>-<check_suffix>``. Defaults to ``dws`` (GKE Dynamic Workload Scheduler).
        accepted_classes: provisioning classes a hand-written check on the pool's flavor may use;
            empty means only ``class_name``. Defaults to empty.
        one_pod_set: the provisioner accepts one PodSet per ProvisioningRequest (GKE queued
            provisioning), so checks without ``managedResources`` are warned about. Defaults to true.
    """

    class_name: str
    managed_resources: tuple[str, ...]
    parameters: dict[str, str]
    retry_strategy: RetryStrategy
    pod_set_merge_policy: str | None
    check_suffix: str = "dws"
    accepted_classes: tuple[str, ...] = ()
    one_pod_set: bool = True

    def accepts(self, class_name: str) -> bool:
        """Whether a ProvisioningRequestConfig with this class can obtain the pool's nodes."""
        return class_name in (self.accepted_classes or (self.class_name,))


@dataclass(frozen=True)
class BackedPool:
    """A pool of identical nodes a ResourceFlavor stands for.

    Attributes:
        name: the pool's name (GKE node pool, OpenShift MachineSet ...).
        kind: human name of the pool kind for messages, e.g. ``GKE node pool``.
        path: config key path of the pool (``batchplane:target.gpuPools[0]``).
        flavor_name: name of the flavor derived when no hand-written flavor stands for the pool.
        selector: ``(label key, value)`` that selects exactly this pool's nodes.
        labels: every label the nodes are known to carry (selector included).
        taints: every taint the nodes carry; the derived flavor tolerates all of them.
        max_nodes: the most nodes the pool can have (all zones), or None when unknown.
        max_nodes_note: how ``max_nodes`` was computed, for messages (``"4 nodes"``).
        max_nodes_path: key path capacity errors point at (the pool's ``maxNodes``).
        per_node: resources of one node: ``nvidia.com/gpu`` (count), ``cpu`` (cores), ``memory``
            (bytes), each only when known.
        provisioning: set when nodes are only obtainable through ProvisioningRequests.
        size_key: the config key that sizes the pool, named in capacity messages. Defaults to
            ``maxNodes`` (GKE); OpenShift MachineSets use ``maxReplicas``.
        min_nodes: the fewest nodes the pool keeps (all zones): GKE's autoscaling minimum (or its static size),
            OpenShift's ``minReplicas``. Defaults to 0.
        machine: the machine type of its nodes (``a3-highgpu-8g``, ``p4d.24xlarge``), ``""`` when unknown.
        topology: ``(Topology name, levels)`` for topology-aware scheduling, or None. Defaults to None.
        allocatable: what one node offers pods (``per_node`` less the platform's system reservation and eviction
            threshold, :mod:`batchplane.node_allocatable`); empty = same as ``per_node``.
    """

    name: str
    kind: str
    path: KeyPath
    flavor_name: str
    selector: tuple[str, str]
    labels: dict[str, str]
    taints: tuple[NodeTaint, ...]
    max_nodes: int | None
    max_nodes_note: str
    max_nodes_path: KeyPath
    per_node: dict[str, Decimal] = field(default_factory=dict)
    provisioning: ProvisioningSpec | None = None
    size_key: str = "maxNodes"
    min_nodes: int = 0
    machine: str = ""
    topology: tuple[str, tuple[str, ...]] | None = None
    allocatable: dict[str, Decimal] = field(default_factory=dict)

    def describe(self) -> str:
        """``GKE node pool "gpu" (batchplane:target.gpuPools[0])``."""
        return f'{self.kind} "{self.name}" ({self.path})'

    def selects(self, flavor: ResourceFlavor) -> bool:
        """True when the flavor's nodeLabels select exactly this pool (its selector label)."""
        key, value = self.selector
        return flavor.node_labels.get(key) == value

    def references(self, flavor: ResourceFlavor) -> bool:
        """True when the flavor stands for this pool: it selects the pool, or carries its flavor name."""
        return self.selects(flavor) or flavor.name == self.flavor_name


# --- derived flavors ---------------------------------------------------------------------------


def toleration_for(taint: NodeTaint) -> Toleration:
    """The toleration for one pool taint: ``Exists`` for ``nvidia.com/gpu`` (GKE and the GPU
    operator use different values), ``Equal`` on the value otherwise (``Exists`` without a value)."""
    if taint.key == GPU_RESOURCE or taint.value is None:
        return Toleration(key=taint.key, operator="Exists", effect=taint.effect)
    return Toleration(key=taint.key, operator="Equal", value=taint.value, effect=taint.effect)


def derived_flavor(pool: BackedPool) -> ResourceFlavor:
    """The ResourceFlavor for a pool: nodeLabels = the pool's selector, one toleration per taint.

    Kueue injects nodeLabels as a nodeSelector and the tolerations into admitted pods
    (https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/), so admitted pods land on the pool's nodes
    and only there.
    """
    key, value = pool.selector
    return ResourceFlavor(
        name=pool.flavor_name,
        node_labels={key: value},
        tolerations=[toleration_for(t) for t in pool.taints],
        topology_name=pool.topology[0] if pool.topology is not None else None,
    )


def tolerates(tolerations: Iterable[Toleration], taint: NodeTaint) -> bool:
    """Whether any toleration tolerates the taint (``corev1.Toleration.ToleratesTaint`` semantics:
    empty key with Exists matches every key; empty effect matches every effect)."""
    for tol in tolerations:
        if tol.effect is not None and tol.effect != taint.effect:
            continue
        operator = tol.operator or "Equal"
        if not tol.key:
            if operator == "Exists":
                return True
            continue
        if tol.key != taint.key:
            continue
        if operator == "Exists" or (tol.value or "") == (taint.value or ""):
            return True
    return False


def flavor_pools(k: ExpandedKueue, pools: list[BackedPool]) -> dict[str, BackedPool]:
    """Flavor name → the pool whose nodes it selects, for every flavor that selects a pool."""
    out: dict[str, BackedPool] = {}
    for loc in k.resource_flavors:
        for pool in pools:
            if pool.selects(loc.obj) and loc.obj.name not in out:
                out[loc.obj.name] = pool
    return out


def attach_pool_flavors(k: ExpandedKueue, pools: list[BackedPool]) -> None:
    """Append a derived ResourceFlavor for every pool no flavor references (in pool order).

    A hand-written flavor references a pool when it selects the pool's nodes or has the pool's
    flavor name; it is then the pool's flavor (and :func:`check_pool_flavors` checks it agrees).
    """
    for pool in pools:
        if pool.topology is not None and pool.topology[0] not in {t.obj.name for t in k.topologies}:
            name, levels = pool.topology
            topology = Topology(name=name, levels=[TopologyLevel(node_label=level) for level in levels])
            k.topologies.append(Located(topology, KeyPath(pool.path.base, f'generated Topology "{name}"')))
        if any(pool.references(loc.obj) for loc in k.resource_flavors):
            continue
        flavor = derived_flavor(pool)
        k.resource_flavors.append(
            Located(flavor, KeyPath(pool.path.base, f'generated ResourceFlavor "{flavor.name}"'))
        )


def check_pool_flavors(k: ExpandedKueue, pools: list[BackedPool]) -> list[ConfigIssue]:
    """Hand-written flavors that reference a pool but disagree with its labels or taints.

    Errors: the flavor does not select the pool's nodes (its selector label is missing or names
    another pool); it requires a node label the pool's nodes do not carry (no node would match); it
    does not tolerate one of the pool's taints (admitted pods would never schedule); it declares a
    nodeTaint the pool's nodes do not carry.
    """
    out: list[ConfigIssue] = []
    for loc in k.resource_flavors:
        flavor = loc.obj
        for pool in pools:
            if pool.references(flavor):
                out += _flavor_vs_pool(loc, pool)
    for pool in pools:
        for topo in k.topologies:
            levels = tuple(level.node_label for level in topo.obj.levels)
            if pool.topology is not None and topo.obj.name == pool.topology[0] and levels != pool.topology[1]:
                out.append(
                    ConfigIssue(
                        str(topo.path.key("levels")),
                        f"{list(levels)} differ from the levels {list(pool.topology[1])} of {pool.describe()}'s "
                        f'topology "{topo.obj.name}"; make them agree or give the pool\'s topology another name',
                    )
                )
    return out


def _flavor_vs_pool(loc: Located[ResourceFlavor], pool: BackedPool) -> list[ConfigIssue]:
    flavor, path = loc.obj, loc.path
    key, value = pool.selector
    out: list[ConfigIssue] = []
    have = flavor.node_labels.get(key)
    if have is None:
        out.append(
            ConfigIssue(
                str(path.key("nodeLabels")),
                f'missing "{key}: {value}": flavor "{flavor.name}" is the flavor of '
                f"{pool.describe()} and must select its nodes",
            )
        )
        return out
    if have != value:
        out.append(
            ConfigIssue(
                str(path.key("nodeLabels")),
                f'"{key}: {have}" selects another pool, but flavor "{flavor.name}" is the flavor of '
                f'{pool.describe()}; use "{key}: {value}" or rename the flavor',
            )
        )
        return out
    for label, label_value in flavor.node_labels.items():
        if pool.labels.get(label) != label_value:
            carried = f'"{pool.labels[label]}"' if label in pool.labels else "no such label"
            out.append(
                ConfigIssue(
                    str(path.key("nodeLabels")),
                    f'"{label}: {label_value}" is not carried by the nodes of {pool.describe()} '
                    f"(they have {carried}): no node would match this flavor",
                )
            )
    if pool.topology is not None and flavor.topology_name != pool.topology[0]:
        out.append(
            ConfigIssue(
                str(path.key("topologyName")),
                f'must be "{pool.topology[0]}": flavor "{flavor.name}" is the flavor of {pool.describe()}, '
                "which declares that topology",
            )
        )
    missing = [
        t for t in pool.taints if t.effect != "PreferNoSchedule" and not tolerates(flavor.tolerations, t)
    ]
    if missing:
        out.append(
            ConfigIssue(
                str(path.key("tolerations")),
                f"does not tolerate {', '.join(str(t) for t in missing)} of {pool.describe()}: "
                "admitted pods would not schedule on its nodes",
            )
        )
    for i, taint in enumerate(flavor.node_taints):
        if not any(
            t.key == taint.key and t.effect == taint.effect and (t.value or "") == (taint.value or "")
            for t in pool.taints
        ):
            out.append(
                ConfigIssue(
                    str(path.key("nodeTaints").index(i)),
                    f"{_taint_text(taint)} is not a taint of {pool.describe()}",
                )
            )
    return out


def _taint_text(taint: Taint) -> str:
    return str(NodeTaint(taint.key, taint.value, taint.effect))


# --- ProvisioningRequest wiring ------------------------------------------------------------------


def provisioning_check_name(pool: BackedPool) -> str:
    """Name of the generated AdmissionCheck and ProvisioningRequestConfig of a queued pool:
    ``<pool>-<suffix>`` (``<pool>-dws`` on GKE, :attr:`ProvisioningSpec.check_suffix`)."""
    suffix = pool.provisioning.check_suffix if pool.provisioning is not None else "dws"
    return f"{pool.name}-{suffix}"


def provisioning_request_config(pool: BackedPool, spec: ProvisioningSpec) -> ProvisioningRequestConfig:
    """The generated ProvisioningRequestConfig of a queued pool."""
    return ProvisioningRequestConfig(
        name=provisioning_check_name(pool),
        provisioning_class_name=spec.class_name,
        parameters=dict(spec.parameters),
        managed_resources=list(spec.managed_resources),
        retry_strategy=spec.retry_strategy,
        pod_set_merge_policy=spec.pod_set_merge_policy,
    )


def _provisioning_checks(k: ExpandedKueue) -> set[str]:
    return {
        a.obj.name for a in k.admission_checks if a.obj.resolved_controller_name() == PROVISIONING_CONTROLLER
    }


def _covering_refs(queue: ClusterQueue, flavor: str, provisioning: set[str]) -> list[AdmissionCheckRef]:
    return [
        r
        for r in queue.admission_checks
        if r.name in provisioning and (not r.on_flavors or flavor in r.on_flavors)
    ]


def wire_provisioning(k: ExpandedKueue, pools: list[BackedPool]) -> None:
    """Give every ClusterQueue flavor backed by a queued pool a ProvisioningRequest admission check.

    For each such flavor that no provisioning check of the queue covers yet (a check covers a flavor
    when its ``onFlavors`` is empty or lists it), the pool's generated AdmissionCheck
    ``<pool>-dws`` → ProvisioningRequestConfig ``<pool>-dws`` is added to the queue, scoped with
    ``onFlavors: [<flavor>]`` when the queue has other flavors too. The AdmissionCheck and
    ProvisioningRequestConfig are generated once per pool, and only when some queue uses them.
    """
    by_flavor = {name: pool for name, pool in flavor_pools(k, pools).items() if pool.provisioning is not None}
    provisioning = _provisioning_checks(k)
    generated: set[str] = set()
    for qi, loc in enumerate(k.cluster_queues):
        queue = loc.obj
        refs = list(queue.admission_checks)
        for flavor in queue.flavor_names():
            pool = by_flavor.get(flavor)
            if pool is None or pool.provisioning is None or _covering_refs(queue, flavor, provisioning):
                continue
            name = provisioning_check_name(pool)
            if name not in generated:
                _generate_check(k, pool, pool.provisioning)
                generated.add(name)
            others = [f for f in queue.flavor_names() if f != flavor]
            refs.append(AdmissionCheckRef(name=name, on_flavors=[flavor] if others else []))
        if len(refs) != len(queue.admission_checks):
            k.cluster_queues[qi] = Located(queue.model_copy(update={"admission_checks": refs}), loc.path)


def _generate_check(k: ExpandedKueue, pool: BackedPool, spec: ProvisioningSpec) -> None:
    name = provisioning_check_name(pool)
    prc = provisioning_request_config(pool, spec)
    k.provisioning_request_configs.append(
        Located(prc, KeyPath(pool.path.base, f'generated ProvisioningRequestConfig "{name}"'))
    )
    check = AdmissionCheck(name=name, provisioning_request_config=name)
    k.admission_checks.append(Located(check, KeyPath(pool.path.base, f'generated AdmissionCheck "{name}"')))


def check_provisioning(k: ExpandedKueue, pools: list[BackedPool]) -> list[ConfigIssue]:
    """Hand-written provisioning checks on queued-pool flavors that cannot work as written.

    Errors: a check on a queued pool's flavor whose ProvisioningRequestConfig uses another
    provisioning class (the pool's nodes are obtainable only through the pool's class). Warnings:
    its ``managedResources`` is empty (every PodSet, CPU-only heads included, goes into the request;
    GKE accepts one PodSet per request, so e.g. a RayJob with head + workers is rejected — ray
    #57839); it has no ``podSetMergePolicy`` (several identical GPU PodSets are not merged).
    """
    out: list[ConfigIssue] = []
    by_flavor = {name: pool for name, pool in flavor_pools(k, pools).items() if pool.provisioning is not None}
    checks = {a.obj.name: a for a in k.admission_checks}
    prcs = {p.obj.name: p for p in k.provisioning_request_configs}
    provisioning = _provisioning_checks(k)
    reported: set[tuple[str, str]] = set()
    for loc in k.cluster_queues:
        for flavor in loc.obj.flavor_names():
            pool = by_flavor.get(flavor)
            if pool is None or pool.provisioning is None:
                continue
            for ref in _covering_refs(loc.obj, flavor, provisioning):
                params = checks[ref.name].obj.resolved_parameters()
                prc = prcs.get(params.name) if params is not None else None
                if prc is None or (prc.obj.name, pool.name) in reported:
                    continue
                reported.add((prc.obj.name, pool.name))
                out += _prc_vs_pool(prc, pool, flavor)
    return out


def _prc_vs_pool(prc: Located[ProvisioningRequestConfig], pool: BackedPool, flavor: str) -> list[ConfigIssue]:
    assert pool.provisioning is not None
    p, spec = prc.obj, pool.provisioning
    out: list[ConfigIssue] = []
    if not spec.accepts(p.provisioning_class_name):
        allowed = " or ".join(spec.accepted_classes or (spec.class_name,))
        out.append(
            ConfigIssue(
                str(prc.path.key("provisioningClassName")),
                f'"{p.provisioning_class_name}" cannot obtain nodes of {pool.describe()} '
                f'(flavor "{flavor}"): they are provisioned only through {allowed}',
            )
        )
    if not p.managed_resources and spec.one_pod_set:
        out.append(
            ConfigIssue(
                str(prc.path.key("managedResources")),
                f"empty: every PodSet (CPU-only ones too) goes into the ProvisioningRequest for "
                f"{pool.describe()}; GKE accepts one PodSet per request, so a RayJob with head and "
                f"workers is rejected. Use [{', '.join(spec.managed_resources)}]",
                "warning",
            )
        )
    if p.pod_set_merge_policy is None and spec.pod_set_merge_policy is not None:
        out.append(
            ConfigIssue(
                str(prc.path.key("podSetMergePolicy")),
                f"not set: several GPU PodSets (e.g. RayJob worker groups) stay separate PodSets "
                f"and GKE rejects the request; {spec.pod_set_merge_policy} merges identical ones",
                "warning",
            )
        )
    return out


# --- capacity ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuotaShare:
    """One ``nominalQuota`` entry on a flavor that selects a pool (plain data: the program builds it from the
    expanded Kueue model, the policy pack from registered ClusterQueue/Cohort inputs).

    Attributes:
        owner: who holds it, ``ClusterQueue "team-a"`` or ``Cohort "ml"``.
        amount: the quantity, in the resource's unit (GPUs, cores, bytes).
        note: context appended to the owner's part, e.g. ``" + borrowing up to 8"``; ``""`` for none.
    """

    owner: str
    amount: Decimal
    note: str = ""


@dataclass(frozen=True)
class PoolQuota:
    """The sum of one resource's ``nominalQuota`` over every ClusterQueue and Cohort on a pool's flavors, against
    the most the pool's nodes provide: the rule "quota ≤ pool capacity", stated once for the program
    (:func:`check_quota_against_pool_capacity`) and the policy pack (``kueue-gpu-quota-within-pool-capacity``).

    Attributes:
        resource: the resource name (``nvidia.com/gpu``).
        shares: the quota entries counted, in order.
        per_node: what one node has of ``resource``.
        max_nodes: the most nodes the pool can have (all zones).
        basis: how ``max_nodes`` was computed (``"4 nodes"``, ``"1 nodes per zone × 3 zones"``).
    """

    resource: str
    shares: tuple[QuotaShare, ...]
    per_node: Decimal
    max_nodes: int
    basis: str

    @property
    def total(self) -> Decimal:
        """The summed ``nominalQuota``: borrowing only moves unused nominal quota inside a cohort, never adds any,
        so this is the most Kueue can admit on the pool at once."""
        return sum((s.amount for s in self.shares), Decimal(0))

    @property
    def capacity(self) -> Decimal:
        """``max_nodes × per_node``."""
        return self.per_node * self.max_nodes

    def describe(self, flavors: str) -> str:
        """``nvidia.com/gpu quota on flavor "h100" is 40 (ClusterQueue "a" 24; Cohort "ml" 16)``."""
        fmt = format_quantity
        quota = f"{self.resource} quota on flavor {flavors} is {fmt(self.total, self.resource)}"
        if self.shares:
            quota += (
                f" ({'; '.join(f'{s.owner} {fmt(s.amount, self.resource)}{s.note}' for s in self.shares)})"
            )
        return quota

    def basis_text(self) -> str:
        """``4 nodes × 8 nvidia.com/gpu per node``."""
        return f"{self.basis} × {format_quantity(self.per_node, self.resource)} {self.resource} per node"

    def over_capacity(self, *, pool: str, flavors: str, size_key: str) -> str | None:
        """The violation text when the quota exceeds what the pool can back, else ``None``.

        Args:
            pool: the pool as named to the reader (``GKE node pool "h100"``).
            flavors: the flavors that select it, quoted and comma-separated (``"h100"``).
            size_key: the key that sizes the pool, named in the remedy (``maxNodes``, ``autoscaling.totalMaxNodeCount``).
        """
        if self.total <= self.capacity:
            return None
        fmt, r = format_quantity, self.resource
        return (
            f"{self.describe(flavors)} but {pool} has at most {fmt(self.capacity, r)} ({self.basis_text()}): "
            f"{fmt(self.total - self.capacity, r)} {r} of nominal quota can never be backed by nodes; "
            f"raise {size_key} or lower the quotas"
        )


def quota_shares(
    owner: str,
    groups: Iterable[tuple[str, str, Any, Any]],
    flavors: set[str],
    resources: set[str] | None = None,
) -> dict[str, list[QuotaShare]]:
    """Per resource, the shares of one ClusterQueue or Cohort on ``flavors``.

    Args:
        owner: ``ClusterQueue "a"``.
        groups: ``(flavor, resource, nominalQuota, borrowingLimit)`` per quota entry; quantities as strings or
            numbers (unparsable ones are skipped: the Kueue rules report them).
        flavors: the flavor names that select the pool.
        resources: the resources to count; ``None`` for all.
    """
    out: dict[str, list[QuotaShare]] = {}
    for flavor, resource, nominal, borrowing in groups:
        if flavor not in flavors or (resources is not None and resource not in resources) or nominal is None:
            continue
        try:
            amount = parse_quantity(str(nominal))
        except QuantityError:
            continue
        note = f" + borrowing up to {borrowing}" if borrowing is not None else ""
        out.setdefault(resource, []).append(QuotaShare(owner, amount, note))
    return out


def _kueue_entries(groups: list[ResourceGroup]) -> list[tuple[str, str, Any, Any]]:
    return [
        (fq.name, rq.name, rq.nominal_quota, rq.borrowing_limit)
        for group in groups
        for fq in group.flavors
        for rq in fq.resources
    ]


def _pool_shares(k: ExpandedKueue, flavors: set[str]) -> dict[str, list[QuotaShare]]:
    out: dict[str, list[QuotaShare]] = {}
    owners = [(f'ClusterQueue "{loc.obj.name}"', loc.obj.resource_groups) for loc in k.cluster_queues]
    owners += [(f'Cohort "{co.obj.name}"', co.obj.resource_groups) for co in k.cohorts]
    for owner, groups in owners:
        for resource, shares in quota_shares(owner, _kueue_entries(groups), flavors).items():
            out.setdefault(resource, []).extend(shares)
    return out


def _empty_flavor_admits(k: ExpandedKueue, selecting: set[str]) -> bool:
    """Whether no hand-written flavor selects the pool (only its generated one does) while a ClusterQueue or
    Cohort has quota on an empty flavor (no ``nodeLabels``): Kueue adds no node selector for an empty flavor, so
    what it admits there may run on the pool's nodes (the RHOAI "empty flavor" design)."""
    generated = {loc.obj.name for loc in k.resource_flavors if "generated ResourceFlavor" in str(loc.path)}
    if selecting - generated:
        return False
    empty = {loc.obj.name for loc in k.resource_flavors if not loc.obj.node_labels}
    return any(s.amount > 0 for shares in _pool_shares(k, empty).values() for s in shares)


def check_quota_against_pool_capacity(k: ExpandedKueue, pools: list[BackedPool]) -> list[ConfigIssue]:
    """Plan time (the stack loader, ``batchplane validate``): the nominal quota on a pool's flavors vs the most
    the pool's nodes can provide, per resource — a config rule, not a workload check (that is
    :func:`batchplane.webhook.capacity.check_workload_ever_fits`, at submit time).

    For each pool and each resource whose per-node amount is known (``nvidia.com/gpu``; ``cpu`` and
    ``memory`` when the machine type is known), the sum of ``nominalQuota`` over every ClusterQueue
    and Cohort on the flavors that select the pool is compared with ``max_nodes × per node``.
    Borrowing only moves unused nominal quota between members of a cohort and never adds quota, so
    this sum is the most Kueue can ever admit on the pool at once; borrowing limits are listed in
    the message for context.

    Returns:
        An error (at the pool's ``maxNodes``) when the sum exceeds capacity: that much quota can
        never be backed by nodes. A warning when it is below :data:`LOW_USE_THRESHOLD` of capacity
        (or zero): the rest of the pool is never used by Kueue-admitted workloads — but no "no quota"
        warning when only the pool's generated flavor selects it and an empty flavor has quota (what is
        admitted on an empty flavor may run on any node).
    """
    out: list[ConfigIssue] = []
    mapping = flavor_pools(k, pools)
    for pool in pools:
        flavors = {name for name, p in mapping.items() if p is pool}
        shares = _pool_shares(k, flavors)
        if pool.max_nodes is None:
            continue
        names = ", ".join(f'"{f}"' for f in sorted(flavors)) or "none"
        if not any(s.amount > 0 for r in shares.values() for s in r):
            if _empty_flavor_admits(k, flavors):
                continue  # only generated flavors select the pool, and an empty flavor's quota may land there
            out.append(
                ConfigIssue(
                    str(pool.max_nodes_path),
                    f"no ClusterQueue or Cohort has quota on the flavor of {pool.describe()} "
                    f"(flavors: {names}): Kueue never admits workloads onto its nodes",
                    "warning",
                )
            )
            continue
        for resource, per_node in pool.per_node.items():
            quota = PoolQuota(
                resource, tuple(shares.get(resource, ())), per_node, pool.max_nodes, pool.max_nodes_note
            )
            out += _capacity_issue(pool, quota, names)
    return out


@dataclass(frozen=True)
class NodeGroup:
    """Nodes of the stack that no ResourceFlavor selects but an empty flavor's pods can run on (GKE's system pool).

    Attributes:
        describe: the group as named to the reader (``GKE system pool "system"``).
        per_node: CPU cores (``cpu``) and memory bytes (``memory``) of one node; a resource missing is unknown.
        max_nodes: the most nodes it can have.
        path: the key that sizes it (``batchplane:target.systemPool.maxNodes``).
    """

    describe: str
    per_node: Mapping[str, Decimal]
    max_nodes: int
    path: str


def check_empty_flavor_capacity(
    k: ExpandedKueue, pools: list[BackedPool], base: NodeGroup
) -> list[ConfigIssue]:
    """Plan time: CPU and memory ``nominalQuota`` on empty flavors (no ``nodeLabels``: Kueue adds no node selector,
    so what it admits there runs on any node its pods tolerate) against **every** node the stack can have — ``base``
    (the system pool) and each backed pool at its maximum. Above that sum no node can ever back the quota (the
    vendor docs' "infinite" 10000-CPU default flavor); a warning at ``base.path``, since nodes outside the stack
    (added by hand) are not seen. A resource whose per-node amount is unknown for any node group, or a pool without
    a maximum, is not checked (never a guess).

    Returns:
        One warning per resource over capacity, naming the quota entries and the node groups summed.
    """
    empty = {loc.obj.name for loc in k.resource_flavors if not loc.obj.node_labels}
    if not empty:
        return []
    shares = _pool_shares(k, empty)
    names = ", ".join(f'"{f}"' for f in sorted(empty))
    out: list[ConfigIssue] = []
    for resource in ("cpu", "memory"):
        quota = PoolQuota(resource, tuple(shares.get(resource, ())), Decimal(0), 0, "")
        groups = _node_groups(base, pools, resource)
        if not quota.shares or groups is None:
            continue
        capacity = sum((n * per for _, n, per in groups), Decimal(0))
        if quota.total <= capacity:
            continue
        fmt = format_quantity
        summed = "; ".join(f"{what}: {n} nodes × {fmt(per, resource)}" for what, n, per in groups)
        out.append(
            ConfigIssue(
                base.path,
                f"{quota.describe(names)} (empty flavors: no nodeLabels, so their pods may run on any node) but "
                f"every node the stack can have holds at most {fmt(capacity, resource)} {resource} ({summed}): "
                f"{fmt(quota.total - capacity, resource)} {resource} of nominal quota can never be backed by "
                "nodes; lower the quotas or raise the pools' maxNodes",
                "warning",
            )
        )
    return out


def _node_groups(
    base: NodeGroup, pools: list[BackedPool], resource: str
) -> list[tuple[str, int, Decimal]] | None:
    """``(who, max nodes, per node)`` of ``base`` and every pool for ``resource``; ``None`` when one is unknown."""
    if resource not in base.per_node:
        return None
    groups = [(base.describe, base.max_nodes, base.per_node[resource])]
    for pool in pools:
        if pool.max_nodes is None or resource not in pool.per_node:
            return None
        groups.append((pool.describe(), pool.max_nodes, pool.per_node[resource]))
    return groups


def _capacity_issue(pool: BackedPool, quota: PoolQuota, names: str) -> list[ConfigIssue]:
    over = quota.over_capacity(pool=pool.describe(), flavors=names, size_key=pool.size_key)
    if over is not None:
        return [ConfigIssue(str(pool.max_nodes_path), over)]
    capacity, r = quota.capacity, quota.resource
    if capacity > 0 and quota.total < capacity * LOW_USE_THRESHOLD:
        share = int(quota.total * 100 / capacity)
        return [
            ConfigIssue(
                str(pool.max_nodes_path),
                f"{quota.describe(names)}, {share}% of the {format_quantity(capacity, r)} {pool.describe()} can "
                f"provide ({quota.basis_text()}): Kueue never admits workloads onto the rest; lower {pool.size_key} "
                f"or raise the quotas (warned below {int(LOW_USE_THRESHOLD * 100)}%)",
                "warning",
            )
        ]
    return []


# --- sizing quotas to pools (MultiKueue workers) ------------------------------------------------


def fit_quotas_to_pools(k: ExpandedKueue, pools: list[BackedPool]) -> list[ConfigIssue]:
    """Scale the nominal quota on each pool's flavors down to what the pool can hold, in place, keeping the queues'
    proportions (MultiKueue: a declared worker without its own queues gets the manager's, sized to its pools).

    Per pool and per resource whose per-node amount is known, when the ClusterQueues' and Cohorts' nominal quota on
    the pool's flavors sums to more than ``max_nodes × per node``, every entry becomes ``floor(nominal × capacity /
    sum)`` (in Kueue's stored units: millicores, bytes; memory rounded down to Mi), so the sum fits; a lending limit is
    capped at the new nominal quota. Returns one warning per scaled pool and resource, naming old and new amounts.
    """
    out: list[ConfigIssue] = []
    mapping = flavor_pools(k, pools)
    for pool in pools:
        flavors = {name for name, p in mapping.items() if p is pool}
        if pool.max_nodes is None or not flavors:
            continue
        for resource, per_node in pool.per_node.items():
            capacity = to_stored(resource, per_node * pool.max_nodes)
            owners: tuple[list[Any], ...] = (k.cluster_queues, k.cohorts)
            entries = [(owner, index, loc) for owner in owners for index, loc in enumerate(owner)]
            total = sum(
                to_stored(resource, parse_quantity(q.nominal_quota))
                for _, _, loc in entries
                for g in loc.obj.resource_groups
                for f in g.flavors
                if f.name in flavors
                for q in f.resources
                if q.name == resource
            )
            if total <= capacity:
                continue
            changes: list[str] = []
            for owner, index, loc in entries:
                updated, changed = _scaled(loc.obj.resource_groups, flavors, resource, capacity, total)
                if changed:
                    owner[index] = Located(loc.obj.model_copy(update={"resource_groups": updated}), loc.path)
                    changes += [f'{type(loc.obj).__name__} "{loc.obj.name}" {c}' for c in changed]
            out.append(
                ConfigIssue(
                    str(pool.max_nodes_path),
                    f"{resource} quota on the flavor(s) of {pool.describe()} sized to the pool's "
                    f"{format_quantity(from_stored(resource, capacity), resource)}: {'; '.join(changes)}",
                    "warning",
                )
            )
    return out


def _scaled(
    groups: list[ResourceGroup], flavors: set[str], resource: str, capacity: int, total: int
) -> tuple[list[ResourceGroup], list[str]]:
    changes: list[str] = []
    new_groups = []
    for group in groups:
        new_flavors = []
        for flavor in group.flavors:
            new_quotas = []
            for quota in flavor.resources:
                if flavor.name in flavors and quota.name == resource:
                    old = to_stored(resource, parse_quantity(quota.nominal_quota))
                    new = old * capacity // total
                    if resource == "memory":
                        new -= new % (1 << 20)
                    text = format_quantity(from_stored(resource, new), resource)
                    update: dict[str, str] = {"nominal_quota": text}
                    if quota.lending_limit is not None and parse_quantity(quota.lending_limit) > from_stored(
                        resource, new
                    ):
                        update["lending_limit"] = text
                    quota = quota.model_copy(update=update)
                    changes.append(f"{format_quantity(from_stored(resource, old), resource)} → {text}")
                new_quotas.append(quota)
            new_flavors.append(flavor.model_copy(update={"resources": new_quotas}))
        new_groups.append(group.model_copy(update={"flavors": new_flavors}))
    return new_groups, changes

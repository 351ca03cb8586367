"""Kueue's quota model, compiled from the policy document: the cohort tree, each ClusterQueue's *potential available*
quota, and a workload's demands per PodSet.

Kueue's flavor assigner (``pkg/scheduler/flavorassigner``) rejects a PodSet for a flavor when its
request — plus what earlier PodSets of the same workload already put on that flavor — exceeds the
ClusterQueue's *potential available* quota, the most it could get with every other queue idle:

* ``potentialAvailable(node)`` (``pkg/cache/scheduler/resource_node.go``): a root node has its
  ``SubtreeQuota``; any other node has ``localQuota + potentialAvailable(parent)``, capped at
  ``SubtreeQuota + borrowingLimit`` when a borrowing limit is set.
* ``SubtreeQuota`` of a ClusterQueue is its nominal quota; of a cohort, its own nominal quota plus,
  per child, ``SubtreeQuota(child) − localQuota(child)``.
* ``localQuota`` = ``max(0, SubtreeQuota − lendingLimit)`` when a lending limit is set, else 0 —
  the part a node never lends.

Amounts are Kueue's stored integers (millicores for CPU, units otherwise; :func:`batchplane.accounting.model.to_stored`).
Flavor eligibility is :mod:`batchplane.webhook.flavors`, Kueue's flavor assigner :mod:`batchplane.webhook.assign`,
the never-admissible verdict :mod:`batchplane.webhook.capacity`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from batchplane.accounting.model import INT64_MAX, WorkloadRequests, from_stored, to_stored
from batchplane.quantity import format_quantity, parse_quantity
from batchplane.webhook.errors import PolicyError
from batchplane.webhook.policy import PolicyDocument, ResourceGroupPolicy

#: The ``pods`` resource: when a ClusterQueue covers it, each PodSet requests ``pods = count``
#: (``flavorassigner.go``).
PODS = "pods"
#: The TAS annotation that makes Kueue assign several PodSets one flavor together (``apis/kueue/v1beta2/
#: topology_types.go`` @v0.19.2); such workloads are not modelled exactly.
POD_SET_GROUP_NAME = "kueue.x-k8s.io/podset-group-name"

FlavorResource = tuple[str, str]


@dataclass(frozen=True)
class Capacity:
    """The most a ClusterQueue can ever get of one resource in one flavor.

    Attributes:
        flavor: the ResourceFlavor.
        resource: the resource name.
        maximum: Kueue's ``potentialAvailable`` (stored units: millicores for CPU).
        nominal: the queue's nominal quota (stored units).
        cohort: the queue's cohort, or ``None``.
    """

    flavor: str
    resource: str
    maximum: int
    nominal: int
    cohort: str | None

    def describe(self) -> str:
        """``cpu 4 (nominal 4, no cohort)`` / ``nvidia.com/gpu 8 (nominal 4 + 4 borrowable in cohort "c")``."""
        text = f"{self.resource} {show(self.resource, self.maximum)}"
        if self.cohort is None:
            return f"{text} (nominal quota, no cohort)"
        extra = self.maximum - self.nominal
        if extra <= 0:
            return f'{text} (nominal quota; nothing borrowable in cohort "{self.cohort}")'
        return f'{text} (nominal {show(self.resource, self.nominal)} + {show(self.resource, extra)} borrowable in cohort "{self.cohort}")'


@dataclass(frozen=True)
class Group:
    """One resource group of a ClusterQueue: its resources and flavors (in order).

    Attributes:
        resources: the covered resources.
        flavors: the flavors, in the order Kueue tries them.
        label_keys: the union of the ``nodeLabels`` keys of the group's flavors (Kueue's ``rg.LabelKeys``,
            ``updateLabelKeys`` in ``pkg/cache/scheduler/clusterqueue.go`` lines 379-408 @v0.18.1; a flavor the policy
            does not describe adds none).
        match_keys: the keys node affinity is matched on: ``label_keys`` when the policy's ``nodeAffinityKeys`` is
            ``ResourceGroup``, ``None`` for ``Flavor`` (each flavor's own keys).
    """

    resources: tuple[str, ...]
    flavors: tuple[str, ...]
    label_keys: frozenset[str] = frozenset()
    match_keys: frozenset[str] | None = None


@dataclass(frozen=True)
class QueueModel:
    """A ClusterQueue compiled for capacity checks.

    Attributes:
        name: the ClusterQueue.
        groups: its resource groups.
        capacity: ``(flavor, resource)`` → :class:`Capacity`.
        try_next_when_borrowing: ``flavorFungibility.whenCanBorrow == TryNextFlavor``.
        borrow_paths: what Kueue's borrowing level of an amount depends on, per flavor and resource.
        maxima: derived: per group, per flavor, each resource's ``Capacity.maximum`` (integers).
        covered: derived: every resource some group covers.
    """

    name: str
    groups: tuple[Group, ...]
    capacity: Mapping[FlavorResource, Capacity]
    #: ``flavorFungibility.whenCanBorrow: TryNextFlavor``: a flavor that fits only by borrowing does not end the
    #: search (Kueue's default ``MayStopSearch`` takes the first flavor that fits).
    try_next_when_borrowing: bool = False
    #: Kueue's ``FlavorFungibility`` feature gate (Beta, on by default). Off: the first flavor that fits is taken
    #: (borrowing or not) and a retry starts from the first flavor again (``NextFlavorToTryForPodSetResource``
    #: returns 0), so every attempt is the first one.
    flavor_fungibility: bool = True
    #: ``(flavor, resource)`` → :class:`BorrowPath` (only for a queue in a cohort).
    borrow_paths: Mapping[FlavorResource, BorrowPath] = field(default_factory=dict)
    maxima: tuple[tuple[tuple[int, ...], ...], ...] = field(init=False, repr=False, compare=False)
    covered: frozenset[str] = field(init=False, repr=False, compare=False)
    #: Whether some flavor and resource may go above its nominal quota (a cohort with something to lend).
    can_borrow: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Compiled once: per group, per flavor (in order), the maximum of each of the group's resources.
        maxima = tuple(
            tuple(tuple(self.capacity[(f, r)].maximum for r in g.resources) for f in g.flavors)
            for g in self.groups
        )
        object.__setattr__(self, "maxima", maxima)
        object.__setattr__(self, "covered", frozenset(r for g in self.groups for r in g.resources))
        object.__setattr__(self, "can_borrow", any(c.maximum > c.nominal for c in self.capacity.values()))


@dataclass(frozen=True)
class BorrowPath:
    """What Kueue's *borrowing level* of an amount in one flavor and resource depends on, in an empty cohort.

    ``FindHeightOfLowestSubtreeThatFits`` (``pkg/scheduler/preemption/classical/hierarchical_preemption.go``
    lines 209-234 @v0.19.2): 0 when the amount is within the queue's nominal quota (or the queue has no
    cohort); else the height of the lowest cohort on the path to the root whose subtree quota holds what is left
    after each node's non-lendable part, or the root's height.

    Attributes:
        nominal: the queue's nominal quota (stored units).
        local: the queue's non-lendable part (``localQuota``: nominal − lendingLimit, 0 without one).
        ancestors: per cohort from the parent to the root: (``SubtreeQuota``, ``localQuota``, height), height
            being ``getNodeHeight``: 1 for a cohort of queues, 1 + its highest child cohort otherwise.
    """

    nominal: int
    local: int
    ancestors: tuple[tuple[int, int, int], ...]

    def level(self, amount: int) -> int:
        """The borrowing level Kueue computes for ``amount`` (the PodSet's request plus earlier PodSets' usage)."""
        if amount <= self.nominal or not self.ancestors:
            return 0
        remaining = amount - self.local
        for subtree, local, height in self.ancestors:
            if remaining <= subtree:
                return height
            remaining -= local
        return self.ancestors[-1][2]


@dataclass(slots=True)
class Demand:
    """One PodSet as the capacity check sees it.

    Attributes:
        name: the PodSet name.
        count: pods counted (``minCount`` when partial admission allows fewer, else ``count``).
        requests: resource → total stored amount for ``count`` pods (``pods`` included when covered).
        pod_spec: the template's pod spec (nodeSelector, affinity, tolerations).
    """

    name: str
    count: int
    requests: Mapping[str, int]
    pod_spec: Mapping[str, Any]
    #: Counted at ``minCount`` (Kueue's partial admission would search counts between ``minCount`` and ``count``).
    partial: bool = False
    #: The PodSet's template (its metadata is read only when Kueue's attempts fail: :meth:`grouped`).
    template: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: Eligible flavors per resource group index, computed once (the capacity and provisioning checks both ask).
    eligible: dict[int, list[str]] | None = field(default=None, compare=False, repr=False)

    def grouped(self) -> bool:
        """Whether the template names a TAS PodSet group (``kueue.x-k8s.io/podset-group-name``): Kueue then
        assigns the group's PodSets one flavor together."""
        metadata = self.template.get("metadata")
        annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
        return isinstance(annotations, Mapping) and POD_SET_GROUP_NAME in annotations


# --- compiling the cohort tree ------------------------------------------------------------------


@dataclass
class _Node:
    parent: str | None
    nominal: dict[FlavorResource, int] = field(default_factory=dict)
    borrowing: dict[FlavorResource, int] = field(default_factory=dict)
    lending: dict[FlavorResource, int] = field(default_factory=dict)
    subtree: dict[FlavorResource, int] = field(default_factory=dict)


def _add_quotas(node: _Node, groups: Sequence[ResourceGroupPolicy]) -> None:
    for group in groups:
        for flavor in group.flavors:
            for resource, quota in flavor.resources.items():
                key = (flavor.name, resource)
                node.nominal[key] = to_stored(resource, parse_quantity(quota.nominal_quota))
                if quota.borrowing_limit is not None:
                    node.borrowing[key] = to_stored(resource, parse_quantity(quota.borrowing_limit))
                if quota.lending_limit is not None:
                    node.lending[key] = to_stored(resource, parse_quantity(quota.lending_limit))


def guaranteed_quota(node: _Node, key: FlavorResource) -> int:
    """What ``node`` keeps of ``key`` for itself: its subtree quota less its lending limit, 0 without one (Kueue
    v0.19.2 ``resource_node.go`` ``resourceNode.guaranteedQuota``)."""
    if key in node.lending:
        return max(0, node.subtree.get(key, 0) - node.lending[key])
    return 0


def compile_queues(policy: PolicyDocument) -> dict[str, QueueModel]:
    """Compile every ClusterQueue of the policy into a :class:`QueueModel`.

    Cohorts named by a ClusterQueue or a Cohort's parent without a Cohort object are implicit
    root nodes with no quota, as in Kueue.

    Raises:
        PolicyError: a cohort cycle, or a quantity that does not parse.
    """
    tree = CohortForest(policy)
    gate = policy.kueue.feature_gates.get("FlavorFungibility", True)
    by_group = policy.kueue.node_affinity_keys == "ResourceGroup"
    flavor_policies = policy.resource_flavors
    out: dict[str, QueueModel] = {}
    for name, cq in policy.cluster_queues.items():
        key = f"cq:{name}"
        group_list: list[Group] = []
        for g in cq.resource_groups:
            keys = frozenset(
                k
                for f in g.flavors
                if (rf := flavor_policies.get(f.name)) is not None
                for k in rf.node_labels
            )
            group_list.append(
                Group(
                    tuple(g.covered_resources),
                    tuple(f.name for f in g.flavors),
                    keys,
                    keys if by_group else None,
                )
            )
        groups = tuple(group_list)
        nominal = tree.nodes[key].nominal
        capacity = {
            (flavor, resource): Capacity(
                flavor,
                resource,
                tree.potential(key, (flavor, resource)),
                nominal.get((flavor, resource), 0),
                cq.cohort,
            )
            for g in groups
            for flavor in g.flavors
            for resource in g.resources
        }
        ff = cq.flavor_fungibility
        out[name] = QueueModel(
            name=name,
            groups=groups,
            capacity=capacity,
            try_next_when_borrowing=gate and ff is not None and ff.when_can_borrow == "TryNextFlavor",
            flavor_fungibility=gate,
            borrow_paths={fr: tree.borrow_path(key, fr) for fr in capacity} if cq.cohort else {},
        )
    return out


class CohortForest:
    """The cohort forest of a policy: ``SubtreeQuota`` per node and ``potentialAvailable``."""

    def __init__(self, policy: PolicyDocument) -> None:
        self.nodes: dict[str, _Node] = {}  # "cq:<name>" / "co:<name>"
        try:
            for name, co in policy.cohorts.items():
                node = _Node(parent=f"co:{co.parent}" if co.parent else None)
                _add_quotas(node, co.resource_groups)
                self.nodes[f"co:{name}"] = node
            for name, cq in policy.cluster_queues.items():
                node = _Node(parent=f"co:{cq.cohort}" if cq.cohort else None)
                _add_quotas(node, cq.resource_groups)
                self.nodes[f"cq:{name}"] = node
        except ValueError as exc:
            raise PolicyError(f"invalid quantity in policy: {exc}") from None
        for node in list(self.nodes.values()):
            if node.parent is not None and node.parent not in self.nodes:
                self.nodes[node.parent] = _Node(parent=None)  # a cohort without a Cohort object
        self.children: dict[str, list[str]] = {}
        for key, node in self.nodes.items():
            if node.parent is not None:
                self.children.setdefault(node.parent, []).append(key)
        self._check_cycles()
        for key, node in self.nodes.items():
            if node.parent is None:
                self._fill(key)

    def _check_cycles(self) -> None:
        for key in self.nodes:
            seen = {key}
            parent = self.nodes[key].parent
            while parent is not None:
                if parent in seen:
                    raise PolicyError(f'cohort cycle through "{parent[3:]}"')
                seen.add(parent)
                parent = self.nodes[parent].parent

    def _fill(self, key: str) -> None:
        node = self.nodes[key]
        node.subtree = dict(node.nominal)
        for child_key in self.children.get(key, []):
            self._fill(child_key)
            child = self.nodes[child_key]
            for fr, amount in child.subtree.items():
                node.subtree[fr] = node.subtree.get(fr, 0) + amount - guaranteed_quota(child, fr)

    def height(self, key: str) -> int:
        """Kueue's ``getNodeHeight`` of a cohort: ``max(min(children, 1), 1 + height of each child cohort)``."""
        kids = self.children.get(key, [])
        out = min(len(kids), 1)
        for kid in kids:
            if kid.startswith("co:"):
                out = max(out, self.height(kid) + 1)
        return out

    def borrow_path(self, key: str, fr: FlavorResource) -> BorrowPath:
        """The :class:`BorrowPath` of queue ``key`` for ``fr``."""
        node = self.nodes[key]
        ancestors: list[tuple[int, int, int]] = []
        parent = node.parent
        while parent is not None:
            cohort = self.nodes[parent]
            ancestors.append((cohort.subtree.get(fr, 0), guaranteed_quota(cohort, fr), self.height(parent)))
            parent = cohort.parent
        return BorrowPath(node.nominal.get(fr, 0), guaranteed_quota(node, fr), tuple(ancestors))

    def potential(self, key: str, fr: FlavorResource) -> int:
        """Kueue's ``potentialAvailable`` of node ``key`` for ``fr`` (stored units)."""
        node = self.nodes[key]
        if node.parent is None:
            return node.subtree.get(fr, 0)
        available = guaranteed_quota(node, fr) + self.potential(node.parent, fr)
        if fr in node.borrowing:
            available = min(available, node.subtree.get(fr, 0) + node.borrowing[fr])
        return available


# --- demands ------------------------------------------------------------------------------------


def demands(workload: WorkloadRequests, queue: QueueModel) -> list[Demand]:
    """The smallest request of each PodSet Kueue could ever admit (``minCount`` pods when set).

    Adds ``pods = count`` when the queue covers ``pods``; keeps zero requests out.
    """
    covers_pods = PODS in queue.covered
    out: list[Demand] = []
    for ps in workload.pod_sets:
        count = ps.count if ps.min_count is None else min(ps.count, ps.min_count)
        # Kueue's Requests.Mul on its stored integers.
        requests = {
            res: total
            for res, value in ps.stored.items()
            if value > 0 and (total := min(value * count, INT64_MAX)) > 0
        }
        if covers_pods and count > 0:
            requests[PODS] = requests.get(PODS, 0) + count
        template = ps.template
        spec = template.get("spec")
        if type(spec) is not dict:
            spec = spec if isinstance(spec, Mapping) else {}
        out.append(Demand(ps.name, count, requests, spec or {}, count < ps.count, template))
    return out


def show(resource: str, stored: int) -> str:
    """A stored amount as a Kubernetes quantity (``4``, ``500m``, ``8Gi``)."""
    return format_quantity(from_stored(resource, stored), resource)

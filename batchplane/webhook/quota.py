"""Can a workload *ever* be admitted by its ClusterQueue? Kueue's quota model, compiled from the policy.

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

Within one PodSet every resource of a resource group gets the same flavor; different PodSets may get
different flavors. A flavor is only eligible when the PodSet tolerates its ``NoSchedule``/``NoExecute``
taints (the flavor's own tolerations count) and its nodeSelector / required node affinity match the
flavor's node labels on the label keys the policy's ``kueue.nodeAffinityKeys`` names: the flavor's own (Kueue v0.19.2,
v0.18.2+, v0.17.6+) or every key of its resource group (older Kueue; :data:`batchplane.webhook.policy.NodeAffinityKeys`).
Amounts are Kueue's stored integers (millicores for CPU, units otherwise; :func:`batchplane.accounting.model.to_stored`).

A workload is reported as never admissible when no assignment of flavors to (PodSet, resource group) pairs fits
(an exhaustive search, counting PodSets with ``minCount`` at their minimum), or when one fits but Kueue's own
flavor assigner never finds it: PodSets in order, each on the first flavor that takes it, retried from the last
flavor tried (:func:`kueue_attempts`, which follows Kueue v0.19.2's ``flavorassigner.go`` and scheduler line by
line, in an otherwise empty cohort). Where those retries are not modelled exactly (partial admission, TAS PodSet
groups, a long sequence) the result is a warning, never a denial.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from batchplane.accounting.model import INT64_MAX, WorkloadRequests, from_stored, to_stored
from batchplane.quantity import format_quantity, parse_quantity
from batchplane.webhook.errors import PolicyError
from batchplane.webhook.policy import PolicyDocument, ResourceGroupPolicy

#: The ``pods`` resource: when a ClusterQueue covers it, each PodSet requests ``pods = count``
#: (``flavorassigner.go``).
PODS = "pods"
#: Nodes the exhaustive search may visit per resource group before it gives up (it only chooses the message).
SEARCH_BUDGET = 20_000
#: Attempts of Kueue's retry sequence the model follows before it stops (and allows, with a warning).
ATTEMPT_BUDGET = 64
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
class Flavor:
    """A ResourceFlavor's scheduling constraints (node labels, taints, tolerations), as plain dicts.

    Compiled once per policy: ``hard_taints`` are the ``NoSchedule``/``NoExecute`` taints the flavor's own
    tolerations leave untolerated (in order; only a pod toleration can still tolerate them), and ``plain`` is
    :func:`flavor_mismatch` of a pod spec with no tolerations, nodeSelector or affinity (most PodSets).
    """

    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, Any], ...] = ()
    tolerations: tuple[Mapping[str, Any], ...] = ()
    #: The nodes of the pools that back the flavor: (pool, machine type, one node's capacity in stored units);
    #: empty = unknown (no pod is refused for its size).
    nodes: tuple[NodeShape, ...] = ()
    hard_taints: tuple[Mapping[str, Any], ...] = field(init=False, repr=False, compare=False)
    plain: str | None = field(init=False, repr=False, compare=False)
    unconstrained: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        hard = tuple(
            t
            for t in self.taints
            if t.get("effect") in ("NoSchedule", "NoExecute")
            and not any(_tolerates(o, t) for o in self.tolerations)
        )
        object.__setattr__(self, "hard_taints", hard)
        object.__setattr__(self, "plain", _taint_message(hard[0], self.name) if hard else None)
        # No taint left to tolerate and no node label to mismatch: every pod spec matches.
        object.__setattr__(self, "unconstrained", not hard and not self.node_labels)


@dataclass(frozen=True)
class NodeShape:
    """One node of a pool that backs a flavor.

    Attributes:
        pool: the pool.
        machine_type: its machine type (``""`` when unknown).
        capacity: resource → what one node has, in Kueue's stored units (millicores for CPU); only known resources.
    """

    pool: str
    machine_type: str
    capacity: Mapping[str, int]
    key: str = ""

    def holds(self, per_pod: Mapping[str, int]) -> bool:
        """Whether one pod requesting ``per_pod`` (stored units) fits this node in every resource it knows."""
        return all(per_pod.get(resource, 0) <= have for resource, have in self.capacity.items())


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

    def __post_init__(self) -> None:
        # Compiled once: per group, per flavor (in order), the maximum of each of the group's resources.
        maxima = tuple(
            tuple(tuple(self.capacity[(f, r)].maximum for r in g.resources) for f in g.flavors)
            for g in self.groups
        )
        object.__setattr__(self, "maxima", maxima)
        object.__setattr__(self, "covered", frozenset(r for g in self.groups for r in g.resources))


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


def _local(node: _Node, key: FlavorResource) -> int:
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
    tree = _Tree(policy)
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


class _Tree:
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
                node.subtree[fr] = node.subtree.get(fr, 0) + amount - _local(child, fr)

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
            ancestors.append((cohort.subtree.get(fr, 0), _local(cohort, fr), self.height(parent)))
            parent = cohort.parent
        return BorrowPath(node.nominal.get(fr, 0), _local(node, fr), tuple(ancestors))

    def potential(self, key: str, fr: FlavorResource) -> int:
        """Kueue's ``potentialAvailable`` of node ``key`` for ``fr`` (stored units)."""
        node = self.nodes[key]
        if node.parent is None:
            return node.subtree.get(fr, 0)
        available = _local(node, fr) + self.potential(node.parent, fr)
        if fr in node.borrowing:
            available = min(available, node.subtree.get(fr, 0) + node.borrowing[fr])
        return available


def compile_flavors(policy: PolicyDocument) -> dict[str, Flavor]:
    """The policy's ResourceFlavors as :class:`Flavor` (taints and tolerations as camelCase dicts)."""
    return {
        name: Flavor(
            name=name,
            node_labels=dict(rf.node_labels),
            taints=tuple(t.model_dump(by_alias=True, exclude_none=True) for t in rf.node_taints),
            tolerations=tuple(t.model_dump(by_alias=True, exclude_none=True) for t in rf.tolerations),
            nodes=tuple(
                NodeShape(
                    n.pool,
                    n.machine_type,
                    {r: to_stored(r, parse_quantity(q)) for r, q in n.capacity.items()},
                    n.key,
                )
                for n in rf.nodes
            ),
        )
        for name, rf in policy.resource_flavors.items()
    }


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


# --- flavor eligibility: taints and node labels -------------------------------------------------


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if not key:
        return operator == "Exists"
    if key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


#: Go's ``strconv.ParseInt(s, 10, 64)`` range.
_INT64_MIN = -(2**63)


def _parse_int64(text: Any) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: an optional sign and decimal digits within int64, else None."""
    if not isinstance(text, str):
        return None
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= INT64_MAX else None


def _match_expression(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """One ``matchExpressions`` requirement against a flavor's node labels, as Kubernetes' ``labels.Requirement``
    matches it (``nodeSelectorRequirementsAsSelector``, k8s.io/component-helpers ``nodeaffinity``). A requirement
    Kubernetes refuses to build (``Gt``/``Lt`` without exactly one integer value, an unknown operator) makes Kueue
    fail with an error, not a mismatch: it counts as a match here, never the reason to deny."""
    key = str(expr.get("key"))
    operator = expr.get("operator")
    values = expr.get("values") or []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    if operator in ("Gt", "Lt"):
        bound = _parse_int64(values[0]) if isinstance(values, list) and len(values) == 1 else None
        if bound is None:
            return True
        value = _parse_int64(labels[key]) if key in labels else None
        if value is None:
            return False
        return value > bound if operator == "Gt" else value < bound
    return True


def flavor_mismatch(
    pod_spec: Mapping[str, Any], flavor: Flavor, keys: frozenset[str] | None = None
) -> str | None:
    """Why a PodSet can never use ``flavor`` (an untolerated taint, a nodeSelector/affinity mismatch), or None.

    Mirrors ``flavorassigner.go`` (``FindMatchingUntoleratedTaint`` over the pod's plus the flavor's
    tolerations for ``NoSchedule``/``NoExecute`` taints; ``flavorSelector``: the nodeSelector and the required node
    affinity restricted to ``keys`` — a term left with no expression makes the whole affinity match — then matched
    against the flavor's node labels). Anything it cannot decide counts as a match.

    Args:
        pod_spec: the PodSet's pod spec.
        flavor: the flavor.
        keys: the label keys to match on: ``None`` = the flavor's own (Kueue v0.19.2, line 1227), else its resource
            group's (:attr:`Group.match_keys`, Kueue v0.18.1 and older, line 834 @v0.18.1), where a flavor lacking a
            key the pod names does not match.
    """
    if flavor.unconstrained and not keys:
        return None
    pod_tolerations = pod_spec.get("tolerations")
    selector = pod_spec.get("nodeSelector")
    affinity = pod_spec.get("affinity")
    if not pod_tolerations and not selector and not affinity:
        return flavor.plain
    tolerations = [t for t in (pod_tolerations or []) if isinstance(t, (dict, Mapping))]
    for taint in flavor.hard_taints:  # the flavor's own tolerations are already applied
        if not any(_tolerates(t, taint) for t in tolerations):
            return _taint_message(taint, flavor.name)
    labels = flavor.node_labels
    allowed: Mapping[str, str] | frozenset[str] = labels if keys is None else keys
    if isinstance(selector, (dict, Mapping)):
        for key, value in selector.items():
            if key in labels:
                if labels[key] != value:
                    return f'nodeSelector {key}={value} does not match flavor "{flavor.name}" ({key}={labels[key]})'
            elif key in allowed:
                return (
                    f"flavor {flavor.name} doesn't match node affinity: nodeSelector {key}={value}, and the flavor "
                    f"has no {key} label (a label key of its resource group)"
                )
    if not _affinity_matches(affinity, labels, allowed):
        if keys is None:
            return f'required node affinity does not match the node labels of flavor "{flavor.name}"'
        return (
            f"flavor {flavor.name} doesn't match node affinity: its node labels do not satisfy the required node "
            f"affinity on the label keys of its resource group ({', '.join(sorted(keys))})"
        )
    return None


def _required_terms(affinity: Any) -> list[Any] | None:
    """``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms``, or None."""
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, (dict, Mapping)) else None
    required = (
        node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node_affinity, (dict, Mapping))
        else None
    )
    terms = required.get("nodeSelectorTerms") if isinstance(required, (dict, Mapping)) else None
    return terms if isinstance(terms, list) and terms else None


def _affinity_matches(
    affinity: Any, labels: Mapping[str, str], allowed: Mapping[str, str] | frozenset[str]
) -> bool:
    """Whether the required node affinity, each term restricted to the ``allowed`` keys, matches ``labels``
    (``flavorSelector``: terms are ORed; a term left with no expression, or that is not an object, matches)."""
    terms = _required_terms(affinity)
    if terms is None:
        return True
    for term in terms:
        if not isinstance(term, (dict, Mapping)):
            return True
        matched = True
        for e in term.get("matchExpressions") or []:
            if (
                isinstance(e, (dict, Mapping))
                and e.get("key") in allowed
                and not _match_expression(e, labels)
            ):
                matched = False
                break
        if matched:
            return True
    return False


def _selects(pod_spec: Mapping[str, Any], labels: Mapping[str, str], allowed: frozenset[str]) -> bool:
    """Whether node labels ``labels`` satisfy the pod's nodeSelector and required node affinity on the ``allowed``
    keys (``flavorSelector`` then ``Match``; taints not considered)."""
    selector = pod_spec.get("nodeSelector")
    if isinstance(selector, (dict, Mapping)):
        for key, value in selector.items():
            if key in allowed and labels.get(key) != value:
                return False
    return _affinity_matches(pod_spec.get("affinity"), labels, allowed)


def _named_keys(pod_spec: Mapping[str, Any]) -> frozenset[str]:
    """The label keys the pod's nodeSelector and required node affinity name."""
    named: set[str] = set()
    selector = pod_spec.get("nodeSelector")
    if isinstance(selector, (dict, Mapping)):
        named.update(str(k) for k in selector)
    for term in _required_terms(pod_spec.get("affinity")) or []:
        if isinstance(term, (dict, Mapping)):
            for e in term.get("matchExpressions") or []:
                if isinstance(e, (dict, Mapping)):
                    named.add(str(e.get("key")))
    return frozenset(named)


def affinity_warnings(
    workload_demands: Sequence[Demand], queue: QueueModel, flavors: Mapping[str, Flavor]
) -> list[str]:
    """PodSets Kueue admits but whose pods are likely never scheduled: under per-flavor keys (``match_keys`` None),
    a PodSet whose nodeSelector / required node affinity names label keys some flavor of a resource group it
    requests declares, with values no flavor of the group carries (``nodeSelector: {gke-accelerator: a100}`` on a
    queue whose flavors are labelled ``h100`` and ``l4``). Kueue v0.19 still admits it to a flavor without those
    keys (each flavor is matched on its own), but no node of the queue's flavors is known to carry such labels.

    Returns:
        One warning per PodSet and resource group (empty for the resource-group keys, whose mismatch is a denial,
        and for PodSets without a nodeSelector or node affinity).
    """
    out: list[str] = []
    for d in workload_demands:
        spec = d.pod_spec
        if not spec.get("nodeSelector") and not spec.get("affinity"):
            continue
        for group in queue.groups:
            keys = group.label_keys
            if (
                group.match_keys is not None
                or not keys
                or not any(d.requests.get(r) for r in group.resources)
            ):
                continue
            described = [flavors.get(f) or _unconstrained(f) for f in group.flavors]
            if any(_selects(spec, f.node_labels, keys) for f in described):
                continue
            admits = [f.name for f in described if _selects(spec, f.node_labels, frozenset(f.node_labels))]
            if not admits:
                continue  # no flavor matches even on its own keys: check_capacity refuses it
            named = _named_keys(spec) & keys
            labelled = "; ".join(
                f"{f.name}: " + ", ".join(f"{k}={v}" for k, v in sorted(f.node_labels.items()) if k in named)
                for f in described
                if not named.isdisjoint(f.node_labels)
            )
            out.append(
                f'PodSet "{d.name}": its nodeSelector / required node affinity names label keys the flavors of '
                f"resource group ({', '.join(group.resources)}) declare, with values none of them declares "
                f"({labelled}); Kueue matches each flavor on its own label keys and may admit it to "
                f"{', '.join(admits)}, whose declared node labels do not satisfy it: unless those nodes carry the labels "
                "anyway, its pods are never scheduled"
            )
    return out


def _taint_message(taint: Mapping[str, Any], flavor: str) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f'untolerated taint {taint.get("key")}{value}:{taint.get("effect")} of flavor "{flavor}"'


# --- the search ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shortfall:
    """Why a workload can never be admitted.

    Attributes:
        kind: ``"undeclared"`` (a resource no group covers), ``"podset"`` (one PodSet fits no
            flavor on its own), ``"workload"`` (the PodSets fit one by one, not together), ``"assigner"``
            (they fit together, but no attempt of Kueue's flavor assigner finds how) or ``"unmodelled"``
            (Kueue's attempts fail as far as they are modelled, but not exactly: a warning, not a denial).
        pod_set: the PodSet (``""`` for ``"workload"``).
        detail: the human part of the message (names the numbers).
        group: the ClusterQueue's resource group it is about (index), -1 when none (``"undeclared"``,
            ``"assigner"``, ``"unmodelled"``).
    """

    kind: str
    pod_set: str
    detail: str
    group: int = -1


def show(resource: str, stored: int) -> str:
    """A stored amount as a Kubernetes quantity (``4``, ``500m``, ``8Gi``)."""
    return format_quantity(from_stored(resource, stored), resource)


def _pod_breakdown(demand: Demand, resource: str) -> str:
    total = demand.requests[resource]
    if demand.count > 1 and resource != PODS and total % demand.count == 0:
        return f"{show(resource, total)} ({demand.count} pods × {show(resource, total // demand.count)})"
    return show(resource, total)


def check_capacity(
    workload_demands: Sequence[Demand],
    queue: QueueModel,
    flavors: Mapping[str, Flavor],
    *,
    block_undeclared: bool = True,
    budget: int = SEARCH_BUDGET,
) -> list[Shortfall]:
    """Every reason the workload can never be admitted by ``queue``; empty when it could be.

    Args:
        workload_demands: from :func:`demands`.
        queue: the ClusterQueue model.
        flavors: ResourceFlavors by name (a flavor missing here has no constraints).
        block_undeclared: Kueue's ``quotaCheckStrategy: BlockUndeclared`` (the default).
        budget: nodes per resource group the exhaustive search may visit; when it runs out, Kueue's own
            attempts (:func:`kueue_attempts`) decide.

    Returns:
        Shortfalls, undeclared resources first, then per-PodSet, then whole-workload ones; else at most one
        ``"assigner"`` or ``"unmodelled"`` shortfall from Kueue's sequence of attempts (:func:`kueue_attempts`).
        Only an ``"unmodelled"`` one is not a reason to deny.
    """
    out = _undeclared(workload_demands, queue) if block_undeclared else []
    if out:
        return out
    first_fits = True  # Kueue's first attempt (each PodSet on the first flavor that takes it) admits
    split_found = True  # the exhaustive search found an assignment in every group (not: its budget ran out)
    for index, group in enumerate(queue.groups):
        items: list[tuple[Demand, tuple[int, ...], list[str]]] = []
        all_eligible = True
        for d in workload_demands:
            requests = d.requests
            vector = tuple([requests.get(r, 0) for r in group.resources])
            if not any(vector):
                continue
            eligible = _eligible(d, vector, index, queue, flavors)
            if not eligible:
                all_eligible = False
                reasons = _ineligible_reasons(d, vector, index, queue, flavors)
                asked = ", ".join(
                    f"{r} {_pod_breakdown(d, r)}" for r, v in zip(group.resources, vector, strict=True) if v
                )
                out.append(
                    Shortfall(
                        "podset", d.name, f'PodSet "{d.name}" needs {asked}, but ' + "; ".join(reasons), index
                    )
                )
            items.append((d, vector, eligible))
        if len(items) < 2 or not all_eligible:
            continue
        caps = dict(zip(group.flavors, queue.maxima[index], strict=True))
        if _first_fit(items, caps):
            continue
        first_fits = False
        together = _fits_together(items, caps, group, budget)
        if together is False:
            out.append(_workload_shortfall(items, group, queue, index))
        elif together is None:
            split_found = False
    if out or (first_fits and not queue.try_next_when_borrowing):
        return out
    return _assigner_shortfalls(workload_demands, queue, flavors, split_found)


def _assigner_shortfalls(
    workload_demands: Sequence[Demand], queue: QueueModel, flavors: Mapping[str, Flavor], split_found: bool
) -> list[Shortfall]:
    """Some assignment fits every PodSet; does Kueue's own sequence of attempts find one? Empty when it does.

    A workload Kueue never admits gets a ``"assigner"`` shortfall with Kueue's messages; one whose sequence is not
    modelled exactly (partial admission, TAS PodSet groups, more than :data:`ATTEMPT_BUDGET` attempts) gets an
    ``"unmodelled"`` one — a warning, never a denial.
    """
    attempts, complete = kueue_attempts(workload_demands, queue, flavors)
    last = attempts[-1]
    if last.failed < 0:
        return []
    failed = workload_demands[last.failed].name
    messages: list[str] = []
    for attempt in attempts:
        text = attempt_message(workload_demands, attempt)
        if text not in messages:
            messages.append(text)
    steps = (
        messages[0]
        if len(attempts) == 1
        else f"{messages[0]}; retried from the last flavor tried ({len(attempts) - 1} more attempt"
        f"{'s' if len(attempts) > 2 else ''}): " + "; ".join(messages[1:] or messages[:1])
    )
    if not complete or any(d.partial or d.grouped() for d in workload_demands):
        why = (
            f"more than {ATTEMPT_BUDGET} attempts"
            if not complete
            else "partial admission (minCount)"
            if any(d.partial for d in workload_demands)
            else f"TAS PodSet groups ({POD_SET_GROUP_NAME})"
        )
        return [
            Shortfall(
                "unmodelled",
                failed,
                f"Kueue's flavor assigner may never admit it ({steps}), but with {why} its retries are not "
                "modelled exactly, so it is not refused",
            )
        ]
    return [
        Shortfall(
            "assigner",
            failed,
            ("a flavor assignment would fit, but " if split_found else "")
            + "Kueue assigns flavors PodSet by PodSet, each on the first flavor that takes it, and never finds "
            f"one that fits: {steps}",
        )
    ]


def _undeclared(workload_demands: Sequence[Demand], queue: QueueModel) -> list[Shortfall]:
    """``BlockUndeclared``: every requested resource no resource group covers."""
    out: list[Shortfall] = []
    covered = queue.covered
    for d in workload_demands:
        if covered.issuperset(d.requests):
            continue
        for resource in sorted(set(d.requests) - covered):
            out.append(
                Shortfall(
                    "undeclared",
                    d.name,
                    f'PodSet "{d.name}" requests {resource} {_pod_breakdown(d, resource)}, '
                    f"which no resource group of the ClusterQueue covers (covered: {', '.join(sorted(covered)) or 'none'})",
                )
            )
    return out


def _workload_shortfall(
    items: list[tuple[Demand, tuple[int, ...], list[str]]], group: Group, queue: QueueModel, index: int
) -> Shortfall:
    totals = [sum(v[i] for _, v, _ in items) for i in range(len(group.resources))]
    asked = ", ".join(f"{r} {show(r, t)}" for r, t in zip(group.resources, totals, strict=True) if t)
    offers = "; ".join(
        f'flavor "{f}" at most '
        + ", ".join(
            f"{r} {show(r, queue.capacity[(f, r)].maximum)}"
            for r, t in zip(group.resources, totals, strict=True)
            if t
        )
        for f in group.flavors
    )
    return Shortfall(
        "workload",
        "",
        f"its PodSets ({', '.join(d.name for d, _, _ in items)}) together need {asked}, and no split of "
        f"them over the flavors fits ({offers})",
        index,
    )


@functools.lru_cache(maxsize=256)
def _unconstrained(name: str) -> Flavor:
    """A flavor the policy does not describe: no taints, no node labels."""
    return Flavor(name)


def _eligible(
    demand: Demand, vector: tuple[int, ...], index: int, queue: QueueModel, flavors: Mapping[str, Flavor]
) -> list[str]:
    """The flavors of group ``index`` one PodSet could use on its own (computed once per PodSet and group: the
    capacity check and the provisioning check both ask). Capacity is compared first — integers compiled into
    ``queue.maxima`` — and a flavor that is too small needs no taint or selector check."""
    cache = demand.eligible
    if cache is None:
        cache = demand.eligible = {}
    else:
        cached = cache.get(index)
        if cached is not None:
            return cached
    eligible: list[str] = []
    spec = demand.pod_spec
    group = queue.groups[index]
    keys = group.match_keys
    for flavor_name, maxima in zip(group.flavors, queue.maxima[index], strict=True):
        for amount, maximum in zip(vector, maxima):  # noqa: B905 - same length
            if amount > maximum:
                break
        else:
            if flavor_mismatch(spec, flavors.get(flavor_name) or _unconstrained(flavor_name), keys) is None:
                eligible.append(flavor_name)
    cache[index] = eligible
    return eligible


def _ineligible_reasons(
    demand: Demand, vector: tuple[int, ...], index: int, queue: QueueModel, flavors: Mapping[str, Flavor]
) -> list[str]:
    """Why each flavor of group ``index`` cannot take the PodSet (asked only when none can: a denial). Kueue
    reports a taint or selector mismatch before capacity; so does the message."""
    group = queue.groups[index]
    reasons: list[str] = []
    for flavor_name in group.flavors:
        mismatch = flavor_mismatch(
            demand.pod_spec, flavors.get(flavor_name) or _unconstrained(flavor_name), group.match_keys
        )
        if mismatch is not None:
            reasons.append(mismatch)
            continue
        too_small = next(
            r
            for r, amount in zip(group.resources, vector, strict=True)
            if amount > queue.capacity[(flavor_name, r)].maximum
        )
        reasons.append(
            f'flavor "{flavor_name}" offers at most {queue.capacity[(flavor_name, too_small)].describe()}'
        )
    return reasons


def eligible_flavors(
    demand: Demand, index: int, queue: QueueModel, flavors: Mapping[str, Flavor]
) -> list[str]:
    """The flavors of resource group ``index`` the PodSet could use on its own (quota, taints, node labels); empty
    when it requests nothing of that group."""
    requests = demand.requests
    vector = tuple([requests.get(r, 0) for r in queue.groups[index].resources])
    if not any(vector):
        return []
    return _eligible(demand, vector, index, queue, flavors)


def node_misfit(
    demand: Demand, per_pod: Mapping[str, int], queue: QueueModel, flavors: Mapping[str, Flavor]
) -> tuple[int, list[str]] | None:
    """A resource group in which every flavor the PodSet could get is backed only by nodes none of which holds one
    of its pods: ``(group index, those flavors)``; None when there is none (or a flavor's nodes are unknown).

    Sound because a flavor's node labels select exactly its pools' nodes: a pod admitted on that flavor is bound to
    them. Capacity is the machine's, an upper bound of what the kubelet allocates, so it refuses fewer pods.
    """
    if demand.count <= 0:
        return None
    for index in range(len(queue.groups)):
        eligible = eligible_flavors(demand, index, queue, flavors)
        if not eligible:
            continue
        for name in eligible:
            flavor = flavors.get(name)
            if flavor is None or not flavor.nodes or any(n.holds(per_pod) for n in flavor.nodes):
                break
        else:
            return index, eligible
    return None


def possible_flavors(demand: Demand, queue: QueueModel, flavors: Mapping[str, Flavor]) -> set[str]:
    """Every flavor ``demand`` could be assigned in some resource group it requests (empty: none / no requests)."""
    out: set[str] = set()
    requests = demand.requests
    for index, group in enumerate(queue.groups):
        vector = tuple([requests.get(r, 0) for r in group.resources])
        if any(vector):
            out.update(_eligible(demand, vector, index, queue, flavors))
    return out


def _search_order(item: tuple[Demand, tuple[int, ...], list[str]]) -> tuple[int, int]:
    """PodSets with the fewest eligible flavors first, then the largest."""
    return (len(item[2]), -sum(item[1]))


def _first_fit(
    items: list[tuple[Demand, tuple[int, ...], list[str]]], caps: dict[str, tuple[int, ...]]
) -> bool:
    """Each PodSet, in the workload's order, on its first eligible flavor with room left. True proves that the
    PodSets fit together; False proves nothing (the exhaustive search decides)."""
    left: dict[str, list[int]] = {}
    for _, vector, eligible in items:
        for flavor in eligible:
            room = left.get(flavor)
            if room is None:
                room = left[flavor] = list(caps[flavor])
            for amount, free in zip(vector, room):  # noqa: B905 - same length
                if amount > free:
                    break
            else:
                for j, amount in enumerate(vector):
                    room[j] -= amount
                break
        else:
            return False
    return True


def _fits_together(
    items: list[tuple[Demand, tuple[int, ...], list[str]]],
    caps: dict[str, tuple[int, ...]],
    group: Group,
    budget: int,
) -> bool | None:
    """Depth-first search for a flavor per PodSet that fits every flavor's maximum (``caps``); None = budget
    spent. Asked only after :func:`_first_fit` failed.

    Iterative (an explicit stack of choice indexes), so a review leaves no reference cycle behind: a
    recursive nested closure refers to itself and is only freed by the cycle collector.
    """
    order = sorted(items, key=_search_order)  # not empty: an empty list fits at the first try
    used = {f: [0] * len(group.resources) for f in group.flavors}
    steps = 0
    chosen: list[int] = [-1]  # chosen[i]: index into order[i]'s eligible flavors; -1 = not tried yet
    while chosen:
        i = len(chosen) - 1
        _, vector, eligible = order[i]
        previous = chosen[i]
        if previous >= 0:  # back from a dead end below: take the previous choice back
            flavor = eligible[previous]
            for j, v in enumerate(vector):
                used[flavor][j] -= v
        placed = False
        for k in range(previous + 1, len(eligible)):
            steps += 1
            if steps > budget:
                return None
            flavor = eligible[k]
            if all(u + v <= c for u, v, c in zip(used[flavor], vector, caps[flavor], strict=True)):
                for j, v in enumerate(vector):
                    used[flavor][j] += v
                chosen[i] = k
                placed = True
                break
        if not placed:
            chosen.pop()
            continue
        if len(chosen) == len(order):
            return True
        chosen.append(-1)
    return False


def total_of(workload: WorkloadRequests, resources: Sequence[str]) -> Decimal:
    """Sum of ``workload.total`` over ``resources`` (e.g. every GPU resource)."""
    total = workload.total
    return sum((total.get(r, Decimal(0)) for r in resources), Decimal(0))


# --- Kueue's flavor assigner and its retry sequence ---------------------------------------------
#
# Kueue v0.19.2 assigns flavors greedily (https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/
# pkg/scheduler/flavorassigner/flavorassigner.go): PodSets in the workload's order (``assignFlavors``, lines
# 707-858), per PodSet each resource group once (lines 802-832), the group's flavors in the ClusterQueue's order
# from the flavor after the last one tried (``findFlavorForPodSets``, lines 1061-1206), a flavor first checked
# for untolerated taints and node affinity (``checkFlavorForPodSets``, lines 1208-1257), then for quota: the
# PodSet's request plus what earlier PodSets put on that flavor against the potential available quota
# (``fitsResourceQuota``, lines 1330-1380). The first PodSet no flavor takes ends the attempt.
#
# An attempt that fails leaves ``LastTriedFlavorIdx`` behind (``Assignment.append``, lines 1013-1037; the index
# of the last flavor tried per PodSet and resource, -1 after the last flavor, nothing for the failed PodSet and
# the ones after it). When an index other than -1 is left, the workload is requeued at once
# (``requeueIfNotPresent``, pkg/cache/queue/cluster_queue.go lines 678-685) and the next attempt starts each
# PodSet's search at that index + 1 (``NextFlavorToTryForPodSetResource``, pkg/workload/workload.go lines
# 226-238). With every index -1 (or none) the workload waits as inadmissible; when something requeues it, the
# scan starts from the first flavor again — the same sequence. So in an otherwise empty cohort a workload is
# admitted exactly when some attempt of that sequence admits it.

#: A ``LastTriedFlavorIdx`` entry for a group the PodSet got no flavor in (the search starts at flavor 0).
_UNTRIED = -2

#: ``LastTriedFlavorIdx``: per PodSet (the ones an attempt reached), per resource group, the index of the
#: last flavor tried (-1: the last flavor, :data:`_UNTRIED`: none).
TriedState = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Attempt:
    """One attempt of Kueue's flavor assigner on an empty cohort.

    Attributes:
        failed: index of the PodSet no flavor took (-1: every PodSet got its flavors: admitted).
        reasons: for a failure, Kueue's reasons for that PodSet (``Status.reasons``, unsorted).
        state: the ``LastTriedFlavorIdx`` it leaves behind.
        flavors: per PodSet reached, per resource group, the flavor assigned (``""``: none).
    """

    failed: int
    reasons: tuple[str, ...]
    state: TriedState
    flavors: tuple[tuple[str, ...], ...]

    def pending(self) -> bool:
        """``PendingFlavors`` (pkg/workload/workload.go lines 209-224): an index other than -1 is left."""
        return any(idx != -1 and idx != _UNTRIED for row in self.state for idx in row)


def kueue_mismatch(
    pod_spec: Mapping[str, Any], flavor: Flavor, keys: frozenset[str] | None = None
) -> str | None:
    """Kueue's own reason a PodSet cannot use ``flavor`` (``checkFlavorForPodSets``), or None.

    ``untolerated taint gpu=true:NoSchedule in flavor spot`` / ``flavor h100 doesn't match node affinity``.
    With ``keys`` None node affinity is matched on the label keys of this flavor only: a flavor without node labels
    matches every pod (``flavorLabelKeys := sets.KeySet(flavor.Spec.NodeLabels)``, flavorassigner.go line 1227
    @v0.19.2). With the resource group's ``keys`` (Kueue v0.18.1 and older: ``flavorSelector(&ps.Template.Spec,
    resourceGroup.LabelKeys)``, line 834 @v0.18.1, the same messages at lines 984 and 993) a flavor lacking one of
    them that the pod names does not match.
    """
    if flavor_mismatch(pod_spec, flavor, keys) is None:
        return None
    raw = pod_spec.get("tolerations")
    tolerations = [t for t in (raw or []) if isinstance(t, (dict, Mapping))]
    for taint in flavor.hard_taints:
        if not any(_tolerates(t, taint) for t in tolerations):
            value = f"={taint['value']}" if taint.get("value") else ""
            return (
                f"untolerated taint {taint.get('key')}{value}:{taint.get('effect')} in flavor {flavor.name}"
            )
    return f"flavor {flavor.name} doesn't match node affinity"


def kueue_attempt(
    workload_demands: Sequence[Demand],
    queue: QueueModel,
    flavors: Mapping[str, Flavor],
    last: TriedState = (),
) -> Attempt:
    """One attempt of Kueue's flavor assigner on an empty cohort, resuming from ``last`` (``LastTriedFlavorIdx``).

    Resources no group covers are not looked at (:func:`check_capacity` reports them first). Kueue walks a
    PodSet's resources in Go map order (``requests.Iter()``), so when a PodSet fits in no flavor of two groups it
    reports either group; this reports the first in the queue's order. Which PodSet fails, and the state left
    behind, do not depend on that order.
    """
    used: dict[FlavorResource, int] = {}
    state: list[tuple[int, ...]] = []
    assigned: list[tuple[str, ...]] = []
    groups = queue.groups
    for p, d in enumerate(workload_demands):
        previous = last[p] if p < len(last) else None
        requests = d.requests
        row = [_UNTRIED] * len(groups)
        chosen = [""] * len(groups)
        for g, group in enumerate(groups):
            vector = [requests.get(r, 0) for r in group.resources]
            if not any(vector):
                continue
            start = 0 if previous is None or previous[g] < 0 else previous[g] + 1
            best, attempted, reasons = _find_flavor(d, group, vector, start, used, queue, flavors)
            if best < 0:
                state.append((_UNTRIED,) * len(groups))
                assigned.append(("",) * len(groups))
                return Attempt(p, tuple(reasons), tuple(state), tuple(assigned))
            row[g] = -1 if attempted == len(group.flavors) - 1 else attempted
            flavor = chosen[g] = group.flavors[best]
            for r, amount in zip(group.resources, vector, strict=True):
                if amount:
                    used[(flavor, r)] = used.get((flavor, r), 0) + amount
        state.append(tuple(row))
        assigned.append(tuple(chosen))
    return Attempt(-1, (), tuple(state), tuple(assigned))


def _find_flavor(
    demand: Demand,
    group: Group,
    vector: list[int],
    start: int,
    used: Mapping[FlavorResource, int],
    queue: QueueModel,
    flavors: Mapping[str, Flavor],
) -> tuple[int, int, list[str]]:
    """``findFlavorForPodSets`` for one PodSet and resource group in an empty cohort: (the index of the flavor
    chosen or -1, the index of the last flavor tried, Kueue's reasons for the flavors that did not fit)."""
    try_next = queue.try_next_when_borrowing
    reasons: list[str] = []
    best = -1
    best_level = 0
    attempted = -1
    for k in range(start, len(group.flavors)):
        attempted = k
        name = group.flavors[k]
        mismatch = kueue_mismatch(
            demand.pod_spec, flavors.get(name) or _unconstrained(name), group.match_keys
        )
        if mismatch is not None:
            reasons.append(mismatch)
            continue
        fits = True
        level = 0
        for r, amount in zip(group.resources, vector, strict=True):
            if not amount:
                continue
            before = used.get((name, r), 0)
            maximum = queue.capacity[(name, r)].maximum
            if before + amount > maximum:
                fits = False
                reasons.append(
                    f"insufficient quota for {r} in flavor {name}, previously considered podsets requests "
                    f"({show(r, before)}) + current podset request ({show(r, amount)}) > maximum capacity "
                    f"({show(r, maximum)})"
                )
            elif try_next:
                path = queue.borrow_paths.get((name, r))
                if path is not None:
                    level = max(level, path.level(before + amount))
        if not fits:
            continue
        if not try_next or level == 0:  # shouldTryNextFlavor is false: this flavor ends the search
            return k, k, reasons
        if best < 0 or level < best_level:  # isPreferred: a lower borrowing level
            best, best_level = k, level
    return best, attempted, reasons


def kueue_attempts(
    workload_demands: Sequence[Demand],
    queue: QueueModel,
    flavors: Mapping[str, Flavor],
    budget: int = ATTEMPT_BUDGET,
) -> tuple[list[Attempt], bool]:
    """The attempts Kueue makes in an otherwise empty cohort: from the first flavor, then resuming from each
    failed attempt's ``LastTriedFlavorIdx`` while it leaves one to resume from.

    Returns:
        (attempts, complete): the attempts up to the first that admits, or up to the one that leaves nothing
        to resume from (or repeats an earlier state: Kueue would loop); ``complete`` is False when ``budget``
        attempts were made without reaching either end.
    """
    attempts: list[Attempt] = []
    seen: set[TriedState] = {()}
    last: TriedState = ()
    for _ in range(budget):
        attempt = kueue_attempt(workload_demands, queue, flavors, last)
        attempts.append(attempt)
        if (
            attempt.failed < 0
            or not queue.flavor_fungibility
            or not attempt.pending()
            or attempt.state in seen
        ):
            return attempts, True
        seen.add(attempt.state)
        last = attempt.state
    return attempts, False


def attempt_message(workload_demands: Sequence[Demand], attempt: Attempt) -> str:
    """Kueue's ``Assignment.Message`` of a failed attempt: ``couldn't assign flavors to pod set NAME: REASONS``
    (reasons sorted and joined by ``", "``, ``Status.Message``, flavorassigner.go lines 228-246, 353-362)."""
    name = workload_demands[attempt.failed].name
    return f"couldn't assign flavors to pod set {name}: " + ", ".join(sorted(attempt.reasons))

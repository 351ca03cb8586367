"""The queue-topology graph of a validated stack: a pure model the renderers draw.

What a platform team wants to see of a stack, as nodes and edges (no Graphviz, no Pulumi here):

* **pools** — the node pools (GKE node pools, OpenShift MachineSets) that back ResourceFlavors, with
  their capacity per resource: per node, at most (``max_nodes × per node``) and the nominal quota
  all ClusterQueues and Cohorts put on the pool's flavors (the figures of
  :func:`batchplane.backed_pools.check_quota_against_pool_capacity`);
* **flavors** — every ResourceFlavor (hand-written or derived from a pool) with its nodeLabels,
  nodeTaints and tolerated taint keys;
* **cohorts** — declared Cohort objects and the implicit cohorts ClusterQueues name, with their
  parent and their own quota table;
* **ClusterQueues** — which namespaces they select, their quota table (one row per flavor, one column
  per covered resource: ``nominalQuota``, ``borrowingLimit``, ``lendingLimit``) and their admission
  checks (``onFlavors``, the ProvisioningRequest class when the check has one);
* **LocalQueues** and the **namespaces** they live in.

Edges run the way capacity flows, left to right in the picture: pool → flavor → ClusterQueue →
LocalQueue → namespace, plus cohort → ClusterQueue (``member``) and parent cohort → cohort
(``parent``), which the renderers draw as nesting. Everything is in config order, so a render is
deterministic for a given stack.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from batchplane.backed_pools import BackedPool, flavor_pools
from batchplane.config.kueue import (
    AdmissionCheckRef,
    ClusterQueue,
    LabelSelector,
    ResourceFlavor,
    ResourceGroup,
)
from batchplane.config.rules import ExpandedKueue
from batchplane.quantity import QuantityError, format_quantity, parse_quantity
from batchplane.stack.model import Stack
from batchplane.stack.pool_hooks import backed_pools
from batchplane.wellknown import NAMESPACE_NAME_LABEL, PROVISIONING_CONTROLLER

NodeKind = Literal["pool", "flavor", "cohort", "cluster-queue", "local-queue", "namespace", "worker"]
EdgeKind = Literal["nodes", "quota", "queue", "namespace", "member", "parent", "dispatch"]


#: Node id prefix of each node kind; ids read well as SVG ``<title>`` elements.
ID_PREFIX: dict[NodeKind, str] = {
    "pool": "Pool",
    "flavor": "ResourceFlavor",
    "cohort": "Cohort",
    "cluster-queue": "ClusterQueue",
    "local-queue": "LocalQueue",
    "namespace": "Namespace",
    "worker": "Worker",
}


def node_id(kind: NodeKind, name: str) -> str:
    """The id of a node: ``"ClusterQueue team-a"``, ``"LocalQueue team-a/default"`` ..."""
    return f"{ID_PREFIX[kind]} {name}"


@dataclass(frozen=True)
class QuotaCell:
    """The quota of one resource of one flavor (Kueue ``ResourceQuota``), as written in the config.

    Attributes:
        resource: resource name (``cpu``, ``memory``, ``nvidia.com/gpu``).
        nominal: ``nominalQuota`` in canonical quantity form (CPU cores, memory bytes as ``Gi``...).
        borrowing_limit: ``borrowingLimit``, or None (unlimited borrowing inside the cohort).
        lending_limit: ``lendingLimit``, or None (all unused quota may be lent).
    """

    resource: str
    nominal: str
    borrowing_limit: str | None = None
    lending_limit: str | None = None

    def text(self) -> str:
        """``"8"``, ``"8 +8"`` (borrowing limit), ``"8 +8 lend 2"`` (and lending limit)."""
        out = self.nominal
        if self.borrowing_limit is not None:
            out += f" +{self.borrowing_limit}"
        if self.lending_limit is not None:
            out += f" lend {self.lending_limit}"
        return out


@dataclass(frozen=True)
class QuotaRow:
    """One flavor's row of a quota table.

    Attributes:
        flavor: the ResourceFlavor name.
        cells: one cell per column of the table; None where the flavor's resource group does not
            cover that column's resource.
        checks: admission checks that apply to this flavor (for a ClusterQueue: checks whose
            ``onFlavors`` is empty or lists the flavor).
    """

    flavor: str
    cells: tuple[QuotaCell | None, ...]
    checks: tuple[str, ...] = ()


@dataclass(frozen=True)
class QuotaTable:
    """The quotas of a ClusterQueue or Cohort: flavors × covered resources.

    Attributes:
        resources: the columns, every covered resource in order of first appearance.
        rows: one row per flavor, in resource-group order.
    """

    resources: tuple[str, ...]
    rows: tuple[QuotaRow, ...]


@dataclass(frozen=True)
class CheckMark:
    """An admission check of a ClusterQueue (``admissionChecksStrategy``).

    Attributes:
        name: the AdmissionCheck's name.
        controller: its ``controllerName``.
        on_flavors: the flavors it applies to; empty means every flavor of the queue.
        provisioning_class: the ProvisioningRequestConfig's ``provisioningClassName`` when the check
            is Kueue's ProvisioningRequest check, else None.
    """

    name: str
    controller: str
    on_flavors: tuple[str, ...] = ()
    provisioning_class: str | None = None

    def text(self) -> str:
        """``"h100-dws: ProvisioningRequest queued-provisioning.gke.io on h100"``."""
        what = (
            f"ProvisioningRequest {self.provisioning_class}"
            if self.provisioning_class is not None
            else self.controller
        )
        scope = f" on {', '.join(self.on_flavors)}" if self.on_flavors else ""
        return f"{self.name}: {what}{scope}"


@dataclass(frozen=True)
class CapacityRow:
    """One resource of a pool: what a node has, what the pool can have, how much quota is on it.

    Attributes:
        resource: resource name.
        per_node: amount on one node (canonical quantity).
        capacity: ``max_nodes × per_node``, or None when the pool's size is unknown.
        quota: the sum of ``nominalQuota`` on the pool's flavors over every ClusterQueue and Cohort.
    """

    resource: str
    per_node: str
    capacity: str | None
    quota: str


@dataclass(frozen=True)
class Node:
    """One box of the picture.

    Attributes:
        id: unique id (:func:`node_id`), e.g. ``"ClusterQueue team-a"``.
        kind: what it stands for.
        name: the object's name (``namespace/name`` for LocalQueues).
        lines: short facts shown under the name, in order.
        quotas: the quota table (ClusterQueues, Cohorts with resource groups), else None.
        checks: admission checks (ClusterQueues only).
        capacity: per-resource capacity (pools only).
        cohort: for ClusterQueues and Cohorts, the id of the cohort node it is drawn inside, or None.
    """

    id: str
    kind: NodeKind
    name: str
    lines: tuple[str, ...] = ()
    quotas: QuotaTable | None = None
    checks: tuple[CheckMark, ...] = ()
    capacity: tuple[CapacityRow, ...] = ()
    cohort: str | None = None


@dataclass(frozen=True)
class Edge:
    """A directed edge, drawn from ``source`` to ``target`` (left to right).

    Attributes:
        source: id of the source node.
        target: id of the target node.
        kind: ``nodes`` (pool → flavor), ``quota`` (flavor → ClusterQueue with quota on it),
            ``queue`` (ClusterQueue → LocalQueue), ``namespace`` (LocalQueue → namespace),
            ``member`` (cohort → ClusterQueue), ``parent`` (parent cohort → cohort), ``dispatch``
            (MultiKueue: a dispatching ClusterQueue → a worker cluster).
        checked: for ``quota`` edges, True when an admission check applies to that flavor.
    """

    source: str
    target: str
    kind: EdgeKind
    checked: bool = False


@dataclass(frozen=True)
class QueueGraph:
    """The queue topology of one stack.

    Attributes:
        stack: the stack's name.
        nodes: every node, grouped by kind in flow order (pools, flavors, cohorts, ClusterQueues,
            LocalQueues, namespaces), each group in config order.
        edges: every edge, grouped by kind in flow order (``nodes``, ``parent``, ``member``,
            ``quota``, ``queue``, ``namespace``), each group in the order of its nodes.
    """

    stack: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    _index: dict[str, Node] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {n.id: n for n in self.nodes})

    def node(self, id: str) -> Node:
        """The node with this id.

        Raises:
            KeyError: no such node.
        """
        return self._index[id]

    def of_kind(self, kind: NodeKind) -> list[Node]:
        """Every node of one kind, in order."""
        return [n for n in self.nodes if n.kind == kind]

    def children(self, cohort_id: str | None) -> list[Node]:
        """Cohorts and ClusterQueues drawn directly inside ``cohort_id`` (None: at the top level)."""
        return [n for n in self.nodes if n.kind in ("cohort", "cluster-queue") and n.cohort == cohort_id]


# --- building ---------------------------------------------------------------------------------


def _quantity(text: str, resource: str) -> str:
    try:
        return format_quantity(parse_quantity(text), resource)
    except QuantityError:  # pragma: no cover - a validated stack has only valid quantities
        return text


def quota_table(groups: Sequence[ResourceGroup], refs: Sequence[AdmissionCheckRef] = ()) -> QuotaTable:
    """The quota table of a ClusterQueue's or Cohort's resource groups.

    Args:
        groups: the resource groups, as in the config.
        refs: the queue's admission checks; each row lists those that apply to its flavor.

    Returns:
        Columns = covered resources in order of first appearance; one row per flavor; quantities in
        canonical form (``format_quantity``: ``"1800Gi"``, ``"500m"``).
    """
    resources: list[str] = []
    for group in groups:
        resources += [r for r in group.covered_resources if r not in resources]
    rows: list[QuotaRow] = []
    for group in groups:
        for fq in group.flavors:
            by_name = {rq.name: rq for rq in fq.resources}
            cells: list[QuotaCell | None] = []
            for resource in resources:
                rq = by_name.get(resource)
                cells.append(
                    None
                    if rq is None
                    else QuotaCell(
                        resource=resource,
                        nominal=_quantity(rq.nominal_quota, resource),
                        borrowing_limit=None
                        if rq.borrowing_limit is None
                        else _quantity(rq.borrowing_limit, resource),
                        lending_limit=None
                        if rq.lending_limit is None
                        else _quantity(rq.lending_limit, resource),
                    )
                )
            checks = tuple(r.name for r in refs if not r.on_flavors or fq.name in r.on_flavors)
            rows.append(QuotaRow(flavor=fq.name, cells=tuple(cells), checks=checks))
    return QuotaTable(resources=tuple(resources), rows=tuple(rows))


def selector_text(selector: LabelSelector | None) -> str:
    """Which namespaces a ClusterQueue admits from, in a few words.

    ``None`` → ``"no namespaces (no namespaceSelector)"`` (Kueue: a nil selector matches nothing);
    ``{}`` → ``"all namespaces"``; only ``kubernetes.io/metadata.name: x`` → ``"namespace x"``;
    anything else → the ``matchLabels`` as ``k=v`` and the ``matchExpressions`` as ``key op [values]``.
    """
    if selector is None:
        return "no namespaces (no namespaceSelector)"
    if not selector.match_labels and not selector.match_expressions:
        return "all namespaces"
    if list(selector.match_labels) == [NAMESPACE_NAME_LABEL] and not selector.match_expressions:
        return f"namespace {selector.match_labels[NAMESPACE_NAME_LABEL]}"
    parts = [f"{k}={v}" for k, v in selector.match_labels.items()]
    for expr in selector.match_expressions:
        values = f" [{', '.join(expr.values)}]" if expr.values else ""
        parts.append(f"{expr.key} {expr.operator}{values}")
    return "namespaces " + ", ".join(parts)


def _flavor_lines(flavor: ResourceFlavor) -> tuple[str, ...]:
    lines = [f"{k}={v}" for k, v in flavor.node_labels.items()]
    if not lines:
        lines.append("any node (no nodeLabels)")
    lines += [f"taint {t.key}={t.value or ''}:{t.effect}" for t in flavor.node_taints]
    tolerated = sorted({t.key or "*" for t in flavor.tolerations})
    if tolerated:
        lines.append(f"tolerates {', '.join(tolerated)}")
    if flavor.topology_name is not None:
        lines.append(f"topology {flavor.topology_name}")
    return tuple(lines)


def _check_marks(k: ExpandedKueue, refs: Iterable[AdmissionCheckRef]) -> tuple[CheckMark, ...]:
    checks = {a.obj.name: a.obj for a in k.admission_checks}
    prcs = {p.obj.name: p.obj for p in k.provisioning_request_configs}
    marks: list[CheckMark] = []
    for ref in refs:
        check = checks.get(ref.name)
        controller = check.resolved_controller_name() if check is not None else "?"
        provisioning: str | None = None
        if check is not None and controller == PROVISIONING_CONTROLLER:
            params = check.resolved_parameters()
            prc = prcs.get(params.name) if params is not None else None
            if prc is not None:
                provisioning = prc.provisioning_class_name
        marks.append(CheckMark(ref.name, controller, tuple(ref.on_flavors), provisioning))
    return tuple(marks)


def _queue_lines(cq: ClusterQueue) -> tuple[str, ...]:
    lines = [selector_text(cq.namespace_selector)]
    if cq.fair_sharing is not None and cq.fair_sharing.weight is not None:
        lines.append(f"fair-sharing weight {cq.fair_sharing.weight}")
    if cq.stop_policy is not None and cq.stop_policy != "None":
        lines.append(f"stopPolicy {cq.stop_policy}")
    return tuple(lines)


def _pool_capacity(pool: BackedPool, flavors: set[str], k: ExpandedKueue) -> tuple[CapacityRow, ...]:
    quota: dict[str, Decimal] = {}
    owners = [cq.obj.resource_groups for cq in k.cluster_queues] + [
        co.obj.resource_groups for co in k.cohorts
    ]
    for groups in owners:
        for group in groups:
            for fq in group.flavors:
                if fq.name not in flavors:
                    continue
                for rq in fq.resources:
                    quota[rq.name] = quota.get(rq.name, Decimal(0)) + parse_quantity(rq.nominal_quota)
    rows: list[CapacityRow] = []
    for resource, amount in pool.per_node.items():
        capacity = None if pool.max_nodes is None else format_quantity(amount * pool.max_nodes, resource)
        rows.append(
            CapacityRow(
                resource=resource,
                per_node=format_quantity(amount, resource),
                capacity=capacity,
                quota=format_quantity(quota.get(resource, Decimal(0)), resource),
            )
        )
    return tuple(rows)


def _pool_lines(pool: BackedPool) -> tuple[str, ...]:
    key, value = pool.selector
    lines = [pool.kind, f"{key}={value}"]
    if pool.max_nodes is not None:
        note = "" if pool.max_nodes_note in ("", f"{pool.max_nodes} nodes") else f" ({pool.max_nodes_note})"
        lines.append(f"at most {pool.max_nodes} nodes{note}")
    else:
        lines.append("size unknown")
    if pool.provisioning is not None:
        lines.append(f"ProvisioningRequest {pool.provisioning.class_name}")
    return tuple(lines)


def _pool_and_flavor_nodes(k: ExpandedKueue, pools: Sequence[BackedPool]) -> tuple[list[Node], list[Edge]]:
    nodes: list[Node] = []
    edges: list[Edge] = []
    mapping = flavor_pools(k, list(pools))
    for pool in pools:
        flavors = {name for name, p in mapping.items() if p is pool}
        nodes.append(
            Node(
                id=node_id("pool", pool.name),
                kind="pool",
                name=pool.name,
                lines=_pool_lines(pool),
                capacity=_pool_capacity(pool, flavors, k),
            )
        )
    for rf in k.resource_flavors:
        flavor = rf.obj
        nodes.append(
            Node(
                id=node_id("flavor", flavor.name),
                kind="flavor",
                name=flavor.name,
                lines=_flavor_lines(flavor),
            )
        )
        backing = mapping.get(flavor.name)
        if backing is not None:
            edges.append(Edge(node_id("pool", backing.name), node_id("flavor", flavor.name), "nodes"))
    return nodes, edges


def _cohort_nodes(k: ExpandedKueue) -> tuple[list[Node], list[Edge]]:
    declared = {co.obj.name: co.obj for co in k.cohorts}
    names = list(declared)
    referenced = [co.obj.parent_name for co in k.cohorts] + [cq.obj.cohort_name for cq in k.cluster_queues]
    names += [n for n in dict.fromkeys(referenced) if n is not None and n not in declared]
    nodes: list[Node] = []
    edges: list[Edge] = []
    for name in names:
        cohort = declared.get(name)
        if cohort is None:
            nodes.append(
                Node(node_id("cohort", name), "cohort", name, lines=("implicit (no Cohort object)",))
            )
            continue
        weight = cohort.fair_sharing.weight if cohort.fair_sharing is not None else None
        parent = None if cohort.parent_name is None else node_id("cohort", cohort.parent_name)
        nodes.append(
            Node(
                id=node_id("cohort", name),
                kind="cohort",
                name=name,
                lines=() if weight is None else (f"fair-sharing weight {weight}",),
                quotas=quota_table(cohort.resource_groups) if cohort.resource_groups else None,
                cohort=parent,
            )
        )
        if parent is not None:
            edges.append(Edge(parent, node_id("cohort", name), "parent"))
    return nodes, edges


def _cluster_queue_nodes(k: ExpandedKueue) -> tuple[list[Node], list[Edge]]:
    nodes: list[Node] = []
    edges: list[Edge] = []
    for loc in k.cluster_queues:
        cq = loc.obj
        cq_id = node_id("cluster-queue", cq.name)
        cohort_id = None if cq.cohort_name is None else node_id("cohort", cq.cohort_name)
        table = quota_table(cq.resource_groups, cq.admission_checks)
        nodes.append(
            Node(
                id=cq_id,
                kind="cluster-queue",
                name=cq.name,
                lines=_queue_lines(cq),
                quotas=table,
                checks=_check_marks(k, cq.admission_checks),
                cohort=cohort_id,
            )
        )
        if cohort_id is not None:
            edges.append(Edge(cohort_id, cq_id, "member"))
        edges += [
            Edge(node_id("flavor", r.flavor), cq_id, "quota", checked=bool(r.checks)) for r in table.rows
        ]
    return nodes, edges


def _local_queue_nodes(k: ExpandedKueue) -> tuple[list[Node], list[Edge]]:
    nodes: list[Node] = []
    edges: list[Edge] = []
    for loc in k.local_queues:
        lq = loc.obj
        name = f"{lq.namespace}/{lq.name}"
        lq_id = node_id("local-queue", name)
        nodes.append(Node(lq_id, "local-queue", name, lines=("default queue",) if lq.default else ()))
        edges.append(Edge(node_id("cluster-queue", lq.cluster_queue), lq_id, "queue"))
        edges.append(Edge(lq_id, node_id("namespace", lq.namespace), "namespace"))
    specs = {ns.obj.name: ns.obj for ns in k.namespaces}
    for namespace in dict.fromkeys(lq.obj.namespace for lq in k.local_queues):
        spec = specs.get(namespace)
        lines = ("existing (not created)",) if spec is not None and not spec.create else ()
        nodes.append(Node(node_id("namespace", namespace), "namespace", namespace, lines=lines))
    return nodes, edges


def _worker_lines(stack: Stack, name: str) -> tuple[str, ...]:
    section = stack.config.multi_kueue
    assert section is not None
    worker = section.worker(name)
    if worker.kubeconfig_secret is not None:
        return (f"existing cluster (kubeconfig Secret {worker.kubeconfig_secret})",)
    declared = stack.workers.get(name)
    if declared is None:
        return ()
    target = declared.config.target
    where = getattr(target, "region", None) or getattr(target, "zone", None) or ""
    lines = [f"{target.kind} {getattr(target, 'cluster_name', '')} {where}".strip()]
    for pool in backed_pools(declared.config):
        lines.append(f"pool {pool.name}: {' · '.join(_pool_lines(pool))}")
    queues = ", ".join(q.obj.name for q in declared.kueue.cluster_queues)
    if queues:
        lines.append(f"ClusterQueues {queues}")
    return tuple(lines)


def _worker_nodes(stack: Stack) -> tuple[list[Node], list[Edge]]:
    """MultiKueue: one node per worker (in dispatch order: its target and pools), and a ``dispatch`` edge from
    each ClusterQueue that carries the MultiKueue admission check to each worker."""
    section = stack.config.multi_kueue
    if section is None:
        return [], []
    nodes = [
        Node(node_id("worker", w.name), "worker", w.name, _worker_lines(stack, w.name))
        for w in section.workers
    ]
    edges = [
        Edge(node_id("cluster-queue", loc.obj.name), node.id, "dispatch")
        for loc in stack.kueue.cluster_queues
        if any(ref.name == section.name for ref in loc.obj.admission_checks)
        for node in nodes
    ]
    return nodes, edges


def build_graph(stack: Stack, pools: Sequence[BackedPool] = ()) -> QueueGraph:
    """Build the queue-topology graph of a validated stack.

    Args:
        stack: a validated stack (:func:`batchplane.config.load_stack`); its expanded Kueue objects
            (teams shorthand, derived flavors and ProvisioningRequest checks included) are drawn.
        pools: the node pools backing the stack's flavors (:func:`batchplane.stack.pool_hooks.backed_pools`).
            Defaults to none.

    Returns:
        The graph: nodes in flow order (pools, flavors, cohorts, ClusterQueues, LocalQueues,
        namespaces), each kind in config order. A cohort that ClusterQueues or Cohorts name but no
        Cohort object declares is drawn as an implicit cohort (after the declared ones); every
        LocalQueue namespace gets a namespace node.
    """
    k = stack.kueue
    nodes: list[Node] = []
    edges: list[Edge] = []
    for part in (
        _pool_and_flavor_nodes(k, pools),
        _cohort_nodes(k),
        _cluster_queue_nodes(k),
        _local_queue_nodes(k),
    ):
        nodes += part[0]
        edges += part[1]
    worker_nodes, worker_edges = _worker_nodes(stack)
    nodes += worker_nodes
    edges += worker_edges
    edge_order: tuple[EdgeKind, ...] = (
        "nodes",
        "parent",
        "member",
        "quota",
        "queue",
        "namespace",
        "dispatch",
    )
    edges.sort(key=lambda e: edge_order.index(e.kind))
    return QueueGraph(stack=stack.name, nodes=tuple(nodes), edges=tuple(edges))

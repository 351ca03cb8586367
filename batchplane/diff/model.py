"""What a stack means for capacity and money: quotas, pools, the capacity margin and the GPU cost at maximum.

:func:`summarize` turns one validated :class:`~batchplane.stack.Stack` into a :class:`StackSummary`; the differ
(:mod:`batchplane.diff.differ`) compares two of them. Everything is computed from the expanded Kueue objects and the
target's pools — the same inputs as the capacity check (:func:`batchplane.backed_pools.check_quota_against_pool_capacity`), so the margin shown
here is the check's.

Units: ``cpu`` in cores, ``memory`` in GiB, ``nvidia.com/gpu`` (and every other resource) as a count
(:func:`resource_unit`). Money: USD per hour at list price (:mod:`batchplane.pricing`).

Cost at maximum (docs/diff.md):

* a pool: ``min(GPU quota on its flavors, GPUs at max nodes) × node price / GPUs per node`` — what the nodes the
  quota can claim cost per hour when every GPU of that quota is in use; also ``max nodes × node price``;
* a team (ClusterQueue) on a pool: ``min(Σ potentialAvailable, GPUs at max) × node price / GPUs per node`` over the
  pool's flavors, where ``potentialAvailable`` is the most Kueue lets the queue have with every other queue idle:
  nominal quota plus what it can borrow up the cohort tree (parent cohorts included), each node's
  ``lendingLimit`` / ``borrowingLimit`` respected (:func:`team_maxima`, the webhook's own computation).

The per-GPU share of a node's price keeps every figure additive over pools. A MultiKueue manager's declared workers
are clusters of their own: their queues, pools and costs join the summary named ``<worker>/<name>``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from batchplane.accounting.model import from_stored
from batchplane.backed_pools import GPU_RESOURCE, BackedPool, flavor_pools
from batchplane.components.quota_webhook.policy import render_policy
from batchplane.config.kueue import ResourceGroup
from batchplane.pricing import Dataset, PriceModel, PriceRow, PriceTable
from batchplane.quantity import QuantityError, parse_quantity
from batchplane.stack import Stack
from batchplane.stack.pool_hooks import backed_pools
from batchplane.webhook.queues import compile_queues

GIB = Decimal(2**30)
OwnerKind = Literal["ClusterQueue", "Cohort"]
QuotaField = Literal["nominalQuota", "borrowingLimit", "lendingLimit"]
QUOTA_FIELDS: tuple[QuotaField, ...] = ("nominalQuota", "borrowingLimit", "lendingLimit")

#: GKE ``provisioning`` → the price model its nodes are billed under (``reservation``: no list price, the
#: reservation is paid whether used or not).
GKE_PRICE_MODELS: dict[str, PriceModel | None] = {
    "on-demand": "on-demand",
    "spot": "spot",
    "flex-start": "flex-start",
    "queued": "flex-start",
    "reservation": None,
}


def resource_unit(resource: str) -> str:
    """The unit amounts of ``resource`` are shown in: ``cores`` (cpu), ``GiB`` (memory), ``GPUs``
    (``nvidia.com/gpu``), else ``count``."""
    if resource == "cpu":
        return "cores"
    if resource == "memory":
        return "GiB"
    if resource == GPU_RESOURCE:
        return "GPUs"
    return "count"


def in_unit(resource: str, amount: Decimal) -> Decimal:
    """A parsed quantity (cores, bytes, count) in :func:`resource_unit` (memory bytes → GiB)."""
    return amount / GIB if resource == "memory" else amount


@dataclass(frozen=True)
class QuotaEntry:
    """One resource's quota on one flavor of one ClusterQueue or Cohort, in the resource's unit.

    Attributes:
        kind: ``ClusterQueue`` or ``Cohort``.
        owner: its name.
        flavor: the ResourceFlavor.
        resource: the resource name.
        values: ``nominalQuota`` / ``borrowingLimit`` / ``lendingLimit`` → amount, or None when not set
            (a limit not set means unlimited / all of it, as in Kueue).
        path: config key path of the ClusterQueue or Cohort.
    """

    kind: OwnerKind
    owner: str
    flavor: str
    resource: str
    values: dict[QuotaField, Decimal | None]
    path: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.kind, self.owner, self.flavor, self.resource)


@dataclass(frozen=True)
class PoolSummary:
    """A node pool backing flavors (GKE GPU node pool, OpenShift GPU MachineSet).

    Attributes:
        name: the pool's name.
        kind: ``GKE node pool`` / ``OpenShift MachineSet``.
        path: its config key path.
        machine_type: Compute Engine machine type or EC2 instance type (None when not known).
        region: where its nodes run (None when not known).
        provisioning: the pool's ``provisioning`` as configured.
        price_model: the price model its nodes are billed under, or None (no list price).
        max_nodes: the most nodes it can have, or None.
        gpus_per_node: GPUs per node (0 when none or unknown).
        flavors: the flavors standing for it.
        capacity: resource → the most the pool provides at max nodes (in the resource's unit).
        quota: resource → nominal quota summed over every ClusterQueue and Cohort on its flavors.
        price: the node price row, or None (no price).
        provider: ``gcp`` or ``aws``: whose price table the pool is priced from. Defaults to ``gcp``.
        price_is_upper_bound: True when ``price`` is the on-demand row standing for a flex-start pool whose own
            rate the table does not have: flex-start SKUs are discounted against on-demand ("Flex-start VM SKUs
            offer significant discounts compared to standard on-demand pricing",
            https://cloud.google.com/blog/products/compute/introducing-flex-start-vms-for-the-compute-engine-instance-api),
            so the figure is a ceiling. Defaults to False.
        price_stale: the dataset the price row is older than (:meth:`PriceTable.stale`), or None.
    """

    name: str
    kind: str
    path: str
    machine_type: str | None
    region: str | None
    provisioning: str
    price_model: PriceModel | None
    max_nodes: int | None
    gpus_per_node: Decimal
    flavors: tuple[str, ...]
    capacity: dict[str, Decimal]
    quota: dict[str, Decimal]
    price: PriceRow | None
    provider: str = "gcp"
    price_is_upper_bound: bool = False
    price_stale: Dataset | None = None

    @property
    def gpus_at_max(self) -> Decimal | None:
        """GPUs at max nodes, or None when max nodes is unknown."""
        return None if self.max_nodes is None else self.gpus_per_node * self.max_nodes

    def margin(self, resource: str) -> Decimal | None:
        """Capacity minus quota (negative: quota the pool can never back), or None when capacity is unknown."""
        if resource not in self.capacity:
            return None
        return self.capacity[resource] - self.quota.get(resource, Decimal(0))

    @property
    def usd_per_gpu_hour(self) -> Decimal | None:
        """The node price's share per GPU, or None (no price or no GPUs)."""
        if self.price is None or self.gpus_per_node <= 0:
            return None
        return self.price.usd_per_hour / self.gpus_per_node

    @property
    def max_nodes_usd_per_hour(self) -> Decimal | None:
        """``max nodes × node price``, or None."""
        if self.price is None or self.max_nodes is None:
            return None
        return self.price.usd_per_hour * self.max_nodes

    @property
    def quota_gpus(self) -> Decimal:
        """GPUs the quota on the pool's flavors can claim: ``min(GPU quota, GPUs at max)``."""
        quota = self.quota.get(GPU_RESOURCE, Decimal(0))
        cap = self.gpus_at_max
        return quota if cap is None else min(quota, cap)

    @property
    def quota_usd_per_hour(self) -> Decimal | None:
        """The hourly list price of :attr:`quota_gpus`, or None (no price)."""
        per_gpu = self.usd_per_gpu_hour
        return None if per_gpu is None else per_gpu * self.quota_gpus


@dataclass(frozen=True)
class TeamCost:
    """What one ClusterQueue can claim on one pool at most.

    Attributes:
        team: the ClusterQueue.
        pool: the pool.
        gpus: ``min(Σ potentialAvailable, GPUs at max)`` over the pool's flavors (:func:`team_maxima`).
        usd_per_hour: the list price of those GPUs' share of nodes, or None (no price).
    """

    team: str
    pool: str
    gpus: Decimal
    usd_per_hour: Decimal | None


@dataclass(frozen=True)
class StackSummary:
    """What one stack means: its quotas, pools and costs (see the module docstring)."""

    name: str
    environment: str
    quotas: dict[tuple[str, str, str, str], QuotaEntry]
    pools: dict[str, PoolSummary]
    team_costs: dict[tuple[str, str], TeamCost]
    cohorts: dict[str, str | None] = field(default_factory=dict)

    @property
    def total_usd_per_hour(self) -> Decimal | None:
        """Sum of :attr:`PoolSummary.quota_usd_per_hour` over pools with a price (None when no pool has one)."""
        priced = [p.quota_usd_per_hour for p in self.pools.values() if p.quota_usd_per_hour is not None]
        return sum(priced, Decimal(0)) if priced else None

    def team_total(self, team: str) -> Decimal | None:
        """A team's cost at maximum summed over pools with a price (None when none has one)."""
        priced = [
            c.usd_per_hour for c in self.team_costs.values() if c.team == team and c.usd_per_hour is not None
        ]
        return sum(priced, Decimal(0)) if priced else None


def _amount(text: str | None, resource: str) -> Decimal | None:
    if text is None:
        return None
    try:
        return in_unit(resource, parse_quantity(text))
    except QuantityError:  # the loader rejects these; never reached for a validated stack
        return None


def _entries(kind: OwnerKind, owner: str, path: str, groups: list[ResourceGroup]) -> Iterable[QuotaEntry]:
    for group in groups:
        for fq in group.flavors:
            for rq in fq.resources:
                values: dict[QuotaField, Decimal | None] = {
                    "nominalQuota": _amount(rq.nominal_quota, rq.name),
                    "borrowingLimit": _amount(rq.borrowing_limit, rq.name),
                    "lendingLimit": _amount(rq.lending_limit, rq.name),
                }
                yield QuotaEntry(kind, owner, fq.name, rq.name, values, path)


def _pool_facts(stack: Stack, pool: BackedPool) -> tuple[str | None, str | None, str, PriceModel | None, str]:
    """(machine type, region, provisioning, price model, provider) of a backed pool, as its platform states them
    (:meth:`~batchplane.targets.platform.Platform.pool_machine`)."""
    machine = stack.platform.pool_machine(pool.name)
    if machine is None:
        return None, None, "unknown", None, "gcp"
    if machine.cloud == "gcp":
        model = GKE_PRICE_MODELS.get(machine.provisioning)
    else:
        model = "on-demand" if machine.machine_type else None
    return machine.machine_type, machine.region, machine.provisioning, model, machine.cloud


def _quotas(stack: Stack) -> dict[tuple[str, str, str, str], QuotaEntry]:
    quotas: dict[tuple[str, str, str, str], QuotaEntry] = {}
    for cq in stack.kueue.cluster_queues:
        for e in _entries("ClusterQueue", cq.obj.name, str(cq.path), cq.obj.resource_groups):
            quotas[e.key] = e
    for co in stack.kueue.cohorts:
        for e in _entries("Cohort", co.obj.name, str(co.path), co.obj.resource_groups):
            quotas[e.key] = e
    return quotas


def _pool_summary(
    stack: Stack,
    bp: BackedPool,
    flavors: tuple[str, ...],
    quotas: dict[tuple[str, str, str, str], QuotaEntry],
    prices: PriceTable,
) -> PoolSummary:
    quota: dict[str, Decimal] = {}
    for e in quotas.values():
        nominal = e.values["nominalQuota"]
        if e.flavor in flavors and nominal is not None:
            quota[e.resource] = quota.get(e.resource, Decimal(0)) + nominal
    capacity = (
        {} if bp.max_nodes is None else {r: in_unit(r, per) * bp.max_nodes for r, per in bp.per_node.items()}
    )
    machine, region, provisioning, model, provider = _pool_facts(stack, bp)
    price = None if machine is None or model is None else prices.lookup(provider, machine, region, model)
    upper_bound = False
    if price is None and model == "flex-start" and machine is not None:
        price = prices.lookup(provider, machine, region, "on-demand")
        upper_bound = price is not None
    return PoolSummary(
        name=bp.name,
        kind=bp.kind,
        path=str(bp.path),
        machine_type=machine,
        region=region,
        provisioning=provisioning,
        price_model=model,
        max_nodes=bp.max_nodes,
        gpus_per_node=bp.per_node.get(GPU_RESOURCE, Decimal(0)),
        flavors=flavors,
        capacity=capacity,
        quota=quota,
        price=price,
        provider=provider,
        price_is_upper_bound=upper_bound,
        price_stale=None if price is None else prices.stale(price),
    )


def team_maxima(stack: Stack) -> dict[tuple[str, str], Decimal]:
    """(ClusterQueue, flavor) → the most ``nvidia.com/gpu`` the queue can ever get on that flavor: Kueue's
    ``potentialAvailable`` over the whole cohort tree, as the webhook computes it
    (:func:`batchplane.webhook.queues.compile_queues` on the stack's rendered policy document).

    ``potentialAvailable`` (``pkg/cache/scheduler/resource_node.go`` at
    https://github.com/kubernetes-sigs/kueue/tree/v0.19.2): a root cohort has its ``SubtreeQuota``; any other
    node (a ClusterQueue, a cohort with ``parentName``) has its non-lendable part plus its parent's
    ``potentialAvailable``, capped at ``SubtreeQuota + borrowingLimit`` when it has a borrowing limit. A
    cohort's ``SubtreeQuota`` is its own quota plus what each child can lend (its ``lendingLimit``, else all of
    it), so a parent cohort's quota and every ancestor's limits count. Only flavors the queue lists a GPU quota
    for appear.
    """
    out: dict[tuple[str, str], Decimal] = {}
    for name, queue in compile_queues(render_policy(stack)).items():
        for (flavor, resource), capacity in queue.capacity.items():
            if resource == GPU_RESOURCE:
                out[(name, flavor)] = from_stored(resource, capacity.maximum)
    return out


def _team_cost(
    team: str,
    pool: PoolSummary,
    quotas: dict[tuple[str, str, str, str], QuotaEntry],
    maxima: dict[tuple[str, str], Decimal],
) -> TeamCost | None:
    """What ``team`` can claim on ``pool`` (None when it has no GPU quota on the pool's flavors)."""
    present = [
        flavor
        for flavor in pool.flavors
        if (e := quotas.get(("ClusterQueue", team, flavor, GPU_RESOURCE))) is not None
        and e.values["nominalQuota"] is not None
    ]
    if not present:
        return None
    cap = pool.gpus_at_max
    gpus = sum((maxima.get((team, flavor), Decimal(0)) for flavor in present), Decimal(0))
    claim = gpus if cap is None else min(gpus, cap)
    per_gpu = pool.usd_per_gpu_hour
    return TeamCost(team, pool.name, claim, None if per_gpu is None else per_gpu * claim)


def summarize(stack: Stack, prices: PriceTable) -> StackSummary:
    """The quotas, pools, capacity and costs of one validated stack (module docstring)."""
    quotas = _quotas(stack)
    cohorts = {cq.obj.name: cq.obj.cohort_name for cq in stack.kueue.cluster_queues}
    backed = backed_pools(stack.config)
    mapping = flavor_pools(stack.kueue, backed)
    pools: dict[str, PoolSummary] = {}
    for bp in backed:
        flavors = tuple(sorted(name for name, p in mapping.items() if p is bp))
        pools[bp.name] = _pool_summary(stack, bp, flavors, quotas, prices)
    team_costs: dict[tuple[str, str], TeamCost] = {}
    maxima = team_maxima(stack)
    for team in cohorts:
        for pool in pools.values():
            cost = _team_cost(team, pool, quotas, maxima)
            if cost is not None:
                team_costs[(team, pool.name)] = cost
    summary = StackSummary(
        name=stack.name,
        environment=stack.config.environment,
        quotas=quotas,
        pools=pools,
        team_costs=team_costs,
        cohorts=cohorts,
    )
    for worker_name, worker in stack.workers.items():
        _merge_worker(summary, worker_name, summarize(worker, prices))
    return summary


def _merge_worker(summary: StackSummary, worker: str, part: StackSummary) -> None:
    """Add a declared MultiKueue worker's queues, pools and costs, named ``<worker>/<name>`` (its own cluster)."""
    for (kind, owner, flavor, resource), entry in part.quotas.items():
        named = dataclasses.replace(entry, owner=f"{worker}/{owner}")
        summary.quotas[(kind, named.owner, flavor, resource)] = named
    for name, pool in part.pools.items():
        summary.pools[f"{worker}/{name}"] = dataclasses.replace(pool, name=f"{worker}/{name}")
    for (team, pool_name), cost in part.team_costs.items():
        key = (f"{worker}/{team}", f"{worker}/{pool_name}")
        summary.team_costs[key] = dataclasses.replace(cost, team=key[0], pool=key[1])
    for team, cohort in part.cohorts.items():
        summary.cohorts[f"{worker}/{team}"] = None if cohort is None else f"{worker}/{cohort}"

"""Compare two :class:`~batchplane.diff.model.StackSummary` objects: what changed, before → after.

:func:`diff_summaries` gives a :class:`StackDiff` whose sections hold only what differs: quota fields, pool facts,
capacity rows (capacity, quota and margin per pool and resource), GPU costs at maximum (per team and pool, per pool,
the stack). The offline objects (:mod:`batchplane.diff.objects`) and webhook decisions
(:mod:`batchplane.diff.decisions`) are attached by the caller. A summary compared with itself gives an empty diff.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from batchplane.diff.model import QUOTA_FIELDS, PoolSummary, StackSummary, resource_unit

Status = Literal["added", "removed", "changed"]
COST_LABEL = "list price, maximum, not a bill"
"""Printed next to every cost figure (docs/diff.md)."""


@dataclass(frozen=True)
class QuotaChange:
    """One quota field of one (ClusterQueue or Cohort, flavor, resource), before → after (None: not set, or the
    entry is absent on that side — see ``status``)."""

    kind: str
    owner: str
    flavor: str
    resource: str
    field: str
    before: Decimal | None
    after: Decimal | None
    status: Status
    path: str

    @property
    def unit(self) -> str:
        return resource_unit(self.resource)

    @property
    def delta(self) -> Decimal | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


@dataclass(frozen=True)
class PoolChange:
    """One fact of one pool (machine type, region, provisioning, price model, max nodes, GPUs per node, GPUs at
    max), before → after."""

    pool: str
    kind: str
    field: str
    before: str | Decimal | None
    after: str | Decimal | None
    status: Status


@dataclass(frozen=True)
class CapacityRow:
    """A pool's capacity, quota and margin for one resource, before → after (only rows where one differs).

    ``unbacked`` is true when, after the change, quota exceeds what the pool can provide (negative margin)."""

    pool: str
    resource: str
    capacity: tuple[Decimal | None, Decimal | None]
    quota: tuple[Decimal | None, Decimal | None]
    margin: tuple[Decimal | None, Decimal | None]

    @property
    def unit(self) -> str:
        return resource_unit(self.resource)

    @property
    def unbacked(self) -> bool:
        after = self.margin[1]
        return after is not None and after < 0


@dataclass(frozen=True)
class CostRow:
    """GPUs and USD per hour at maximum, before → after, for a team on a pool (``scope=team``), a pool's quota
    (``scope=pool``) or the whole stack (``scope=stack``). ``usd`` is None on a side without a price."""

    scope: Literal["team", "pool", "stack"]
    name: str
    pool: str | None
    gpus: tuple[Decimal | None, Decimal | None]
    usd: tuple[Decimal | None, Decimal | None]
    priced: tuple[bool, bool]

    @property
    def delta_gpus(self) -> Decimal | None:
        b, a = self.gpus
        return None if b is None and a is None else (a or Decimal(0)) - (b or Decimal(0))

    @property
    def delta_usd(self) -> Decimal | None:
        """After minus before; None when a side that has GPUs has no price."""
        (gb, ga), (ub, ua) = self.gpus, self.usd
        if (ub is None and gb) or (ua is None and ga):
            return None
        return (ua or Decimal(0)) - (ub or Decimal(0))


@dataclass(frozen=True)
class ObjectChange:
    """One resource of the offline program that differs, by URN (``batchplane preview --json``'s ``urn``)."""

    urn: str
    type: str
    status: Status
    fields: tuple[str, ...] = ()
    replace: tuple[str, ...] = ()
    """Changed input paths that force a replacement (rules in :mod:`batchplane.diff.objects`)."""
    crds: tuple[str, ...] = ()
    """A Helm Release replaced or removed whose chart ships these CRDs as templates: its uninstall deletes them."""
    crd_objects: int = 0
    """With ``crds``: the number of the base stack's objects of those CRDs' groups that go with them."""


@dataclass(frozen=True)
class DecisionChange:
    """A generated workload shape the webhook decides differently before and after."""

    shape: str
    namespace: str
    queue: str
    before: tuple[bool, str]
    after: tuple[bool, str]
    message: str = ""
    why: str = ""
    """The plain sentence of the denying side's message (:mod:`batchplane.explain.sentences`; the head's when both
    deny), ``""`` when neither has one."""


@dataclass
class StackDiff:
    """Everything that differs between a base and a head stack (see the module docstring)."""

    base: str
    head: str
    quotas: list[QuotaChange] = field(default_factory=list)
    pools: list[PoolChange] = field(default_factory=list)
    capacity: list[CapacityRow] = field(default_factory=list)
    costs: list[CostRow] = field(default_factory=list)
    objects: list[ObjectChange] | None = None
    decisions: list[DecisionChange] | None = None
    prices: list[dict[str, Any]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (
            self.quotas or self.pools or self.capacity or self.costs or self.objects or self.decisions
        )

    @property
    def unbacked(self) -> list[CapacityRow]:
        """Capacity rows whose quota pools can no longer back."""
        return [row for row in self.capacity if row.unbacked]


def _quota_changes(base: StackSummary, head: StackSummary) -> list[QuotaChange]:
    out: list[QuotaChange] = []
    for key in sorted(set(base.quotas) | set(head.quotas)):
        b, h = base.quotas.get(key), head.quotas.get(key)
        status: Status = "added" if b is None else "removed" if h is None else "changed"
        path = (h or b).path  # type: ignore[union-attr]
        for name in QUOTA_FIELDS:
            before = None if b is None else b.values[name]
            after = None if h is None else h.values[name]
            if status == "changed" and before == after:
                continue
            if status != "changed" and before is None and after is None:
                continue
            out.append(QuotaChange(*key, name, before, after, status, path))
    return out


def _pool_facts(pool: PoolSummary) -> dict[str, str | Decimal | None]:
    return {
        "machineType": pool.machine_type,
        "region": pool.region,
        "provisioning": pool.provisioning,
        "priceModel": pool.price_model,
        "maxNodes": None if pool.max_nodes is None else Decimal(pool.max_nodes),
        "gpusPerNode": pool.gpus_per_node,
        "gpusAtMax": pool.gpus_at_max,
        "usdPerNodeHour": None if pool.price is None else pool.price.usd_per_hour,
    }


def _pool_changes(base: StackSummary, head: StackSummary) -> list[PoolChange]:
    out: list[PoolChange] = []
    for name in sorted(set(base.pools) | set(head.pools)):
        b, h = base.pools.get(name), head.pools.get(name)
        status: Status = "added" if b is None else "removed" if h is None else "changed"
        bf = {} if b is None else _pool_facts(b)
        hf = {} if h is None else _pool_facts(h)
        kind = (h or b).kind  # type: ignore[union-attr]
        for fact in _pool_facts(h or b):  # type: ignore[arg-type]
            before, after = bf.get(fact), hf.get(fact)
            if before != after:
                out.append(PoolChange(name, kind, fact, before, after, status))
    return out


def _capacity_rows(base: StackSummary, head: StackSummary) -> list[CapacityRow]:
    out: list[CapacityRow] = []
    for name in sorted(set(base.pools) | set(head.pools)):
        b, h = base.pools.get(name), head.pools.get(name)
        resources: set[str] = set()
        for p in (b, h):
            if p is not None:
                resources |= set(p.capacity) | set(p.quota)
        for resource in sorted(resources):
            cap = (
                None if b is None else b.capacity.get(resource),
                None if h is None else h.capacity.get(resource),
            )
            quota = (
                None if b is None else b.quota.get(resource),
                None if h is None else h.quota.get(resource),
            )
            margin = (None if b is None else b.margin(resource), None if h is None else h.margin(resource))
            if cap[0] != cap[1] or quota[0] != quota[1] or margin[0] != margin[1]:
                out.append(CapacityRow(name, resource, cap, quota, margin))
    return out


def _cost_rows(base: StackSummary, head: StackSummary) -> list[CostRow]:
    out: list[CostRow] = []
    for key in sorted(set(base.team_costs) | set(head.team_costs)):
        b, h = base.team_costs.get(key), head.team_costs.get(key)
        bp, hp = base.pools.get(key[1]), head.pools.get(key[1])
        row = CostRow(
            "team",
            key[0],
            key[1],
            (None if b is None else b.gpus, None if h is None else h.gpus),
            (None if b is None else b.usd_per_hour, None if h is None else h.usd_per_hour),
            (bp is not None and bp.price is not None, hp is not None and hp.price is not None),
        )
        if row.gpus[0] != row.gpus[1] or row.usd[0] != row.usd[1]:
            out.append(row)
    for name in sorted(set(base.pools) | set(head.pools)):
        bpool, hpool = base.pools.get(name), head.pools.get(name)
        row = CostRow(
            "pool",
            name,
            name,
            (None if bpool is None else bpool.quota_gpus, None if hpool is None else hpool.quota_gpus),
            (
                None if bpool is None else bpool.quota_usd_per_hour,
                None if hpool is None else hpool.quota_usd_per_hour,
            ),
            (bpool is not None and bpool.price is not None, hpool is not None and hpool.price is not None),
        )
        if row.gpus[0] != row.gpus[1] or row.usd[0] != row.usd[1]:
            out.append(row)
    b_gpus = sum((p.quota_gpus for p in base.pools.values()), Decimal(0))
    h_gpus = sum((p.quota_gpus for p in head.pools.values()), Decimal(0))
    stack = CostRow(
        "stack",
        head.name,
        None,
        (b_gpus, h_gpus),
        (base.total_usd_per_hour, head.total_usd_per_hour),
        (
            all(p.price is not None for p in base.pools.values() if p.quota_gpus),
            all(p.price is not None for p in head.pools.values() if p.quota_gpus),
        ),
    )
    if stack.gpus[0] != stack.gpus[1] or stack.usd[0] != stack.usd[1]:
        out.append(stack)
    return out


def _prices(*summaries: StackSummary) -> list[dict[str, Any]]:
    seen: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
    for s in summaries:
        for p in s.pools.values():
            if p.price is not None:
                r = p.price
                stale = p.price_stale
                seen[(r.provider, r.machine_type, r.region, r.model, str(p.price_model))] = {
                    "provider": r.provider,
                    "machineType": r.machine_type,
                    "region": r.region,
                    "model": r.model,
                    "usdPerHour": str(r.usd_per_hour),
                    "source": r.source,
                    "retrieved": r.retrieved.isoformat(),
                    # the pool's own price model when the row is its ceiling (flex-start priced at on-demand)
                    "upperBoundFor": p.price_model if p.price_is_upper_bound else None,
                    "staleAgainst": None
                    if stale is None
                    else {"url": stale.url, "commit": stale.commit, "generated": stale.generated.isoformat()},
                }
    return [seen[k] for k in sorted(seen)]


def diff_summaries(base: StackSummary, head: StackSummary) -> StackDiff:
    """What differs between ``base`` and ``head`` (quotas, pools, capacity, costs); objects and decisions unset."""
    return StackDiff(
        base=base.name,
        head=head.name,
        quotas=_quota_changes(base, head),
        pools=_pool_changes(base, head),
        capacity=_capacity_rows(base, head),
        costs=_cost_rows(base, head),
        prices=_prices(base, head),
    )


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        normal = value.normalize()
        if normal == normal.to_integral_value():
            return int(normal)
        return float(round(value, 6))
    return value


__all__ = [
    "COST_LABEL",
    "CapacityRow",
    "CostRow",
    "DecisionChange",
    "ObjectChange",
    "PoolChange",
    "QuotaChange",
    "StackDiff",
    "diff_summaries",
]

"""Budget policies: GPUs and GPU dollars per hour a stack's quotas can claim, and production node pools replaced.

Each is off until configured (``--policy-config`` / ``--policy-pack-config``), mandatory by default, and advisory
when its config says ``"enforcementLevel": "advisory"`` (Pulumi's own per-policy setting). The figures are the ones
``batchplane diff`` shows (docs/diff.md), computed from what the pack sees — the stack's resources:

* a team is a ClusterQueue; the GPUs it can claim on a flavor are Kueue's ``potentialAvailable``: its nominal quota
  plus what it can borrow up the cohort tree (parent cohorts' quota included, every node's ``lendingLimit`` and
  ``borrowingLimit`` respected; :func:`gpu_maxima`, the webhook's own model); on a GKE pool (a flavor whose ``nodeLabels`` select ``cloud.google.com/gke-nodepool``)
  capped at the pool's GPUs at max nodes;
* a node's list price comes from the price table Batchplane ships (``batchplane/data/prices/gcp.csv``, read as a file
  of the checkout), by machine type, region (``location`` or the first of
  ``nodeLocations``) and provisioning model (Spot → ``spot``; flex-start or queued provisioning → ``flex-start``;
  a reservation → no list price; else ``on-demand``; a flex-start pool without a flex-start row is priced at its
  on-demand row, the ceiling of its discounted SKUs); a pool without a row has no price and is left out of the sums
  (the message names it). A GPU costs the node's price / GPUs per node; the stack's figure is
  ``min(GPU quota, GPUs at max) × that`` summed over pools. List price, maximum, not a bill.

Replacement: CrossGuard hands a policy only the *new* inputs (``AnalyzeRequest`` carries no old state or planned
operation), so ``production-node-pool-replacement`` compares each GKE NodePool with the same pool in a
``baseline`` — a ``batchplane preview --json`` of the base (e.g. the PR's merge base) — and reports a change of a
force-new input (the list ``batchplane diff`` uses, batchplane/diff/objects.py) unless the pool is in ``allowReplace``.
Without a baseline it reports nothing: it cannot see the old state.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, StackValidationArgs, StackValidationPolicy

from batchplane.accounting.model import from_stored
from batchplane.targets.gke.rules import NODE_POOL_REPLACE
from batchplane.webhook.errors import PolicyError
from batchplane.webhook.policy import PolicyDocument
from batchplane.webhook.queues import compile_queues
from batchplane_policies._support import (
    BASELINE_PROPERTY,
    PRODUCTION_ENVIRONMENTS,
    ReportViolation,
    ResourceView,
    baseline_resources,
    cluster_queue_cohort,
    config_value,
    describe,
    flag,
    get,
    is_production,
    items,
    kueue_kind,
    object_name,
    of_kueue_kind,
    quantity,
    string_list,
    text,
)
from batchplane_policies.gke import NODE_POOL, gpus_per_node
from batchplane_policies.kueue import NODE_POOL_LABEL, pool_capacity_nodes

GPU = "nvidia.com/gpu"
DEFAULT_PRICE_TABLES = (
    str(Path(__file__).resolve().parents[2] / "batchplane" / "data" / "prices" / "gcp.csv"),
)
"""The price table of the checkout the pack runs from (``<repo>/batchplane/data/prices/gcp.csv``)."""


# --- prices ----------------------------------------------------------------------------------------


def load_prices(paths: Iterable[str]) -> dict[tuple[str, str, str], Decimal]:
    """(machine type, region, model) → USD per node-hour from price CSVs (``#`` comments, the batchplane columns);
    unreadable files and malformed rows are skipped (``batchplane``'s own loader refuses them in its tests)."""
    out: dict[tuple[str, str, str], Decimal] = {}
    for path in paths:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        body = "\n".join(line for line in lines if line.strip() and not line.lstrip().startswith("#"))
        for row in csv.DictReader(io.StringIO(body)):
            try:
                usd = Decimal((row.get("usd_per_hour") or "").strip())
            except InvalidOperation:
                continue
            if not (row.get("source") or "").startswith("https://") or not row.get("retrieved"):
                continue
            key = (
                (row.get("machine_type") or "").strip(),
                (row.get("region") or "").strip(),
                (row.get("model") or "").strip(),
            )
            out[key] = usd
    return out


def price_model(props: Mapping[str, Any]) -> str | None:
    """``spot``, ``flex-start``, ``on-demand``, or None for a reservation (no list price)."""
    config = get(props, "nodeConfig")
    if flag(get(config, "spot")) or flag(get(config, "preemptible")):
        return "spot"
    if flag(get(config, "flexStart")) or flag(get(props, "queuedProvisioning", "enabled")):
        return "flex-start"
    reservation = text(get(config, "reservationAffinity", "consumeReservationType"))
    if reservation in ("SPECIFIC_RESERVATION", "ANY_RESERVATION"):
        return None
    return "on-demand"


def pool_region(props: Mapping[str, Any]) -> str | None:
    """The pool's region: ``location`` when it is a region, else the region of the first of ``nodeLocations``."""
    for candidate in [text(get(props, "location")), *string_list(get(props, "nodeLocations"))]:
        if not candidate:
            continue
        head, _, tail = candidate.rpartition("-")
        return head if len(tail) == 1 and head else candidate
    return None


@dataclass(frozen=True)
class Pool:
    name: str
    gpus_per_node: int
    gpus_at_max: int | None
    usd_per_gpu: Decimal | None
    why_no_price: str


def gke_pools(
    resources: Iterable[ResourceView], prices: Mapping[tuple[str, str, str], Decimal]
) -> dict[str, Pool]:
    """Every GKE NodePool with GPUs, by its ``name``, with its capacity and per-GPU list price."""
    out: dict[str, Pool] = {}
    for r in resources:
        name = text(get(r.props, "name"))
        per_node = gpus_per_node(r.props)
        if r.resource_type != NODE_POOL or not name or not per_node:
            continue
        nodes = pool_capacity_nodes(r.props)
        machine = text(get(r.props, "nodeConfig", "machineType")) or ""
        region, model = pool_region(r.props), price_model(r.props)
        usd = None if model is None or region is None else prices.get((machine, region, model))
        if usd is None and model == "flex-start" and region is not None:
            # no flex-start rate: the on-demand row is the ceiling, as in `batchplane diff` (docs/diff.md)
            usd = prices.get((machine, region, "on-demand"))
        why = (
            ""
            if usd is not None
            else f"no price for {machine} {region or '(no region)'} {model or 'reservation'}"
        )
        out[name] = Pool(name, per_node, None if nodes is None else nodes[0] * per_node,
                         None if usd is None else usd / per_node, why)  # fmt: skip
    return out


def flavor_pools(resources: Iterable[ResourceView], pools: Mapping[str, Pool]) -> dict[str, str]:
    """ResourceFlavor name → the pool its ``nodeLabels`` select."""
    out: dict[str, str] = {}
    for rf in of_kueue_kind(resources, "ResourceFlavor"):
        pool = text(get(rf.props, "spec", "nodeLabels", NODE_POOL_LABEL))
        name = object_name(rf.props)
        if pool in pools and name is not None:
            out[name] = pool
    return out


@dataclass(frozen=True)
class Claim:
    team: str
    resource: ResourceView
    gpus: Decimal
    usd: Decimal
    unpriced: tuple[str, ...]


def _quota_policy(props: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A ClusterQueue's or Cohort's GPU quotas as the webhook policy's resource groups (one group per flavor)."""
    groups: list[dict[str, Any]] = []
    for flavor, _, entry in _gpu_entries(props):
        quota: dict[str, str] = {"nominalQuota": str(quantity(get(entry, "nominalQuota")) or 0)}
        for key in ("borrowingLimit", "lendingLimit"):
            amount = quantity(get(entry, key))
            if amount is not None:
                quota[key] = str(amount)
        groups.append({"coveredResources": [GPU], "flavors": [{"name": flavor, "resources": {GPU: quota}}]})
    return groups


def gpu_maxima(resources: list[ResourceView]) -> dict[tuple[str, str], Decimal]:
    """(ClusterQueue, flavor) → the most GPUs it can ever get there: Kueue's ``potentialAvailable`` over the whole
    cohort tree (``Cohort.spec.parentName``, every node's ``lendingLimit``/``borrowingLimit``), computed by the
    webhook's own model (:func:`batchplane.webhook.queues.compile_queues`, ``pkg/cache/scheduler/resource_node.go``
    at https://github.com/kubernetes-sigs/kueue/tree/v0.19.2) — the figure ``batchplane diff`` shows. A cohort
    cycle or an unparsable quantity (the loader refuses both) leaves every queue at its nominal quota."""
    queues: dict[str, Any] = {}
    cohorts: dict[str, Any] = {}
    for r in resources:
        kind, name = kueue_kind(r.resource_type), object_name(r.props)
        if name is None:
            continue
        if kind == "ClusterQueue":
            queues[name] = {"cohort": cluster_queue_cohort(r.props), "resourceGroups": _quota_policy(r.props)}
        elif kind == "Cohort":
            parent = text(get(r.props, "spec", "parentName"))
            cohorts[name] = {"parent": parent, "resourceGroups": _quota_policy(r.props)}
    try:
        document = PolicyDocument.model_validate(
            {"stack": "pack", "clusterQueues": queues, "cohorts": cohorts}
        )
        compiled = compile_queues(document)
    except (PolicyError, ValueError):
        return {
            (name, flavor["name"]): Decimal(flavor["resources"][GPU]["nominalQuota"])
            for name, queue in queues.items()
            for group in queue["resourceGroups"]
            for flavor in group["flavors"]
        }
    return {
        (name, flavor): from_stored(resource, capacity.maximum)
        for name, queue in compiled.items()
        for (flavor, resource), capacity in queue.capacity.items()
    }


def team_claims(resources: list[ResourceView], prices: Mapping[tuple[str, str, str], Decimal]) -> list[Claim]:
    """What every ClusterQueue can claim: GPUs and their list price per hour (module docstring)."""
    pools = gke_pools(resources, prices)
    by_flavor = flavor_pools(resources, pools)
    maxima = gpu_maxima(resources)
    out: list[Claim] = []
    for cq in of_kueue_kind(resources, "ClusterQueue"):
        team = object_name(cq.props) or cq.name
        per_pool: dict[str | None, Decimal] = {}
        for flavor, _, _entry in _gpu_entries(cq.props):
            amount = maxima.get((team, flavor), Decimal(0))
            pool = by_flavor.get(flavor)
            per_pool[pool] = per_pool.get(pool, Decimal(0)) + amount
        gpus = Decimal(0)
        usd = Decimal(0)
        unpriced: list[str] = []
        for pool_name, amount in per_pool.items():
            pool = pools.get(pool_name) if pool_name is not None else None
            if pool is not None and pool.gpus_at_max is not None:
                amount = min(amount, Decimal(pool.gpus_at_max))
            gpus += amount
            if pool is not None and amount:
                if pool.usd_per_gpu is None:
                    unpriced.append(f'pool "{pool.name}": {pool.why_no_price}')
                else:
                    usd += amount * pool.usd_per_gpu
        out.append(Claim(team, cq, gpus, usd, tuple(unpriced)))
    return out


def _gpu_entries(props: Mapping[str, Any]) -> Iterable[tuple[str, str, Mapping[str, Any]]]:
    for group in items(get(props, "spec", "resourceGroups")):
        for flavor in items(get(group, "flavors")):
            name = text(get(flavor, "name"))
            for entry in items(get(flavor, "resources")):
                if name and text(get(entry, "name")) == GPU and isinstance(entry, Mapping):
                    yield name, GPU, entry


def stack_cost(
    resources: list[ResourceView], prices: Mapping[tuple[str, str, str], Decimal]
) -> tuple[Decimal, list[str]]:
    """The stack's GPU cost at maximum: per pool ``min(GPU quota on its flavors, GPUs at max) × per-GPU price``,
    summed; and the pools left out for want of a price."""
    pools = gke_pools(resources, prices)
    by_flavor = flavor_pools(resources, pools)
    quota: dict[str, Decimal] = {}
    for r in resources:
        if kueue_kind(r.resource_type) not in ("ClusterQueue", "Cohort"):
            continue
        for flavor, _, entry in _gpu_entries(r.props):
            pool = by_flavor.get(flavor)
            amount = quantity(get(entry, "nominalQuota"))
            if pool is not None and amount is not None:
                quota[pool] = quota.get(pool, Decimal(0)) + amount
    total = Decimal(0)
    unpriced: list[str] = []
    for name, amount in sorted(quota.items()):
        pool = pools[name]
        gpus = amount if pool.gpus_at_max is None else min(amount, Decimal(pool.gpus_at_max))
        if pool.usd_per_gpu is None:
            if gpus:
                unpriced.append(f'pool "{name}": {pool.why_no_price}')
        else:
            total += gpus * pool.usd_per_gpu
    return total, unpriced


def _limit(config: Mapping[str, Any], key: str, team: str | None = None) -> Decimal | None:
    """A limit from the config: a number (every team / the stack) or ``{team: number, "*": number}``."""
    value = config_value(config, key, None)
    if isinstance(value, Mapping):
        value = value.get(team, value.get("*")) if team is not None else None
    if value is None or isinstance(value, bool):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _usd(amount: Decimal) -> str:
    return f"${amount:,.2f}/h"


def _gpus(amount: Decimal) -> str:
    return f"{amount.normalize():f}"


# --- budget-gpus-per-team ----------------------------------------------------------------------------------


def _gpus_per_team(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    config = args.get_config()
    if config_value(config, "maxGpusPerTeam", None) is None:
        return
    for claim in team_claims(args.resources, {}):
        limit = _limit(config, "maxGpusPerTeam", claim.team)
        if limit is None:
            continue
        if claim.gpus > limit:
            report_violation(
                f'ClusterQueue "{claim.team}" can claim {_gpus(claim.gpus)} GPUs (nominalQuota + what it can borrow, '
                f"capped at each pool's GPUs at max nodes); the limit is {_gpus(limit)}",
                claim.resource.urn,
            )


_LIMIT_SCHEMA = {
    "oneOf": [
        {"type": "number", "minimum": 0},
        {"type": "object", "additionalProperties": {"type": "number", "minimum": 0}},
    ],
}

budget_gpus_per_team = StackValidationPolicy(
    name="budget-gpus-per-team",
    description="No team (ClusterQueue) can claim more GPUs than its budget allows.",
    validate=_gpus_per_team,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "maxGpusPerTeam": {
                **_LIMIT_SCHEMA,
                "description": 'GPUs a ClusterQueue may claim: a number for every team, or {"team-a": 16, "*": 8}. '
                "Unset: the policy checks nothing.",
            }
        }
    ),
    remediation_steps=(
        "Lower the team's nvidia.com/gpu nominalQuota or borrowingLimit (teams[].quotas or kueue.clusterQueues), "
        "or raise maxGpusPerTeam in the policy config after review; `batchplane diff` shows what each team can claim."
    ),
)


# --- budget-gpu-cost ---------------------------------------------------------------------------------------


def _gpu_cost(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    config = args.get_config()
    per_team = config_value(config, "maxUsdPerHourPerTeam", None)
    per_stack = _limit(config, "maxUsdPerHourPerStack")
    if per_team is None and per_stack is None:
        return
    prices = load_prices(string_list(config_value(config, "priceTables", list(DEFAULT_PRICE_TABLES))))
    if per_team is not None:
        for claim in team_claims(args.resources, prices):
            limit = _limit(config, "maxUsdPerHourPerTeam", claim.team)
            if limit is None or claim.usd <= limit:
                continue
            left_out = f" (left out, no price: {'; '.join(claim.unpriced)})" if claim.unpriced else ""
            report_violation(
                f'ClusterQueue "{claim.team}" can claim GPUs worth {_usd(claim.usd)} at list price{left_out}; the '
                f"limit is {_usd(limit)} (list price, maximum, not a bill)",
                claim.resource.urn,
            )
    if per_stack is not None:
        total, unpriced = stack_cost(args.resources, prices)
        if total > per_stack:
            left_out = f" (left out, no price: {'; '.join(unpriced)})" if unpriced else ""
            report_violation(
                f"the stack's GPU quota can claim nodes worth {_usd(total)} at list price{left_out}; the limit is "
                f"{_usd(per_stack)} (list price, maximum, not a bill)"
            )


budget_gpu_cost = StackValidationPolicy(
    name="budget-gpu-cost",
    description="The GPU list price per hour that each team's quota, and the whole stack's, can claim stays within budget.",
    validate=_gpu_cost,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "maxUsdPerHourPerTeam": {
                **_LIMIT_SCHEMA,
                "description": 'USD per hour a ClusterQueue may claim: a number, or {"team-a": 200, "*": 100}.',
            },
            "maxUsdPerHourPerStack": {
                "type": "number",
                "minimum": 0,
                "description": "USD per hour for the stack.",
            },
            "priceTables": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Price CSVs (batchplane/data/prices format) to read. Unset: the checkout's "
                "batchplane/data/prices/gcp.csv.",
            },
        }
    ),
    remediation_steps=(
        "Lower the GPU quotas or borrowing limits, move the pool to a cheaper provisioning model, or raise the "
        "limit in the policy config after review; `batchplane diff` shows the cost per team and pool with its price "
        "sources (docs/diff.md)."
    ),
)


# --- production-node-pool-replacement ----------------------------------------------------------------------


def _at(value: Any, path: str) -> Any:
    for step in path.split("."):
        value = get(value, step)
    return _plain(value)


def _plain(value: Any) -> Any:
    """Proxied or plain inputs as plain dicts/lists with integral floats as ints (the analyzer widens numbers)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_plain(v) for v in items(value)]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _baseline(path: str) -> dict[str, Mapping[str, Any]]:
    """NodePool name → its inputs, from a ``batchplane preview --json`` document."""
    out: dict[str, Mapping[str, Any]] = {}
    for resource in baseline_resources(path, NODE_POOL):
        inputs = resource.get("inputs") or {}
        name = inputs.get("name") if isinstance(inputs, dict) else None
        if isinstance(name, str):
            out[name] = inputs
    return out


def _replacement(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    config = args.get_config()
    baseline_path = config_value(config, "baseline", None)
    if not isinstance(baseline_path, str) or not is_production(config, args.stack_tags):
        return
    before = _baseline(baseline_path)
    allowed = set(string_list(config_value(config, "allowReplace", [])))
    for r in args.resources:
        name = text(get(r.props, "name"))
        if r.resource_type != NODE_POOL or name is None or name not in before or name in allowed:
            continue
        changed = [p for p in NODE_POOL_REPLACE if _at(r.props, p) != _at(before[name], p)]
        if changed:
            report_violation(
                f'{describe(r)}: node pool "{name}" would be replaced (deleted and created: its nodes and running '
                f"workloads go) because {', '.join(changed)} changed; add it to allowReplace to allow it",
                r.urn,
            )


production_node_pool_replacement = StackValidationPolicy(
    name="production-node-pool-replacement",
    description="A production GKE node pool is not replaced (a force-new field changed) without an explicit allow.",
    validate=_replacement,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "baseline": BASELINE_PROPERTY,
            "allowReplace": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "description": "Node pool names that may be replaced.",
            },
            "productionEnvironments": {
                "type": "array",
                "items": {"type": "string"},
                "default": list(PRODUCTION_ENVIRONMENTS),
                "description": "Values of the stack config batchplane:environment this policy applies to.",
            },
        }
    ),
    remediation_steps=(
        "Keep the pool's force-new inputs (accelerator, Spot, service account, reservation ...) or create a new pool "
        "next to it and drain the old one; to replace it on purpose, list it in allowReplace for this change."
    ),
)

POLICIES = [budget_gpus_per_team, budget_gpu_cost, production_node_pool_replacement]

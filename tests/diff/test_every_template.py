"""``batchplane diff`` on every template against a copy where one team's GPU ``nominalQuota`` is doubled: exactly
the expected quota change, Δ GPUs and Δ $/h per team, pool and stack, in JSON, Markdown and the terminal.

The expected figures are computed here from the stack files' quotas and the price table's rows, with the flat-cohort
formula of docs/diff.md (every template has one level of cohorts): a team claims its nominal quota plus
``min(borrowingLimit, what the other members lend)`` (their ``lendingLimit``, else ``nominalQuota``) on each of a
pool's flavors, capped at the pool's GPUs at max nodes; a pool's quota claims ``min(GPU quota, GPUs at max)``; a GPU
costs the node's list price / GPUs per node.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.diff.model import PoolSummary, StackSummary, summarize
from batchplane.diff.render import usd_delta
from batchplane.errors import ConfigValidationError
from batchplane.pricing import PriceRow, load_price_table
from batchplane.stack import load_stack_file
from tests.conftest import TEMPLATE_NAMES
from tests.diff.helpers import stack_document, write_document

GPU = "nvidia.com/gpu"
PRICES = load_price_table()
#: Templates without any GPU quota: there is nothing to double (checked below, so the list stays true).
NO_GPU_QUOTA = ["kind"]


def _gpu_quotas(node: Any) -> Iterator[tuple[dict[str, Any], str]]:
    """Every GPU nominal quota ≥ 1 in a config section, as (the mapping holding it, its key): a Kueue
    ``{name: nvidia.com/gpu, nominalQuota: n}``, a teams ``{nvidia.com/gpu: {nominalQuota: n}}`` or ``{nvidia.com/gpu: n}``."""
    if isinstance(node, dict):
        if (
            node.get("name") == GPU
            and isinstance(node.get("nominalQuota"), int)
            and node["nominalQuota"] >= 1
        ):
            yield node, "nominalQuota"
        value = node.get(GPU)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            yield node, GPU
        if (
            isinstance(value, dict)
            and isinstance(value.get("nominalQuota"), int)
            and value["nominalQuota"] >= 1
        ):
            yield value, "nominalQuota"
        for child in node.values():
            yield from _gpu_quotas(child)
    elif isinstance(node, list):
        for child in node:
            yield from _gpu_quotas(child)


def _nth(doc: dict[str, Any], index: int) -> tuple[dict[str, Any], str]:
    for number, found in enumerate(_gpu_quotas(doc["config"])):
        if number == index:
            return found
    raise IndexError(index)


def _files(name: str, tmp_path: Path, index: int) -> tuple[Path, Path, int]:
    """(base file, head file, the quota before) where head's ``index``-th GPU quota is twice base's: the template
    against a copy with it doubled, or — when the doubled quota would exceed its pool (the loader refuses that) —
    a copy with it halved against the template."""
    folder = tmp_path / str(index)
    original = folder / "template" / f"Pulumi.{name}.yaml"
    original.parent.mkdir(parents=True)
    write_document(stack_document(name), original)
    doubled = stack_document(name)
    holder, key = _nth(doubled, index)
    amount = holder[key]
    holder[key] = 2 * amount
    head = folder / "doubled" / f"Pulumi.{name}.yaml"
    head.parent.mkdir()
    write_document(doubled, head)
    try:
        load_stack_file(head)
    except ConfigValidationError:
        assert amount % 2 == 0, f"{name}: {amount} GPUs can be neither doubled nor halved"
        halved = stack_document(name)
        holder, key = _nth(halved, index)
        holder[key] = amount // 2
        base = folder / "halved" / f"Pulumi.{name}.yaml"
        base.parent.mkdir()
        write_document(halved, base)
        return base, original, amount // 2
    return original, head, amount


def _change(name: str, tmp_path: Path) -> tuple[Path, Path, int]:
    """:func:`_files` for the first GPU quota whose change moves a cost row (a quota on a pool's flavor), else
    for the first one (a stack without pools: only the quota row changes)."""
    count = sum(1 for _ in _gpu_quotas(stack_document(name)["config"]))
    for index in range(count):
        base, head, before = _files(name, tmp_path, index)
        if _expected(summarize(load_stack_file(base), PRICES), summarize(load_stack_file(head), PRICES)):
            return base, head, before
    return _files(name, tmp_path / "first", 0)


def _price(pool: PoolSummary) -> PriceRow | None:
    if pool.price_model is None or pool.machine_type is None:
        return None
    provider = "gcp" if pool.kind.startswith("GKE") else "aws"
    row = PRICES.lookup(provider, pool.machine_type, pool.region, pool.price_model)
    if row is None and pool.price_model == "flex-start":  # its on-demand row is the ceiling (docs/diff.md)
        row = PRICES.lookup(provider, pool.machine_type, pool.region, "on-demand")
    return row


def _cluster(name: str) -> str:
    """The cluster a name of the summary belongs to: a declared MultiKueue worker's are ``<worker>/<name>``."""
    return name.split("/")[0] if "/" in name else ""


def _team_gpus(summary: StackSummary, team: str, pool: PoolSummary) -> Decimal | None:
    if _cluster(team) != _cluster(pool.name):
        return None
    cohort = summary.cohorts.get(team)
    total, present = Decimal(0), False
    for flavor in pool.flavors:
        mine = summary.quotas.get(("ClusterQueue", team, flavor, GPU))
        if mine is None or mine.values["nominalQuota"] is None:
            continue
        present = True
        total += mine.values["nominalQuota"] or 0
        if cohort is None:
            continue
        lent = Decimal(0)
        for (kind, owner, f, resource), e in summary.quotas.items():
            member = (kind == "ClusterQueue" and summary.cohorts.get(owner) == cohort and owner != team) or (
                kind == "Cohort" and owner == cohort
            )
            if member and f == flavor and resource == GPU:
                lending = e.values["lendingLimit"]
                lent += lending if lending is not None else e.values["nominalQuota"] or 0
        limit = mine.values["borrowingLimit"]
        total += lent if limit is None else min(limit, lent)
    if not present:
        return None
    cap = pool.gpus_at_max
    return total if cap is None else min(total, cap)


def _pool_gpus(summary: StackSummary, pool: PoolSummary) -> Decimal:
    quota = sum(
        (
            e.values["nominalQuota"] or 0
            for (_, owner, flavor, resource), e in summary.quotas.items()
            if flavor in pool.flavors and resource == GPU and _cluster(owner) == _cluster(pool.name)
        ),
        Decimal(0),
    )
    cap = pool.gpus_at_max
    return quota if cap is None else min(quota, cap)


def _usd(pool: PoolSummary, gpus: Decimal) -> Decimal | None:
    row = _price(pool)
    return None if row is None else gpus * row.usd_per_hour / pool.gpus_per_node


def _expected(base: StackSummary, head: StackSummary) -> list[tuple[str, str, Decimal, Decimal | None]]:
    """(scope, name, Δ GPUs, Δ $/h or None for "no price") of every cost row that changes."""
    out: list[tuple[str, str, Decimal, Decimal | None]] = []
    pools = sorted(set(base.pools) | set(head.pools))
    teams = sorted(set(base.cohorts) | set(head.cohorts))
    for team in teams:
        for name in pools:
            b = _team_gpus(base, team, base.pools[name]) if name in base.pools else None
            h = _team_gpus(head, team, head.pools[name]) if name in head.pools else None
            if (b is None and h is None) or b == h:
                continue
            bu = None if b is None else _usd(base.pools[name], b)
            hu = None if h is None else _usd(head.pools[name], h)
            delta = None if (bu is None and b) or (hu is None and h) else (hu or 0) - (bu or 0)
            out.append(("team", team, (h or 0) - (b or 0), delta))
    # The stack row sums the priced pools only ("(priced pools only)" in the text): None only when no pool of the
    # stack has a price (a reservation pool has none: docs/diff.md).
    stack_gpus, stack_usd = Decimal(0), Decimal(0)
    priced = any(base.pools[name].price is not None for name in pools)
    for name in pools:
        b_gpus, h_gpus = _pool_gpus(base, base.pools[name]), _pool_gpus(head, head.pools[name])
        if b_gpus == h_gpus:
            continue
        bu, hu = _usd(base.pools[name], b_gpus), _usd(head.pools[name], h_gpus)
        delta = None if bu is None or hu is None else hu - bu
        out.append(("pool", name, h_gpus - b_gpus, delta))
        stack_gpus += h_gpus - b_gpus
        if delta is not None:
            stack_usd += delta
    if stack_gpus:
        out.append(("stack", head.name, stack_gpus, stack_usd if priced else None))
    return sorted(out, key=lambda row: ("team", "pool", "stack").index(row[0]))


def _rounded(value: Decimal | None) -> float | None:
    return None if value is None else float(round(value, 4))


def test_the_templates_without_gpu_quota_are_the_ones_left_out() -> None:
    for name in TEMPLATE_NAMES:
        assert (next(_gpu_quotas(stack_document(name)["config"]), None) is None) == (name in NO_GPU_QUOTA), (
            name
        )


@pytest.mark.parametrize("name", [n for n in TEMPLATE_NAMES if n not in NO_GPU_QUOTA])
def test_doubling_one_teams_gpu_quota_prints_exactly_the_expected_deltas_in_all_three_formats(
    tmp_path: Path, name: str
) -> None:
    base_file, head_file, before = _change(name, tmp_path)
    args = [
        "diff",
        "--base-config",
        str(base_file),
        "--config",
        str(head_file),
        "--no-objects",
        "--no-decisions",
    ]
    runner = CliRunner()
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (quota,) = data["quotas"]
    assert (quota["resource"], quota["field"], quota["before"], quota["after"], quota["delta"]) == (
        GPU,
        "nominalQuota",
        before,
        2 * before,
        before,
    )
    base = summarize(load_stack_file(base_file), PRICES)
    head = summarize(load_stack_file(head_file), PRICES)
    expected = _expected(base, head)
    rows = data["costs"]["rows"]
    assert [(r["scope"], r["name"], r["gpus"]["delta"], r["usdPerHour"]["delta"]) for r in rows] == [
        (scope, who, int(gpus), _rounded(usd)) for scope, who, gpus, usd in expected
    ]
    markdown = runner.invoke(app, [*args, "--markdown"])
    terminal = runner.invoke(app, args, env={"COLUMNS": "300"})
    assert markdown.exit_code == 0 and terminal.exit_code == 0, markdown.output + terminal.output
    for scope, who, gpus, usd in expected:
        label = f"{scope} {who}" + (" on " if scope == "team" else "")
        cell = usd_delta(usd)
        md = [line for line in markdown.stdout.splitlines() if line.startswith(f"| {label}")]
        tty = [line for line in terminal.stdout.splitlines() if f" {label}" in line]
        assert md and all(f"| +{gpus} GPUs | {cell}" in line for line in md), (md, cell)
        assert tty and all(f"+{gpus} GPUs" in line and cell in line for line in tty), (tty, cell)

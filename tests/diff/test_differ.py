"""The differ's promises: a stack against itself is empty; one quota field changed is exactly one change; costs add
up over pools; the issue's example (gke-prod-dws, team-a H100 nominalQuota 8 → 16) gives exactly its deltas."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchplane.diff import compare, empty_summary
from batchplane.diff.differ import diff_summaries
from batchplane.diff.model import in_unit, summarize
from batchplane.pricing import PriceRow, PriceTable, load_price_table
from batchplane.quantity import parse_quantity
from batchplane.stack import load_stack_file
from tests.conftest import TEMPLATE_NAMES
from tests.diff.helpers import h100_price, prod_dws_with_team_a_h100, quota_slots, template, with_quota

PRICES = load_price_table()
A3 = Decimal("88.4899999025753")  # the dataset's a3-highgpu-8g us-central1 on-demand
WITH_QUEUES = [name for name in TEMPLATE_NAMES if quota_slots(template(name))]


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_a_template_diffed_with_itself_is_empty(name: str) -> None:
    stack = template(name)
    diff = compare(stack, stack, prices=PRICES)
    assert diff.empty, diff
    assert diff.quotas == diff.pools == diff.capacity == diff.costs == [] and diff.decisions == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_one_generated_quota_field_change_is_exactly_that_change_and_no_other(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(WITH_QUEUES), label="template")
    stack = template(name)
    slot = data.draw(st.sampled_from(quota_slots(stack)), label="slot")
    field = data.draw(st.sampled_from(["nominalQuota", "borrowingLimit", "lendingLimit"]), label="field")
    q, g, f, r = slot
    cq = stack.kueue.cluster_queues[q].obj
    resource = cq.resource_groups[g].flavors[f].resources[r]
    amount = data.draw(st.integers(min_value=0, max_value=4096), label="amount")
    text = f"{amount}Gi" if resource.name == "memory" else str(amount)
    head = with_quota(stack, slot, field, text)
    diff = diff_summaries(summarize(stack, PRICES), summarize(head, PRICES))
    old = getattr(
        resource,
        {"nominalQuota": "nominal_quota", "borrowingLimit": "borrowing_limit"}.get(field, "lending_limit"),
    )
    old_amount = None if old is None else in_unit(resource.name, parse_quantity(old))
    new_amount = in_unit(resource.name, parse_quantity(text))
    assert diff.pools == []
    if old_amount == new_amount:
        assert diff.quotas == [] and diff.capacity == [] and diff.costs == []
        return
    (change,) = diff.quotas
    assert (change.kind, change.owner, change.flavor, change.resource, change.field) == (
        "ClusterQueue",
        cq.name,
        cq.resource_groups[g].flavors[f].name,
        resource.name,
        field,
    )
    assert (change.before, change.after, change.status) == (old_amount, new_amount, "changed")
    if field != "nominalQuota":  # limits change no pool's quota sum, so no capacity row
        assert diff.capacity == []


def _priced(table: PriceTable, prices: list[Decimal], *summaries_of: str) -> PriceTable:
    rows = list(table.rows)
    pools = [p for name in summaries_of for p in summarize(template(name), table).pools.values()]
    for pool, usd in zip(pools, prices, strict=False):
        if pool.machine_type and pool.region and pool.price_model:
            provider = "aws" if "." in pool.machine_type else "gcp"
            if table.lookup(provider, pool.machine_type, pool.region, pool.price_model) is None:
                rows.append(
                    PriceRow(
                        provider,
                        pool.machine_type,
                        pool.region,
                        pool.price_model,
                        usd,
                        "https://t.example/",
                        date(2026, 1, 1),
                    )
                )
    return PriceTable(tuple(rows))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(WITH_QUEUES),
    prices=st.lists(
        st.decimals(min_value=Decimal("0.01"), max_value=Decimal("500"), places=4), min_size=8, max_size=8
    ),
)
def test_costs_add_up_over_pools_for_the_stack_and_for_each_team(name: str, prices: list[Decimal]) -> None:
    table = _priced(PRICES, prices, name)
    summary = summarize(template(name), table)
    priced = [p for p in summary.pools.values() if p.quota_usd_per_hour is not None]
    if priced:
        assert summary.total_usd_per_hour == sum(p.quota_usd_per_hour or 0 for p in priced)
        for pool in priced:  # each pool on its own: min(quota, capacity) GPUs × the node's per-GPU price
            cap = pool.gpus_at_max
            gpus = pool.quota.get("nvidia.com/gpu", Decimal(0))
            assert (
                pool.quota_usd_per_hour
                == min(gpus, cap if cap is not None else gpus) * pool.price.usd_per_hour / pool.gpus_per_node
            )  # type: ignore[union-attr]
    for team in summary.cohorts:
        parts = [
            c.usd_per_hour
            for c in summary.team_costs.values()
            if c.team == team and c.usd_per_hour is not None
        ]
        assert summary.team_total(team) == (sum(parts, Decimal(0)) if parts else None)
    # the stack's Δ $/h is the sum of the pools' Δ $/h (against a stack with nothing)
    diff = diff_summaries(empty_summary(name), summary)
    pool_rows = [c for c in diff.costs if c.scope == "pool"]
    stack_rows = [c for c in diff.costs if c.scope == "stack"]
    if pool_rows and all(c.delta_usd is not None for c in pool_rows) and stack_rows:
        assert stack_rows[0].delta_usd == sum((c.delta_usd or Decimal(0)) for c in pool_rows)


def test_prod_dws_team_a_h100_8_to_16_gives_exactly_the_expected_deltas(tmp_path: Path) -> None:
    base = template("gke-prod-dws")
    head = load_stack_file(prod_dws_with_team_a_h100(tmp_path, nominal=16))
    diff = compare(base, head, prices=PRICES)
    assert [(q.owner, q.flavor, q.resource, q.field, q.before, q.after, q.delta) for q in diff.quotas] == [
        ("team-a", "h100", "nvidia.com/gpu", "nominalQuota", 8, 16, 8)
    ]
    assert diff.pools == []
    assert [(c.pool, c.resource, c.capacity, c.quota, c.margin, c.unbacked) for c in diff.capacity] == [
        ("h100", "nvidia.com/gpu", (32, 32), (24, 32), (8, 0), False)
    ]
    flex = h100_price(PRICES)
    g2 = PRICES.lookup("gcp", "g2-standard-8", "us-central1", "on-demand")
    assert flex is not None and g2 is not None
    share, l4 = flex.usd_per_hour / 8, 12 * g2.usd_per_hour  # the l4 pool's 12 GPUs of quota, unchanged
    assert [(c.scope, c.name, c.gpus, c.delta_gpus, c.usd, c.delta_usd) for c in diff.costs] == [
        ("team", "team-a", (16, 24), 8, (16 * share, 24 * share), 8 * share),
        ("pool", "h100", (24, 32), 8, (24 * share, 32 * share), 8 * share),
        ("stack", "gke-prod-dws", (36, 44), 8, (24 * share + l4, 32 * share + l4), 8 * share),
    ]


def test_the_same_change_on_an_on_demand_pool_costs_eight_h100_shares_more_per_hour(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    base = load_stack_file(prod_dws_with_team_a_h100(tmp_path / "base", 8, "on-demand"))
    head = load_stack_file(prod_dws_with_team_a_h100(tmp_path / "head", 16, "on-demand"))
    diff = compare(base, head, prices=PRICES, decisions=False)
    share = A3 / 8
    costs = {(c.scope, c.name): c for c in diff.costs}
    assert costs[("team", "team-a")].usd == (16 * share, 24 * share)
    assert costs[("team", "team-a")].delta_usd == A3
    assert costs[("pool", "h100")].delta_usd == A3
    assert costs[("stack", "gke-prod-dws")].delta_usd == A3
    g2 = PRICES.lookup("gcp", "g2-standard-8", "us-central1", "on-demand")
    assert g2 is not None
    l4 = 12 * g2.usd_per_hour  # the l4 pool's 12 GPUs of quota, unchanged
    assert costs[("stack", "gke-prod-dws")].usd == (24 * share + l4, 32 * share + l4)


def test_a_new_stack_shows_every_quota_and_pool_as_added() -> None:
    stack = template("gke-prod-dws")
    diff = compare(None, stack, prices=PRICES)
    assert diff.quotas and all(q.status == "added" and q.before is None for q in diff.quotas)
    assert {p.pool for p in diff.pools} == {"h100", "l4"} and all(p.status == "added" for p in diff.pools)
    assert diff.decisions is None


def test_a_removed_pool_is_listed_with_its_facts_before() -> None:
    base = template("gke-prod-dws")
    head = summarize(base, PRICES)
    head.pools.pop("l4")
    diff = diff_summaries(summarize(base, PRICES), head)
    removed = [p for p in diff.pools if p.pool == "l4"]
    assert removed and all(p.status == "removed" and p.after is None for p in removed)
    assert any(p.field == "machineType" and p.before == "g2-standard-8" for p in removed)


def test_a_shape_that_now_runs_only_by_borrowing_is_a_decision_row_saying_so(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    base = load_stack_file(prod_dws_with_team_a_h100(tmp_path / "base", 8))
    head = load_stack_file(prod_dws_with_team_a_h100(tmp_path / "head", 4))
    diff = compare(base, head, prices=PRICES)
    assert diff.decisions is not None
    row = next(
        d for d in diff.decisions if d.namespace == "team-a" and d.shape.startswith("Job, 1 pod: 8 GPUs")
    )
    assert (row.before, row.after) == ((True, "ok"), (True, "borrows"))
    assert row.why == (
        "runs now by borrowing 4 GPUs from cohort ml (it needs 8 on h100, its queue has 4 of its own) — it can be "
        "preempted when team-b and team-c reclaim them"
    )
    back = compare(head, base, prices=PRICES)
    assert back.decisions is not None
    row = next(
        d for d in back.decisions if d.namespace == "team-a" and d.shape.startswith("Job, 1 pod: 8 GPUs")
    )
    assert (row.before, row.after, row.why) == (
        (True, "borrows"),
        (True, "ok"),
        "runs now within its queue's own quota",
    )

"""Budget policies called directly: off until configured, GPUs and list-price $/h per team and per stack within
their limits, a production node pool replaced only with an explicit allow — and the same figures as ``batchplane
diff``; then the whole pack under its real analyzer with a policy config."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from batchplane_policies import budget

from batchplane.diff.model import summarize
from batchplane.pricing import load_price_table
from batchplane.stack import load_stack_file
from tests.conftest import REPO_ROOT
from tests.diff.helpers import prod_dws_with_team_a_h100
from tests.policies.factories import DEV, PRODUCTION, Stack, cluster_queue_spec, flavor_quota, kueue

A3 = Decimal("88.4899999025753")  # a3-highgpu-8g us-central1 on-demand, the price dataset


def pool(name: str = "h100", **node_config: Any) -> dict[str, Any]:
    return {
        "name": name,
        "cluster": "batchplane-prod",
        "autoscaling": {"locationPolicy": "ANY", "totalMaxNodeCount": 4, "totalMinNodeCount": 0},
        "nodeLocations": ["us-central1-a", "us-central1-c"],
        "nodeConfig": {
            "machineType": "a3-highgpu-8g",
            "guestAccelerators": [{"count": 8, "type": "nvidia-h100-80gb"}],
            **node_config,
        },
    }


def prod_like(node_pool: dict[str, Any] | None = None, team_a_gpus: int = 8) -> Stack:
    """Three teams in cohort ml on an H100 pool of 4 × 8 GPUs (gke-prod-dws's shape), on-demand unless given."""
    stack = Stack()
    stack.add(budget.NODE_POOL, "gke-h100", node_pool or pool())
    flavor_type, flavor = kueue(
        "ResourceFlavor", "h100", {"nodeLabels": {"cloud.google.com/gke-nodepool": "h100"}}
    )
    stack.add(flavor_type, "h100", flavor)
    for team, gpus in (("team-a", team_a_gpus), ("team-b", 8), ("team-c", 8)):
        quota = flavor_quota("h100", gpu={"nominalQuota": gpus, "borrowingLimit": 8})
        queue_type, queue = kueue("ClusterQueue", team, cluster_queue_spec(quota, cohort="ml"))
        stack.add(queue_type, team, queue)
    return stack


def test_unconfigured_budget_policies_check_nothing() -> None:
    stack = prod_like(team_a_gpus=16)
    for policy in budget.POLICIES:
        assert stack.check(policy, config={}) == []


def test_gpus_per_team_counts_nominal_plus_borrowing_capped_at_the_pool() -> None:
    stack = prod_like(team_a_gpus=16)
    found = stack.check(budget.budget_gpus_per_team, config={"maxGpusPerTeam": {"team-a": 20, "*": 16}})
    assert found == [
        (
            'ClusterQueue "team-a" can claim 24 GPUs (nominalQuota + what it can borrow, capped at each pool\'s GPUs at '
            "max nodes); the limit is 20",
            "team-a",
        )
    ]
    assert stack.check(budget.budget_gpus_per_team, config={"maxGpusPerTeam": 24}) == []


def test_team_cost_is_its_gpus_share_of_the_node_list_price() -> None:
    stack = prod_like(team_a_gpus=16)
    limit = {"maxUsdPerHourPerTeam": {"team-a": 263, "*": 1000}}
    ((message, who),) = stack.check(budget.budget_gpu_cost, config=limit)
    assert who == "team-a"
    assert message.startswith(
        'ClusterQueue "team-a" can claim GPUs worth $265.47/h at list price; the limit is $263.00/h'
    )  # 24 GPUs × $88.49/8
    assert stack.check(budget.budget_gpu_cost, config={"maxUsdPerHourPerTeam": 265.47}) == []


def test_stack_cost_is_the_quota_min_capacity_at_list_price_and_names_unpriced_pools() -> None:
    stack = prod_like(team_a_gpus=16)  # quota 32 of 32 GPUs: 4 nodes
    ((message, _),) = stack.check(budget.budget_gpu_cost, config={"maxUsdPerHourPerStack": 300})
    assert message.startswith(
        "the stack's GPU quota can claim nodes worth $353.96/h at list price; the limit is $300.00/h"
    )
    flex = prod_like(
        pool(flexStart=True), team_a_gpus=16
    )  # its flex-start row, else on-demand as the ceiling
    table = load_price_table()
    row = table.lookup("gcp", "a3-highgpu-8g", "us-central1", "flex-start") or table.lookup(
        "gcp", "a3-highgpu-8g", "us-central1", "on-demand"
    )
    assert row is not None
    ((message, _),) = flex.check(budget.budget_gpu_cost, config={"maxUsdPerHourPerStack": 0})
    assert message.startswith(
        f"the stack's GPU quota can claim nodes worth ${32 * row.usd_per_hour / 8:,.2f}/h at list price"
    )
    europe = pool()
    europe["nodeLocations"] = ["europe-west4-a"]
    unpriced = prod_like(europe, team_a_gpus=16)
    assert (
        unpriced.check(budget.budget_gpu_cost, config={"maxUsdPerHourPerStack": 0}) == []
    )  # no row: no price


def test_the_pack_and_batchplane_diff_agree_on_the_cost(tmp_path: Path) -> None:
    stack = load_stack_file(prod_dws_with_team_a_h100(tmp_path, nominal=16, provisioning="on-demand"))
    summary = summarize(stack, load_price_table())
    assert summary.pools["h100"].quota_usd_per_hour == 32 * A3 / 8
    team = summary.team_costs[("team-a", "h100")].usd_per_hour
    claims = {
        c.team: c
        for c in budget.team_claims(
            prod_like(team_a_gpus=16).resources, budget.load_prices(budget.DEFAULT_PRICE_TABLES)
        )
    }
    assert claims["team-a"].usd == team
    total, unpriced = budget.stack_cost(
        prod_like(team_a_gpus=16).resources, budget.load_prices(budget.DEFAULT_PRICE_TABLES)
    )
    assert (total, unpriced) == (summary.pools["h100"].quota_usd_per_hour, [])


def _baseline(tmp_path: Path, *pools: dict[str, Any]) -> str:
    path = tmp_path / "base-preview.json"
    path.write_text(
        json.dumps({"resources": [{"type": budget.NODE_POOL, "inputs": p} for p in pools], "outputs": {}})
    )
    return str(path)


def test_a_production_pool_whose_accelerator_changes_is_reported_unless_allowed(tmp_path: Path) -> None:
    base = _baseline(tmp_path, pool())
    mega = pool(
        guestAccelerators=[{"count": 8, "type": "nvidia-h100-mega-80gb"}], machineType="a3-megagpu-8g"
    )
    stack = prod_like(mega)
    found = stack.check(
        budget.production_node_pool_replacement, config={"baseline": base}, stack_tags=PRODUCTION
    )
    assert len(found) == 1 and found[0][1] == "gke-h100"
    assert (
        'node pool "h100" would be replaced' in found[0][0]
        and "nodeConfig.guestAccelerators changed" in found[0][0]
    )
    allowed = {"baseline": base, "allowReplace": ["h100"]}
    assert stack.check(budget.production_node_pool_replacement, config=allowed, stack_tags=PRODUCTION) == []
    assert (
        stack.check(budget.production_node_pool_replacement, config={"baseline": base}, stack_tags=DEV) == []
    )


def test_a_machine_type_change_alone_is_not_a_replacement(tmp_path: Path) -> None:
    base = _baseline(tmp_path, pool(machineType="a3-highgpu-8g"))
    stack = prod_like(pool(machineType="a3-highgpu-4g"))
    assert (
        stack.check(budget.production_node_pool_replacement, config={"baseline": base}, stack_tags=PRODUCTION)
        == []
    )


def test_without_a_baseline_the_replacement_policy_cannot_see_the_old_state() -> None:
    stack = prod_like(pool(spot=True))
    assert stack.check(budget.production_node_pool_replacement, config={}, stack_tags=PRODUCTION) == []


@pytest.mark.slow
def test_through_the_real_analyzer_a_configured_budget_is_advisory_when_configured_so(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from batchplane.cli import app

    head = prod_dws_with_team_a_h100(tmp_path, nominal=16, provisioning="on-demand")
    config = tmp_path / "policy.json"
    config.write_text(
        json.dumps(
            {
                "budget-gpus-per-team": {"enforcementLevel": "advisory", "maxGpusPerTeam": 24},
                "budget-gpu-cost": {"maxUsdPerHourPerStack": 100000},
            }
        )
    )
    result = CliRunner().invoke(
        app,
        [
            "check",
            "--config",
            str(head),
            "--policy-config",
            str(config),
            "--project-dir",
            str(REPO_ROOT),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    budget_rows = [v for v in report["violations"] if v["policy"].startswith("budget-")]
    assert [(v["policy"], v["enforcement_level"]) for v in budget_rows] == [
        ("budget-gpus-per-team", "advisory")
    ]
    assert 'ClusterQueue "team-a" can claim 32 GPUs' in budget_rows[0]["message"]  # H100 16 + 8, L4 4 + 4


def _two_level(parent_gpus: int, ml_borrowing: int | None = None) -> Stack:
    """Three teams borrowing without a limit in cohort ``ml`` (8 GPUs each on an H100 pool of 4 × 8), ``ml`` a
    child of cohort ``org`` owning ``parent_gpus``; ``ml`` may borrow ``ml_borrowing`` beyond its subtree."""
    stack = Stack()
    stack.add(budget.NODE_POOL, "gke-h100", pool())
    flavor_type, flavor = kueue(
        "ResourceFlavor", "h100", {"nodeLabels": {"cloud.google.com/gke-nodepool": "h100"}}
    )
    stack.add(flavor_type, "h100", flavor)
    for team in ("team-a", "team-b", "team-c"):
        queue_type, queue = kueue(
            "ClusterQueue", team, cluster_queue_spec(flavor_quota("h100", gpu=8), cohort="ml")
        )
        stack.add(queue_type, team, queue)
    ml: dict[str, Any] = {"parentName": "org"}
    if ml_borrowing is not None:
        ml["resourceGroups"] = cluster_queue_spec(
            flavor_quota("h100", gpu={"nominalQuota": 0, "borrowingLimit": ml_borrowing})
        )["resourceGroups"]
    for name, spec in (("ml", ml), ("org", cluster_queue_spec(flavor_quota("h100", gpu=parent_gpus)))):
        cohort_type, cohort = kueue("Cohort", name, spec)
        stack.add(cohort_type, name, cohort)
    return stack


def test_gpus_per_team_follow_the_cohort_tree_up_to_a_parent_cohorts_quota() -> None:
    limit = {"maxGpusPerTeam": 24}
    assert _two_level(parent_gpus=0).check(budget.budget_gpus_per_team, config=limit) == []
    found = _two_level(parent_gpus=8).check(budget.budget_gpus_per_team, config=limit)
    assert [(who, message.split(" GPUs")[0]) for message, who in found] == [
        ("team-a", 'ClusterQueue "team-a" can claim 32'),
        ("team-b", 'ClusterQueue "team-b" can claim 32'),
        ("team-c", 'ClusterQueue "team-c" can claim 32'),
    ]
    capped = _two_level(parent_gpus=8, ml_borrowing=4).check(
        budget.budget_gpus_per_team, config={"maxGpusPerTeam": 27}
    )
    assert {message.split(" GPUs")[0] for message, _ in capped} == {
        f'ClusterQueue "{t}" can claim 28' for t in ("team-a", "team-b", "team-c")
    }

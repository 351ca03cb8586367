"""A stack's summary: quotas in their units, pools with capacity and margin, GPU cost at maximum from list prices."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from batchplane.diff.model import resource_unit, summarize
from batchplane.pricing import load_price_table
from batchplane.stack import load_stack_file
from tests.diff.helpers import h100_price, prod_dws_with_team_a_h100, stack_document, template, write_document

PRICES = load_price_table()
A3_ON_DEMAND = Decimal("88.4899999025753")  # the dataset's a3-highgpu-8g us-central1 on-demand


def test_units_are_cores_gib_and_gpus() -> None:
    assert [resource_unit(r) for r in ("cpu", "memory", "nvidia.com/gpu", "pods")] == [
        "cores",
        "GiB",
        "GPUs",
        "count",
    ]


def test_prod_dws_quotas_are_read_in_their_units_per_team_and_flavor() -> None:
    summary = summarize(template("gke-prod-dws"), PRICES)
    gpu = summary.quotas[("ClusterQueue", "team-b", "h100", "nvidia.com/gpu")]
    assert gpu.values == {"nominalQuota": 8, "borrowingLimit": 8, "lendingLimit": None}
    memory = summary.quotas[("ClusterQueue", "team-c", "h100", "memory")]
    assert memory.values["nominalQuota"] == 1800  # GiB
    cpu = summary.quotas[("ClusterQueue", "team-a", "l4", "cpu")]
    assert cpu.values["nominalQuota"] == 32


def test_prod_dws_pools_show_capacity_quota_and_margin_as_the_capacity_check_counts_them() -> None:
    pools = summarize(template("gke-prod-dws"), PRICES).pools
    h100, l4 = pools["h100"], pools["l4"]
    assert (h100.machine_type, h100.region, h100.provisioning, h100.price_model) == (
        "a3-highgpu-8g",
        "us-central1",
        "flex-start",
        "flex-start",
    )
    assert (h100.max_nodes, h100.gpus_per_node, h100.gpus_at_max) == (4, 8, 32)
    assert h100.quota["nvidia.com/gpu"] == 24 and h100.margin("nvidia.com/gpu") == 8
    assert h100.capacity["memory"] == 4 * 1872  # GiB
    assert (l4.max_nodes, l4.gpus_at_max, l4.margin("nvidia.com/gpu")) == (12, 12, 0)


def test_a_pool_without_a_price_row_has_no_price_never_an_estimate(tmp_path: Path) -> None:
    only_a_spot_a3 = tmp_path / "gcp.csv"
    only_a_spot_a3.write_text(
        "machine_type,region,model,usd_per_hour,source,retrieved,note\n"
        "a3-highgpu-8g,us-central1,spot,50.6,https://x.example/p,2026-01-01,\n"
    )
    summary = summarize(template("gke-prod-dws"), load_price_table([only_a_spot_a3]))
    assert summary.pools["h100"].price is None  # flex-start: never the Spot row, never a discount of anything
    assert summary.pools["h100"].quota_usd_per_hour is None
    assert summary.pools["l4"].price is None
    assert summary.total_usd_per_hour is None
    assert summary.team_total("team-a") is None


def test_a_flex_start_pool_without_its_own_row_is_priced_at_the_on_demand_row_as_its_ceiling(
    tmp_path: Path,
) -> None:
    table = tmp_path / "gcp.csv"
    table.write_text(
        "machine_type,region,model,usd_per_hour,source,retrieved,note\n"
        "a3-highgpu-8g,us-central1,on-demand,88,https://x.example/p,2026-01-01,\n"
    )
    h100 = summarize(template("gke-prod-dws"), load_price_table([table])).pools["h100"]
    assert h100.price is not None and (h100.price.model, h100.price.usd_per_hour) == ("on-demand", 88)
    assert h100.price_is_upper_bound
    table.write_text(
        table.read_text() + "a3-highgpu-8g,us-central1,flex-start,37,https://x.example/q,2026-01-01,\n"
    )
    h100 = summarize(template("gke-prod-dws"), load_price_table([table])).pools["h100"]
    assert h100.price is not None and (h100.price.model, h100.price_is_upper_bound) == ("flex-start", False)


def test_the_prod_dws_flex_start_h100_and_on_demand_l4_pools_are_priced_from_their_rows() -> None:
    summary = summarize(template("gke-prod-dws"), PRICES)
    h100, l4 = summary.pools["h100"], summary.pools["l4"]
    flex = h100_price(PRICES)
    g2 = PRICES.lookup("gcp", "g2-standard-8", "us-central1", "on-demand")
    assert flex is not None and g2 is not None
    assert h100.price == flex and l4.price == g2
    assert h100.price_is_upper_bound == (flex.model == "on-demand")
    assert h100.quota_usd_per_hour == 24 * flex.usd_per_hour / 8
    assert l4.quota_usd_per_hour == 12 * g2.usd_per_hour
    assert summary.total_usd_per_hour == h100.quota_usd_per_hour + l4.quota_usd_per_hour


def test_an_on_demand_pool_is_priced_per_gpu_share_of_the_node(tmp_path: Path) -> None:
    stack = load_stack_file(prod_dws_with_team_a_h100(tmp_path, nominal=8, provisioning="on-demand"))
    summary = summarize(stack, PRICES)
    h100 = summary.pools["h100"]
    assert h100.price is not None and h100.price.usd_per_hour == A3_ON_DEMAND
    assert h100.max_nodes_usd_per_hour == 4 * A3_ON_DEMAND
    assert h100.quota_usd_per_hour == 24 * A3_ON_DEMAND / 8
    team_a = summary.team_costs[("team-a", "h100")]
    assert team_a.gpus == 16  # nominal 8 + borrowing limit 8, in cohort "ml"
    assert team_a.usd_per_hour == 16 * A3_ON_DEMAND / 8
    l4 = summary.pools["l4"].quota_usd_per_hour
    assert l4 is not None and summary.total_usd_per_hour == h100.quota_usd_per_hour + l4


def test_openshift_machine_sets_are_priced_by_instance_type_and_region(tmp_path: Path) -> None:
    doc = stack_document("openshift-ai-gpu")
    summary = summarize(load_stack_file(write_document(doc, tmp_path / "Pulumi.os.yaml")), PRICES)
    pool = summary.pools["a10g"]
    assert (pool.kind, pool.machine_type, pool.region, pool.price_model) == (
        "OpenShift GPU MachineSet",
        "g5.2xlarge",
        "us-east-1",
        "on-demand",
    )
    assert pool.price is not None and pool.price.usd_per_hour == Decimal("1.212")  # aws.csv's sourced row
    doc["config"]["batchplane:target"]["gpuPools"][0]["aws"]["instanceType"] = "g5.xlarge"
    queue = doc["config"]["batchplane:kueue"]["clusterQueues"][0]["resourceGroups"][0]["flavors"][1][
        "resources"
    ]
    queue[0]["nominalQuota"] = 12
    queue[1]["nominalQuota"] = "56Gi"
    priced = summarize(load_stack_file(write_document(doc, tmp_path / "Pulumi.os.yaml")), PRICES).pools[
        "a10g"
    ]
    assert priced.price is not None and priced.price.usd_per_hour == Decimal("1.006")
    assert priced.quota_usd_per_hour == 4 * Decimal("1.006")


def test_a_team_without_a_cohort_claims_only_its_nominal_quota() -> None:
    summary = summarize(template("gke-dws"), PRICES)
    (cost,) = summary.team_costs.values()
    queue = next(
        e
        for e in summary.quotas.values()
        if e.resource == "nvidia.com/gpu" and e.flavor in summary.pools[cost.pool].flavors
    )
    assert summary.cohorts[cost.team] is None
    assert cost.gpus == queue.values["nominalQuota"]


def test_a_multikueue_managers_declared_workers_join_the_summary_under_their_names() -> None:
    summary = summarize(template("gke-multiregion-dws"), PRICES)
    assert sorted(summary.pools) == ["asia-southeast1/l4", "europe-west4/l4", "us-east4/l4"]
    pool = summary.pools["europe-west4/l4"]
    assert (pool.machine_type, pool.region, pool.price_model) == (
        "g2-standard-4",
        "europe-west4",
        "flex-start",
    )
    workers = {owner.split("/")[0] for (_, owner, _, _) in summary.quotas if "/" in owner}
    assert workers == {"us-east4", "europe-west4", "asia-southeast1"}
    assert all(team.startswith(pool_name.split("/")[0] + "/") for team, pool_name in summary.team_costs)


def _two_level(tmp_path: Path, parent_gpus: int, ml_borrowing: int | None = None) -> Path:
    """``gke-prod-dws`` whose teams borrow without a limit in cohort ``ml``, ``ml`` a child of cohort ``org``;
    ``org`` owns ``parent_gpus`` H100 GPUs, ``ml`` (given) may borrow ``ml_borrowing`` of them."""
    doc = stack_document("gke-prod-dws")
    for member in doc["config"]["batchplane:teams"]["members"]:
        member["quotas"]["h100"]["nvidia.com/gpu"].pop("borrowingLimit")
    ml: dict[str, object] = {"name": "ml", "parentName": "org"}
    if ml_borrowing is not None:
        ml["resourceGroups"] = [
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": "h100",
                        "resources": [
                            {"name": "nvidia.com/gpu", "nominalQuota": 0, "borrowingLimit": ml_borrowing}
                        ],
                    }
                ],
            }
        ]
    org = {
        "name": "org",
        "resourceGroups": [
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [
                    {"name": "h100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": parent_gpus}]}
                ],
            }
        ],
    }
    doc["config"]["batchplane:kueue"]["cohorts"] = [ml, org]
    folder = tmp_path / f"org-{parent_gpus}-{ml_borrowing}"
    folder.mkdir()
    return write_document(doc, folder / "Pulumi.gke-prod-dws.yaml")


def test_a_team_borrows_up_the_cohort_tree_from_a_parent_cohorts_quota(tmp_path: Path) -> None:
    # ml's subtree lends all 24 team GPUs; the root org adds its own 8: potentialAvailable = 0 + 32 (Kueue
    # resource_node.go: a non-root node gets localQuota + potentialAvailable(parent)).
    without = summarize(load_stack_file(_two_level(tmp_path, parent_gpus=0)), PRICES)
    with_parent = summarize(load_stack_file(_two_level(tmp_path, parent_gpus=8)), PRICES)
    assert [without.team_costs[(t, "h100")].gpus for t in ("team-a", "team-b", "team-c")] == [24, 24, 24]
    assert [with_parent.team_costs[(t, "h100")].gpus for t in ("team-a", "team-b", "team-c")] == [32, 32, 32]
    flex = h100_price(PRICES)
    assert flex is not None
    assert with_parent.team_costs[("team-a", "h100")].usd_per_hour == 32 * flex.usd_per_hour / 8


def test_a_child_cohorts_borrowing_limit_caps_what_its_teams_get_from_the_parent(tmp_path: Path) -> None:
    # ml may borrow 4 beyond its subtree (24): min(0 + 32, 24 + 4) = 28 for every team in it.
    summary = summarize(load_stack_file(_two_level(tmp_path, parent_gpus=8, ml_borrowing=4)), PRICES)
    assert [summary.team_costs[(t, "h100")].gpus for t in ("team-a", "team-b", "team-c")] == [28, 28, 28]


def test_raising_a_parent_cohorts_quota_shows_in_the_diff_as_more_gpus_and_dollars_per_team(
    tmp_path: Path,
) -> None:
    from batchplane.diff import compare

    base = load_stack_file(_two_level(tmp_path, parent_gpus=0))
    head = load_stack_file(_two_level(tmp_path, parent_gpus=8))
    diff = compare(base, head, prices=PRICES, decisions=False)
    flex = h100_price(PRICES)
    assert flex is not None
    share = flex.usd_per_hour / 8
    assert [(q.kind, q.owner, q.flavor, q.field, q.before, q.after) for q in diff.quotas] == [
        ("Cohort", "org", "h100", "nominalQuota", 0, 8)
    ]
    teams = [(c.name, c.gpus, c.delta_gpus, c.delta_usd) for c in diff.costs if c.scope == "team"]
    assert teams == [(t, (24, 32), 8, 8 * share) for t in ("team-a", "team-b", "team-c")]

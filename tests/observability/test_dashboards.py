"""The generated dashboards: every template renders them, every query parses and names known metrics and labels,
and each Grafana dashboard is structurally sound (titles, datasources, targets, unique ids, a stable short uid)."""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from decimal import Decimal
from typing import Any

import promql_parser
import pytest
from hypothesis import HealthCheck, assume, given, settings

from batchplane.errors import ConfigValidationError
from batchplane.observability.dashboards import (
    CLUSTER_QUEUE_VARIABLE,
    MAX_UID_LENGTH,
    MOSAIC_COLUMNS,
    DashboardSpec,
    PanelSpec,
    Query,
    cloud_monitoring_dashboard,
    dashboard_specs,
    dashboard_uid,
    grafana_dashboard,
)
from batchplane.stack import load_stack
from tests.config.strategies import stack_configs
from tests.conftest import TEMPLATE_NAMES
from tests.support.promql import grafana_to_promql, promql_problems
from tests.support.stacks import template

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"grafana_foundation_sdk\.")
    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.cog.plugins import register_default_plugins
    from grafana_foundation_sdk.models.dashboard import Dashboard as SdkDashboard

register_default_plugins()  # the SDK decodes panels and queries by their plugin type

UID = re.compile(r"^[A-Za-z0-9_-]+$")


def variables_of(model: dict[str, Any]) -> dict[str, str]:
    """What Grafana substitutes for each of the dashboard's template variables (multi-value: the all value)."""
    out = {}
    for variable in model["templating"]["list"]:
        out[variable["name"]] = variable.get("allValue") or "prometheus"
    return out


def grafana_queries(model: dict[str, Any]) -> list[tuple[str, str]]:
    """``(where, PromQL)`` for every panel target and every ``label_values`` variable query, variables substituted."""
    variables = variables_of(model)
    out = [
        (
            f"{model['uid']} panel {panel['id']} {panel['title']!r} {target['refId']}",
            grafana_to_promql(target["expr"], variables),
        )
        for panel in model["panels"]
        for target in panel["targets"]
    ]
    for variable in model["templating"]["list"]:
        if variable["type"] == "query":
            inner = re.fullmatch(r"label_values\((.*), (\w+)\)", variable["query"])
            assert inner is not None, variable["query"]
            out.append((f"{model['uid']} variable {variable['name']}", inner.group(1)))
    return out


# --- every template ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_template_renders_an_overview_a_dashboard_per_cluster_queue_and_capacity(name: str) -> None:
    stack = template(name)
    specs = dashboard_specs(stack)
    queues = [loc.obj.name for loc in stack.kueue.cluster_queues]
    assert [s.key for s in specs[: len(queues) + 2]] == ["overview", *(f"cq-{q}" for q in queues), "capacity"]
    assert len({s.key for s in specs}) == len(specs)
    assert [grafana_dashboard(s)["uid"] for s in specs] == [s.uid for s in specs]
    assert [cloud_monitoring_dashboard(s)["displayName"] for s in dashboard_specs(stack, "cloud-monitoring")]


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_grafana_query_of_every_template_parses_and_names_known_metrics_and_labels(name: str) -> None:
    problems = []
    for spec in dashboard_specs(template(name)):
        for where, expr in grafana_queries(grafana_dashboard(spec)):
            problems += [f"{where}: {p} in {expr}" for p in promql_problems(expr)]
    assert problems == []


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_cloud_monitoring_query_of_every_template_parses_and_names_known_metrics_and_labels(
    name: str,
) -> None:
    problems = []
    for spec in dashboard_specs(template(name), "cloud-monitoring"):
        for tile in cloud_monitoring_dashboard(spec)["mosaicLayout"]["tiles"]:
            widget = tile["widget"]
            data_sets = widget["xyChart"]["dataSets"] if "xyChart" in widget else [widget["scorecard"]]
            for data_set in data_sets:
                expr = data_set["timeSeriesQuery"]["prometheusQuery"]
                problems += [f"{spec.key} {widget['title']!r}: {p} in {expr}" for p in promql_problems(expr)]
    assert problems == []


# --- the check rejects what is wrong ----------------------------------------------------------------------------


def test_the_check_rejects_a_misspelt_metric_an_unknown_label_and_an_unknown_grouping_label() -> None:
    assert promql_problems("sum(kueue_pending_workload)") == ["unknown metric 'kueue_pending_workload'"]
    assert promql_problems('kueue_pending_workloads{clusterqueue="a"}') == [
        "kueue_pending_workloads has no label 'clusterqueue'"
    ]
    assert promql_problems("sum by (team) (kueue_pending_workloads)") == [
        "aggregation AggModifierType.By on 'team', which no selector carries"
    ]
    assert promql_problems("rate(kueue_pending_workloads[$__rate_interval])")[0].startswith("does not parse")
    # a histogram's series resolve to the family; a gauge has no _bucket
    assert promql_problems('kueue_admission_wait_time_seconds_bucket{le="10"}') == []
    assert promql_problems("kueue_pending_workloads_bucket") == [
        "unknown metric 'kueue_pending_workloads_bucket'"
    ]


def test_a_dashboard_with_a_wrong_metric_name_fails_the_template_check() -> None:
    """The same walk the template tests run, over a dashboard whose one panel names a metric Kueue does not export."""
    spec = dashboard_specs(template("kind"))[0]
    wrong = dataclasses.replace(
        spec,
        panels=(
            *spec.panels,
            PanelSpec(
                "Typo",
                "a misspelt family",
                (Query('sum(kueue_pending_workload{cluster_queue=~"$cluster_queue"})'),),
            ),
        ),
    )
    problems = [p for _, expr in grafana_queries(grafana_dashboard(wrong)) for p in promql_problems(expr)]
    assert problems == ["unknown metric 'kueue_pending_workload'"]


# --- structure ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_panel_has_a_title_the_datasource_variable_and_a_target_and_panel_ids_are_unique(
    name: str,
) -> None:
    for spec in dashboard_specs(template(name)):
        model = grafana_dashboard(spec)
        ids = [panel["id"] for panel in model["panels"]]
        assert len(ids) == len(set(ids)) == len(spec.panels), spec.key
        defined = {v["name"] for v in model["templating"]["list"]}
        assert "datasource" in defined
        for panel in model["panels"]:
            assert panel["title"].strip(), (spec.key, panel)
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            assert panel["targets"], (spec.key, panel["title"])
            assert len({t["refId"] for t in panel["targets"]}) == len(panel["targets"])
            for target in panel["targets"]:
                used = {a or b for a, b in re.findall(r"\$(?:\{(\w+)\}|(\w+))", target["expr"])}
                assert used - {"__rate_interval"} <= defined, (spec.key, target["expr"])


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_dashboard_uids_are_short_valid_and_stable_per_stack_and_dashboard(name: str) -> None:
    specs = dashboard_specs(template(name))
    for spec in specs:
        assert len(spec.uid) <= MAX_UID_LENGTH and UID.match(spec.uid), spec.uid
        assert spec.uid == dashboard_uid(name, spec.key)
    assert [s.uid for s in dashboard_specs(template(name))] == [s.uid for s in specs]
    assert len({s.uid for s in specs}) == len(specs)


def test_uids_differ_between_stacks_and_stay_short_for_long_cluster_queue_names() -> None:
    long = "a" * 63 + "." + "b" * 60
    assert dashboard_uid("dev", "overview") != dashboard_uid("prod", "overview")
    assert len(dashboard_uid("x" * 200, f"cq-{long}")) <= MAX_UID_LENGTH
    assert dashboard_uid("s", f"cq-{long}a") != dashboard_uid("s", f"cq-{long}b")


def test_a_dashboard_over_several_queues_offers_exactly_the_stacks_cluster_queues() -> None:
    stack = template("gke-multiregion-dws")
    queues = tuple(loc.obj.name for loc in stack.kueue.cluster_queues)
    overview = grafana_dashboard(dashboard_specs(stack)[0])
    variable = next(v for v in overview["templating"]["list"] if v["name"] == CLUSTER_QUEUE_VARIABLE)
    assert variable["multi"] and variable["includeAll"]
    pattern = re.compile(variable["allValue"].replace("\\\\", "\\"))  # the PromQL string literal, unquoted
    assert all(pattern.fullmatch(q) for q in queues)
    assert not any(pattern.fullmatch(f"{q}x") or pattern.fullmatch(q[:-1]) for q in queues)
    assert len(queues) > 1


# --- capacity and webhook ----------------------------------------------------------------------------------------


def test_each_pool_panel_draws_the_pools_minimum_and_maximum_in_gpus() -> None:
    stack = template("gke-dws")
    pools = stack.platform.backed_pools()
    assert pools
    capacity = next(s for s in dashboard_specs(stack) if s.kind == "capacity")
    for pool in pools:
        panel = next(p for p in capacity.panels if p.title == f"Pool {pool.name}")
        gpus = pool.per_node[GPU] if (GPU := "nvidia.com/gpu") in pool.per_node else None
        assert gpus is not None and pool.max_nodes is not None
        exprs = [q.expr for q in panel.queries]
        assert f"vector({Decimal(pool.min_nodes) * gpus})" in exprs
        assert f"vector({Decimal(pool.max_nodes) * gpus})" in exprs


def test_capacity_shows_provisioning_request_panels_only_for_a_stack_with_a_provisioning_check() -> None:
    def titles(name: str) -> list[str]:
        return [p.title for s in dashboard_specs(template(name)) if s.kind == "capacity" for p in s.panels]

    assert "Waiting for ProvisioningRequests" in titles("gke-dws")
    assert "Waiting for ProvisioningRequests" not in titles("kind")


def test_the_webhook_dashboard_draws_latency_against_the_stacks_timeout_seconds() -> None:
    stack = template("kind")
    webhook = next(s for s in dashboard_specs(stack) if s.kind == "webhook")
    latency = next(p for p in webhook.panels if p.title.startswith("Review latency"))
    assert Query(f"vector({stack.config.webhook.timeout_seconds})", "timeoutSeconds") in latency.queries
    assert [q.legend for q in latency.queries[:2]] == ["p50", "p99"]


def test_cloud_monitoring_tiles_fit_the_mosaic_and_refuse_grafana_variables() -> None:
    spec = dashboard_specs(template("gke-dws"), "cloud-monitoring")[0]
    board = cloud_monitoring_dashboard(spec)
    for tile in board["mosaicLayout"]["tiles"]:
        assert tile["xPos"] >= 0 and tile["xPos"] + tile["width"] <= MOSAIC_COLUMNS
    assert board["dashboardFilters"] == [{"filterType": "METRIC_LABEL", "labelKey": "cluster_queue"}]
    grafana_spec: DashboardSpec = dashboard_specs(template("gke-dws"))[0]
    with pytest.raises(ValueError, match="Grafana variable"):
        cloud_monitoring_dashboard(grafana_spec)


def selectors(expr: str) -> list[promql_parser.VectorSelector]:
    found: list[promql_parser.VectorSelector] = []
    promql_parser.walk(
        promql_parser.parse(expr),
        pre_visit=lambda n: found.append(n) if isinstance(n, promql_parser.VectorSelector) else None,
    )
    return found


def test_cloud_monitoring_queries_select_the_gke_clusters_own_series_in_the_shared_project_store() -> None:
    """Managed Service for Prometheus keeps every cluster of a project in one store, labelled ``cluster``: each
    selector of a Cloud Monitoring dashboard names the stack's cluster; Grafana's (one Prometheus per cluster) do not."""
    stack = template("gke-multiregion-dws")
    name = stack.config.target.cluster_name  # type: ignore[union-attr]
    for spec in dashboard_specs(stack, "cloud-monitoring"):
        for panel in spec.panels:
            for query in panel.queries:
                for selector in selectors(query.expr):
                    assert ("cluster", name) in [(m.name, m.value) for m in selector.matchers.matchers], (
                        query.expr
                    )
    for spec in dashboard_specs(stack):
        for panel in spec.panels:
            for query in panel.queries:
                expr = grafana_to_promql(query.expr, {"cluster_queue": "a"})
                assert all(m.name != "cluster" for s in selectors(expr) for m in s.matchers.matchers)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(stack_configs)
def test_any_valid_stack_renders_dashboards_whose_queries_all_pass_the_check(config: dict[str, Any]) -> None:
    try:
        stack = load_stack(config, "generated")
    except ConfigValidationError:
        assume(False)
        return
    specs = dashboard_specs(stack)
    assert len({s.uid for s in specs}) == len(specs)
    problems = []
    for spec in specs:
        assert len(spec.uid) <= MAX_UID_LENGTH and UID.match(spec.uid)
        for where, expr in grafana_queries(grafana_dashboard(spec)):
            problems += [f"{where}: {p}" for p in promql_problems(expr)]
    for spec in dashboard_specs(stack, "cloud-monitoring"):
        cloud_monitoring_dashboard(spec)
        problems += [p for panel in spec.panels for q in panel.queries for p in promql_problems(q.expr)]
    assert problems == []


def test_a_stack_without_cluster_queues_renders_an_overview_and_capacity_that_select_nothing() -> None:
    """Found by the property test: the empty queue regex ``^$`` is an anchor, not a Grafana variable."""
    stack = load_stack({"batchplane:target": {"kind": "kind"}}, "empty")
    assert [s.key for s in dashboard_specs(stack)] == ["overview", "capacity"]
    for spec in dashboard_specs(stack, "cloud-monitoring"):
        board = cloud_monitoring_dashboard(spec)
        exprs = [d["timeSeriesQuery"]["prometheusQuery"] for t in board["mosaicLayout"]["tiles"]
                 for d in t["widget"].get("xyChart", {}).get("dataSets", [])]  # fmt: skip
        assert exprs and all('cluster_queue=~"^$"' in e for e in exprs if "cluster_queue" in e)
        assert [p for e in exprs for p in promql_problems(e)] == []


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_dashboard_decodes_with_the_sdks_own_model_and_encodes_back_unchanged(name: str) -> None:
    """Grafana's Foundation SDK decodes each JSON model (panels as its panel type, every target as its Prometheus
    query type) and encodes it back to the same JSON: nothing in the model is outside the SDK's schema."""
    for spec in dashboard_specs(template(name)):
        model = grafana_dashboard(spec)
        decoded = SdkDashboard.from_json(model)
        assert {type(t).__module__ for p in decoded.panels or [] for t in p.targets or []} == {
            "grafana_foundation_sdk.models.prometheus"
        }
        assert json.loads(JSONEncoder(sort_keys=True).encode(decoded)) == model

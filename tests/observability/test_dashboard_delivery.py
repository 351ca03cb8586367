"""How the dashboards reach a dashboard server: sidecar ConfigMaps, GrafanaDashboard CRs (checked against the Grafana
Operator v5.24.0 CRD), Cloud Monitoring dashboards; ``auto`` resolved by the platform."""

from __future__ import annotations

import json
import re
import warnings

import pytest

from batchplane.config.dashboards import DashboardsConfig
from batchplane.errors import ConfigValidationError
from batchplane.observability.dashboards import (
    CONSOLE_BUILTIN_VARIABLES,
    CONSOLE_PANEL_TYPES,
    SIDECAR_LABEL,
    cloud_monitoring_dashboard,
    console_dashboard,
    dashboard_configmap,
    dashboard_specs,
    dashboards_plan,
    grafana_dashboard,
)
from batchplane.stack import load_stack, read_stack_file
from batchplane.stack.observability import dashboards_config, resolve_delivery
from tests.conftest import TEMPLATE_NAMES, TEMPLATES_DIR
from tests.support.crdcheck import CrdCatalog
from tests.support.promql import promql_problems
from tests.support.stacks import template

with warnings.catch_warnings():
    # google-api-core warns (FutureWarning) that it will drop Python 3.11 after its end of life.
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"google\.api_core\.")
    from google.cloud.monitoring_dashboard_v1.types import Dashboard as CloudDashboard

#: ConfigMap data keys (``IsConfigMapKey``, k8s.io/apimachinery pkg/util/validation).
CONFIGMAP_KEY = re.compile(r"^[-._a-zA-Z0-9]{1,253}$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@pytest.mark.parametrize(
    ("name", "expected"),
    [("kind", "configmap"), ("gke-dws", "cloud-monitoring"), ("openshift-ai", "openshift-console")],
)
def test_auto_delivery_is_the_platforms_own(name: str, expected: str) -> None:
    stack = template(name)
    assert resolve_delivery(DashboardsConfig(), stack.platform) == expected
    assert resolve_delivery(DashboardsConfig(delivery="configmap"), stack.platform) == "configmap"


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_templates_grafana_dashboard_crs_pass_the_grafana_operator_crd(
    name: str, catalog: CrdCatalog
) -> None:
    stack = template(name)
    plan = dashboards_plan(stack, DashboardsConfig(delivery="grafana-operator", folder="GPU platform"))
    assert plan is not None and plan.namespace == stack.platform.kueue_namespace(stack.config.operators)
    assert [key for key, _ in plan.objects] == [s.key for s in dashboard_specs(stack)]
    for _, obj in plan.objects:
        assert catalog.validate(obj) == [], obj["metadata"]["name"]
        assert obj["spec"]["folder"] == "GPU platform"
        assert obj["spec"]["instanceSelector"] == {"matchLabels": {"dashboards": "grafana"}}
        assert json.loads(obj["spec"]["json"])["uid"] == obj["metadata"]["name"]


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_templates_configmaps_carry_the_sidecar_label_and_valid_names_and_keys(name: str) -> None:
    stack = template(name)
    plan = dashboards_plan(stack, DashboardsConfig(delivery="configmap", namespace="monitoring"))
    assert plan is not None
    for key, obj in plan.objects:
        meta = obj["metadata"]
        assert meta["namespace"] == "monitoring"
        assert meta["labels"][SIDECAR_LABEL[0]] == SIDECAR_LABEL[1] == "1"
        assert DNS_SUBDOMAIN.match(meta["name"]) and len(meta["name"]) <= 253
        assert list(obj["data"]) == [f"{key}.json"] and CONFIGMAP_KEY.match(f"{key}.json")
        # Kubernetes refuses a ConfigMap over 1 MiB (ValidateConfigMap); a dashboard is far below it.
        assert len(obj["data"][f"{key}.json"].encode()) < 1024 * 1024


def test_the_configmap_holds_exactly_the_grafana_model_and_files_it_in_the_folder() -> None:
    spec = dashboard_specs(template("kind"))[0]
    obj = dashboard_configmap(spec, "kueue-system", "Team GPUs")
    assert json.loads(obj["data"]["overview.json"]) == grafana_dashboard(spec)
    assert obj["metadata"]["annotations"] == {"grafana_folder": "Team GPUs"}


def test_cloud_monitoring_delivery_plans_one_dashboard_per_spec_in_the_targets_project() -> None:
    stack = template("gke-dws")
    plan = dashboards_plan(stack, DashboardsConfig())
    assert plan is not None and plan.delivery == "cloud-monitoring" and plan.objects == ()
    assert plan.project == stack.config.target.project  # type: ignore[union-attr]
    assert [key for key, _ in plan.cloud_dashboards] == [s.key for s in dashboard_specs(stack)]
    for _, board in plan.cloud_dashboards:
        assert board["displayName"].startswith("Batchplane / ")
        for tile in board["mosaicLayout"]["tiles"]:
            widget = tile["widget"]
            data_sets = widget["xyChart"]["dataSets"] if "xyChart" in widget else [widget["scorecard"]]
            assert all(set(d["timeSeriesQuery"]) == {"prometheusQuery", "unitOverride"} for d in data_sets)


def test_disabled_dashboards_plan_nothing() -> None:
    assert dashboards_plan(template("kind"), DashboardsConfig(enabled=False)) is None


def test_the_crd_check_refuses_a_grafana_dashboard_without_an_instance_selector(catalog: CrdCatalog) -> None:
    plan = dashboards_plan(template("kind"), DashboardsConfig(delivery="grafana-operator"))
    assert plan is not None
    _, obj = plan.objects[0]
    broken = {**obj, "spec": {k: v for k, v in obj["spec"].items() if k != "instanceSelector"}}
    assert "spec.instanceSelector" in [issue.path for issue in catalog.validate(broken)]


def with_observability(name: str, section: dict[str, object]) -> dict[str, object]:
    config = read_stack_file(TEMPLATES_DIR / f"Pulumi.{name}.yaml")
    return {**config, "batchplane:observability": section}


def test_cloud_monitoring_delivery_is_refused_off_gke_with_its_key_path() -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(with_observability("kind", {"dashboards": {"delivery": "cloud-monitoring"}}), "kind")
    assert [(i.path, i.message) for i in caught.value.issues if i.severity == "error"] == [
        (
            "batchplane:observability.dashboards.delivery",
            "cloud-monitoring is not offered on target kind kind (offered: auto, grafana-operator, configmap)",
        )
    ]
    gke = load_stack(
        with_observability("gke-dws", {"dashboards": {"delivery": "grafana-operator"}}), "gke-dws"
    )
    assert dashboards_config(gke).delivery == "grafana-operator"


def test_dashboards_follow_observability_off_and_kube_prometheus_stacks_namespace() -> None:
    off = load_stack(with_observability("kind", {"enabled": False}), "kind")
    assert dashboards_plan(off, dashboards_config(off)) is None
    kps = load_stack(
        with_observability(
            "kind", {"prometheus": "kube-prometheus-stack", "kubePrometheusStack": {"namespace": "obs"}}
        ),
        "kind",
    )
    plan = dashboards_plan(kps, dashboards_config(kps))
    assert plan is not None and plan.delivery == "configmap" and plan.namespace == "obs"
    assert {obj["metadata"]["namespace"] for _, obj in plan.objects} == {"obs"}


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_templates_cloud_monitoring_dashboards_parse_as_the_dashboard_api_message(name: str) -> None:
    """Each dashboard JSON parses, unknown fields refused, as ``google.monitoring.dashboard.v1.Dashboard`` (the
    proto of the ``projects.dashboards`` API, from Google's client library), with one tile per panel and each
    chart's query in ``timeSeriesQuery.prometheusQuery``."""
    for spec in dashboard_specs(template(name), "cloud-monitoring"):
        message = CloudDashboard.from_json(
            json.dumps(cloud_monitoring_dashboard(spec)), ignore_unknown_fields=False
        )
        tiles = message.mosaic_layout.tiles
        assert len(tiles) == len(spec.panels)
        for tile, panel in zip(tiles, spec.panels, strict=True):
            queries = (
                [tile.widget.scorecard.time_series_query]
                if panel.kind == "stat"
                else [d.time_series_query for d in tile.widget.xy_chart.data_sets]
            )
            assert [q.prometheus_query for q in queries] == [q.expr for q in panel.queries][: len(queries)]


def test_the_dashboard_api_message_refuses_a_misspelt_query_field() -> None:
    board = cloud_monitoring_dashboard(dashboard_specs(template("gke-dws"), "cloud-monitoring")[0])
    data_set = board["mosaicLayout"]["tiles"][0]["widget"]["xyChart"]["dataSets"][0]
    data_set["timeSeriesQuery"] = {"promQuery": data_set["timeSeriesQuery"]["prometheusQuery"]}
    with pytest.raises(Exception, match="promQuery"):
        CloudDashboard.from_json(json.dumps(board), ignore_unknown_fields=False)


# --- the OpenShift console (OpenShift's default: no operator needed) ---------------------------------------------

OPENSHIFT_TEMPLATES = [name for name in TEMPLATE_NAMES if name.startswith("openshift")]
#: How the console fills its built-in variables at the narrowest zoom (``evaluateVariableTemplate``: ≥ 5m).
CONSOLE_FILL = re.compile(r"\$\{?(" + "|".join(CONSOLE_BUILTIN_VARIABLES) + r")\}?")


@pytest.mark.parametrize("name", OPENSHIFT_TEMPLATES)
def test_openshift_templates_default_to_console_dashboards_the_console_lists_and_renders(name: str) -> None:
    """The console lists ConfigMaps of openshift-config-managed labelled console.openshift.io/dashboard=true, renders
    only gauge/graph/singlestat/table/piechart panels and fills only its built-in variables; every panel of every
    dashboard must survive that, and every query (built-ins filled as the console does) must be valid PromQL over
    known metrics."""
    stack = template(name)
    plan = dashboards_plan(stack, dashboards_config(stack))
    assert plan is not None and plan.delivery == "openshift-console"
    assert [key for key, _ in plan.objects] == [s.key for s in dashboard_specs(stack)]
    problems: list[str] = []
    for key, obj in plan.objects:
        assert (obj["apiVersion"], obj["kind"]) == ("v1", "ConfigMap")
        assert obj["metadata"]["namespace"] == "openshift-config-managed"
        assert obj["metadata"]["labels"]["console.openshift.io/dashboard"] == "true"
        [(data_key, text)] = obj["data"].items()
        assert data_key == f"{key}.json" and CONFIGMAP_KEY.match(data_key)
        board = json.loads(text)
        assert board["templating"]["list"] == []
        for panel in board["panels"]:
            assert panel["type"] in CONSOLE_PANEL_TYPES, panel["title"]
            assert 1 <= panel["span"] <= 12 and panel["targets"]
            for target in panel["targets"]:
                expr = CONSOLE_FILL.sub("5m", target["expr"])
                assert "$" not in expr, expr
                problems += [f"{key} {panel['title']!r}: {p}" for p in promql_problems(expr)]
    assert problems == []
    assert "OpenShift console" in plan.note and "openshift-config-managed" in plan.note


def test_console_rendering_refuses_a_spec_with_grafana_template_variables() -> None:
    spec = dashboard_specs(template("openshift-ai"))[0]  # grafana dialect: $cluster_queue
    with pytest.raises(ValueError, match="cluster_queue"):
        console_dashboard(spec)


def test_console_graphs_carry_the_unit_and_stats_become_singlestats() -> None:
    for spec in dashboard_specs(template("openshift-ai"), "openshift-console"):
        board = console_dashboard(spec)
        for panel, rendered in zip(spec.panels, board["panels"], strict=True):
            if panel.kind == "stat":
                assert rendered["type"] == "singlestat" and rendered["format"] == panel.unit
            else:
                assert rendered["type"] == "graph" and rendered["yaxes"][0]["format"] == panel.unit
            assert [t["expr"] for t in rendered["targets"]] == [q.expr for q in panel.queries]


def test_grafana_operator_crs_on_openshift_only_when_configured_and_the_preview_says_what_they_need() -> None:
    stack = load_stack(
        with_observability("openshift-ai", {"dashboards": {"delivery": "grafana-operator"}}), "openshift-ai"
    )
    plan = dashboards_plan(stack, dashboards_config(stack))
    assert plan is not None and plan.delivery == "grafana-operator"
    assert {obj["kind"] for _, obj in plan.objects} == {"GrafanaDashboard"}
    assert "Grafana Operator" in plan.note


def test_console_delivery_refuses_a_namespace_the_console_does_not_read() -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(
            with_observability("openshift-ai", {"dashboards": {"namespace": "monitoring"}}), "openshift-ai"
        )
    [(path, message)] = [(i.path, i.message) for i in caught.value.issues if i.severity == "error"]
    assert path == "batchplane:observability.dashboards.namespace"
    assert "openshift-config-managed" in message and "monitoring" in message
    fine = load_stack(
        with_observability(
            "openshift-ai", {"dashboards": {"delivery": "configmap", "namespace": "monitoring"}}
        ),
        "openshift-ai",
    )
    assert dashboards_config(fine).namespace == "monitoring"

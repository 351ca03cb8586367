"""Preflight of the observability objects' needs, through the real kubernetes client against a local server on
127.0.0.1 answering recorded objects: user-workload monitoring on OpenShift, the Prometheus Operator's CRDs on kind
and existing clusters."""

from __future__ import annotations

from pathlib import Path

import pytest

from batchplane.offline import read_stack_file
from batchplane.preflight import Environment, Report, preflight
from batchplane.preflight.monitoring import user_workload_enabled
from batchplane.preflight.requirements import stack_requirements
from batchplane.stack import Stack, load_stack
from tests.conftest import template_path
from tests.preflight.conftest import template
from tests.preflight.olm_helpers import OPENSHIFT_DEFAULTS, kubeconfig
from tests.preflight.replay import RecordedServer, load


def _grafana_operator_stack() -> Stack:
    """openshift-ai-gpu with ``observability.dashboards.delivery: grafana-operator`` (OpenShift's default is the
    console's dashboards, which need no operator)."""
    config = read_stack_file(template_path("openshift-ai-gpu"))
    observability = dict(config.get("batchplane:observability") or {})
    observability["dashboards"] = {**(observability.get("dashboards") or {}), "delivery": "grafana-operator"}
    return load_stack({**config, "batchplane:observability": observability}, "openshift-ai-gpu")


def _openshift(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *recordings: str, stack: Stack | None = None
) -> Report:
    stack = stack or template("openshift-ai-gpu")
    with RecordedServer(load(*recordings, *OPENSHIFT_DEFAULTS)) as server:
        monkeypatch.setenv(
            "KUBECONFIG", str(kubeconfig(tmp_path, server.url, stack.config.target.kube_context()))
        )
        return preflight(stack, Environment(check_images=False))


def test_user_workload_monitoring_on_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = _openshift(tmp_path, monkeypatch, "openshift/user-workload-monitoring.json")
    assert report.findings == [] and "monitoring" in report.checked


@pytest.mark.parametrize(
    "recording",
    ["openshift/user-workload-monitoring-off.json", "openshift/no-cluster-monitoring-config.json"],
    ids=["off", "no-configmap"],
)
def test_user_workload_monitoring_off_or_unconfigured_is_a_warning_with_the_oc_patch_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recording: str
) -> None:
    report = _openshift(tmp_path, monkeypatch, recording)
    [finding] = report.findings
    assert (finding.severity, finding.check, finding.path) == (
        "warning",
        "monitoring",
        "batchplane:observability",
    )
    assert "enableUserWorkload: true" in finding.message and "oc -n openshift-monitoring patch" in finding.fix


def test_config_yaml_parsing_follows_the_enable_user_workload_key() -> None:
    def cm(text: str) -> dict[str, object]:
        return {"data": {"config.yaml": text}}

    assert user_workload_enabled(cm("enableUserWorkload: true\nprometheusK8s: {retention: 7d}\n")) is True
    assert user_workload_enabled(cm("enableUserWorkload: false\n")) is False
    assert (
        user_workload_enabled(cm('enableUserWorkload: "true"\n')) is False
    )  # a string is not OpenShift's bool
    assert user_workload_enabled(None) is False and user_workload_enabled(cm("{")) is None


def test_kind_without_the_prometheus_operator_is_a_blocker_naming_the_choices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from batchplane.preflight.kube import KubeContext, kube_client
    from batchplane.preflight.monitoring import check_prometheus_operator_crds

    with RecordedServer(load("monitoring/no-prometheus-operator.json")) as server:
        report = Report("kind")
        client = kube_client(KubeContext("ctx", str(kubeconfig(tmp_path, server.url, "ctx")), "x"), report)
        check_prometheus_operator_crds("batchplane:observability.prometheus", client, report)
    [finding] = report.blockers
    assert finding.path == "batchplane:observability.prometheus"
    assert "servicemonitors.monitoring.coreos.com, prometheusrules.monitoring.coreos.com" in finding.message
    assert "kube-prometheus-stack" in finding.fix


def test_only_the_platforms_that_need_them_ask_for_the_monitoring_checks() -> None:
    kind, gke, openshift = (stack_requirements(template(t)) for t in ("kind", "gke-dev", "openshift-ai"))
    assert (kind.prometheus_operator, kind.user_workload_monitoring) == (
        "batchplane:observability.prometheus",
        None,
    )
    assert (gke.prometheus_operator, gke.user_workload_monitoring) == (None, None)
    assert (openshift.prometheus_operator, openshift.user_workload_monitoring) == (
        None,
        "batchplane:observability",
    )


def test_openshift_dashboards_without_the_grafana_operator_are_a_blocker_naming_the_delivery_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _openshift(
        tmp_path, monkeypatch, "monitoring/no-grafana-operator.json", stack=_grafana_operator_stack()
    )
    [finding] = report.findings
    assert (finding.severity, finding.check, finding.path) == (
        "blocker",
        "monitoring",
        "batchplane:observability.dashboards.delivery",
    )
    assert "grafanadashboards.grafana.integreatly.org" in finding.message
    assert "delivery: configmap" in finding.fix


def test_grafana_dashboards_no_grafana_selects_are_a_warning_with_the_label_to_add(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _openshift(
        tmp_path, monkeypatch, "monitoring/grafana-operator-no-instance.json", stack=_grafana_operator_stack()
    )
    [finding] = report.findings
    assert (finding.severity, finding.path) == (
        "warning",
        "batchplane:observability.dashboards.grafanaSelector",
    )
    assert "labelled dashboards=grafana" in finding.message and "dashboards=grafana" in finding.fix


def test_the_grafana_lookup_asks_for_the_stacks_own_selector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorded cluster has one Grafana labelled `dashboards=grafana` and none labelled `team=ml` (each answer
    matches only its own labelSelector query)."""
    from batchplane.preflight.kube import KubeContext, kube_client
    from batchplane.preflight.monitoring import check_grafana_operator

    recorded = load("monitoring/grafana-operator.json")
    empty = {
        **recorded[1],
        "query": {"labelSelector": "team=ml"},
        "body": {**recorded[1]["body"], "items": []},
    }
    with RecordedServer([*recorded, empty]) as server:
        report = Report("openshift")
        client = kube_client(KubeContext("ctx", str(kubeconfig(tmp_path, server.url, "ctx")), "x"), report)
        check_grafana_operator(
            "batchplane:observability.dashboards", {"dashboards": "grafana"}, client, report
        )
        assert report.findings == [] and "monitoring" in report.checked
        check_grafana_operator("batchplane:observability.dashboards", {"team": "ml"}, client, report)
        assert server.replay.unmatched == []
    [finding] = report.findings
    assert finding.severity == "warning" and "is labelled team=ml" in finding.message


def test_only_grafana_operator_delivery_asks_for_the_grafana_check() -> None:
    kind, gke, openshift = (stack_requirements(template(t)) for t in ("kind", "gke-dev", "openshift-ai"))
    # configmap, cloud-monitoring, openshift-console: none needs an operator the stack does not install
    assert (
        kind.grafana_operator is None and gke.grafana_operator is None and openshift.grafana_operator is None
    )
    chosen = stack_requirements(_grafana_operator_stack())
    assert chosen.grafana_operator == ("batchplane:observability.dashboards", {"dashboards": "grafana"})


def test_openshift_console_dashboards_on_a_cluster_without_the_grafana_operator_are_no_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default OpenShift delivery against a cluster with no Grafana Operator CRD: nothing to fix."""
    report = _openshift(tmp_path, monkeypatch, "monitoring/no-grafana-operator.json")
    assert [f for f in report.findings if "grafana" in f.message.lower()] == []

"""The Dashboards component under the mock engine: one child per dashboard, of the type its delivery needs, named
``<component>-<key>``, in-cluster objects through the cluster's provider after what they wait for."""

from __future__ import annotations

import json
import textwrap

import pytest

from batchplane.offline import ProgramRun, run_program
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow

PROGRAM = """
    import pulumi
    import pulumi_kubernetes as k8s
    from pathlib import Path
    from batchplane.components.dashboards import Dashboards, DashboardsArgs
    from batchplane.config.dashboards import DashboardsConfig
    from batchplane.observability.dashboards import dashboards_plan
    from batchplane.stack import load_stack_file

    kind = load_stack_file(Path({stacks!r}) / "Pulumi.kind.yaml", "kind")
    gke = load_stack_file(Path({stacks!r}) / "Pulumi.gke-dws.yaml", "gke-dws")
    provider = k8s.Provider("k8s")
    ready = k8s.core.v1.Namespace("kueue-ns", metadata={{"name": "kueue-system"}}, opts=pulumi.ResourceOptions(provider=provider))
    Dashboards("sidecar", DashboardsArgs(plan=dashboards_plan(kind, DashboardsConfig()), provider=provider, depends_on=[ready]))
    Dashboards("operator", DashboardsArgs(plan=dashboards_plan(kind, DashboardsConfig(delivery="grafana-operator")), provider=provider))
    Dashboards("cloud", DashboardsArgs(plan=dashboards_plan(gke, DashboardsConfig())))
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    project = tmp_path_factory.mktemp("dashboards")
    (project / "Pulumi.yaml").write_text("name: batchplane\nruntime: python\n", encoding="utf-8")
    (project / "__main__.py").write_text(
        textwrap.dedent(PROGRAM).format(stacks=str(REPO_ROOT / "templates")), encoding="utf-8"
    )
    return run_program(project, "dashboards", {})


def test_configmap_delivery_declares_one_labelled_configmap_per_dashboard_after_its_namespace(
    run: ProgramRun,
) -> None:
    component = run.get("batchplane:observability:Dashboards", "sidecar")
    children = run.children(component.urn)
    assert [c.name for c in children] == [
        "sidecar-overview",
        "sidecar-cq-cluster-queue",
        "sidecar-capacity",
        "sidecar-webhook",
    ]
    namespace = run.get("kubernetes:core/v1:Namespace", "kueue-ns")
    provider = run.get("pulumi:providers:kubernetes", "k8s")
    for child in children:
        assert child.type == "kubernetes:core/v1:ConfigMap"
        assert child.inputs["metadata"]["labels"]["grafana_dashboard"] == "1"
        assert namespace.urn in child.dependencies
        assert child.provider_urn == provider.urn
    assert run.component_outputs[component.urn]["delivery"] == "configmap"


def test_grafana_operator_delivery_declares_grafana_dashboards(run: ProgramRun) -> None:
    component = run.get("batchplane:observability:Dashboards", "operator")
    types = {c.type for c in run.children(component.urn)}
    assert types == {"kubernetes:grafana.integreatly.org/v1beta1:GrafanaDashboard"}


def test_cloud_monitoring_delivery_declares_gcp_dashboards_with_prometheus_queries(run: ProgramRun) -> None:
    component = run.get("batchplane:observability:Dashboards", "cloud")
    children = run.children(component.urn)
    assert {c.type for c in children} == {"gcp:monitoring/dashboard:Dashboard"}
    overview = json.loads(next(c for c in children if c.name == "cloud-overview").inputs["dashboardJson"])
    tile = overview["mosaicLayout"]["tiles"][0]
    assert "prometheusQuery" in tile["widget"]["xyChart"]["dataSets"][0]["timeSeriesQuery"]

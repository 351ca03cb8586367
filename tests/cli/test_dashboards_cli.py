"""``batchplane dashboards``: one file per dashboard in the asked format, exit codes as every subcommand."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.observability.dashboards import dashboard_specs
from batchplane.stack import load_stack_file
from tests.conftest import TEMPLATES_DIR

runner = CliRunner()


def test_grafana_format_writes_one_importable_json_file_per_dashboard(tmp_path: Path) -> None:
    result = runner.invoke(app, ["dashboards", "--stack", "kind", "--output", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    specs = dashboard_specs(load_stack_file(TEMPLATES_DIR / "Pulumi.kind.yaml", "kind"))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(f"{s.key}.json" for s in specs)
    for spec in specs:
        model = json.loads((tmp_path / "out" / f"{spec.key}.json").read_text(encoding="utf-8"))
        assert model["uid"] == spec.uid and model["title"] == spec.title
        assert len(model["panels"]) == len(spec.panels)


def test_configmap_and_operator_formats_write_apply_ready_yaml(tmp_path: Path) -> None:
    for fmt, kind in (("configmap", "ConfigMap"), ("grafana-operator", "GrafanaDashboard")):
        result = runner.invoke(app, ["dashboards", "-s", "kind", "-o", str(tmp_path / fmt), "--format", fmt])
        assert result.exit_code == 0, result.output
        objects = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted((tmp_path / fmt).iterdir())]
        assert objects and {o["kind"] for o in objects} == {kind}
        assert {o["metadata"]["namespace"] for o in objects} == {"kueue-system"}


def test_cloud_monitoring_format_writes_dashboards_with_prometheus_queries(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["dashboards", "-s", "gke-dws", "-o", str(tmp_path), "-f", "cloud-monitoring"]
    )
    assert result.exit_code == 0, result.output
    overview = json.loads((tmp_path / "overview.json").read_text(encoding="utf-8"))
    assert overview["mosaicLayout"]["tiles"][0]["widget"]["xyChart"]["dataSets"][0]["timeSeriesQuery"][
        "prometheusQuery"
    ].startswith("sum by (cluster_queue)")


def test_an_output_that_is_a_file_is_a_usage_error_and_an_invalid_stack_exits_1(tmp_path: Path) -> None:
    file = tmp_path / "f"
    file.write_text("", encoding="utf-8")
    result = runner.invoke(app, ["dashboards", "-s", "kind", "-o", str(file)])
    assert result.exit_code == 2 and "not a directory" in result.output
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config:\n  batchplane:target: {kind: nowhere}\n", encoding="utf-8")
    result = runner.invoke(app, ["dashboards", "-c", str(bad), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert not (tmp_path / "out").exists()

"""``batchplane appwrapper convert``: output, warnings, exit codes, and ``batchplane requests`` on the result."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from batchplane.cli import app
from tests.appwrapper.test_convert import GLUE, GLUE_BLOG

RUNNER = CliRunner()


def run(*args: str | Path) -> tuple[int, str, str]:
    result = RUNNER.invoke(app, [*map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_converted_glue_example_is_accounted_by_requests(tmp_path: Path) -> None:
    out = tmp_path / "aw.yaml"
    code, stdout, stderr = run("appwrapper", "convert", GLUE, "--queue", "team-a-queue", "--output", out)
    assert (code, stdout) == (0, "")
    assert "warning: custompodresources disagree" in stderr
    code, stdout, _ = run("requests", out)
    assert code == 0
    report = json.loads(stdout)
    assert report["kind"] == "AppWrapper"
    assert report["total"] == {"cpu": "6", "memory": "32G", "nvidia.com/gpu": "1"}


def test_other_documents_pass_through_unchanged(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}
    manifest.write_text(yaml.safe_dump(namespace) + "---\n" + GLUE_BLOG.read_text(encoding="utf-8"))
    code, stdout, _ = run("appwrapper", "convert", manifest)
    assert code == 0
    first, second = yaml.safe_load_all(stdout)
    assert first == namespace
    assert second["apiVersion"] == "workload.codeflare.dev/v1beta2"


def test_unconvertible_fields_exit_1_naming_each_and_print_nothing(tmp_path: Path) -> None:
    obj = yaml.safe_load(GLUE.read_text(encoding="utf-8"))
    obj["spec"]["service"] = {"spec": {"ports": [{"port": 80}]}}
    obj["spec"]["schedulingSpec"] = {"nodeSelector": {"a": "b"}}
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump(obj))
    code, stdout, stderr = run("appwrapper", "convert", manifest)
    assert (code, stdout) == (1, "")
    assert "cannot convert spec.service:" in stderr
    assert "cannot convert spec.schedulingSpec.nodeSelector:" in stderr


def test_a_file_without_mcad_appwrappers_is_a_usage_error(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert run("appwrapper", "convert", manifest)[0] == 2
    assert run("appwrapper", "convert", tmp_path / "missing.yaml")[0] == 2


def test_requests_on_an_mcad_appwrapper_points_at_convert() -> None:
    code, _, stderr = run("requests", GLUE)
    assert code == 1
    assert "convert it with `batchplane appwrapper convert`" in stderr

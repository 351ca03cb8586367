"""Manifests given to `explain`, `requests` and `appwrapper convert`: `-` reads standard input, and a YAML error
names the file (or `<stdin>`), line and column instead of PyYAML's `<unicode string>` (issue #37)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from tests.cli.manifests import job

JOB = job()
#: Line 4, column 7: a mapping value where a plain scalar continues.
BROKEN = "kind: Job\nmetadata:\n  name: x\n   bad: [\n"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_explain_dash_reads_the_manifest_from_stdin_and_answers_as_for_the_file(
    runner: CliRunner, tmp_path: Path
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(JOB, encoding="utf-8")
    from_file = runner.invoke(app, ["explain", str(path), "--stack", "kind"])
    from_stdin = runner.invoke(app, ["explain", "-", "--stack", "kind"], input=JOB)
    assert from_stdin.exit_code == from_file.exit_code == 0, from_stdin.output
    assert from_stdin.stdout == from_file.stdout
    assert from_stdin.stdout.startswith('Job "team-a/sample-job": admitted')


def test_requests_dash_reads_the_manifest_from_stdin(runner: CliRunner) -> None:
    result = runner.invoke(app, ["requests", "-"], input=JOB)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["kind"], report["name"]) == ("Job", "sample-job")


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "{manifest}", "--stack", "kind"],
        ["requests", "{manifest}"],
        ["appwrapper", "convert", "{manifest}"],
    ],
)
def test_a_yaml_error_names_the_file_line_and_column(
    runner: CliRunner, tmp_path: Path, argv: list[str]
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN, encoding="utf-8")
    result = runner.invoke(app, [a.format(manifest=path) for a in argv])
    assert result.exit_code == 2
    assert result.stderr == (
        f"batchplane: {path} is not valid YAML (line 4, column 7): mapping values are not allowed here\n"
    )


@pytest.mark.parametrize("argv", [["explain", "-", "--stack", "kind"], ["requests", "-"]])
def test_a_yaml_error_on_stdin_names_stdin(runner: CliRunner, argv: list[str]) -> None:
    result = runner.invoke(app, argv, input=BROKEN)
    assert result.exit_code == 2
    assert "<unicode string>" not in result.stderr
    assert result.stderr.startswith("batchplane: <stdin> is not valid YAML (line 4, column 7): ")

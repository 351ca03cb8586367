"""`batchplane preflight`: exit 0 ready (warnings allowed), 1 with a blocker, 2 on usage or missing credentials."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.auth.credentials import AnonymousCredentials
from typer.testing import CliRunner

import batchplane.cli.preflight as command
from batchplane.cli import app
from batchplane.preflight import Environment
from tests.preflight.conftest import PROJECT
from tests.preflight.replay import Replay, load


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def recorded(monkeypatch: pytest.MonkeyPatch, *recordings: str) -> Replay:
    replay = Replay(load(*recordings, "gcp/ready.json", "images/ghcr-served.json"))

    def environment(project: str | None) -> Environment:
        return Environment(gcp_credentials=AnonymousCredentials(), gcp_project=project, adapter=replay)

    monkeypatch.setattr(command, "environment", environment)
    return replay


def test_a_fresh_project_exits_1_and_prints_every_blocker_with_path_and_fix(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded(monkeypatch, "gcp/fresh-project.json")
    result = runner.invoke(app, ["preflight", "--stack", "gke-dev", "--project", PROJECT])
    assert result.exit_code == 1, result.output
    blockers = [line for line in result.stdout.splitlines() if line.startswith("blocker:")]
    assert len(blockers) == 5  # the GPU quota of a pool that starts empty is a warning (issue #29)
    assert "  fix: gcloud services enable container.googleapis.com --project bp-demo-123456" in result.stdout
    assert result.stdout.rstrip().endswith("checked: project, api, iam, org-policy, quota, docker)")


def test_json_output_of_a_ready_project_exits_0(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    recorded(monkeypatch)
    result = runner.invoke(app, ["preflight", "--stack", "gke-prod-dws", "--project", PROJECT, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ready"] is True and data["blockers"] == [] and "quota" in data["checked"]


def test_no_application_default_credentials_exits_2(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setenv("NO_GCE_CHECK", "True")  # google-auth: do not probe the metadata server
    result = runner.invoke(app, ["preflight", "--stack", "gke-dev"])
    assert result.exit_code == 2
    assert "gcloud auth application-default login" in result.stderr


def test_a_gke_stack_without_any_project_exits_2(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    recorded(monkeypatch)
    result = runner.invoke(app, ["preflight", "--stack", "gke-dev"])
    assert result.exit_code == 2
    assert "no GCP project" in result.stderr


def test_requirements_print_without_any_call(runner: CliRunner) -> None:
    result = runner.invoke(app, ["preflight", "--stack", "gke-prod-dws", "--requirements"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("## `gke-prod-dws` (gke)")
    assert (
        "| `PREEMPTIBLE_NVIDIA_H100_GPUS` | us-central1 | NVIDIA_H100 | 32 GPUs (0 at deploy) |"
        in result.stdout
    )


def test_an_invalid_stack_exits_1_before_any_check(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(
        "config:\n  batchplane:target: {kind: gke, region: us-central1, gpuPools: 3}\n", encoding="utf-8"
    )
    result = runner.invoke(app, ["preflight", "--config", str(path)])
    assert result.exit_code == 1
    assert "batchplane:target.gpuPools" in result.stderr

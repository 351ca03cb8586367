"""`explain` judges a pod group once, as the one Workload Kueue builds of its Pods."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from batchplane.cli import app
from tests.frameworks.pod_objects import group_pod


def test_a_group_of_three_4_cpu_pods_on_a_9_cpu_queue_gets_one_answer_that_it_never_runs(
    tmp_path: Path,
) -> None:
    manifest = tmp_path / "group.yaml"
    manifest.write_text(yaml.safe_dump_all([group_pod(f"p{i}", {"cpu": "4"}) for i in range(3)]))
    result = CliRunner().invoke(app, ["explain", "--stack", "openshift-ai", str(manifest)])
    assert result.exit_code == 1, result.output
    verdicts = [line for line in result.stdout.splitlines() if line.startswith("Pod ")]
    assert len(verdicts) == 1, result.stdout
    assert verdicts[0].startswith('Pod "team-a/g": never runs')
    assert "12 CPUs" in verdicts[0]


def test_a_group_that_fits_is_admitted_once_with_one_pod_set_of_three(tmp_path: Path) -> None:
    manifest = tmp_path / "group.yaml"
    manifest.write_text(yaml.safe_dump_all([group_pod(f"p{i}", {"cpu": "2"}) for i in range(3)]))
    result = CliRunner().invoke(app, ["explain", "--stack", "openshift-ai", str(manifest)])
    assert result.exit_code == 0, result.output
    verdicts = [line for line in result.stdout.splitlines() if line.startswith("Pod ")]
    assert len(verdicts) == 1 and "admitted" in verdicts[0], result.stdout
    assert "(3 pods)" in result.stdout

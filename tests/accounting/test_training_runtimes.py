"""TrainJobs judged with their runtime: the same file's, `--with`'s, or Kubeflow Trainer's built-in ones the stack's
chart values install (transcribed from kubeflow/trainer v2.3.0 in batchplane.accounting.training_runtimes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from batchplane.accounting import workload_requests
from batchplane.accounting.pod_groups import as_kueue_builds
from batchplane.accounting.training_runtimes import (
    SOURCE,
    SOURCE_COMMIT,
    bundled_runtimes,
    installed_builtin_runtimes,
)
from batchplane.cli import app
from tests.conftest import REPO_ROOT
from tests.explain.workloads import workload

TORCH = bundled_runtimes("2.3.0")["torch-distributed"]


def _trainjob(nodes: int, gpus: str) -> dict[str, Any]:
    job = workload("trainer.kubeflow.org/trainjob", "team-a", "default", {"cpu": "1", "nvidia.com/gpu": gpus})
    job["spec"]["trainer"]["numNodes"] = nodes
    return job


def test_the_transcribed_runtimes_are_trainers_v2_3_0_cluster_training_runtimes_with_their_source() -> None:
    bundled = bundled_runtimes("2.3.0")
    names = {r["metadata"]["name"] for r in bundled.values()}
    assert {"torch-distributed", "deepspeed-distributed", "jax-distributed", "xgboost-distributed"} <= names
    assert {r["kind"] for r in bundled.values()} == {"ClusterTrainingRuntime"}
    assert "/v2.3.0/" in SOURCE and SOURCE_COMMIT == "658725bdae5c7e3a0854d93ac6ff492e109a22ab"


def test_the_chart_installs_no_runtime_by_default_one_when_enabled_and_all_with_default_enabled() -> None:
    assert installed_builtin_runtimes("2.3.0", {}) == []
    one = installed_builtin_runtimes("2.3.0", {"runtimes": {"torchDistributed": {"enabled": True}}})
    assert [r["metadata"]["name"] for r in one] == ["torch-distributed"]
    assert len(installed_builtin_runtimes("2.3.0", {"runtimes": {"defaultEnabled": True}})) == 8
    assert installed_builtin_runtimes(None, {"runtimes": {"defaultEnabled": True}}) == []


def test_a_runtime_in_the_same_file_gives_the_trainjob_its_pod_sets() -> None:
    runtime = TORCH
    docs = as_kueue_builds([_trainjob(2, "16"), runtime])
    workload_ = workload_requests(docs[0])
    assert [(ps.name, ps.count, ps.stored.get("nvidia.com/gpu")) for ps in workload_.pod_sets] == [
        ("node", 2, 16)
    ]


def _explain(tmp_path: Path, documents: list[Any], *args: str, stack: str = "gke-prod-dws") -> Any:
    manifest = tmp_path / "trainjob.yaml"
    manifest.write_text(yaml.safe_dump_all(documents))
    return CliRunner().invoke(app, ["explain", "--stack", stack, str(manifest), *args])


def test_explain_judges_a_trainjob_with_the_runtime_of_its_file(tmp_path: Path) -> None:
    runtime = TORCH
    result = _explain(tmp_path, [_trainjob(2, "16"), runtime])
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith('TrainJob "team-a/trainjob-x": never runs'), result.stdout
    assert "32 GPUs (2 pods × 16)" in result.stdout.splitlines()[0]


def test_explain_with_reads_the_runtime_from_another_file(tmp_path: Path) -> None:
    runtime_file = tmp_path / "runtime.yaml"
    runtime_file.write_text(yaml.safe_dump(TORCH))
    result = _explain(tmp_path, [_trainjob(2, "16")], "--with", str(runtime_file))
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith('TrainJob "team-a/trainjob-x": never runs'), result.stdout


def test_explain_uses_trainers_torch_distributed_when_the_stacks_chart_installs_it(tmp_path: Path) -> None:
    text = (REPO_ROOT / "templates" / "Pulumi.gke-prod-dws.yaml").read_text(encoding="utf-8")
    enabled = text.replace(
        "training: {kind: trainer-v2, version: 2.3.0}",
        "training: {kind: trainer-v2, version: 2.3.0, values: {runtimes: {torchDistributed: {enabled: true}}}}",
    )
    assert enabled != text
    (tmp_path / "Pulumi.runtimes.yaml").write_text(enabled)
    manifest = tmp_path / "trainjob.yaml"
    manifest.write_text(json.dumps(_trainjob(2, "16")))
    result = CliRunner().invoke(
        app, ["explain", "--config", str(tmp_path / "Pulumi.runtimes.yaml"), str(manifest)]
    )
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith('TrainJob "team-a/trainjob-x": never runs'), result.stdout
    without = _explain(tmp_path, [_trainjob(2, "16")])  # the template's chart installs no runtime
    assert "is not known" in without.stdout

"""``batchplane upgrade plan`` on recorded cluster answers, through the real kubernetes client against a local
server on 127.0.0.1 (tests/preflight/replay.py): 0.13.1 → 0.19.2, 0.16.3 → 0.19.2, a no-op, and skips refused."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.stack.model import Stack
from batchplane.upgrade.cluster import ClusterState, read_cluster
from batchplane.upgrade.plan import UpgradePlan, plan
from tests.preflight.conftest import template
from tests.preflight.olm_helpers import kubeconfig
from tests.preflight.replay import RecordedServer

RECORDINGS = Path(__file__).resolve().parent / "recordings"
runner = CliRunner()


def _load(name: str) -> list[dict[str, object]]:
    exchanges: list[dict[str, object]] = json.loads((RECORDINGS / name).read_text(encoding="utf-8"))
    return exchanges


def _read(name: str) -> ClusterState:
    from kubernetes import config

    with RecordedServer(_load(name)) as server, tempfile.TemporaryDirectory() as tmp:
        client = config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=str(kubeconfig(Path(tmp), server.url, "ctx")), context="ctx"
        )
        state = read_cluster(client, "kueue-system", "kuberay-system")
        assert server.replay.unmatched == []
    return state


def _plan(stack: Stack, recording: str) -> UpgradePlan:
    return plan(stack, _read(recording), crds_read=True)


def _keys(result: UpgradePlan) -> list[str]:
    return [p.step.key for p in result.steps]


def test_the_reader_takes_versions_from_images_and_stored_versions_from_crd_status() -> None:
    state = _read("kueue-0.16.3.json")
    assert state.versions == {"kueue": (0, 16, 3), "kuberay": (1, 7, 0)}
    workloads = state.crds["workloads.kueue.x-k8s.io"]
    assert (workloads.served, workloads.storage, workloads.stored) == (
        ("v1beta1", "v1beta2"),
        "v1beta2",
        ("v1beta1", "v1beta2"),
    )
    assert state.topologies == 2 and state.configuration is not None
    assert "waitForPodsReady" not in state.configuration


def test_0_13_1_to_0_19_2_lists_each_release_step_and_refuses_until_the_topology_crd_is_replaced() -> None:
    result = _plan(template("gke-dev"), "kueue-0.13.1.json")
    assert _keys(result) == [
        "topology-v1alpha1-removed",
        "v1beta2-served",
        "multikueue-insecure-kubeconfigs-rejected",
        "v1beta2-storage-migration",
        "kueue-namespace-excluded",
        "wait-for-pods-ready-default",
        "ray-head-sidecars-counted",
    ]
    [refusal] = result.refusals
    assert "topologies.kueue.x-k8s.io still lists v1alpha1" in refusal
    assert (
        "topology-v1alpha1-removed" in refusal and "kubectl delete crd topologies.kueue.x-k8s.io" in refusal
    )


def test_0_13_1_after_the_topology_crd_was_backed_up_and_deleted_may_run_with_the_remaining_steps() -> None:
    result = _plan(template("gke-dev"), "kueue-0.13.1-topology-crd-deleted.json")
    assert result.refusals == []
    assert "topology-v1alpha1-removed" not in _keys(result) and "wait-for-pods-ready-default" in _keys(result)
    # every object is stored as v1beta1 at 0.13.1: after 0.19.2 runs, they are rewritten as v1beta2
    assert "v1beta2-storage-migration" in _keys(result)
    assert result.current["kueue"] == (0, 13, 1) and result.target["kueue"] == (0, 19, 2)


def test_0_16_3_to_0_19_2_runs_the_storage_migration_because_v1beta1_is_still_stored() -> None:
    result = _plan(template("gke-dev"), "kueue-0.16.3.json")
    assert _keys(result) == [
        "v1beta2-storage-migration",
        "tas-label-no-longer-read",
        "kueue-namespace-excluded",
        "wait-for-pods-ready-default",
        "ray-head-sidecars-counted",
    ]
    assert result.refusals == [] and not result.no_op


def test_a_stack_that_sets_wait_for_pods_ready_is_not_told_about_the_0_19_default() -> None:
    result = _plan(template("kind"), "kueue-0.16.3.json")
    assert "wait-for-pods-ready-default" not in _keys(result)


def test_a_cluster_at_the_pinned_versions_with_v1beta2_stored_is_a_no_op() -> None:
    result = _plan(template("gke-dev"), "kueue-0.19.2.json")
    assert result.steps == [] and result.refusals == [] and result.no_op
    assert "nothing to do" in result.text()


def test_skipping_the_0_13_cohort_step_is_refused_with_the_step_to_run() -> None:
    result = _plan(template("gke-dev"), "kueue-0.12.4.json")
    assert len(result.refusals) == 2
    cohort = next(r for r in result.refusals if r.startswith("cohorts.kueue.x-k8s.io"))
    assert "cohort-v1alpha1-removed" in cohort and "parentName" in cohort
    assert "CHANGELOG-0.13.md#L272-305" in cohort


def test_the_ray_sidecar_notice_is_computed_on_the_stacks_own_cluster_queue_quotas() -> None:
    result = _plan(template("kind"), "kueue-0.16.3.json")
    [ray] = [p for p in result.steps if p.step.key == "ray-head-sidecars-counted"]
    [notice] = ray.notices
    assert notice.startswith("ClusterQueue cluster-queue flavor default-flavor (cpu 4, memory 8Gi)")
    assert "+500m cpu (12.5%) and +512Mi memory (6.2%)" in notice
    assert "+200Mi memory (2.4%)" in notice


def test_offline_from_a_stated_version_plans_without_reading_the_cluster() -> None:
    result = runner.invoke(app, ["upgrade", "plan", "--stack", "gke-dev", "--from", "kueue=0.15.4"])
    assert result.exit_code == 0, result.output
    assert "kueue: 0.15.4 -> 0.19.2" in result.output
    assert "[v0.16.0] v1beta2-storage-migration" in result.output and "offline: needed while" in result.output
    assert "[v0.15.0]" not in result.output


@pytest.mark.parametrize("value", ["kueue", "flux=1.0", "kueue=latest"])
def test_a_bad_from_is_a_usage_error_naming_it(value: str) -> None:
    result = runner.invoke(app, ["upgrade", "plan", "--stack", "gke-dev", "--from", value])
    assert result.exit_code == 2 and value in result.output


def test_the_command_reads_the_cluster_through_the_stack_context_and_exits_1_on_a_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = template("kind")
    with RecordedServer(_load("kueue-0.12.4.json")) as server:
        monkeypatch.setenv(
            "KUBECONFIG", str(kubeconfig(tmp_path, server.url, stack.config.target.kube_context()))
        )
        result = runner.invoke(app, ["upgrade", "plan", "--stack", "kind"])
    assert result.exit_code == 1, result.output
    assert "kueue: 0.12.4 -> 0.19.2" in result.output and "REFUSED: cohorts.kueue.x-k8s.io" in result.output

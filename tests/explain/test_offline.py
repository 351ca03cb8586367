"""`batchplane explain --stack ENV MANIFEST.yaml`: every template × every framework it enables (issue #31)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.explain.offline import OfflineExplainer
from batchplane.stack import load_stack_file
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES
from tests.explain.workloads import DEFAULT_FRAMEWORKS, workload

SMALL = {"cpu": "100m", "memory": "128Mi"}
HUGE = {"cpu": "100000"}

#: Per template: (ClusterQueue, the flavor a small pod gets, the cpu quota's line; the flavor a 100000-CPU pod is
#: quoted on, its most CPUs, the key that sets it and its line).
EXPECTED = {
    "gke-dev": ("ml", "default-flavor", 33, "l4-flex", "8 CPUs", "batchplane:teams.members[0].quotas.l4-flex.cpu", 34),
    "gke-dws": ("cluster-queue", "default-flavor", 56, "gpu-node-pool", "40 CPUs",
                "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[1].resources[0]", 64),
    "gke-multiregion-dws": ("team-a", "default-flavor", 49, "l4", "96 CPUs",
                            "batchplane:teams.members[0].quotas.l4.cpu", 50),
    "gke-a3-mega-tas": ("team-a", "default-flavor", 76, "h100-res", "832 CPUs",
                        "batchplane:teams.members[0].quotas.h100-res.cpu", 77),
    "gke-prod-dws": ("team-a", "default-flavor", 69, "h100", "400 CPUs", "batchplane:teams.members[0].quotas.h100.cpu", 71),
    "kind": ("cluster-queue", "default-flavor", 34, "default-flavor", "4 CPUs",
             "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0]", 34),
    "openshift-ai": ("cluster-queue", "default-flavor", 34, "default-flavor", "9 CPUs",
                     "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0]", 34),
    "openshift-ai-2": ("cluster-queue", "default-flavor", 43, "default-flavor", "9 CPUs",
                       "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0]", 43),
    "openshift-ai-gpu": ("team-a", "default-flavor", 68, "a10g", "28 CPUs",
                         "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[1].resources[0]", 73),
}  # fmt: skip


def _explainer(template: str) -> OfflineExplainer:
    path = Path("templates") / f"Pulumi.{template}.yaml"
    return OfflineExplainer(load_stack_file(REPO_ROOT / path), path)


def _cases() -> list[tuple[str, str]]:
    out = []
    for template in TEMPLATE_NAMES:
        frameworks = _explainer(template).decider.policy.kueue.frameworks or DEFAULT_FRAMEWORKS
        out += [(template, f) for f in frameworks if f != "ray.io/rayservice"]
    return out


CASES = _cases()


def test_every_template_has_an_expectation() -> None:
    assert sorted(EXPECTED) == sorted(TEMPLATE_NAMES)


def _line(template: str, number: int) -> str:
    return (REPO_ROOT / "templates" / f"Pulumi.{template}.yaml").read_text().splitlines()[number - 1]


@pytest.mark.parametrize(("template", "framework"), CASES, ids=[f"{t}-{f.split('/')[-1]}" for t, f in CASES])
def test_each_framework_on_each_template_gets_the_expected_sentence_and_stack_lines(
    template: str, framework: str
) -> None:
    explainer = _explainer(template)
    namespace, tenant = next(iter(explainer.decider.policy.namespaces.items()))
    queue = next(iter(tenant.local_queues))
    cq, flavor, cpu_line, big_flavor, most, key, key_line = EXPECTED[template]
    small = explainer.explain(workload(framework, namespace, queue, SMALL))
    if framework == "trainer.kubeflow.org/trainjob":  # the webhook cannot account it without its runtime
        assert small.verdict == "not-checked" and small.sentence.startswith("not checked: quota not checked")
        return
    assert small.verdict == "admitted"
    assert small.sentence.startswith(f"admitted on {flavor} within {cq}'s own quota")
    cpu = next(q for q in small.quota if q.resource == "cpu")
    assert (cpu.flavor, cpu.location) == (flavor, f"templates/Pulumi.{template}.yaml:{cpu_line}")
    assert "cpu" in _line(template, cpu_line)
    huge = explainer.explain(workload(framework, namespace, queue, HUGE))
    assert huge.verdict == "never-runs" and huge.reason == "never-admissible"
    assert huge.sentence.startswith(f"never runs: {cq} can get at most {most} on {big_flavor} (")
    assert f"this {huge.kind} asks for 100000 CPUs" in huge.sentence
    assert huge.keys == [f"{key} (templates/Pulumi.{template}.yaml:{key_line})"]
    assert "cpu" in _line(template, key_line)


def test_the_cli_prints_the_40_gpu_sentence_first_and_exits_1(tmp_path: Path) -> None:
    from tests.explain.test_sentences import rayjob

    manifest = tmp_path / "m.yaml"
    manifest.write_text(json.dumps(rayjob(5, 8)))
    result = CliRunner().invoke(app, ["explain", "--stack", "gke-prod-dws", str(manifest)])
    assert result.exit_code == 1, result.output
    first = result.stdout.splitlines()[0]
    assert first == (
        'RayJob "team-a/train": never runs: team-a can get at most 16 GPUs on h100 (8 of its own + 8 borrowed from '
        "cohort ml), none on default-flavor and 8 GPUs on l4; this RayJob asks for 40 GPUs (5 workers × 8) — ask for "
        "at most 2 workers of 8 GPUs"
    )
    assert "set by: batchplane:teams.members[0].quotas.h100.nvidia.com/gpu (" in result.stdout
    assert "Pulumi.gke-prod-dws.yaml:73)" in result.stdout


def test_borrowing_runs_now_names_the_lenders_that_can_reclaim_and_the_dws_check(tmp_path: Path) -> None:
    # It runs at once on an empty cluster by borrowing: "waits for quota" (the old verdict) said the opposite.
    explainer = _explainer("gke-prod-dws")
    job = workload("batch/job", "team-a", "default", {"cpu": "1", "nvidia.com/gpu": "8"})
    job["spec"]["parallelism"] = job["spec"]["completions"] = 2
    e = explainer.explain(job)
    assert e.verdict == "borrows"
    assert e.sentence.startswith(
        "runs now by borrowing 8 GPUs from cohort ml (it needs 16 on h100, its queue has 8 of its own) — it can be "
        "preempted when team-b and team-c reclaim them (on an empty cluster it is admitted on h100)"
    )
    webhook = explainer.decider.validate(job, "team-a")  # the same sentence, as the webhook's warning
    assert (webhook.allowed, webhook.reason, webhook.warnings[0]) == (
        True,
        "borrows",
        e.sentence.split(" (on an")[0],
    )
    (check,) = e.admission_checks
    assert check.startswith("a DWS ProvisioningRequest (AdmissionCheck h100-dws)")
    assert "removes them after 1 day (maxRunDurationSeconds; at most 7 days" in check
    gpu = next(q for q in e.quota if q.resource == "nvidia.com/gpu")
    assert (gpu.used, gpu.nominal, gpu.borrowed, gpu.maximum) == ("16", "8", "8", "16")
    assert "reclaimWithinCohort: Any" in e.preemption and "withinClusterQueue: LowerPriority" in e.preemption
    manifest = tmp_path / "m.yaml"
    manifest.write_text(json.dumps(job))
    result = CliRunner().invoke(app, ["explain", "--stack", "gke-prod-dws", str(manifest), "--json"])
    assert result.exit_code == 0, result.output
    (data,) = json.loads(result.stdout)
    assert data["verdict"] == "borrows" and data["pod_sets"][0]["flavors"] == ["h100"]


def test_a_skipped_flavor_carries_kueues_reason() -> None:
    e = _explainer("gke-prod-dws").explain(
        workload("batch/job", "team-a", "default", {"cpu": "1", "nvidia.com/gpu": "1"})
    )
    (ps,) = e.pod_sets
    assert ps.flavors == ["h100"]
    assert ps.skipped == [
        "insufficient quota for nvidia.com/gpu in flavor default-flavor, previously considered podsets requests (0) "
        "+ current podset request (1) > maximum capacity (0)"
    ]


def test_unlabelled_outside_tenants_is_not_managed() -> None:
    e = _explainer("kind").explain(workload("batch/job", "elsewhere", "default", SMALL))
    assert e.verdict == "not-managed" and e.sentence.startswith(
        "not managed by Kueue here: namespace elsewhere"
    )


def test_a_manifest_without_workloads_is_a_usage_error(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    result = CliRunner().invoke(app, ["explain", "--stack", "kind", str(manifest)])
    assert result.exit_code == 2 and "holds no workload" in result.stderr


# --- properties: explain's verdicts are the webhook's and Kueue's --------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from batchplane.explain.offline import classify  # noqa: E402
from batchplane.webhook.capacity import check_workload_ever_fits  # noqa: E402
from batchplane.webhook.flavors import compile_flavors  # noqa: E402
from batchplane.webhook.queues import compile_queues  # noqa: E402
from tests.webhook import kueue_reference  # noqa: E402
from tests.webhook.test_quota import _scenario_demands, _scenario_policy, scenarios  # noqa: E402


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_explain_splits_admit_wait_never_as_the_kueue_reference_on_an_empty_queue(
    data: st.DataObject,
) -> None:
    s = data.draw(scenarios("Flavor"))
    policy = _scenario_policy(s)
    queue, flavors = compile_queues(policy)["a"], compile_flavors(policy)
    wanted = _scenario_demands(s)
    verdict, _ = classify(wanted, queue, flavors)
    refused = any(x.kind != "unmodelled" for x in check_workload_ever_fits(wanted, queue, flavors))
    assert (verdict == "never-runs") == refused  # the webhook's refusal, the same function
    admitted, attempts = kueue_reference.admitted_in_empty_cohort(s)
    if verdict == "not-checked":
        return
    assert (verdict != "never-runs") == admitted
    if admitted:
        used: dict[tuple[str, str], int] = {}
        for ps, chosen in zip(s["pod_sets"], attempts[-1]["flavors"], strict=True):
            for r, f in chosen.items():
                used[(f, r)] = used.get((f, r), 0) + ps["per_pod"][r] * ps["count"]
        nominal = s["cqs"]["a"]["quotas"]
        borrows = any(v > nominal.get(f, {}).get(r, {}).get("nominal", 0) for (f, r), v in used.items())
        assert verdict == ("borrows" if borrows else "admitted")


def test_a_kind_whose_integration_is_off_is_named_not_checked_in_a_mixed_file_never_dropped() -> None:
    from batchplane.explain.offline import explain_documents

    explainer = _explainer("kind")
    mpijob = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "m", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "default"}},
        "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {"containers": []}}}}},
    }
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "team-a"}}
    job = workload("batch/job", "team-a", "default", {"cpu": "1"})
    got = explain_documents(explainer, [job, mpijob, config])
    assert [(e.kind, e.verdict) for e in got] == [("Job", "admitted"), ("MPIJob", "not-checked")]
    assert got[1].sentence == (
        "not checked: MPIJob — the kubeflow.org/mpijob integration is not enabled on this stack, so Kueue ignores "
        "its queue label"
    )


def test_explain_says_a_whole_g2_standard_4_pod_never_runs_naming_allocatable(tmp_path: Path) -> None:
    from tests.webhook.test_decisions_allocatable import _job

    manifest = tmp_path / "m.yaml"
    manifest.write_text(json.dumps(_job("4", "16Gi")))
    result = CliRunner().invoke(app, ["explain", "--stack", "gke-dev", str(manifest)])
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[0] == (
        'Job "ml/batchplane-diff-probe": never runs: one pod asks for 4 CPUs, but the largest node flavor l4-flex '
        "runs on (g2-standard-4) has 3920m CPU allocatable, less what its DaemonSets request — ask for at most 3920m "
        "CPU per pod and use more pods"
    )

"""The sentence generator: what a denial, a diff row and `explain` lead with (issue #31)."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.explain.sentences import amount, lead_resource, noun
from batchplane.webhook.decisions import Decider
from batchplane.webhook.queues import Demand
from tests.webhook.conftest import stack_policy

PROD = "gke-prod-dws"


def rayjob(
    workers: int, gpus: int, cpu: str = "16", memory: str = "64Gi", selector: str | None = None
) -> dict[str, Any]:
    """A RayJob in team-a's default queue: a small head and ``workers`` workers of ``gpus`` GPUs each."""
    worker_spec: dict[str, Any] = {
        "containers": [
            {
                "name": "worker",
                "image": "rayproject/ray:2.52.0",
                "resources": {
                    "requests": {"cpu": cpu, "memory": memory, "nvidia.com/gpu": str(gpus)},
                    "limits": {"nvidia.com/gpu": str(gpus)},
                },
            }
        ]
    }
    if selector is not None:
        worker_spec["nodeSelector"] = {"cloud.google.com/gke-nodepool": selector}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "train", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "default"}},
        "spec": {
            "entrypoint": "python train.py",
            "shutdownAfterJobFinishes": True,
            "rayClusterSpec": {
                "headGroupSpec": {
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [{"name": "head", "image": "rayproject/ray:2.52.0",
                                                          "resources": {"requests": {"cpu": "1", "memory": "4Gi"}}}]}},
                },
                "workerGroupSpecs": [
                    {"groupName": "workers", "replicas": workers, "minReplicas": workers, "maxReplicas": workers,
                     "rayStartParams": {}, "template": {"spec": worker_spec}}
                ],
            },
        },
    }  # fmt: skip


@pytest.fixture(scope="module")
def prod() -> Decider:
    return Decider(stack_policy(PROD))


def test_the_40_gpu_rayjob_is_refused_with_the_gpus_the_team_can_get_and_what_to_ask_for(
    prod: Decider,
) -> None:
    decision = prod.validate(rayjob(5, 8), "team-a")
    assert (decision.allowed, decision.reason) == (False, "never-admissible")
    assert decision.lead == (
        "never runs: team-a can get at most 16 GPUs on h100 (8 of its own + 8 borrowed from cohort ml), none on "
        "default-flavor and 8 GPUs on l4; this RayJob asks for 40 GPUs (5 workers × 8) — ask for at most 2 workers "
        "of 8 GPUs"
    )
    assert decision.message.startswith(decision.lead + '. RayJob "team-a/train": can never be admitted')
    assert decision.message.endswith(
        "(stack key: batchplane:teams.members[0].quotas.h100.nvidia.com/gpu; see docs/submitting-jobs.md)"
    )
    assert "nvidia.com/gpu 40 (5 pods × 8)" in decision.details


def test_the_suggestion_is_admitted(prod: Decider) -> None:
    """What the sentence says to ask for is what the webhook then allows."""
    assert prod.validate(rayjob(2, 8), "team-a").allowed


def test_on_l4_the_sentence_quotes_the_gpus_asked_for_not_the_cpu_that_is_short_too(prod: Decider) -> None:
    # On l4 both cpu (5 × 16 > 64) and nvidia.com/gpu (5 × 8 > 8) are short; Kueue's message names cpu (the first
    # resource of the group), the sentence the GPUs the user asked for.
    decision = prod.validate(rayjob(5, 8, selector="l4"), "team-a")
    assert decision.reason == "never-admissible"
    assert 'flavor "l4" offers at most cpu 64' in decision.details
    assert decision.lead.startswith(
        "never runs: team-a can get at most 8 GPUs on l4 (4 of its own + 4 borrowed"
    )
    assert "this RayJob asks for 40 GPUs (5 workers × 8)" in decision.lead


def test_without_a_gpu_request_the_sentence_quotes_the_flavor_holding_most_of_the_pod(prod: Decider) -> None:
    job = rayjob(1, 1)
    job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "500", "memory": "1Gi"}
    }
    decision = prod.validate(job, "team-a")
    assert decision.reason == "never-admissible"
    assert decision.lead == (
        "never runs: team-a can get at most 400 CPUs on h100 (200 of its own + 200 borrowed from cohort ml), "
        "12 CPUs on default-flavor and 64 CPUs on l4; this RayJob asks for 500 CPUs — no number of workers fits: "
        "the head pod and the submitter pod alone never fit team-a; give each head pod at most 207410m CPU"
    )
    # followed, it is admitted (one a3-highgpu-8g node offers pods 207410m CPU; the old advice counted the head alone)
    head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    head["resources"]["requests"]["cpu"] = "207410m"
    assert prod.validate(job, "team-a").allowed
    assert decision.message.endswith(
        "(stack key: batchplane:teams.members[0].quotas.h100.cpu; see docs/submitting-jobs.md)"
    )


def test_a_single_pod_larger_than_every_h100_node_never_runs_naming_the_machine_type(prod: Decider) -> None:
    from batchplane.diff.decisions import job_shape

    decision = prod.validate(job_shape("team-a", "default", 16), "team-a")
    assert (decision.allowed, decision.reason) == (False, "larger-than-any-node")
    assert decision.lead == (
        "never runs: one pod asks for 16 GPUs, but the largest node flavor h100 runs on (a3-highgpu-8g) has 8 GPUs "
        "— ask for at most 8 GPUs per pod and use more pods"
    )
    assert "stack key: batchplane:target.gpuPools[0].machineType" in decision.message
    assert prod.validate(job_shape("team-a", "default", 8), "team-a").allowed


def test_a_flavor_without_known_nodes_makes_no_node_claim() -> None:
    """The same 16-GPU pod, with h100's pool unknown to the policy: nothing is claimed about nodes."""
    from batchplane.diff.decisions import job_shape
    from batchplane.webhook.policy import parse_policy

    data = stack_policy(PROD).model_dump(by_alias=True, mode="json")
    data["resourceFlavors"]["h100"]["nodes"] = []
    decision = Decider(parse_policy(data)).validate(job_shape("team-a", "default", 16), "team-a")
    # 16 GPUs on team-a's 8 of its own: admitted by borrowing (reason "borrows" since issue #37; it was "ok")
    assert (decision.allowed, decision.reason) == (True, "borrows")


def test_the_lead_resource_rule() -> None:
    demand = Demand("workers", 5, {"cpu": 80_000, "nvidia.com/gpu": 40}, {})
    assert (
        lead_resource(["cpu", "nvidia.com/gpu"], demand, {"cpu": 64_000, "nvidia.com/gpu": 8})
        == "nvidia.com/gpu"
    )
    assert lead_resource(["cpu", "memory"], demand, {"cpu": 16_000, "memory": 10**12}) == "cpu"
    with pytest.raises(ValueError):
        lead_resource([], demand, {})


@pytest.mark.parametrize(
    ("resource", "stored", "text"),
    [("nvidia.com/gpu", 16, "16 GPUs"), ("nvidia.com/gpu", 1, "1 GPU"), ("cpu", 64_000, "64 CPUs"),
     ("cpu", 1000, "1 CPU"), ("cpu", 500, "500m CPU"), ("memory", 16 * 2**30, "16Gi of memory"),
     ("pods", 3, "3 pods"), ("example.com/fpga", 2, "example.com/fpga 2")],
)  # fmt: skip
def test_amounts_read_in_the_unit_asked(resource: str, stored: int, text: str) -> None:
    assert amount(resource, stored) == text


def test_pod_nouns() -> None:
    assert noun("small-group", 2, "RayCluster") == "workers"
    assert noun("head", 1, "RayJob") == "head pod"
    assert noun("main", 3, "Job") == "pods"
    assert noun("worker", 1, "PyTorchJob") == "worker"


def test_an_extended_resource_is_quoted_with_its_name_and_numbers() -> None:
    from tests.webhook.conftest import one_queue

    decider = Decider(one_queue({"cpu": "8", "example.com/fpga": "2"}))
    job = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "f", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"parallelism": 3, "completions": 3, "template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1", "example.com/fpga": "1"},
                                                              "limits": {"example.com/fpga": "1"}}}]}}},
    }  # fmt: skip
    decision = decider.validate(job, "team-a")
    assert decision.lead == (
        "never runs: cq can get at most example.com/fpga 2 on f (2 of its own, no cohort to borrow from); this Job "
        "asks for example.com/fpga 3 (3 pods × 1) — ask for at most 2 pods of example.com/fpga 1"
    )


def test_podsets_that_fit_one_by_one_but_not_together_are_quoted_in_all() -> None:
    from tests.webhook.conftest import one_queue

    decider = Decider(one_queue({"cpu": "4"}))
    job = rayjob(1, 0)
    job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "lq"
    job["spec"]["submissionMode"] = "HTTPMode"  # no submitter pod
    cluster = job["spec"]["rayClusterSpec"]
    for part in (cluster["headGroupSpec"], cluster["workerGroupSpecs"][0]):
        part["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "3"}}
    decision = decider.validate(job, "team-a")
    assert decision.reason == "never-admissible"
    assert decision.lead == (
        "never runs: this RayJob asks for 6 CPUs in all (head 3, workers 3) and cq can get at most 4 CPUs on f — "
        "give each worker at most 1 CPU"
    )
    # the old advice ("at most 4 CPUs in all, or fewer pods") named no PodSet; this one, followed, is admitted
    cluster["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "1"}
    }
    assert decider.validate(job, "team-a").allowed


def test_a_resource_the_queue_has_no_quota_for_is_named() -> None:
    from tests.webhook.conftest import one_queue

    job = rayjob(1, 0)
    job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "lq"
    decision = Decider(one_queue({"cpu": "40"})).validate(job, "team-a")
    assert decision.lead == (
        "never runs: cq has no quota at all for memory, which this RayJob asks for — drop that request, or ask the "
        "platform team for quota on it"
    )

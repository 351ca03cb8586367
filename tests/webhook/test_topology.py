"""The webhook's topology-aware scheduling refusals (:mod:`batchplane.webhook.topology`) on a table of annotated jobs.

Each row's expected answer is Kueue's own: ``kubernetes-sigs/kueue`` v0.19.2
``pkg/controller/jobframework/tas_validation.go`` (``ValidateTASPodSetRequest`` L34-116,
``ValidateSliceSizeAnnotationUpperBound`` L170-194, ``ValidatePodSetGroupingTopology`` L214-302) for what Kueue's
webhook refuses, and ``pkg/cache/scheduler/tas_flavor_snapshot.go`` L934-944 ("no requested topology level") for a
level the queue's Topologies do not have.
"""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.components.quota_webhook.policy import render_policy
from batchplane.stack import load_stack
from batchplane.webhook.decisions import Decider
from tests.gke.conftest import a3_ultra_with
from tests.webhook.conftest import job

P = "target__gpuPools__0__"
REQ = "kueue.x-k8s.io/podset-required-topology"
PREF = "kueue.x-k8s.io/podset-preferred-topology"
UNC = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE = "kueue.x-k8s.io/podset-slice-required-topology"
SIZE = "kueue.x-k8s.io/podset-slice-size"
GROUP = "kueue.x-k8s.io/podset-group-name"
BLOCK = "cloud.google.com/gce-topology-block"
HOST = "cloud.google.com/gce-topology-host"
HOSTNAME = "kubernetes.io/hostname"


def _stack(topology: bool) -> dict[str, Any]:
    return a3_ultra_with(**({P + "topology": {}} if topology else {}))


@pytest.fixture(scope="module")
def tas() -> Decider:
    return Decider(render_policy(load_stack(_stack(True))))


def gpu_job(annotations: dict[str, str], pods: int = 2) -> dict[str, Any]:
    obj = job(parallelism=pods, requests={"nvidia.com/gpu": "8"})
    obj["spec"]["completions"] = pods
    obj["spec"]["template"]["metadata"] = {"annotations": annotations}
    return obj


def ray_job(head: dict[str, str], workers: dict[str, str], replicas: int = 2) -> dict[str, Any]:
    def group(annotations: dict[str, str], gpus: str) -> dict[str, Any]:
        return {
            "metadata": {"annotations": annotations},
            "spec": {
                "containers": [
                    {
                        "name": "ray",
                        "image": "rayproject/ray",
                        "resources": {"requests": {"nvidia.com/gpu": gpus, "cpu": "1"}},
                    }
                ]
            },
        }

    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "rj", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {
            "entrypoint": "python train.py",
            "shutdownAfterJobFinishes": True,
            "submissionMode": "HTTPMode",
            "rayClusterSpec": {
                "headGroupSpec": {"template": group(head, "0")},
                "workerGroupSpecs": [
                    {
                        "groupName": "gpu",
                        "replicas": replicas,
                        "minReplicas": replicas,
                        "maxReplicas": replicas,
                        "template": group(workers, "8"),
                    }
                ],
            },
        },
    }


# (annotations of a 2-pod Job, the reason, a piece of Kueue's message that the details must carry)
JOB_TABLE = [
    ({REQ: BLOCK}, None, ""),
    ({PREF: HOST}, None, ""),
    ({UNC: "true"}, None, ""),
    ({SLICE: HOST, SIZE: "1", PREF: BLOCK}, None, ""),
    (
        {REQ: BLOCK, PREF: HOST},
        "invalid-topology-request",
        "must not contain more than one topology annotation",
    ),
    (
        {REQ: BLOCK, UNC: "true"},
        "invalid-topology-request",
        "must not contain more than one topology annotation",
    ),
    ({UNC: "yes"}, "invalid-topology-request", f"{UNC}: must be a boolean value"),
    ({REQ: "not a label!"}, "invalid-topology-request", f'PodSet "main": {REQ}: '),
    ({SLICE: HOST}, "invalid-topology-request", f"{SIZE}: must be set when '{SLICE}' is specified"),
    ({SIZE: "1"}, "invalid-topology-request", f"{SIZE}: may not be set when '{SLICE}' is not specified"),
    ({SLICE: HOST, SIZE: "x"}, "invalid-topology-request", f"{SIZE}: must be a numeric value"),
    ({SLICE: HOST, SIZE: "0"}, "invalid-topology-request", f"{SIZE}: must be greater than or equal to 1"),
    (
        {SLICE: HOST, SIZE: "3"},
        "invalid-topology-request",
        f"{SIZE}: must not be greater than pod set count 2",
    ),
    (
        {GROUP: "g"},
        "invalid-topology-request",
        f"{GROUP}: may not be set when neither '{PREF}' nor '{REQ}' is specified",
    ),
    ({GROUP: "12", REQ: BLOCK}, "invalid-topology-request", f"{GROUP}: must not be a number"),
    (
        {GROUP: "g", REQ: BLOCK, SLICE: HOST, SIZE: "1"},
        "invalid-topology-request",
        f"{GROUP}: may not be set when '{SIZE}' is specified",
    ),
    ({REQ: "example.com/rack"}, "unknown-topology-level", "no requested topology level: example.com/rack"),
    ({PREF: "example.com/rack"}, "unknown-topology-level", "no requested topology level: example.com/rack"),
]


@pytest.mark.parametrize(("annotations", "reason", "piece"), JOB_TABLE)
def test_a_jobs_topology_annotations_get_kueues_answer(
    tas: Decider, annotations: dict[str, str], reason: str | None, piece: str
) -> None:
    decision = tas.validate(gpu_job(annotations), "team-a", "CREATE")
    if reason is None:
        assert decision.allowed, decision.message
        return
    assert not decision.allowed
    assert decision.reason == reason
    assert piece in decision.details
    assert decision.message.startswith(decision.lead)
    assert decision.lead.startswith(("refused by Kueue: PodSet main", "never runs:"))


def test_an_unknown_level_is_refused_naming_the_levels_that_exist(tas: Decider) -> None:
    decision = tas.validate(gpu_job({REQ: "example.com/rack"}), "team-a", "CREATE")
    assert decision.lead == (
        "never runs: no Topology of this queue has the level example.com/rack; use one of "
        f"{BLOCK}, cloud.google.com/gce-topology-subblock, {HOST}, {HOSTNAME}"
    )


def test_a_topology_request_on_a_queue_without_a_topology_aware_flavor_never_runs() -> None:
    plain = Decider(render_policy(load_stack(_stack(False))))
    decision = plain.validate(gpu_job({PREF: HOST}), "team-a", "CREATE")
    assert decision.reason == "unknown-topology-level"
    assert decision.lead.startswith("never runs: PodSet main asks for topology " + HOST)
    assert plain.validate(gpu_job({}), "team-a", "CREATE").allowed


# RayJob: Kueue's webhook also checks PodSet groups (raycluster_webhook.go L238).
RAY_TABLE = [
    ({GROUP: "g", REQ: BLOCK}, {GROUP: "g", REQ: BLOCK}, 2, None, ""),
    (
        {GROUP: "g", REQ: BLOCK},
        {},
        2,
        "invalid-topology-request",
        "can only define groups of exactly 2 pod sets, got: 1 pod set(s)",
    ),
    (
        {GROUP: "g", REQ: BLOCK},
        {GROUP: "g", PREF: BLOCK},
        2,
        "invalid-topology-request",
        "topology consistent with PodSet",
    ),
    (
        {GROUP: "g", REQ: BLOCK},
        {GROUP: "g", REQ: HOST},
        2,
        "invalid-topology-request",
        "topology consistent with PodSet",
    ),
]


@pytest.mark.parametrize(("head", "workers", "replicas", "reason", "piece"), RAY_TABLE)
def test_a_rayjobs_podset_groups_get_kueues_answer(
    tas: Decider, head: dict[str, str], workers: dict[str, str], replicas: int, reason: str | None, piece: str
) -> None:
    decision = tas.validate(ray_job(head, workers, replicas), "team-a", "CREATE")
    if reason is None:
        assert decision.allowed, decision.message
        return
    assert not decision.allowed
    assert decision.reason == reason
    assert piece in decision.details


def test_a_plain_job_is_not_checked_for_groups_because_kueues_job_webhook_does_not() -> None:
    from batchplane.accounting import workload_requests
    from batchplane.webhook.topology import group_problems, tas_problems

    pod_sets = workload_requests(gpu_job({GROUP: "g", REQ: BLOCK})).pod_sets
    assert group_problems(pod_sets) != []
    assert tas_problems("Job", pod_sets, [[BLOCK, HOSTNAME]]) == []

"""Advice in refusals is judged over the whole workload, and is admitted when followed (re-judged by the Decider)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchplane.explain.sentences import Advice, Change
from batchplane.webhook.decisions import Decider, Decision, _SizeJudge
from tests.webhook.conftest import stack_policy

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
SIZE_REASONS = ("never-admissible", "larger-than-any-node")


@pytest.fixture(scope="module")
def openshift_ai_2() -> Decider:
    return Decider(stack_policy("openshift-ai-2"))


def _container(cpu: str, memory: str, gpus: int) -> dict[str, Any]:
    requests: dict[str, Any] = {"cpu": cpu, "memory": memory}
    limits: dict[str, Any] = {}
    if gpus:
        requests["nvidia.com/gpu"] = gpus
        limits["nvidia.com/gpu"] = gpus
    resources: dict[str, Any] = {"requests": requests}
    if limits:
        resources["limits"] = limits
    return {"name": "main", "image": "python:3.12", "resources": resources}


def _meta(name: str, namespace: str, queue: str) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: queue}}


def pytorchjob(
    namespace: str,
    queue: str,
    master: tuple[str, str, int] | None,
    workers: int,
    worker: tuple[str, str, int],
) -> dict[str, Any]:
    """A PyTorchJob: an optional Master (1 replica) and ``workers`` Workers, each pod (cpu, memory, GPUs)."""
    specs: dict[str, Any] = {}
    if master is not None:
        specs["Master"] = {"replicas": 1, "template": {"spec": {"containers": [_container(*master)]}}}
    specs["Worker"] = {"replicas": workers, "template": {"spec": {"containers": [_container(*worker)]}}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": _meta("train", namespace, queue),
        "spec": {"pytorchReplicaSpecs": specs},
    }


def leaderworkerset(
    namespace: str, queue: str, leader: tuple[str, str, int] | None, size: int, worker: tuple[str, str, int]
) -> dict[str, Any]:
    """A LeaderWorkerSet of one group of ``size`` pods (with a leaderTemplate when ``leader`` is given)."""
    template: dict[str, Any] = {
        "size": size,
        "workerTemplate": {"spec": {"containers": [_container(*worker)]}},
    }
    if leader is not None:
        template["leaderTemplate"] = {"spec": {"containers": [_container(*leader)]}}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": _meta("serve", namespace, queue),
        "spec": {"replicas": 1, "leaderWorkerTemplate": template},
    }


def raycluster(
    namespace: str, queue: str, head: tuple[str, str, int] | None, workers: int, worker: tuple[str, str, int]
) -> dict[str, Any]:
    """A RayCluster: a head (1 pod; the smallest when ``head`` is None) and one worker group of ``workers``."""
    head = head or ("500m", "1Gi", 0)
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": _meta("ray", namespace, queue),
        "spec": {
            "headGroupSpec": {"template": {"spec": {"containers": [_container(*head)]}}},
            "workerGroupSpecs": [
                {
                    "groupName": "workers",
                    "replicas": workers,
                    "minReplicas": workers,
                    "maxReplicas": workers,
                    "template": {"spec": {"containers": [_container(*worker)]}},
                }
            ],
        },
    }


def _quantity(resource: str, stored: int) -> Any:
    return f"{stored}m" if resource == "cpu" else stored


def _pod_template(obj: dict[str, Any], pod_set: str) -> dict[str, Any]:
    if obj["kind"] == "RayCluster":
        if pod_set == "head":
            return obj["spec"]["headGroupSpec"]["template"]  # type: ignore[no-any-return]
        return obj["spec"]["workerGroupSpecs"][0]["template"]  # type: ignore[no-any-return]
    if obj["kind"] == "PyTorchJob":
        return obj["spec"]["pytorchReplicaSpecs"][pod_set.capitalize()]["template"]  # type: ignore[no-any-return]
    group = obj["spec"]["leaderWorkerTemplate"]
    return group["leaderTemplate"] if pod_set == "leader" else group["workerTemplate"]  # type: ignore[no-any-return]


def apply(obj: dict[str, Any], advice: Advice) -> dict[str, Any]:
    """``obj`` changed as ``advice`` says: each PodSet's count (replicas, or the group size), its per-pod requests."""
    out = copy.deepcopy(obj)
    for change in advice.changes:
        if change.count is not None:
            if out["kind"] == "RayCluster":
                group = out["spec"]["workerGroupSpecs"][0]
                group["replicas"] = group["minReplicas"] = group["maxReplicas"] = change.count
            elif out["kind"] == "PyTorchJob":
                out["spec"]["pytorchReplicaSpecs"][change.pod_set.capitalize()]["replicas"] = change.count
            else:
                group = out["spec"]["leaderWorkerTemplate"]
                group["size"] = change.count + (1 if "leaderTemplate" in group else 0)
        for container in _pod_template(out, change.pod_set)["spec"]["containers"]:
            resources = container["resources"]
            for resource, stored in change.per_pod.items():
                resources["requests"][resource] = _quantity(resource, stored)
                if resource in resources.get("limits", {}):
                    resources["limits"][resource] = _quantity(resource, stored)
    return out


def followed(decider: Decider, obj: dict[str, Any], namespace: str) -> tuple[Decision, Decision]:
    """The refusal of ``obj`` and the decision on ``obj`` with the refusal's advice applied."""
    refused = decider.validate(obj, namespace)
    assert not refused.allowed, refused
    assert refused.advice is not None and refused.advice.changes, refused.message
    return refused, decider.validate(apply(obj, refused.advice), namespace)


def test_pytorchjob_advice_counts_the_master_and_is_admitted_when_followed(openshift_ai_2: Decider) -> None:
    obj = pytorchjob("test", "local-queue-test", ("1", "1Gi", 2), 3, ("1", "1Gi", 2))
    refused, after = followed(openshift_ai_2, obj, "test")
    assert "ask for at most 1 worker of 2 GPUs" in refused.lead, refused.lead
    assert "the master pod takes 2 GPUs more" in refused.lead
    assert after.allowed, after.message


def test_pytorchjob_whose_master_alone_exceeds_says_no_worker_count_fits(openshift_ai_2: Decider) -> None:
    obj = pytorchjob("test", "local-queue-test", ("1", "1Gi", 6), 2, ("1", "1Gi", 1))
    refused = openshift_ai_2.validate(obj, "test")
    assert "no number of workers fits: the master pod alone never fits cluster-queue" in refused.lead, (
        refused.lead
    )
    assert refused.advice is not None
    assert [c.pod_set for c in refused.advice.changes] == ["master"], refused.lead
    assert refused.lead.endswith("give each master pod at most 3 GPUs"), refused.lead
    assert openshift_ai_2.validate(apply(obj, refused.advice), "test").allowed


def test_leaderworkerset_group_advice_is_admitted_when_followed(openshift_ai_2: Decider) -> None:
    obj = leaderworkerset("test", "local-queue-test", None, 2, ("1", "1Gi", 8))
    refused, after = followed(openshift_ai_2, obj, "test")
    assert "give each pod at most 5 GPUs" not in refused.lead, refused.lead
    assert after.allowed, after.message


def test_advice_lowers_every_resource_that_exceeds_not_only_the_gpus(openshift_ai_2: Decider) -> None:
    obj = leaderworkerset("test", "local-queue-test", None, 1, ("12", "40Gi", 8))
    refused, after = followed(openshift_ai_2, obj, "test")
    assert refused.advice is not None
    assert [set(c.per_pod) for c in refused.advice.changes] == [{"cpu", "memory", "nvidia.com/gpu"}], (
        refused.lead
    )
    assert "at most 5 GPUs, 9 CPUs and 36Gi of memory" in refused.lead, refused.lead
    assert after.allowed, after.message


def test_memory_advice_is_the_largest_whole_mi_that_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    decider = _decider("kind")
    obj = pytorchjob("team-a", "default", None, 3, ("4", "16Gi", 0))
    refused = decider.validate(obj, "team-a")
    assert refused.advice is not None
    assert "give each worker at most 1333m CPU and 2730Mi of memory" in refused.lead, refused.lead
    assert decider.validate(apply(obj, refused.advice), "team-a").allowed
    one_more = Advice(
        (Change("worker", per_pod={"cpu": 1333, "memory": 2731 * 2**20}),), ""
    )  # one Mi more per pod does not fit
    assert decider.validate(apply(obj, one_more), "team-a").reason in SIZE_REASONS


def test_advice_where_only_the_gpus_exceed_costs_few_judgements(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search tries the asked amount first and narrows memory in Mi, not bytes (the refusal stayed ~8× the
    cost of an admission while it narrowed byte by byte)."""
    decider = _decider("openshift-ai-2")
    calls = [0]
    judge = _SizeJudge.__call__

    def counted(self: _SizeJudge, pod_sets: Any) -> bool:
        calls[0] += 1
        return judge(self, pod_sets)

    monkeypatch.setattr(_SizeJudge, "__call__", counted)
    obj = leaderworkerset("test", "local-queue-test", None, 4, ("1", "1Gi", 16))  # only the GPUs exceed
    refused = decider.validate(obj, "test")
    assert refused.advice is not None, refused.message
    assert calls[0] <= 15, (calls[0], refused.lead)


def _with_fpga(obj: dict[str, Any]) -> dict[str, Any]:
    worker = obj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    worker["resources"]["requests"]["example.com/fpga"] = 1
    return obj


def test_a_resource_the_queue_does_not_cover_is_advised_dropped_and_admitted_when_followed(
    openshift_ai_2: Decider,
) -> None:
    obj = _with_fpga(pytorchjob("test", "local-queue-test", None, 2, ("1", "1Gi", 1)))
    refused, after = followed(openshift_ai_2, obj, "test")
    assert refused.advice is not None
    assert refused.advice.changes == (Change("worker", per_pod={"example.com/fpga": 0}),)
    assert after.allowed, after.message


def test_dropping_an_uncovered_resource_is_advised_with_what_else_must_change(
    openshift_ai_2: Decider,
) -> None:
    obj = _with_fpga(pytorchjob("test", "local-queue-test", None, 3, ("1", "1Gi", 4)))
    refused, after = followed(openshift_ai_2, obj, "test")
    assert refused.lead.endswith(
        "drop that request, or ask the platform team for quota on it; then ask for at most 1 worker of 4 GPUs"
    ), refused.lead
    assert after.allowed, after.message


def test_a_worker_larger_than_any_node_is_advised_smaller_and_more_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decider = _decider("openshift-ai-gpu")
    obj = pytorchjob("team-a", "team-a-queue", None, 2, ("1", "4Gi", 2))
    refused, after = followed(decider, obj, "team-a")
    assert refused.reason == "larger-than-any-node"
    assert refused.advice is not None
    (change,) = refused.advice.changes
    assert change.pod_set == "worker" and change.per_pod["nvidia.com/gpu"] < 2
    assert change.count is not None and change.count * change.per_pod["nvidia.com/gpu"] == 4  # the same GPUs
    assert after.allowed, after.message


def test_a_master_larger_than_any_node_is_advised_smaller_not_more_masters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decider = _decider("openshift-ai-gpu")
    obj = pytorchjob("team-a", "team-a-queue", ("1", "4Gi", 2), 1, ("1", "4Gi", 1))
    refused, after = followed(decider, obj, "team-a")
    assert refused.reason == "larger-than-any-node"
    assert refused.advice is not None
    assert [(c.pod_set, c.count) for c in refused.advice.changes] == [("master", None)]
    assert after.allowed, after.message


# --- the property: every advice, followed, is admitted (or waits) on an empty cluster ----------------------------

TEMPLATES = ("openshift-ai-2", "openshift-ai-gpu", "kind", "gke-dev", "gke-dws")
_DECIDERS: dict[str, Decider] = {}


def _decider(template: str) -> Decider:
    if template not in _DECIDERS:
        _DECIDERS[template] = Decider(stack_policy(template))
    return _DECIDERS[template]


def _queues(decider: Decider) -> list[tuple[str, str]]:
    return sorted((ns, q) for ns, p in decider.policy.namespaces.items() for q in p.local_queues)


pods = st.tuples(
    st.sampled_from(["500m", "1", "2", "4", "8", "16"]),
    st.sampled_from(["1Gi", "4Gi", "16Gi", "64Gi"]),
    st.integers(min_value=0, max_value=10),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    template=st.sampled_from(TEMPLATES),
    which=st.integers(min_value=0, max_value=20),
    kind=st.sampled_from(["PyTorchJob", "LeaderWorkerSet", "RayCluster"]),
    fixed=st.one_of(st.none(), pods),
    count=st.integers(min_value=1, max_value=8),
    scalable=pods,
)
def test_every_advice_followed_is_never_refused_for_size(
    template: str,
    which: int,
    kind: str,
    fixed: tuple[str, str, int] | None,
    count: int,
    scalable: tuple[str, str, int],
) -> None:
    decider = _decider(template)
    namespace, queue = _queues(decider)[which % len(_queues(decider))]
    build = {"PyTorchJob": pytorchjob, "LeaderWorkerSet": leaderworkerset, "RayCluster": raycluster}[kind]
    obj = build(namespace, queue, fixed, count, scalable)
    refused = decider.validate(obj, namespace)
    if refused.allowed or refused.advice is None or not refused.advice.changes:
        return
    after = decider.validate(apply(obj, refused.advice), namespace)
    assert after.allowed or after.reason not in SIZE_REASONS, (refused.message, after.message)
    for change in refused.advice.changes:  # memory advice is shown in whole Mi, not a byte count
        memory = change.per_pod.get("memory", 0)
        assert memory < 2**20 or memory % 2**20 == 0, refused.lead

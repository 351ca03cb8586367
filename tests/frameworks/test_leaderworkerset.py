"""LeaderWorkerSet: the PodSets of each group's Workload as Kueue v0.19.2 builds them, and the quota webhook judging
one group (the unit Kueue admits) — against a test-side transcription of Kueue's source."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchplane.accounting import AccountingError, is_workload, workload_requests
from batchplane.components.quota_webhook.manifests import WORKLOAD_RULES
from batchplane.frameworks import BY_KIND
from batchplane.frameworks.leaderworkerset import leaderworkerset_pod_sets
from batchplane.webhook.decisions import Decider
from tests.accounting.conftest import container, pod_template, sample
from tests.webhook.conftest import labeled, one_queue

LWS_INTEGRATION = "leaderworkerset.x-k8s.io/leaderworkerset"
GPU = "nvidia.com/gpu"

# --- Kueue v0.19.2, transcribed for the tests -------------------------------------------------------------------
# https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/leaderworkerset/
#   leaderworkerset_controller.go:41-47  spec.replicas and spec.leaderWorkerTemplate.size default to 1
#   leaderworkerset_reconciler.go:263-293 filterWorkloads: one Workload per group index 0..replicas-1
#   leaderworkerset_reconciler.go:338-343 constructWorkload: every group's Workload gets podSets(lws), no index
#   leaderworkerset_reconciler.go:400-431 podSets: with leaderTemplate, "leader" count 1 then "worker" count
#                                         size-1; without, one PodSet "main" (kueue.DefaultPodSetName), count size


def kueue_pod_sets(lws: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    """reconciler.go:400-431: (name, count, template) of one group's Workload."""
    lwt = lws["spec"]["leaderWorkerTemplate"]
    name, count = "main", lwt.get("size", 1)
    out = []
    if lwt.get("leaderTemplate") is not None:
        name, count = "worker", count - 1
        out.append(("leader", 1, lwt["leaderTemplate"]))
    out.append((name, count, lwt["workerTemplate"]))
    return out


def kueue_workloads(lws: dict[str, Any]) -> list[list[tuple[str, int, dict[str, Any]]]]:
    """reconciler.go:263-293 and 338-343: the Workloads a new LeaderWorkerSet gets, one per group."""
    return [kueue_pod_sets(lws) for _ in range(lws["spec"].get("replicas", 1))]


# --- builders -----------------------------------------------------------------------------------------------------


def lws(
    *,
    replicas: int | None = None,
    size: int | None = None,
    leader: dict[str, Any] | None = None,
    worker: dict[str, Any] | None = None,
    name: str = "serve",
    queue: str | None = "lq",
) -> dict[str, Any]:
    """A leaderworkerset.x-k8s.io/v1 LeaderWorkerSet in namespace ``team-a``."""
    template: dict[str, Any] = {"workerTemplate": worker or pod_template(container({"cpu": "1"}))}
    if leader is not None:
        template["leaderTemplate"] = leader
    if size is not None:
        template["size"] = size
    spec: dict[str, Any] = {"leaderWorkerTemplate": template}
    if replicas is not None:
        spec["replicas"] = replicas
    obj = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": spec,
    }
    return labeled(obj, queue)


def shape(obj: dict[str, Any]) -> list[tuple[str, int, dict[str, Decimal]]]:
    return [(ps.name, ps.count, ps.per_pod) for ps in workload_requests(obj).pod_sets]


def sample_lws(relative: str) -> dict[str, Any]:
    """The LeaderWorkerSet an AppWrapper sample wraps (``spec.components[0].template``)."""
    wrapped: dict[str, Any] = copy.deepcopy(sample(relative)["spec"]["components"][0]["template"])
    return wrapped


# --- PodSets ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "relative",
    ["appwrapper/wrapped-leader-worker-set.yaml", "appwrapper/kueue-appwrapper-leaderworkerset-sample.yaml"],
    ids=["appwrapper-sample", "kueue-sample"],
)
def test_a_real_leaderworkerset_makes_a_leader_of_one_pod_and_size_minus_one_workers_per_group(
    relative: str,
) -> None:
    obj = sample_lws(relative)
    assert obj["kind"] == "LeaderWorkerSet" and obj["spec"]["replicas"] == 2
    assert is_workload(obj)
    # size 3: the leader (100m) and two workers (200m each), whatever spec.replicas says (each group is one Workload)
    assert shape(obj) == [("leader", 1, {"cpu": Decimal("0.1")}), ("worker", 2, {"cpu": Decimal("0.2")})]
    assert workload_requests(obj).total == {"cpu": Decimal("0.5")}
    assert [(n, c) for n, c, _ in kueue_workloads(obj)[0]] == [("leader", 1), ("worker", 2)]


def test_without_a_leader_template_a_group_is_one_main_pod_set_of_size_pods() -> None:
    obj = lws(size=4, worker=pod_template(container({"cpu": "2", GPU: "1"})))
    assert shape(obj) == [("main", 4, {"cpu": Decimal(2), GPU: Decimal(1)})]


def test_size_and_replicas_default_to_one_as_the_lws_api_does() -> None:
    assert shape(lws()) == [("main", 1, {"cpu": Decimal(1)})]
    with_leader = lws(leader=pod_template(container({"cpu": "3"})))
    assert shape(with_leader) == [("leader", 1, {"cpu": Decimal(3)}), ("worker", 0, {"cpu": Decimal(1)})]


def test_zero_replicas_make_no_workload_so_nothing_is_accounted() -> None:
    assert leaderworkerset_pod_sets(lws(replicas=0, size=8)) == []
    assert kueue_workloads(lws(replicas=0, size=8)) == []


def test_the_pod_templates_are_the_objects_own_and_their_paths_name_the_fields() -> None:
    leader, worker = pod_template(container({"cpu": "1"})), pod_template(container({"cpu": "2"}))
    raw = leaderworkerset_pod_sets(lws(size=2, leader=leader, worker=worker))
    assert [(ps.template is t, ps.path) for ps, t in zip(raw, (leader, worker), strict=True)] == [
        (True, "spec.leaderWorkerTemplate.leaderTemplate"),
        (True, "spec.leaderWorkerTemplate.workerTemplate"),
    ]


@pytest.mark.parametrize(
    ("obj", "field", "reason"),
    [
        (lws(size=0, leader=pod_template(container())), "spec.leaderWorkerTemplate.size", "must be ≥ 1"),
        (lws(replicas=-1), "spec.replicas", "must be ≥ 0"),
        ({**lws(), "spec": {"replicas": 1}}, "spec.leaderWorkerTemplate", "is required"),
        (
            {**lws(), "spec": {"leaderWorkerTemplate": {"size": 2}}},
            "spec.leaderWorkerTemplate.workerTemplate",
            "is required",
        ),
    ],
    ids=["leader-with-size-0", "negative-replicas", "no-leader-worker-template", "no-worker-template"],
)
def test_an_unreadable_leaderworkerset_names_the_field(obj: dict[str, Any], field: str, reason: str) -> None:
    with pytest.raises(AccountingError, match=reason) as raised:
        workload_requests(obj)
    assert (raised.value.kind, raised.value.field) == ("LeaderWorkerSet", field)


def test_the_priority_class_is_the_first_pod_sets_as_kueue_extracts_it_for_leaderworkersets() -> None:
    """reconciler.go:316 passes no custom priority function: the WorkloadPriorityClass label, else the first PodSet's
    (the leader's) ``priorityClassName`` (jobframework/reconciler.go:1716-1733)."""
    obj = lws(
        leader=pod_template(container(), priorityClassName="leader-high"),
        worker=pod_template(container(), priorityClassName="worker-low"),
    )
    assert BY_KIND["LeaderWorkerSet"].priority_class is None
    assert workload_requests(obj).priority_class == "leader-high"
    obj["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "wpc"
    assert workload_requests(obj).priority_class == "wpc"


requests = st.fixed_dictionaries(
    {"cpu": st.integers(min_value=1, max_value=64).map(str)},
    optional={GPU: st.integers(min_value=0, max_value=8).map(str)},
)


@st.composite
def leaderworkersets(draw: st.DrawFn) -> dict[str, Any]:
    has_leader = draw(st.booleans())
    size = draw(st.one_of(st.none(), st.integers(min_value=1 if has_leader else 0, max_value=64)))
    replicas = draw(st.one_of(st.none(), st.integers(min_value=0, max_value=6)))
    worker = pod_template(container(draw(requests)))
    leader = pod_template(container(draw(requests))) if has_leader else None
    return lws(replicas=replicas, size=size, leader=leader, worker=worker)


@settings(max_examples=150, deadline=None)
@given(leaderworkersets())
def test_each_groups_pod_sets_are_kueues_for_any_leaderworkerset(obj: dict[str, Any]) -> None:
    workloads = kueue_workloads(obj)
    raw = leaderworkerset_pod_sets(obj)
    want = workloads[0] if workloads else []
    assert all(w == want for w in workloads)  # every group's Workload is the same
    assert [(ps.name, ps.count, ps.template) for ps in raw] == want
    # the webhook accounts one group: its GPUs are the leader's plus size-1 workers' (or size pods of main)
    gpus = workload_requests(obj).total.get(GPU, Decimal(0))
    assert gpus == sum(
        (Decimal(t["spec"]["containers"][0]["resources"]["requests"].get(GPU, 0)) * n for _, n, t in want),
        Decimal(0),
    )


# --- the quota webhook --------------------------------------------------------------------------------------------


def test_the_webhook_reviews_leaderworkersets_on_create() -> None:
    assert ("leaderworkerset.x-k8s.io", "v1", ("leaderworkersets",)) in WORKLOAD_RULES


def _decider(**extra: Any) -> Decider:
    """One ClusterQueue with 8 GPUs and 64 CPUs, LocalQueue ``lq`` in team-a, LeaderWorkerSet integration on."""
    frameworks = {"kueue": {"configuration": {"integrations": {"frameworks": [LWS_INTEGRATION]}}}}
    return Decider(one_queue({"cpu": 64, GPU: 8}, operators=frameworks, **extra))


def _gpu_group(size: int, gpus: int, replicas: int = 1) -> dict[str, Any]:
    leader = pod_template(container({"cpu": "1", GPU: str(gpus)}))
    worker = pod_template(container({"cpu": "1", GPU: str(gpus)}))
    return lws(replicas=replicas, size=size, leader=leader, worker=worker)


def test_a_group_larger_than_the_queues_gpu_quota_is_refused_saying_why() -> None:
    """One group (the leader's 4 GPUs and two workers' 8) needs 12 GPUs on an 8-GPU queue: its Workload can never be
    admitted, whatever spec.replicas says; the sentence counts the group's PodSets, not the replicas."""
    decision = _decider().validate(_gpu_group(size=3, gpus=4, replicas=2), "team-a")
    assert (decision.allowed, decision.reason) == (False, "never-admissible")
    assert decision.lead == (
        "never runs: this LeaderWorkerSet group asks for 12 GPUs in all (leader 4, worker 8) and cq can get at most 8 "
        "GPUs on f — ask for at most 1 worker of 4 GPUs (the leader pod takes 4 GPUs more: 8 GPUs in all)"
    )
    assert decision.details == (
        'LeaderWorkerSet "team-a/serve": can never be admitted by ClusterQueue "cq" (LocalQueue "lq"): its PodSets '
        "(leader, worker) together need cpu 3, nvidia.com/gpu 12, and no split of them over the flavors fits (flavor "
        '"f" at most cpu 64, nvidia.com/gpu 8)'
    )


def test_a_worker_pod_set_larger_than_the_quota_on_its_own_is_refused_naming_it() -> None:
    decision = _decider().validate(_gpu_group(size=4, gpus=4), "team-a")
    assert (decision.allowed, decision.reason) == (False, "never-admissible")
    assert decision.details == (
        'LeaderWorkerSet "team-a/serve": can never be admitted by ClusterQueue "cq" (LocalQueue "lq"): PodSet '
        '"worker" needs cpu 3 (3 pods × 1), nvidia.com/gpu 12 (3 pods × 4), but flavor "f" offers at most '
        "nvidia.com/gpu 8 (nominal quota, no cohort)"
    )
    assert decision.lead == (
        "never runs: cq can get at most 8 GPUs on f (8 of its own, no cohort to borrow from); this LeaderWorkerSet "
        "group asks for 12 GPUs (3 workers × 4) — ask for at most 1 worker of 4 GPUs (the leader pod takes 4 GPUs "
        "more: 8 GPUs in all)"
    )


def test_groups_that_each_fit_are_allowed_even_when_all_groups_together_exceed_the_quota() -> None:
    """Kueue admits each group's Workload on its own: 3 groups of 8 GPUs on an 8-GPU queue run one at a time."""
    assert _decider().validate(_gpu_group(size=2, gpus=4, replicas=3), "team-a").reason == "ok"


def test_an_unlabeled_leaderworkerset_gets_the_namespaces_default_queue_label() -> None:
    frameworks = {"kueue": {"configuration": {"integrations": {"frameworks": [LWS_INTEGRATION]}}}}
    decider = Decider(one_queue({"cpu": 64, GPU: 8}, default=True, operators=frameworks))
    decision = decider.mutate(lws(queue=None), "team-a")
    assert (decision.reason, list(decision.patch)) == (
        "defaulted",
        [{"op": "add", "path": "/metadata/labels/kueue.x-k8s.io~1queue-name", "value": "lq"}],
    )


def test_a_leaderworkerset_is_refused_where_the_stack_does_not_enable_kueues_integration() -> None:
    """Kueue would ignore its queue label and the groups would run outside quota."""
    policy = one_queue({"cpu": 64, GPU: 8}, operators={"kuberay": {"enabled": False}})
    decision = Decider(policy).validate(_gpu_group(size=2, gpus=1), "team-a")
    assert (decision.allowed, decision.reason) == (False, "framework-disabled")
    assert decision.details.startswith(
        f'LeaderWorkerSet "team-a/serve": Kueue\'s {LWS_INTEGRATION} integration is not enabled in this stack'
    )

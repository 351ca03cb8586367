"""UPDATE reviews through the real :class:`~batchplane.webhook.decisions.Decider`: an edit that changes the accounted
demand upwards or the queue label is judged exactly as the CREATE of the edited object; one that only shrinks is
allowed (``smaller-on-update``) and any other update at once (``unchanged-on-update``), even of an object that is
over a quota that shrank after it was created."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from batchplane.frameworks import FRAMEWORKS
from batchplane.webhook.decisions import ALLOW_REASONS, Decider
from tests.webhook.conftest import QUEUE_LABEL, job, labeled, one_queue, policy_from, sample, stack_policy


@pytest.fixture(scope="module")
def kind() -> Decider:
    return Decider(stack_policy("kind"))


def _suspended(obj: dict[str, Any], *path: str) -> dict[str, Any]:
    spec = obj["spec"]
    for key in path:
        spec = spec.setdefault(key, {})
    spec["suspend"] = True
    return obj


def _ray_job() -> dict[str, Any]:
    obj = labeled(sample("kuberay/ray-job.kueue-toy-sample.yaml"), "default", "team-a")
    obj["metadata"]["name"] = "toy"
    return _suspended(obj)


def _pytorch_job() -> dict[str, Any]:
    return _suspended(
        labeled(sample("training-operator/kueue-sample-pytorchjob.yaml"), "default", "team-a"), "runPolicy"
    )


def _batch_job() -> dict[str, Any]:
    obj = labeled(sample("kueue/sample-job.yaml"), "default", "team-a")
    obj["metadata"]["name"] = "sample-job"
    return _suspended(obj)


def _ray_workers(obj: dict[str, Any], n: int) -> None:
    obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] = n
    obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["maxReplicas"] = max(n, 5)


def _pytorch_workers(obj: dict[str, Any], n: int) -> None:
    obj["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = n


def _job_parallelism(obj: dict[str, Any], n: int) -> None:
    obj["spec"]["parallelism"] = obj["spec"]["completions"] = n


def _ray_worker_cpu(obj: dict[str, Any], n: int) -> None:
    resources = obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0][
        "resources"
    ]
    resources["requests"]["cpu"] = resources["limits"]["cpu"] = str(n)


EDITS = [
    # (object, edit that keeps it admissible, edit that makes it never admissible) on the kind template's queue
    # (cpu 4, memory 8Gi)
    pytest.param(_ray_job, lambda o: _ray_workers(o, 2), lambda o: _ray_workers(o, 5), id="rayjob-workers"),
    pytest.param(
        _ray_job,
        lambda o: _ray_worker_cpu(o, 2),
        lambda o: _ray_worker_cpu(o, 3),
        id="rayjob-cpus-per-worker",
    ),
    pytest.param(
        _batch_job, lambda o: _job_parallelism(o, 4), lambda o: _job_parallelism(o, 5), id="job-parallelism"
    ),
    pytest.param(
        _pytorch_job,
        lambda o: _pytorch_workers(o, 3),
        lambda o: _pytorch_workers(o, 4),
        id="pytorchjob-workers",
    ),
]


@pytest.mark.parametrize(("make", "_fits", "grow"), EDITS)
def test_a_suspended_job_edited_beyond_the_quota_is_refused_with_the_create_sentence(
    kind: Decider, make: Any, _fits: Any, grow: Any
) -> None:
    old = make()
    assert kind.validate(old, "team-a").allowed
    new = copy.deepcopy(old)
    grow(new)
    on_update = kind.validate(new, "team-a", "UPDATE", old)
    assert (on_update.allowed, on_update.reason) == (False, "never-admissible")
    assert on_update == kind.validate(new, "team-a")
    assert on_update.message.startswith("never runs: ")
    assert "cluster-queue can get at most 4 CPUs on default-flavor" in on_update.message


@pytest.mark.parametrize(("make", "fits", "_grow"), EDITS)
def test_an_edit_that_keeps_the_job_admissible_is_allowed(
    kind: Decider, make: Any, fits: Any, _grow: Any
) -> None:
    old = make()
    new = copy.deepcopy(old)
    fits(new)
    decision = kind.validate(new, "team-a", "UPDATE", old)
    assert (decision.allowed, decision.reason) == (True, "ok")


def test_a_suspended_rayjob_edited_to_more_gpus_per_worker_than_the_queue_holds_is_refused() -> None:
    gpus = Decider(one_queue({"cpu": 32, "memory": "64Gi", "nvidia.com/gpu": 8}))
    old = labeled(_ray_job(), "lq")
    worker = old["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    worker["resources"]["limits"]["nvidia.com/gpu"] = 4
    assert gpus.validate(old, "team-a").allowed
    new = copy.deepcopy(old)
    worker = new["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    worker["resources"]["limits"]["nvidia.com/gpu"] = 12
    decision = gpus.validate(new, "team-a", "UPDATE", old)
    assert (decision.allowed, decision.reason) == (False, "never-admissible")
    assert decision == gpus.validate(new, "team-a")
    assert "12 GPUs" in decision.lead


def _start_by_kueue(obj: dict[str, Any]) -> None:
    """What Kueue writes when it starts an admitted Job: unsuspended, the flavor's node labels and tolerations
    injected into the pod template (``RunWithPodSetsInfo``)."""
    obj["spec"]["suspend"] = False
    pod = obj["spec"]["template"].setdefault("spec", {})
    pod["nodeSelector"] = {"cloud.google.com/gke-nodepool": "cpu"}
    pod["tolerations"] = [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]


UNRELATED = [
    pytest.param(lambda o: o["metadata"].setdefault("labels", {}).update({"team": "vision"}), id="label"),
    pytest.param(
        lambda o: o["metadata"].setdefault("annotations", {}).update({"owner": "alice"}), id="annotation"
    ),
    pytest.param(lambda o: o["spec"].update({"suspend": False}), id="suspend-flip"),
    pytest.param(
        lambda o: o["metadata"].update({"finalizers": ["batch.kubernetes.io/job-tracking"]}), id="finalizer"
    ),
    pytest.param(
        lambda o: o["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"].update(
            {"cpu": "1000m"}
        ),
        id="same-cpu-spelt-in-millicores",
    ),
    pytest.param(
        lambda o: o["spec"]["template"]["spec"]["containers"][0].update({"image": "busybox:1.37"}), id="image"
    ),
    pytest.param(_start_by_kueue, id="kueue-starts-it"),
]


@pytest.mark.parametrize("edit", UNRELATED)
def test_an_update_of_nothing_accounted_is_allowed_even_over_a_quota_that_shrank(edit: Any) -> None:
    shrunk = Decider(one_queue({"cpu": 2}))  # the Job was created when the queue had cpu 4
    old = job(parallelism=3)
    old["spec"]["suspend"] = True
    assert not shrunk.validate(old, "team-a").allowed
    new = copy.deepcopy(old)
    edit(new)
    assert shrunk.validate(new, "team-a", "UPDATE", old).reason == "unchanged-on-update"
    assert shrunk.validate(new, "team-a", "UPDATE", old).allowed


def test_a_growing_edit_of_a_job_over_a_shrunk_quota_is_refused() -> None:
    shrunk = Decider(one_queue({"cpu": 2}))
    old = job(parallelism=3)
    new = job(parallelism=4)
    decision = shrunk.validate(new, "team-a", "UPDATE", old)
    assert (decision.allowed, decision.reason) == (False, "never-admissible")


def test_a_scale_down_of_a_job_over_a_shrunk_quota_is_allowed() -> None:
    """An autoscaler's or a user's scale-down of a job admitted before its quota shrank: still over the quota, but
    never less admissible than it was; refusing it would keep the larger job running."""
    shrunk = Decider(one_queue({"cpu": 2}))
    old, new = job(parallelism=4), job(parallelism=3)
    assert not shrunk.validate(new, "team-a").allowed  # judged as new, it would be refused
    decision = shrunk.validate(new, "team-a", "UPDATE", old)
    assert (decision.allowed, decision.reason) == (True, "smaller-on-update")
    # still over the quota: the user is told why it will stay pending
    assert decision.warnings == (
        f"allowed because it only asks for less, but {shrunk.validate(new, 'team-a').lead}",
    )
    assert decision.warnings[0].startswith("allowed because it only asks for less, but never runs: ")


def test_a_ray_cluster_scaled_down_by_its_autoscaler_is_allowed_over_a_shrunk_quota(kind: Decider) -> None:
    obj = labeled(sample("kuberay/ray-cluster.autoscaler.yaml"), "default", "team-a")
    obj["metadata"].setdefault("annotations", {})["kueue.x-k8s.io/elastic-job"] = "true"
    workers = obj["spec"]["workerGroupSpecs"][0]
    workers["replicas"] = workers["maxReplicas"] = 64
    smaller = copy.deepcopy(obj)
    smaller["spec"]["workerGroupSpecs"][0]["replicas"] = 63
    assert kind.validate(smaller, "team-a").reason == "never-admissible"
    assert kind.validate(smaller, "team-a", "UPDATE", obj).reason == "smaller-on-update"


def test_an_edit_that_shrinks_one_pod_set_and_grows_another_is_judged(kind: Decider) -> None:
    old = _ray_job()
    new = copy.deepcopy(old)
    head = new["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    head.setdefault("resources", {}).setdefault("requests", {})["cpu"] = "64"
    _ray_workers(new, 0)
    assert kind.validate(new, "team-a", "UPDATE", old) == kind.validate(new, "team-a")


def test_a_smaller_job_moved_to_a_higher_priority_class_is_judged(two_queues: Decider) -> None:
    old = job(queue="small", parallelism=3, labels={"kueue.x-k8s.io/priority-class": "low"})
    new = job(queue="small", parallelism=2, labels={"kueue.x-k8s.io/priority-class": "high"})
    assert two_queues.validate(new, "team-a", "UPDATE", old) == two_queues.validate(new, "team-a")


def _two_queues() -> Decider:
    def cq(name: str, cpu: int) -> dict[str, Any]:
        return {
            "name": name,
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": cpu}]}],
                }
            ],
        }

    return Decider(
        policy_from(
            {
                "resourceFlavors": [{"name": "f"}],
                "clusterQueues": [cq("big", 8), cq("small", 2)],
                "localQueues": [
                    {"name": "big", "namespace": "team-a", "clusterQueue": "big"},
                    {"name": "small", "namespace": "team-a", "clusterQueue": "small"},
                ],
            }
        )
    )


@pytest.fixture(scope="module")
def two_queues() -> Decider:
    return _two_queues()


def test_a_queue_label_moved_to_a_local_queue_that_does_not_exist_is_refused(two_queues: Decider) -> None:
    old = job(queue="big", parallelism=3)
    new = job(queue="gpu", parallelism=3)
    decision = two_queues.validate(new, "team-a", "UPDATE", old)
    assert (decision.allowed, decision.reason) == (False, "unknown-local-queue")
    assert decision == two_queues.validate(new, "team-a")


def test_a_queue_label_moved_to_a_cluster_queue_that_cannot_hold_it_is_refused(two_queues: Decider) -> None:
    old = job(queue="big", parallelism=3)
    assert two_queues.validate(old, "team-a").allowed
    new = job(queue="small", parallelism=3)
    decision = two_queues.validate(new, "team-a", "UPDATE", old)
    assert (decision.allowed, decision.reason) == (False, "never-admissible")
    assert 'ClusterQueue "small"' in decision.message


def test_an_update_without_the_old_object_is_not_checked(two_queues: Decider) -> None:
    decision = two_queues.validate(job(queue="gpu"), "team-a", "UPDATE")
    assert (decision.allowed, decision.reason) == (True, "operation-not-checked")


def test_an_update_of_a_kind_kueue_never_changes_on_update_is_not_checked(two_queues: Decider) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "team-a", "labels": {QUEUE_LABEL: "small"}},
        "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "3"}}}]},
    }
    assert not two_queues.validate(pod, "team-a").allowed  # judged on CREATE
    assert two_queues.validate(pod, "team-a", "UPDATE", pod).reason == "operation-not-checked"


def test_the_mutating_decision_stays_create_only(two_queues: Decider) -> None:
    unlabeled = job(queue=None)
    assert two_queues.mutate(unlabeled, "team-a", "UPDATE").reason == "operation-not-checked"


def test_every_kind_reviewed_on_update_is_reviewed_on_create() -> None:
    assert all(f.admission_review for f in FRAMEWORKS if f.update_review)
    assert "unchanged-on-update" in ALLOW_REASONS


# --- the property: UPDATE == CREATE of the new object when demand or queue differ, else allowed --------------------

CPU = {"500m": 500, "0.5": 500, "1": 1000, "1000m": 1000, "2": 2000, "3": 3000}
"""CPU spellings and their millicores (the test's own oracle of equal demand)."""


def _job(
    draw: st.DrawFn, queue: str | None, parallelism: int, cpu: str, priority: str | None
) -> dict[str, Any]:
    """A Job with this demand and queue, and unrelated fields (labels, annotations, suspend, nodeSelector) drawn."""
    labels = {"kueue.x-k8s.io/priority-class": priority} if priority else {}
    if draw(st.booleans()):
        labels["team"] = "vision"
    obj = job(queue=queue, parallelism=parallelism, requests={"cpu": cpu}, labels=labels)
    obj["spec"]["suspend"] = draw(st.booleans())
    if draw(st.booleans()):
        obj["metadata"]["annotations"] = {"note": draw(st.sampled_from(["a", "b"]))}
    if draw(st.booleans()):
        obj["spec"]["template"]["spec"]["nodeSelector"] = {"pool": draw(st.sampled_from(["a", "b"]))}
    return obj


@st.composite
def _updates(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], str]:
    """``(old, new, what changed)``: each of queue, parallelism, CPU (in any spelling of the same millicores) and
    priority class is kept or redrawn for ``new``. What changed, by the test's own oracle: ``unchanged``, ``smaller``
    (same queue and priority class, parallelism and CPU each no larger, one smaller) or ``other``."""
    queues = st.sampled_from(["big", "small", "gpu", None])
    counts = st.integers(1, 4)
    cpus = st.sampled_from(sorted(CPU))
    priorities = st.sampled_from([None, "low", "high"])
    before = (draw(queues), draw(counts), draw(cpus), draw(priorities))
    after = tuple(
        old if draw(st.booleans()) else draw(s)
        for old, s in zip(before, (queues, counts, cpus, priorities), strict=True)
    )
    if after[2] == before[2]:  # the same CPU, perhaps spelt differently
        after = (*after[:2], draw(st.sampled_from([c for c in CPU if CPU[c] == CPU[before[2]]])), after[3])
    old = _job(draw, *before)
    new = _job(draw, *after)
    key_before = (before[0], before[1], CPU[before[2]], before[3])
    key_after = (after[0], after[1], CPU[after[2]], after[3])
    if key_before == key_after:
        return old, new, "unchanged"
    same_queue_and_priority = (before[0], before[3]) == (after[0], after[3])
    if same_queue_and_priority and after[1] <= before[1] and CPU[after[2]] <= CPU[before[2]]:
        return old, new, "smaller"
    return old, new, "other"


@settings(max_examples=300, deadline=None)
@given(update=_updates())
def test_an_update_is_judged_as_the_create_of_the_new_object_exactly_when_it_grows_or_moves(
    two_queues: Decider, update: tuple[dict[str, Any], dict[str, Any], str]
) -> None:
    """Unchanged demand and queue: allowed at once; only smaller (same queue and priority class, nothing larger):
    allowed, never judged; anything else: the CREATE decision of the edited job, exactly."""
    old, new, changed = update
    event(changed)
    on_update = two_queues.validate(new, "team-a", "UPDATE", old)
    if changed == "other":
        assert on_update == two_queues.validate(new, "team-a")
    elif changed == "unchanged":
        assert (on_update.allowed, on_update.reason, on_update.warnings) == (True, "unchanged-on-update", ())
    else:  # smaller: allowed; a warning exactly when the smaller job still could never be admitted
        on_create = two_queues.validate(new, "team-a")
        assert (on_update.allowed, on_update.reason) == (True, "smaller-on-update")
        if on_create.allowed:
            assert on_update.warnings == ()
        else:
            assert on_update.warnings == (
                f"allowed because it only asks for less, but {on_create.lead or on_create.details}",
            )


def test_the_demand_compared_is_kueues_stored_requests_per_podset(two_queues: Decider) -> None:
    demand = two_queues.demand(job(parallelism=3, requests={"cpu": "500m", "memory": "1Gi"}))
    assert demand == (None, (("main", 3, None, (("cpu", 500), ("memory", 1024**3))),))


# --- the cheap path: which of the object's own labels and annotations the accounting reads ---------------------


class _Recording(dict[str, Any]):
    """A labels/annotations map that records every key read (iterating it records ``*``: everything)."""

    def __init__(self, data: dict[str, Any], reads: set[str]) -> None:
        super().__init__(data)
        self.reads = reads

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        self.reads.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.reads.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.reads.add(str(key))
        return super().__contains__(key)

    def __iter__(self) -> Any:
        self.reads.add("*")
        return super().__iter__()

    def items(self) -> Any:
        self.reads.add("*")
        return super().items()


def _reviewed_samples() -> list[dict[str, Any]]:
    import yaml

    from tests.webhook.conftest import SAMPLES

    kinds = {f.kind for f in FRAMEWORKS if f.update_review}
    out = []
    for path in sorted(SAMPLES.glob("*/*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and doc.get("kind") in kinds:
                out.append(doc)
    return out


def test_the_cheap_path_compares_every_label_and_annotation_of_the_object_the_accounting_reads(
    two_queues: Decider,
) -> None:
    from batchplane.webhook.decisions import DEMAND_ANNOTATIONS, DEMAND_LABELS

    samples = _reviewed_samples()
    assert {s["kind"] for s in samples} >= {
        "Job",
        "RayJob",
        "RayCluster",
        "RayService",
        "PyTorchJob",
        "AppWrapper",
    }
    label_reads: set[str] = set()
    annotation_reads: set[str] = set()
    accounted = 0
    for obj in samples:
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta["labels"] = _Recording(meta.get("labels") or {}, label_reads)
        meta["annotations"] = _Recording(meta.get("annotations") or {}, annotation_reads)
        accounted += two_queues.demand(obj) is not None
    assert accounted >= 20
    assert label_reads <= set(DEMAND_LABELS)
    assert annotation_reads <= set(DEMAND_ANNOTATIONS)
    assert annotation_reads  # the recording sees the reads (the Job's min-parallelism, Ray's ft-enabled)


def test_kueues_suspend_flip_of_a_pytorchjob_over_a_shrunk_quota_is_allowed() -> None:
    shrunk = Decider(one_queue({"cpu": 1, "memory": "1Gi"}, kueue_extra=None))
    old = labeled(_pytorch_job(), "lq")
    assert not shrunk.validate(old, "team-a").allowed
    new = copy.deepcopy(old)
    new["spec"]["runPolicy"]["suspend"] = False
    assert shrunk.validate(new, "team-a", "UPDATE", old).reason == "unchanged-on-update"
    new["spec"]["runPolicy"]["backoffLimit"] = (
        3  # any other runPolicy field is compared through the accounting
    )
    assert shrunk.validate(new, "team-a", "UPDATE", old).reason == "unchanged-on-update"
    new["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 2
    assert shrunk.validate(new, "team-a", "UPDATE", old).reason == "never-admissible"

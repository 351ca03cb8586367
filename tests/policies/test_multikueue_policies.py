"""MultiKueue policies across a manager's BatchCluster and its declared workers' (PolicyResources with parents)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from batchplane_policies import multikueue as mk

from tests.policies.factories import Stack, cluster_queue_spec, flavor_quota, kueue

KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"


def _release(s: Stack, cluster: str, frameworks: list[str]) -> None:
    config = yaml.safe_dump({"integrations": {"frameworks": frameworks}})
    s.add(
        "kubernetes:helm.sh/v3:Release",
        f"{cluster}-kueue-release",
        {
            "chart": KUEUE_CHART,
            "version": "0.19.2",
            "values": {"managerConfig": {"controllerManagerConfigYaml": config}},
        },
        parent=cluster,
    )


def _queues(
    s: Stack, cluster: str, gpus: int, *, lqs: tuple[str, ...] = ("team-a/default",), check: bool = False
) -> None:
    spec = cluster_queue_spec(flavor_quota("l4", gpu=gpus))
    if check:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": "multikueue"}]}
    s.add(*_at(kueue("ClusterQueue", "team-a", spec), f"{cluster}-cq-team-a"), parent=cluster)
    for key in lqs:
        ns, name = key.split("/")
        s.add(
            *_at(
                kueue("LocalQueue", name, {"clusterQueue": "team-a"}, namespace=ns),
                f"{cluster}-lq-{ns}-{name}",
            ),
            parent=cluster,
        )


def _at(pair: tuple[str, dict[str, Any]], name: str) -> tuple[str, str, dict[str, Any]]:
    return pair[0], name, pair[1]


def program(
    manager_gpus: int = 8,
    workers: dict[str, int] | None = None,
    *,
    existing: tuple[str, ...] = (),
    worker_lqs: dict[str, tuple[str, ...]] | None = None,
    worker_frameworks: dict[str, list[str]] | None = None,
) -> Stack:
    workers = {"w1": 4, "w2": 4} if workers is None else workers
    s = Stack()
    s.add("batchplane:cluster:BatchCluster", "batchplane", {})
    _release(s, "batchplane", ["batch/job", "ray.io/rayjob", "ray.io/rayservice"])
    s.add(
        *_at(kueue("AdmissionCheck", "multikueue", {"controllerName": "kueue.x-k8s.io/multikueue"}), "mk-ac"),
        parent="batchplane",
    )
    for name in [*workers, *existing]:
        s.add(*_at(kueue("MultiKueueCluster", name, {}), f"mkc-{name}"), parent="batchplane")
    _queues(s, "batchplane", manager_gpus, check=True)
    for name, gpus in workers.items():
        s.add("batchplane:cluster:BatchCluster", name, {})
        _release(
            s, name, (worker_frameworks or {}).get(name, ["batch/job", "ray.io/rayjob", "ray.io/rayservice"])
        )
        _queues(s, name, gpus, lqs=(worker_lqs or {}).get(name, ("team-a/default",)))
    return s


def test_a_balanced_program_passes_every_multikueue_policy() -> None:
    s = program()
    assert [s.check(p) for p in mk.POLICIES] == [[], [], []]


def test_a_worker_without_the_managers_local_queue_is_reported() -> None:
    s = program(worker_lqs={"w2": ("team-a/other",)})
    assert s.check(mk.multikueue_workers_mirror_local_queues) == [
        (
            'MultiKueue worker "w2" lacks LocalQueue(s) team-a/default of the manager\'s dispatching ClusterQueues: '
            "workloads dispatched there are never admitted",
            "w2",
        )
    ]


def test_a_worker_whose_kueue_misses_a_dispatched_kind_is_reported() -> None:
    s = program(worker_frameworks={"w1": ["batch/job", "ray.io/rayservice"]})
    assert s.check(mk.multikueue_workers_run_the_managers_integrations) == [
        (
            "the manager's Kueue manages ray.io/rayjob but MultiKueue worker \"w1\"'s does not: such workloads are "
            "dispatched to a worker that never admits them",
            "w1",
        )
    ]  # RayService is never dispatched: not required


@pytest.mark.parametrize(
    ("manager_gpus", "want"),
    [
        (8, []),
        (
            12,
            [
                'ClusterQueue "team-a" nvidia.com/gpu on flavor "l4": the manager\'s nominal quota 12 is more than the workers\' combined (w1 4; w2 4)'
            ],
        ),
        (
            3,
            [
                'ClusterQueue "team-a" nvidia.com/gpu on flavor "l4": the manager\'s nominal quota 3 is less than the largest worker\'s (w1 4; w2 4)'
            ],
        ),
    ],
    ids=["the-sum", "more-than-all", "less-than-the-largest"],
)
def test_manager_quota_is_balanced_against_the_workers(manager_gpus: int, want: list[str]) -> None:
    found = program(manager_gpus).check(mk.multikueue_quota_balance)
    assert [m for m, _ in found if "nvidia.com/gpu" in m] == want


def test_an_existing_worker_makes_the_balance_unknown_and_is_never_reported() -> None:
    s = program(12, existing=("on-prem",))
    assert s.check(mk.multikueue_quota_balance) == []
    assert s.check(mk.multikueue_workers_mirror_local_queues) == []

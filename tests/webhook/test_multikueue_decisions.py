"""The manager's webhook under MultiKueue: a workload the manager's quota admits but that no worker could ever
admit is denied, naming each worker and what it lacks — Kueue-exact (hypothesis against the brute-force model
of tests/webhook/test_quota.py, per worker) and never stricter than Kueue (an existing worker, whose queues are
unknown, or onFlavors scoping, never leads to a denial)."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchplane.components.quota_webhook.policy import render_policy
from batchplane.offline import load_stack_file
from batchplane.stack import load_stack
from batchplane.webhook.decisions import Decider
from batchplane.webhook.policy import PolicyDocument, parse_policy
from tests.conftest import template_path
from tests.webhook.conftest import job
from tests.webhook.test_quota import _brute_force_fits, _groups

FLAVORS = ("f0", "f1")
RESOURCES = ("cpu", "example.com/gpu")


def _document(quotas: dict[str, Any], stack: str, **extra: Any) -> dict[str, Any]:
    return {
        "stack": stack,
        "namespaces": {"team-a": {"localQueues": {"lq": "a"}}},
        "clusterQueues": {"a": {"resourceGroups": _groups(quotas), **extra.pop("queue", {})}},
        "resourceFlavors": {f: {} for f in quotas},
        **extra,
    }


def manager_policy(
    manager: dict[str, Any], workers: list[dict[str, Any] | None], on_flavors: list[str] | None = None
) -> PolicyDocument:
    uses = [{"name": "mk", "onFlavors": on_flavors or []}]
    return parse_policy(
        _document(
            manager,
            "manager",
            queue={"admissionChecks": uses},
            admissionChecks={"mk": {"controllerName": "kueue.x-k8s.io/multikueue"}},
            multiKueue={
                "admissionCheck": "mk",
                "workers": [
                    {"name": f"w{i}", "policy": None if w is None else _document(w, f"w{i}")}
                    for i, w in enumerate(workers)
                ],
            },
        )
    )


quota_maps = st.fixed_dictionaries(
    {
        f: st.fixed_dictionaries(
            {r: st.builds(lambda n: {"nominal": n}, st.integers(0, 6)) for r in RESOURCES}
        )
        for f in FLAVORS
    }
)


@st.composite
def worlds(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "manager": draw(quota_maps),
        "workers": draw(
            st.lists(
                st.one_of(quota_maps, st.none()) if draw(st.booleans()) else quota_maps,
                min_size=1,
                max_size=3,
            )
        ),
        "count": draw(st.integers(1, 3)),
        "per_pod": {r: draw(st.integers(0, 3)) for r in RESOURCES},
    }


def _fits(quotas: dict[str, Any], count: int, per_pod: dict[str, int]) -> bool:
    scenario = {
        "cqs": {"a": {"cohort": None, "quotas": quotas}},
        "cohorts": {},
        "taints": {f: False for f in FLAVORS},
        "pod_sets": [{"name": "main", "count": count, "per_pod": per_pod, "tolerates": set()}],
    }
    return _brute_force_fits(scenario)


def _workload(count: int, per_pod: dict[str, int]) -> dict[str, Any]:
    requests = {r: str(v) for r, v in per_pod.items() if v} or {"cpu": "0"}
    return job(parallelism=count, requests=requests)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_denied_for_the_workers_exactly_when_the_manager_admits_and_no_known_worker_ever_would(
    w: dict[str, Any],
) -> None:
    decision = Decider(manager_policy(w["manager"], w["workers"])).validate(
        _workload(w["count"], w["per_pod"]), "team-a"
    )
    manager_fits = _fits(w["manager"], w["count"], w["per_pod"])
    all_known = all(q is not None for q in w["workers"])
    no_worker = all_known and not any(
        _fits(q, w["count"], w["per_pod"]) for q in w["workers"] if q is not None
    )
    want = "never-admissible" if not manager_fits else "no-worker-admits" if no_worker else "ok"
    assert decision.reason == want, decision.message


def test_onflavors_scoping_never_denies_for_the_workers() -> None:
    small = {f: {r: {"nominal": 0} for r in RESOURCES} for f in FLAVORS}
    big = {f: {r: {"nominal": 6} for r in RESOURCES} for f in FLAVORS}
    decider = Decider(manager_policy(big, [small], on_flavors=["f0"]))
    assert decider.validate(_workload(1, {"cpu": 1, "example.com/gpu": 1}), "team-a").reason == "ok"
    assert (
        Decider(manager_policy(big, [small]))
        .validate(_workload(1, {"cpu": 1, "example.com/gpu": 1}), "team-a")
        .reason
        == "no-worker-admits"
    )


@cache
def template_decider() -> Decider:
    config = copy.deepcopy(load_stack_file(template_path("gke-multiregion-dws")))
    return Decider(render_policy(load_stack(config, "gke-multiregion-dws")))


def l4_job(gpus: int) -> dict[str, Any]:
    obj = job(
        namespace="team-a",
        queue="default",
        parallelism=gpus,
        requests={"cpu": "1", "memory": "4Gi", "nvidia.com/gpu": "1"},
        pod_spec={"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]},
    )
    return obj


@pytest.mark.parametrize(
    ("gpus", "reason", "message"),
    [
        (8, "ok", ""),  # 4 of its own + 4 borrowed from team-b in cohort "ml", on any worker
        (
            9,
            "no-worker-admits",
            'Job "team-a/train": ClusterQueue "team-a" (LocalQueue "default") dispatches to MultiKueue workers, and '
            "none of them can ever admit it (us-east4: {w}; europe-west4, asia-southeast1 refuse it too)",
        ),
        (25, "never-admissible", None),  # more than the manager's 12 + 12
    ],
    ids=["fits-one-worker", "fits-the-manager-only", "fits-nothing"],
)
def test_template_gpu_jobs(gpus: int, reason: str, message: str | None) -> None:
    decision = template_decider().validate(l4_job(gpus), "team-a")
    assert decision.reason == reason, decision.message
    if message is not None and reason == "no-worker-admits":
        # the best worker, and what to ask for, once (issue #37: it repeated every worker's ~300 characters)
        assert decision.lead == (
            "never runs: none of the 3 MultiKueue workers can ever admit it; on us-east4, team-a can get at most 8 "
            "GPUs on l4 (4 of its own + 4 borrowed from cohort ml), none on default-flavor; this Job asks for 9 GPUs "
            "(9 pods × 1) — ask for at most 8 pods of 1 GPU"
        )
        assert len(decision.message) < 900, decision.message
        worker = decision.details.split("(us-east4: ", 1)[1].split("; europe-west4", 1)[0]
        assert worker.startswith('can never be admitted by ClusterQueue "team-a" (LocalQueue "default"): ')
        assert worker.endswith(
            'flavor "l4" offers at most nvidia.com/gpu 8 (nominal 4 + 4 borrowable in cohort "ml")'
        )
        assert decision.details == message.format(w=worker)

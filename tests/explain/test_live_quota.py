"""Live ``explain`` decides never fits / waits / fits now from the cluster's objects (batchplane/explain/live_quota.py),
against a recorded Kueue v0.19.2 cluster (tests/explain/live_cluster.py) served to the real kubernetes client."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from batchplane.explain.live_quota import LiveQuota, decide, message_verdict
from tests.explain.live_cluster import (
    admitted,
    cluster_queue,
    cohort,
    cond,
    explain_on,
    local_queue,
    quota,
    resource_flavor,
    workload,
)

GPU = "nvidia.com/gpu"
MIXED = (
    "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor l4, previously "
    "considered podsets requests (0) + current podset request (8) > maximum capacity (0), insufficient unused quota "
    "for nvidia.com/gpu in flavor h100, 8 more needed"
)


@pytest.fixture
def explain() -> Any:
    return explain_on


def pending(message: str, requests: dict[str, str], count: int = 1, **status: Any) -> dict[str, Any]:
    return workload("job-train-1", requests, count=count,
                    conditions=[cond("QuotaReserved", "False", "Pending", message)], **status)  # fmt: skip


def busy_cohort(team_a_reserved: str = "8") -> list[dict[str, Any]]:
    """team-a (l4: 0, h100: 8 GPUs) and team-b (h100: 8) in cohort ml, each queue's h100 quota held by a job."""
    return [
        cluster_queue("team-a", [quota("l4", gpu=0), quota("h100", gpu=8)],
                      reserved={"h100": {GPU: team_a_reserved}} if team_a_reserved != "0" else None),
        cluster_queue("team-b", [quota("h100", gpu=8)], reserved={"h100": {GPU: "8"}}),
        resource_flavor("l4"), resource_flavor("h100"), local_queue(),
        admitted(workload("job-big-1", {GPU: "8"}), "team-a", "h100"),
        admitted(workload("job-other-1", {GPU: "8"}, namespace="team-b"), "team-b", "h100"),
    ]  # fmt: skip


def test_one_flavor_at_maximum_capacity_beside_one_short_of_unused_quota_waits(explain: Any) -> None:
    got = explain(*busy_cohort(), pending(MIXED, {GPU: "8"}))
    assert got.verdict == "waits-for-quota"
    assert got.sentence.startswith(
        "waits for quota: ClusterQueue team-a's quota is held by team-a/job-big-1 — it is admitted when they "
        "finish or are preempted (couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu "
        "in flavor l4, previously considered podsets requests (0) + current podset request (8) > maximum capacity "
        "(0), insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed)"
    )
    assert got.sentence.endswith("more needed) (Kueue's Pending message says the same)")


def test_a_resource_the_cluster_queue_does_not_cover_never_fits(explain: Any) -> None:
    message = "couldn't assign flavors to pod set main: resource nvidia.com/gpu unavailable in ClusterQueue"
    cpu_queue = cluster_queue("team-a", [quota("default-flavor", cpu=9, memory="36Gi")], cohort=None)
    got = explain(cpu_queue, resource_flavor("default-flavor"), local_queue(),
                  pending(message, {"cpu": "1", GPU: "1"}))  # fmt: skip
    assert got.verdict == "never-fits"
    assert got.sentence.startswith(
        "never fits: ClusterQueue team-a can never admit it, even with every other queue idle — resource "
        "nvidia.com/gpu unavailable in ClusterQueue (PodSet main requests 1; the ClusterQueue covers cpu, memory) — use a LocalQueue "
        "whose ClusterQueue offers that resource, or drop the request"
    )


def test_more_than_the_cohort_can_ever_lend_never_fits_with_kueues_message_quoted(explain: Any) -> None:
    message = (
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor h100, previously "
        "considered podsets requests (0) + current podset request (24) > maximum capacity (16)"
    )
    queues = [
        cluster_queue("team-a", [quota("h100", gpu=8)]),
        cluster_queue("team-b", [quota("h100", gpu=8)]),
    ]
    got = explain(*queues, resource_flavor("h100"), local_queue(), pending(message, {GPU: "8"}, count=3))
    assert got.verdict == "never-fits"
    assert 'PodSet "main" needs nvidia.com/gpu 24 (3 pods × 8)' in got.sentence
    assert got.sentence.endswith(f"(Kueue: Pending: {message})")


def test_free_quota_now_is_pending_and_names_kueues_stale_message(explain: Any) -> None:
    stale = "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed"
    got = explain(*busy_cohort(team_a_reserved="0")[:-2], pending(stale, {GPU: "8"}))
    assert got.verdict == "pending"
    assert got.sentence.startswith(
        "pending: the free quota of ClusterQueue team-a holds it now (on h100); Kueue admits it at its next "
        "scheduling attempt — Kueue's own message says it waits for quota (Pending: couldn't assign"
    )


def test_kueues_maximum_capacity_message_against_raised_quota_says_both(explain: Any) -> None:
    old = (
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor h100, previously "
        "considered podsets requests (0) + current podset request (8) > maximum capacity (4)"
    )
    got = explain(*busy_cohort(), pending(old, {GPU: "8"}))
    assert got.verdict == "waits-for-quota"
    assert "— Kueue's own message says it never fits (Pending: " in got.sentence
    assert got.sentence.endswith(
        "the objects read now say otherwise: quota or usage changed since Kueue last tried"
    )


def test_status_resource_requests_are_kueues_totals_and_win_over_the_template(explain: Any) -> None:
    """A LimitRange or RuntimeClass overhead Kueue counted shows only in status.resourceRequests."""
    message = "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 1 more needed"
    cq = cluster_queue("team-a", [quota("default-flavor", cpu=4)], cohort=None)
    wl = pending(message, {"cpu": "4"}, resourceRequests=[{"name": "main", "resources": {"cpu": "5"}}])
    got = explain(cq, resource_flavor("default-flavor"), local_queue(), wl)
    assert got.verdict == "never-fits" and "cpu 5" in got.sentence


def test_message_verdict_reads_the_whole_message_not_one_flavor() -> None:
    assert message_verdict("Pending", MIXED) == "waits-for-quota"
    assert message_verdict("ExceedsMaxQuota", "") == "never-fits"
    assert (
        message_verdict("Pending", "x: resource example.com/fpga unavailable in ClusterQueue") == "never-fits"
    )
    assert message_verdict("Pending", "") is None


# --- Kueue's available() against potentialAvailable -----------------------------------------------------------

quotas = st.tuples(st.integers(0, 16), st.none() | st.integers(0, 16), st.none() | st.integers(0, 16))


@settings(max_examples=60, deadline=None)
@given(st.lists(quotas, min_size=1, max_size=4), st.none() | quotas)
def test_with_nothing_reserved_available_is_the_potential_maximum(members: list[Any], own: Any) -> None:
    """Kueue's invariant (resource_node.go): with no usage anywhere, ``available`` equals ``potentialAvailable``."""
    queues = [
        cluster_queue(f"q{i}", [quota("h100", gpu=(n, b, lend))]) for i, (n, b, lend) in enumerate(members)
    ]
    cohorts = [cohort("ml", [quota("h100", gpu=(own[0], None, None))])] if own is not None else []
    live = LiveQuota(queues, cohorts, [resource_flavor("h100")])
    for i in range(len(members)):
        assert live.available(f"q{i}", "h100", GPU) == live.queues[f"q{i}"].capacity[("h100", GPU)].maximum


def test_available_respects_the_borrowing_limit_and_what_others_use() -> None:
    """team-a (4, borrowingLimit 2) beside team-b (8): with 7 reserved by team-b, 4 own + the 1 left; with 2
    reserved, 4 own + the borrowing limit 2."""
    queues = [
        cluster_queue("team-a", [quota("h100", gpu=(4, 2, None))]),
        cluster_queue("team-b", [quota("h100", gpu=8)], reserved={"h100": {GPU: "7"}}),
    ]
    live = LiveQuota(queues, [], [resource_flavor("h100")])
    assert live.available("team-a", "h100", GPU) == 5
    queues[1]["status"]["flavorsReservation"][0]["resources"][0]["total"] = "2"
    assert LiveQuota(queues, [], []).available("team-a", "h100", GPU) == 6


# --- on an empty cluster nothing waits ------------------------------------------------------------------------


def job_workload(pod_sets: list[tuple[int, int]]) -> dict[str, Any]:
    """A Workload of PodSets ``ps0, ps1 …``, each (count, GPUs per pod)."""
    wl = workload("job-train-1", {GPU: "1"})
    template = wl["spec"]["podSets"][0]["template"]
    wl["spec"]["podSets"] = []
    for i, (count, gpus) in enumerate(pod_sets):
        ps = {"name": f"ps{i}", "count": count, "template": copy.deepcopy(template)}
        resources = ps["template"]["spec"]["containers"][0]["resources"]
        resources["requests"] = resources["limits"] = {GPU: str(gpus)}
        wl["spec"]["podSets"].append(ps)
    return wl


@settings(max_examples=80, deadline=None)
@example([8, 4], [(1, 4), (1, 8)])  # admitted at Kueue's second attempt: the first PodSet retried on f1
@given(
    st.lists(st.integers(0, 8), min_size=1, max_size=3),
    st.lists(st.tuples(st.integers(1, 3), st.integers(1, 4)), min_size=1, max_size=3),
)
def test_with_nothing_reserved_a_workload_never_fits_or_fits_now_never_waits(
    nominals: list[int], pod_sets: list[tuple[int, int]]
) -> None:
    """Waiting needs someone holding quota: on an idle cluster every PodSet shape either never fits (what the
    webhook refuses) or fits now — the live decision follows Kueue's retries, not one greedy pass."""
    flavors = [quota(f"f{i}", gpu=n) for i, n in enumerate(nominals)]
    live = LiveQuota(
        [cluster_queue("team-a", flavors, cohort=None)], [], [resource_flavor(f"f{i}") for i in range(3)]
    )
    got = decide(live, "team-a", job_workload(pod_sets))
    assert got.verdict in ("never-fits", "fits-now"), got.reasons


def test_a_pod_set_that_fits_is_followed_by_the_one_that_waits(explain: Any) -> None:
    """Kueue places PodSets in order on the free quota (8 of 10): the head's 1 GPU fits, the workers' 8 wait for 1
    more."""
    wl = job_workload([(1, 1), (2, 4)])
    wl["status"]["conditions"] = [cond("QuotaReserved", "False", "Pending", "")]
    queue = cluster_queue("team-a", [quota("h100", gpu=10)], cohort=None, reserved={"h100": {GPU: "2"}})
    holder = admitted(workload("job-small-1", {GPU: "2"}), "team-a", "h100")
    got = explain(queue, resource_flavor("h100"), local_queue(), holder, wl)
    assert got.verdict == "waits-for-quota"
    assert got.objects_say == [
        "couldn't assign flavors to pod set ps1: insufficient unused quota for nvidia.com/gpu in flavor h100, "
        "1 more needed"
    ]


def test_fitting_now_by_borrowing_says_what_it_borrows_and_that_it_can_be_preempted(explain: Any) -> None:
    """team-a (4 GPUs, 2 reserved) beside an idle team-b (8): 6 more fit now, 4 of them borrowed from cohort ml."""
    queues = [
        cluster_queue("team-a", [quota("h100", gpu=4)], reserved={"h100": {GPU: "2"}}),
        cluster_queue("team-b", [quota("h100", gpu=8)]),
    ]
    holder = admitted(workload("job-small-1", {GPU: "2"}), "team-a", "h100")
    got = explain(
        *queues, resource_flavor("h100"), local_queue(), holder, workload("job-train-1", {GPU: "6"})
    )
    assert got.verdict == "pending"
    assert got.sentence == (
        "pending: the free quota of ClusterQueue team-a holds it now (on h100), by borrowing 4 nvidia.com/gpu on "
        "h100 from cohort ml — it can be preempted when the lenders reclaim them; Kueue admits it at its next "
        "scheduling attempt"
    )


def test_v1beta1_queues_name_their_cohort_spec_cohort_and_borrow_as_may_stop_search() -> None:
    """Kueue v1beta1 spells ``cohortName`` as ``cohort`` and ``MayStopSearch`` as ``Borrow``."""
    old = cluster_queue("team-a", [quota("h100", gpu=4)], cohort=None)
    old["spec"].update({"cohort": "ml", "flavorFungibility": {"whenCanBorrow": "Borrow"}})
    live = LiveQuota([old, cluster_queue("team-b", [quota("h100", gpu=8)])], [], [resource_flavor("h100")])
    assert live.queues["team-a"].capacity[("h100", GPU)].maximum == 12
    assert live.queues["team-a"].try_next_when_borrowing is False

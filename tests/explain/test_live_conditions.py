"""Live ``explain`` says first what the Workload's conditions say: preempted (by whom, why, when), a DWS admission
check in retry (quota held or released, when Kueue retries), and a namespaceSelector with expressions
(batchplane/explain/live_conditions.py), against a recorded Kueue v0.19.2 cluster (tests/explain/live_cluster.py)."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.explain.live_conditions import backoff_seconds, retry_strategy, unmet_requirements
from tests.explain.live_cluster import (
    KUEUE,
    admitted,
    cluster_queue,
    cond,
    explain_on,
    local_queue,
    namespace,
    quota,
    resource_flavor,
    workload,
)

GPU = "nvidia.com/gpu"
WAITING = "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed"


@pytest.fixture
def explain() -> Any:
    return explain_on


# --- preempted ------------------------------------------------------------------------------------------------

#: Kueue v0.19.2's Preempted reasons, its HumanReadablePreemptionReasons (preemption.go L161-167), the queue that
#: preempts, and the sentence's "because of" part.
REASONS = [
    ("InClusterQueue", "prioritization in the ClusterQueue", "team-a",
     "priority within the queue: a higher-priority workload of its own ClusterQueue needed the quota"),
    ("InCohortReclamation", "reclamation within the cohort", "team-b",
     "cohort reclamation: the quota it borrowed was reclaimed by the ClusterQueue that lends it"),
    ("InCohortReclaimWhileBorrowing", "reclamation within the cohort while borrowing", "team-b",
     "cohort reclamation while borrowing: a ClusterQueue of the cohort took the quota it borrowed"),
    ("InCohortFairSharing", "Fair Sharing within the cohort", "team-b",
     "fair sharing in the cohort: its ClusterQueue used more than its fair share"),
]  # fmt: skip


@pytest.mark.parametrize(("reason", "human", "by", "because"), REASONS)
def test_a_preempted_workload_says_first_by_whom_why_and_when(
    explain: Any, reason: str, human: str, by: str, because: str
) -> None:
    message = (
        f"Preempted to accommodate a workload (UID: 6f1c-b1, JobUID: 9a2e-b1) due to {human}; preemptor path: "
        f"/ml/{by}; preemptee path: /ml/team-a"
    )
    preemptor = admitted(workload("job-reclaim-1", {GPU: "8"}, namespace=by, uid="6f1c-b1"), by, "h100")
    victim = workload("job-train-1", {GPU: "8"}, conditions=[
        cond("QuotaReserved", "False", "Pending", WAITING, at="2026-11-27T11:26:00Z"),
        cond("Evicted", "True", "Preempted", message, at="2026-11-27T11:25:00Z"),
        cond("Preempted", "True", reason, message, at="2026-11-27T11:25:00Z"),
        cond("Requeued", "True", "Preempted", message, at="2026-11-27T11:26:00Z"),
    ])  # fmt: skip
    # Within the queue: team-a owns the 8 GPUs; in the cohort: team-b owns them and team-a borrowed them.
    own = {"team-a": 8 if by == "team-a" else 0, "team-b": 8 if by == "team-b" else 0}
    queues = [cluster_queue(q, [quota("h100", gpu=own[q])], reserved={"h100": {GPU: "8"}} if by == q else None)
              for q in ("team-a", "team-b")]  # fmt: skip
    got = explain(*queues, resource_flavor("h100"), local_queue(), preemptor, victim)
    assert got.sentence.startswith(
        f"preempted 35 min ago (2026-11-27 11:25 UTC) by Workload {by}/job-reclaim-1 of ClusterQueue {by} "
        f"(/ml/{by}), because of {because}"
    )
    held = (
        "held by team-a/job-reclaim-1"
        if by == "team-a"
        else "held by no workload of the queue; the cohort's quota is used by team-b/job-reclaim-1 (ClusterQueue team-b)"
    )
    assert f"({reason}) — now it waits for quota: ClusterQueue team-a's quota is {held} — " in got.sentence
    assert got.verdict == "waits-for-quota" and got.preempted in got.sentence


def test_an_evicted_workload_says_the_eviction_first(explain: Any) -> None:
    victim = workload("job-train-1", {GPU: "8"}, conditions=[
        cond("QuotaReserved", "False", "Pending", WAITING),
        cond("Evicted", "True", "PodsReadyTimeout", "Exceeded the PodsReady timeout team-a/job-train-1"),
    ])  # fmt: skip
    others = admitted(workload("job-big-1", {GPU: "8"}), "team-a", "h100")
    queue = cluster_queue("team-a", [quota("h100", gpu=8)], cohort=None, reserved={"h100": {GPU: "8"}})
    got = explain(queue, resource_flavor("h100"), local_queue(), others, victim)
    assert got.sentence.startswith(
        "evicted 60 min ago (2026-11-27 11:00 UTC) (PodsReadyTimeout: Exceeded the PodsReady timeout "
        "team-a/job-train-1) — now it waits for quota: ClusterQueue team-a's quota is held by team-a/job-big-1"
    )


# --- a DWS admission check in retry ---------------------------------------------------------------------------


def dws(retry: dict[str, int] | None) -> list[dict[str, Any]]:
    check = {"apiVersion": KUEUE, "kind": "AdmissionCheck", "metadata": {"name": "dws-h100"},
             "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                      "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig",
                                     "name": "dws-config"}}}  # fmt: skip
    config: dict[str, Any] = {"apiVersion": KUEUE, "kind": "ProvisioningRequestConfig",
                              "metadata": {"name": "dws-config"},
                              "spec": {"provisioningClassName": "queued-provisioning.gke.io",
                                       "managedResources": [GPU]}}  # fmt: skip
    if retry is not None:
        config["spec"]["retryStrategy"] = retry
    queue = cluster_queue("team-a", [quota("h100", gpu=8)], cohort=None, reserved={"h100": {GPU: "8"}})
    return [check, config, queue, resource_flavor("h100"), local_queue()]


def provisioning_request(attempt: int) -> dict[str, Any]:
    return {"apiVersion": "autoscaling.x-k8s.io/v1", "kind": "ProvisioningRequest",
            "metadata": {"name": f"job-train-1-dws-h100-{attempt}", "namespace": "team-a",
                         "creationTimestamp": "2026-11-27T11:40:00Z"},
            "status": {"conditions": [cond("Failed", "True", "FailedToProvision",
                                           "GCE out of resources in us-central1-a")]}}  # fmt: skip


def test_a_dws_check_in_retry_says_the_quota_is_held_and_when_kueue_retries(explain: Any) -> None:
    """retryCount 1 (the second ProvisioningRequest failed): Kueue's backoff for requeue 2 is base × 2 = 600 s."""
    wl = admitted(workload("job-train-1", {GPU: "8"}), "team-a", "h100")
    wl["status"]["conditions"] = wl["status"]["conditions"][
        :1
    ]  # QuotaReserved, not Admitted: the check is not Ready
    wl["status"]["admissionChecks"] = [{
        "name": "dws-h100", "state": "Retry", "lastTransitionTime": "2026-11-27T11:55:00Z", "retryCount": 1,
        "requeueAfterSeconds": 600, "message": "Retrying after failure: GCE out of resources in us-central1-a"}]  # fmt: skip
    config = {"backoffLimitCount": 5, "backoffBaseSeconds": 300, "backoffMaxSeconds": 3600}
    got = explain(*dws(config), wl, provisioning_request(2))
    assert got.verdict == "waits-for-capacity"
    assert got.sentence.startswith(
        "waits for capacity: quota held: ClusterQueue team-a still reserves its quota (QuotaReserved), but "
        "AdmissionCheck dws-h100 is in Retry, so Kueue evicts it, releasing the quota, and retries at 12:05 UTC, in "
        "5 min (attempt 3 of 6; backoff 600 s from retryStrategy backoffBaseSeconds 300, backoffMaxSeconds 3600, "
        "backoffLimitCount 5): Retrying after failure: GCE out of resources in us-central1-a"
    )
    assert (
        "ProvisioningRequest job-train-1-dws-h100-2, waiting 20 min: Failed (FailedToProvision"
        in got.sentence
    )


def test_after_the_retrys_eviction_it_waits_for_the_requeue_time_with_quota_released(explain: Any) -> None:
    evicted = (
        "Evicted due to AdmissionCheck in Retry state: dws-h100: Retrying after failure: GCE out of resources"
    )
    wl = workload("job-train-1", {GPU: "8"}, conditions=[
        cond("QuotaReserved", "False", "Pending", evicted, at="2026-11-27T11:56:00Z"),
        cond("Evicted", "True", "AdmissionCheck", evicted, at="2026-11-27T11:55:00Z"),
    ], admissionChecks=[{"name": "dws-h100", "state": "Pending", "lastTransitionTime": "2026-11-27T11:55:00Z",
                         "retryCount": 1, "requeueAfterSeconds": 60,
                         "message": "Reset to Pending after eviction. Previously: Retry"}],
        requeueState={"count": 1, "requeueAt": "2026-11-27T11:56:00Z"})  # fmt: skip
    wl["status"]["requeueState"]["requeueAt"] = "2026-11-27T12:07:00Z"
    # The ProvisioningRequestConfig is gone: Kueue's defaults.
    got = explain(*dws(None)[:1], *dws(None)[2:], wl, absent=("provisioningrequestconfigs/dws-config",))
    assert got.verdict == "waits-for-capacity"
    assert got.sentence.startswith("evicted 5 min ago (2026-11-27 11:55 UTC) (AdmissionCheck: Evicted due to")
    assert (
        "— now it waits for capacity: quota released after AdmissionCheck dws-h100 asked for a retry; Kueue retries "
        "at 12:07 UTC, in 7 min (attempt 2 of 4; backoff 60 s from retryStrategy backoffBaseSeconds 60, "
        "backoffMaxSeconds 1800, backoffLimitCount 3)" in got.sentence
    )


def test_kueues_backoff_doubles_from_the_base_up_to_the_cap() -> None:
    """``wait.NewBackoff(60s, 1800s, 2, …).WaitTime(n)``: 60 s, 120 s, 240 s … at most 1800 s."""
    assert [backoff_seconds(n, 60, 1800) for n in range(1, 8)] == [60, 120, 240, 480, 960, 1800, 1800]
    assert retry_strategy(None) == (3, 60, 1800)
    assert retry_strategy({"spec": {"retryStrategy": {"backoffLimitCount": 0}}}) == (0, 60, 1800)


# --- namespace selectors --------------------------------------------------------------------------------------

MISMATCH = "workload namespace doesn't match ClusterQueue selector"


def test_a_selector_of_expressions_the_namespace_does_not_meet_is_misconfigured(explain: Any) -> None:
    selector = {"matchExpressions": [
        {"key": "team", "operator": "In", "values": ["a", "b"]},
        {"key": "kueue.openshift.io/managed", "operator": "Exists"},
        {"key": "quarantine", "operator": "DoesNotExist"},
        {"key": "tier", "operator": "NotIn", "values": ["batch"]},
    ]}  # fmt: skip
    queue = cluster_queue("team-a", [quota("h100", gpu=8)], cohort=None, selector=selector)
    wl = workload("job-train-1", {GPU: "8"}, conditions=[cond("QuotaReserved", "False", "Pending", MISMATCH)])
    labels = {"team": "c", "tier": "batch", "quarantine": "yes"}
    got = explain(queue, resource_flavor("h100"), local_queue(), namespace("team-a", labels), wl)
    assert got.verdict == "queue-misconfigured"
    assert got.sentence == (
        "queue misconfigured: namespace team-a does not meet team in (a,b), kueue.openshift.io/managed, !quarantine, "
        "tier notin (batch), which ClusterQueue team-a's namespaceSelector needs (OpenShift's Kueue manages only "
        "namespaces so labelled) — nothing from it is admitted"
    )


def test_a_selector_of_expressions_the_namespace_meets_goes_on_to_the_quota(explain: Any) -> None:
    selector = {
        "matchLabels": {"env": "prod"},
        "matchExpressions": [{"key": "team", "operator": "In", "values": ["a"]}],
    }
    queue = cluster_queue("team-a", [quota("h100", gpu=8)], cohort=None, selector=selector)
    wl = workload("job-train-1", {GPU: "8"})
    got = explain(
        queue, resource_flavor("h100"), local_queue(), namespace("team-a", {"team": "a", "env": "prod"}), wl
    )
    assert got.verdict == "pending" and got.sentence.startswith(
        "pending: the free quota of ClusterQueue team-a"
    )


def test_an_unset_selector_selects_no_namespace() -> None:
    assert unmet_requirements(None, {"team": "a"}) is None
    assert unmet_requirements({}, {}) == []
    assert unmet_requirements({"matchExpressions": [{"key": "x", "operator": "Exists"}]}, {"x": ""}) == []

"""`batchplane explain --context CTX -n NS NAME`: the real kubernetes client against recorded API answers served on
a loopback HTTP server (tests/preflight/replay.py), one case per class (issue #31)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.explain.live import LiveError, LiveExplainer
from tests.explain import live_cluster as live
from tests.preflight.olm_helpers import kubeconfig
from tests.preflight.replay import RecordedServer

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
GPU = "nvidia.com/gpu"
T = live.T
#: team-a and team-b, 8 H100 GPUs each, in cohort ml: team-a can get at most 16.
TWO_TEAMS = (
    live.cluster_queue("team-a", [live.quota("h100", gpu=8)]),
    live.cluster_queue("team-b", [live.quota("h100", gpu=8)]),
    live.resource_flavor("h100"),
    live.local_queue(),
)
K = "/apis/kueue.x-k8s.io/v1beta2"
GROUP = {"method": "GET", "host": "*", "path": "/apis/kueue.x-k8s.io", "status": 200,
         "body": {"kind": "APIGroup", "name": "kueue.x-k8s.io",
                  "versions": [{"groupVersion": "kueue.x-k8s.io/v1beta2", "version": "v1beta2"},
                               {"groupVersion": "kueue.x-k8s.io/v1beta1", "version": "v1beta1"}]}}  # fmt: skip


def get(path: str, body: Any, status: int = 200) -> dict[str, Any]:
    return {"method": "GET", "host": "*", "path": path, "status": status, "body": body}


def missing(path: str) -> dict[str, Any]:
    return get(path, {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404}, 404)


def workload(conditions: list[dict[str, Any]], **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {"name": "job-train-3f2a1", "namespace": "team-a",
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "u"}]},
        "spec": {"queueName": "default", "podSets": [{"name": "main", "count": 1}]},
        "status": {"conditions": conditions, **status},
    }  # fmt: skip


def cond(kind: str, status: str, reason: str, message: str = "") -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-11-27T11:00:00Z"}  # fmt: skip


LQ = get(f"{K}/namespaces/team-a/localqueues/default",
         {"kind": "LocalQueue", "metadata": {"name": "default", "namespace": "team-a"},
          "spec": {"clusterQueue": "team-a"}})  # fmt: skip


def cluster_queue(
    active: dict[str, Any] | None = None, borrowed: str | None = None, selector: Any = None
) -> Any:
    resources = [{"name": "nvidia.com/gpu", "total": "8", **({"borrowed": borrowed} if borrowed else {})}]
    return {"kind": "ClusterQueue", "metadata": {"name": "team-a"},
            "spec": {"cohortName": "ml", "namespaceSelector": selector or {}},
            "status": {"conditions": [active or cond("Active", "True", "Ready", "Can admit new workloads")],
                       "admittedWorkloads": 1, "pendingWorkloads": 1,
                       "flavorsUsage": [{"name": "h100", "resources": resources}]}}  # fmt: skip


def by_name(wl: dict[str, Any]) -> dict[str, Any]:
    return get(f"{K}/namespaces/team-a/workloads/job-train-3f2a1", wl)


@pytest.fixture
def explain() -> Iterator[Any]:
    servers: list[RecordedServer] = []

    def run(*exchanges: dict[str, Any], name: str = "job-train-3f2a1") -> Any:
        from kubernetes import client

        server = RecordedServer(list(exchanges)).__enter__()
        servers.append(server)
        configuration = client.Configuration()
        configuration.host = server.url
        api = client.ApiClient(configuration)
        try:
            return LiveExplainer(api, now=NOW).explain("team-a", name), server.replay
        finally:
            api.close()

    yield run
    for s in servers:
        s.__exit__(None, None, None)


def test_never_fits_is_decided_from_the_cluster_queues(explain: Any) -> None:
    message = (
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor h100, "
        "previously considered podsets requests (0) + current podset request (24) > maximum capacity (16)"
    )
    wl = live.workload("job-train-3f2a1", {GPU: "8"}, count=3,
                       conditions=[cond("QuotaReserved", "False", "Pending", message)])  # fmt: skip
    got, replay = explain(*live.serve(*TWO_TEAMS, wl))
    assert got.verdict == "never-fits" and got.kueue_reason == f"Pending: {message}"
    assert got.sentence.startswith(
        'never fits: ClusterQueue team-a can never admit it, even with every other queue idle — PodSet "main" '
        "needs nvidia.com/gpu 24 (3 pods × 8)"
    )
    assert replay.unmatched == []


def test_waits_for_quota_names_who_holds_it_and_who_borrows(explain: Any) -> None:
    message = "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed"
    team_a = live.cluster_queue("team-a", [live.quota("h100", gpu=8)], reserved={"h100": {GPU: "8"}})
    team_b = live.cluster_queue("team-b", [live.quota("h100", gpu=8)], reserved={"h100": {GPU: "8"}})
    team_b["status"]["flavorsReservation"][0]["resources"][0]["borrowed"] = "8"
    team_b["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "0"
    holder = live.admitted(live.workload("job-big-1", {GPU: "8"}), "team-a", "h100")
    wl = live.workload(
        "job-train-3f2a1", {GPU: "8"}, conditions=[cond("QuotaReserved", "False", "Pending", message)]
    )
    events = [
        {"type": "Normal", "reason": "Pending", "message": message, "lastTimestamp": "2026-11-27T11:59:00Z"}
    ]
    got, replay = explain(*live.serve(team_a, team_b, live.resource_flavor("h100"), live.local_queue(), holder, wl,
                                      events=events))  # fmt: skip
    assert got.verdict == "waits-for-quota"
    assert got.sentence.startswith(
        "waits for quota: ClusterQueue team-a's quota is held by team-a/job-big-1; in cohort ml: team-b borrows 8 "
        "nvidia.com/gpu on h100"
    )
    assert f"event Normal Pending: {message}" in got.details
    assert replay.unmatched == []


def test_a_failed_provisioning_request_waits_for_capacity_with_the_wait_time(explain: Any) -> None:
    wl = workload([cond("QuotaReserved", "True", "QuotaReserved")],
                  admissionChecks=[{"name": "h100-dws", "state": "Pending", "message": "", "lastTransitionTime": T}])  # fmt: skip
    pr = {"metadata": {"name": "job-train-3f2a1-h100-dws-1", "creationTimestamp": "2026-11-27T11:15:00Z"},
          "status": {"conditions": [cond("Failed", "True", "FailedToProvision", "no capacity in us-central1-a")]}}  # fmt: skip
    got, replay = explain(
        GROUP, by_name(wl), LQ, get(f"{K}/clusterqueues/team-a", cluster_queue()),
        get("/apis/autoscaling.x-k8s.io/v1/namespaces/team-a/provisioningrequests", {"items": [pr]}),
    )  # fmt: skip
    assert got.verdict == "waits-for-capacity"
    assert (
        "ProvisioningRequest job-train-3f2a1-h100-dws-1, waiting 45 min: Failed (FailedToProvision: no capacity"
        in got.sentence
    )
    assert got.kueue_reason == "no capacity in us-central1-a"
    assert [u for u in replay.unmatched if "/events" not in u] == []


def test_an_inactive_cluster_queue_is_misconfigured_with_kueues_reason(explain: Any) -> None:
    inactive = cond(
        "Active",
        "False",
        "FlavorNotFound",
        "Can't admit new workloads: references missing ResourceFlavor(s): h100.",
    )
    got, _ = explain(GROUP, by_name(workload([])), LQ,
                     get(f"{K}/clusterqueues/team-a", cluster_queue(active=inactive)))  # fmt: skip
    assert got.verdict == "queue-misconfigured"
    assert got.sentence.startswith(
        'queue inactive: ClusterQueue "team-a" is not Active (FlavorNotFound: Can\'t admit'
    )


def test_a_namespace_without_the_openshift_managed_label_is_misconfigured(explain: Any) -> None:
    selector = {"matchLabels": {"kueue.openshift.io/managed": "true"}}
    got, _ = explain(GROUP, by_name(workload([])), LQ,
                     get(f"{K}/clusterqueues/team-a", cluster_queue(selector=selector)),
                     get("/api/v1/namespaces/team-a", {"metadata": {"name": "team-a", "labels": {}}}))  # fmt: skip
    assert got.verdict == "queue-misconfigured"
    assert "lacks the label kueue.openshift.io/managed=true" in got.sentence


def test_the_workload_is_found_by_its_owning_job(explain: Any) -> None:
    wl = workload([cond("QuotaReserved", "True", "QuotaReserved"), cond("Admitted", "True", "Admitted")],
                  admission={"clusterQueue": "team-a", "podSetAssignments": [{"name": "main", "flavors": {"cpu": "default-flavor"}}]})  # fmt: skip
    got, _ = explain(GROUP, missing(f"{K}/namespaces/team-a/workloads/train"),
                     get(f"{K}/namespaces/team-a/workloads", {"items": [wl]}), LQ,
                     get(f"{K}/clusterqueues/team-a", cluster_queue()), name="train")  # fmt: skip
    assert (got.verdict, got.workload) == ("admitted", "job-train-3f2a1")
    assert got.sentence == "admitted on default-flavor by ClusterQueue team-a"


def test_no_workload_and_no_local_queue_is_not_managed(explain: Any) -> None:
    got, _ = explain(GROUP, missing(f"{K}/namespaces/team-a/workloads/train"),
                     get(f"{K}/namespaces/team-a/workloads", {"items": []}),
                     get(f"{K}/namespaces/team-a/localqueues", {"items": []}), name="train")  # fmt: skip
    assert got.verdict == "not-managed" and "namespace team-a has no LocalQueue" in got.sentence


def test_no_kueue_api_group_is_a_clear_error(explain: Any) -> None:
    with pytest.raises(LiveError, match="Kueue is not installed on this cluster"):
        explain(missing("/apis/kueue.x-k8s.io"))


def test_forbidden_is_a_clear_error(explain: Any) -> None:
    forbidden = get(f"{K}/namespaces/team-a/workloads/job-train-3f2a1",
                    {"kind": "Status", "reason": "Forbidden", "code": 403}, 403)  # fmt: skip
    with pytest.raises(
        LiveError, match=r"no access: GET /apis/kueue\.x-k8s\.io/v1beta2/namespaces/team-a/workloads"
    ):
        explain(GROUP, forbidden)


def test_another_kueue_version_is_a_clear_error(explain: Any) -> None:
    old = get("/apis/kueue.x-k8s.io", {"versions": [{"version": "v1alpha1"}]})
    with pytest.raises(LiveError, match=r"serves kueue\.x-k8s\.io v1alpha1"):
        explain(old)


def test_the_cli_reads_the_kubeconfig_context_and_prints_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    message = "couldn't assign flavors to pod set main: x > maximum capacity (16)"
    wl = live.workload("job-train-3f2a1", {GPU: "8"}, count=3,
                       conditions=[cond("QuotaReserved", "False", "Pending", message)])  # fmt: skip
    with RecordedServer(live.serve(*TWO_TEAMS, wl)) as server:
        config = kubeconfig(tmp_path, server.url, "prod")
        monkeypatch.setenv("KUBECONFIG", str(config))
        result = CliRunner().invoke(
            app, ["explain", "--context", "prod", "-n", "team-a", "job-train-3f2a1", "--json"]
        )
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["verdict"] == "never-fits"


def test_the_cli_reports_no_kueue_as_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with RecordedServer([missing("/apis/kueue.x-k8s.io")]) as server:
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path, server.url, "prod")))
        result = CliRunner().invoke(app, ["explain", "--context", "prod", "-n", "team-a", "train"])
    assert result.exit_code == 2 and "Kueue is not installed" in result.stderr

"""A recorded Kueue v0.19.2 cluster for the live ``explain`` tests: objects written to the real v1beta2 CRD schemas
(../shared/crds/kueue/v0.19.2; :func:`invalid` checks them with the project's CRD checker), served as the API server
answers them — each object at its own path and in its kind's list — by tests/preflight/replay.py."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from batchplane.explain.live import LiveExplainer, LiveExplanation
from tests.preflight.replay import RecordedServer
from tests.support.crdcheck import CrdCatalog

#: The time the recorded cluster is read at.
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
KUEUE = "kueue.x-k8s.io/v1beta2"
K = f"/apis/{KUEUE}"
T = "2026-11-27T11:00:00Z"
GROUP = {
    "method": "GET", "host": "*", "path": "/apis/kueue.x-k8s.io", "status": 200,
    "body": {"kind": "APIGroup", "name": "kueue.x-k8s.io",
             "versions": [{"groupVersion": KUEUE, "version": "v1beta2"},
                          {"groupVersion": "kueue.x-k8s.io/v1beta1", "version": "v1beta1"}]},
}  # fmt: skip
CRDS = Path(__file__).resolve().parents[2] / ".." / "shared" / "crds" / "kueue"


@functools.lru_cache(maxsize=1)
def _catalog() -> CrdCatalog:
    return CrdCatalog.load(CRDS)


def invalid(objects: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """Every Kueue object the real CRD refuses, with the API server's messages (empty: all valid)."""
    out: dict[str, list[str]] = {}
    for obj in objects:
        if obj["apiVersion"].startswith("kueue.x-k8s.io/"):
            issues = _catalog().validate(obj)
            if issues:
                out[f"{obj['kind']}/{obj['metadata']['name']}"] = [str(i) for i in issues]
    return out


def get(path: str, body: Any, status: int = 200) -> dict[str, Any]:
    return {"method": "GET", "host": "*", "path": path, "status": status, "body": body}


def cond(kind: str, status: str, reason: str, message: str = "", at: str = T) -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": at}


def quota(flavor: str, **resources: Any) -> dict[str, Any]:
    """A flavor's quotas: ``gpu=8`` or ``gpu=(8, borrowingLimit, lendingLimit)`` (``gpu`` is nvidia.com/gpu)."""
    out = []
    for name, value in resources.items():
        nominal, borrow, lend = value if isinstance(value, tuple) else (value, None, None)
        entry: dict[str, Any] = {
            "name": "nvidia.com/gpu" if name == "gpu" else name,
            "nominalQuota": str(nominal),
        }
        if borrow is not None:
            entry["borrowingLimit"] = str(borrow)
        if lend is not None:
            entry["lendingLimit"] = str(lend)
        out.append(entry)
    return {"name": flavor, "resources": out}


def cluster_queue(
    name: str,
    flavors: list[dict[str, Any]],
    *,
    covered: list[str] | None = None,
    cohort: str | None = "ml",
    reserved: dict[str, dict[str, str]] | None = None,
    selector: Any = None,
) -> dict[str, Any]:
    """A ClusterQueue with one resource group; ``reserved`` = {flavor: {resource: total}} (its reserving usage)."""
    covered = covered or sorted({r["name"] for f in flavors for r in f["resources"]})
    spec: dict[str, Any] = {
        "namespaceSelector": {} if selector is None else selector,
        "resourceGroups": [{"coveredResources": covered, "flavors": flavors}],
    }
    if cohort:
        spec["cohortName"] = cohort
    nominal = {(f["name"], r["name"]): int(r["nominalQuota"]) for f in flavors for r in f["resources"]
               if str(r["nominalQuota"]).isdigit()}  # fmt: skip
    usage = [
        {"name": f, "resources": [
            {"name": r, "total": total, "borrowed": str(max(0, int(total) - nominal.get((f, r), 0)))}
            for r, total in rs.items()]}
        for f, rs in (reserved or {}).items()
    ]  # fmt: skip
    return {
        "apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec,
        "status": {"conditions": [cond("Active", "True", "Ready", "Can admit new workloads")],
                   "admittedWorkloads": 1 if usage else 0, "reservingWorkloads": 1 if usage else 0,
                   "pendingWorkloads": 1, "flavorsReservation": usage, "flavorsUsage": usage},
    }  # fmt: skip


def resource_flavor(name: str) -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": name},
            "spec": {"nodeLabels": {"cloud.google.com/gke-accelerator": name}}}  # fmt: skip


def cohort(
    name: str, flavors: list[dict[str, Any]] | None = None, covered: list[str] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if flavors:
        spec["resourceGroups"] = [
            {
                "coveredResources": covered or sorted({r["name"] for f in flavors for r in f["resources"]}),
                "flavors": flavors,
            }
        ]
    return {"apiVersion": KUEUE, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def workload(
    name: str,
    requests: dict[str, str],
    *,
    count: int = 1,
    namespace: str = "team-a",
    conditions: list[dict[str, Any]] | None = None,
    uid: str = "",
    **status: Any,
) -> dict[str, Any]:
    """A Workload of one PodSet ``main`` (a Job's), ``count`` pods each requesting ``requests``."""
    limits = {k: v for k, v in requests.items() if k.endswith("/gpu")}
    resources: dict[str, Any] = {"requests": dict(requests), **({"limits": limits} if limits else {})}
    meta: dict[str, Any] = {"name": name, "namespace": namespace,
                            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name.split("-")[1],
                                                 "uid": f"job-{name}"}]}  # fmt: skip
    if uid:
        meta["uid"] = uid
    return {
        "apiVersion": KUEUE, "kind": "Workload", "metadata": meta,
        "spec": {"queueName": "default", "podSets": [{"name": "main", "count": count, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36", "resources": resources}]}}}]},
        "status": {"conditions": conditions or [], **status},
    }  # fmt: skip


def admitted(wl: dict[str, Any], cq: str, flavor: str) -> dict[str, Any]:
    """``wl`` holding quota in ``cq`` (QuotaReserved and Admitted, its PodSet on ``flavor``)."""
    ps = wl["spec"]["podSets"][0]
    requests = ps["template"]["spec"]["containers"][0]["resources"]["requests"]
    wl["status"]["conditions"] = [cond("QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cq}"),
                                  cond("Admitted", "True", "Admitted", "The workload is admitted")]  # fmt: skip
    wl["status"]["admission"] = {
        "clusterQueue": cq,
        "podSetAssignments": [{"name": "main", "count": ps["count"], "flavors": {r: flavor for r in requests},
                               "resourceUsage": {r: str(int(v) * ps["count"]) for r, v in requests.items()}}],
    }  # fmt: skip
    return wl


def local_queue(name: str = "default", cq: str = "team-a", namespace: str = "team-a") -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": cq}}  # fmt: skip


def namespace(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def serve(
    *objects: dict[str, Any], events: list[dict[str, Any]] | None = None, absent: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """The API server's answers for ``objects``: each at its path, each Kueue kind's cluster-wide list, the
    namespace's Workload and LocalQueue lists and its (recorded) events; a 404 for each Kueue path in ``absent``
    (``provisioningrequestconfigs/dws``)."""
    plural = {"ClusterQueue": "clusterqueues", "Cohort": "cohorts", "ResourceFlavor": "resourceflavors",
              "Workload": "workloads", "LocalQueue": "localqueues", "AdmissionCheck": "admissionchecks",
              "ProvisioningRequestConfig": "provisioningrequestconfigs"}  # fmt: skip
    out = [GROUP]
    lists: dict[str, list[dict[str, Any]]] = {p: [] for p in plural.values()}
    namespaced: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for obj in objects:
        kind, meta = obj["kind"], obj["metadata"]
        if kind == "Namespace":
            out.append(get(f"/api/v1/namespaces/{meta['name']}", obj))
            continue
        if kind == "ProvisioningRequest":
            namespaced.setdefault((meta["namespace"], "provisioningrequests"), []).append(obj)
            continue
        p = plural[kind]
        lists[p].append(obj)
        if "namespace" in meta:
            out.append(get(f"{K}/namespaces/{meta['namespace']}/{p}/{meta['name']}", obj))
            namespaced.setdefault((meta["namespace"], p), []).append(obj)
        else:
            out.append(get(f"{K}/{p}/{meta['name']}", obj))
    for p, items in lists.items():
        out.append(get(f"{K}/{p}", {"items": items}))
    for (ns, p), items in namespaced.items():
        base = "/apis/autoscaling.x-k8s.io/v1" if p == "provisioningrequests" else K
        out.append(get(f"{base}/namespaces/{ns}/{p}", {"items": items}))
    out.append(get("/api/v1/namespaces/team-a/events", {"items": events or []}))
    for path in absent:
        out.append(
            get(
                f"{K}/{path}", {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404}, 404
            )
        )
    return out


def explain_on(
    *objects: dict[str, Any], name: str = "job-train-1", absent: Iterable[str] = ()
) -> LiveExplanation:
    """``explain --context`` of ``team-a/name`` through the real kubernetes client against ``objects`` served on a
    loopback server, after checking them against the CRDs; every request it makes must be recorded."""
    from kubernetes import client

    assert invalid(objects) == {}
    with RecordedServer(serve(*objects, absent=absent)) as server:
        configuration = client.Configuration()
        configuration.host = server.url
        api = client.ApiClient(configuration)
        try:
            got = LiveExplainer(api, now=NOW).explain("team-a", name)
        finally:
            api.close()
    assert server.replay.unmatched == []
    return got

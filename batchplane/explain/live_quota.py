"""The live decision of ``batchplane explain --context``: never fits, waits for quota or fits now, from the cluster's
objects — the ClusterQueues (``spec.resourceGroups``: flavors, ``nominalQuota`` / ``borrowingLimit`` /
``lendingLimit``), the Cohorts, the ClusterQueues' reserved usage (``status.flavorsReservation``), the ResourceFlavors
and the Workload's ``spec.podSets`` (with ``status.resourceRequests``, Kueue's own totals, where present).

The same code as the webhook decides: the objects are turned into the webhook's policy document
(:class:`~batchplane.webhook.policy.PolicyDocument`), compiled by :func:`~batchplane.webhook.queues.compile_queues`
(Kueue's ``potentialAvailable``) and judged by :func:`~batchplane.webhook.capacity.check_workload_ever_fits`: a
workload it refuses *never fits*. The rest is held against what is free now, as Kueue's ``fitsResourceQuota`` does
(kubernetes-sigs/kueue v0.19.2 ``pkg/scheduler/flavorassigner/flavorassigner.go`` L1330-1380): a request beyond
``potentialAvailable`` is ``> maximum capacity``, one within ``available`` fits, anything between is ``insufficient
unused quota … N more needed``; ``available`` is transcribed from ``pkg/cache/scheduler/resource_node.go``
L97-122 @v0.19.2, the cohort's usage from ``accumulateFromChild`` L217-231. A resource no resource group covers is
Kueue's ``resource … unavailable in ClusterQueue`` (flavorassigner.go L1069-1072).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from batchplane.accounting import AccountingError, workload_requests
from batchplane.accounting.model import to_stored
from batchplane.quantity import parse_quantity
from batchplane.webhook.assign import kueue_attempts, kueue_mismatch
from batchplane.webhook.capacity import check_workload_ever_fits
from batchplane.webhook.errors import PolicyError
from batchplane.webhook.flavors import Flavor, unconstrained_flavor
from batchplane.webhook.policy import PolicyDocument, parse_policy
from batchplane.webhook.queues import (
    PODS,
    CohortForest,
    Demand,
    QueueModel,
    compile_queues,
    demands,
    guaranteed_quota,
    show,
)

#: v1beta1 spelled ``flavorFungibility.whenCanBorrow: Borrow`` what v1beta2 spells ``MayStopSearch``.
_WHEN_CAN_BORROW = {
    "Borrow": "MayStopSearch",
    "MayStopSearch": "MayStopSearch",
    "TryNextFlavor": "TryNextFlavor",
}


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _groups(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``spec.resourceGroups`` in the policy document's shape (quantities as strings)."""
    out: list[dict[str, Any]] = []
    for group in spec.get("resourceGroups") or []:
        flavors = []
        for flavor in group.get("flavors") or []:
            resources: dict[str, dict[str, str]] = {}
            for r in flavor.get("resources") or []:
                quota = {"nominalQuota": str(r.get("nominalQuota", "0"))}
                for key in ("borrowingLimit", "lendingLimit"):
                    if r.get(key) is not None:
                        quota[key] = str(r[key])
                resources[str(r.get("name"))] = quota
            flavors.append({"name": str(flavor.get("name")), "resources": resources})
        out.append(
            {"coveredResources": [str(r) for r in group.get("coveredResources") or []], "flavors": flavors}
        )
    return out


def policy_of(
    cluster_queues: Sequence[Mapping[str, Any]], cohorts: Sequence[Mapping[str, Any]]
) -> PolicyDocument:
    """The webhook's policy document of live ClusterQueues and Cohorts (``v1beta2`` ``cohortName`` or ``v1beta1``
    ``cohort``; ``parentName``).

    Raises:
        PolicyError: a quantity that does not parse, a cohort cycle.
    """
    queues: dict[str, Any] = {}
    for cq in cluster_queues:
        spec = cq.get("spec") or {}
        entry: dict[str, Any] = {"resourceGroups": _groups(spec)}
        cohort = spec.get("cohortName") or spec.get("cohort")
        if cohort:
            entry["cohort"] = str(cohort)
        borrow = (spec.get("flavorFungibility") or {}).get("whenCanBorrow")
        if borrow in _WHEN_CAN_BORROW:
            entry["flavorFungibility"] = {"whenCanBorrow": _WHEN_CAN_BORROW[borrow]}
        queues[_name(cq)] = entry
    groups: dict[str, Any] = {}
    for co in cohorts:
        spec = co.get("spec") or {}
        groups[_name(co)] = {"resourceGroups": _groups(spec)}
        if spec.get("parentName"):
            groups[_name(co)]["parent"] = str(spec["parentName"])
    return parse_policy({"stack": "live cluster", "clusterQueues": queues, "cohorts": groups})


def flavors_of(resource_flavors: Sequence[Mapping[str, Any]]) -> dict[str, Flavor]:
    """ResourceFlavors as the webhook's :class:`~batchplane.webhook.flavors.Flavor` (node labels, taints,
    tolerations)."""
    out: dict[str, Flavor] = {}
    for rf in resource_flavors:
        spec = rf.get("spec") or {}
        out[_name(rf)] = Flavor(
            name=_name(rf),
            node_labels={str(k): str(v) for k, v in (spec.get("nodeLabels") or {}).items()},
            taints=tuple(t for t in spec.get("nodeTaints") or [] if isinstance(t, Mapping)),
            tolerations=tuple(t for t in spec.get("tolerations") or [] if isinstance(t, Mapping)),
        )
    return out


def reserved_usage(cluster_queues: Sequence[Mapping[str, Any]]) -> dict[str, dict[tuple[str, str], int]]:
    """ClusterQueue → (flavor, resource) → the quota its workloads reserve (``status.flavorsReservation``, else
    ``status.flavorsUsage``), in Kueue's stored units (millicores for CPU)."""
    out: dict[str, dict[tuple[str, str], int]] = {}
    for cq in cluster_queues:
        status = cq.get("status") or {}
        used: dict[tuple[str, str], int] = {}
        for flavor in status.get("flavorsReservation") or status.get("flavorsUsage") or []:
            for r in flavor.get("resources") or []:
                resource = str(r.get("name"))
                try:
                    amount = to_stored(resource, parse_quantity(str(r.get("total", "0"))))
                except ValueError:
                    continue
                if amount:
                    used[(str(flavor.get("name")), resource)] = amount
        out[_name(cq)] = used
    return out


class LiveQuota:
    """The cluster's quota: each ClusterQueue's :class:`QueueModel` and what is free now.

    Args:
        cluster_queues: every ClusterQueue object (``GET …/clusterqueues``).
        cohorts: every Cohort object (none when the cluster has none).
        resource_flavors: every ResourceFlavor object.

    Raises:
        PolicyError: a quantity that does not parse, a cohort cycle.
    """

    def __init__(
        self,
        cluster_queues: Sequence[Mapping[str, Any]],
        cohorts: Sequence[Mapping[str, Any]],
        resource_flavors: Sequence[Mapping[str, Any]],
    ) -> None:
        policy = policy_of(cluster_queues, cohorts)
        self.queues: dict[str, QueueModel] = compile_queues(policy)
        self.flavors = flavors_of(resource_flavors)
        self._tree = CohortForest(policy)
        self._usage: dict[str, dict[tuple[str, str], int]] = {
            f"cq:{name}": used for name, used in reserved_usage(cluster_queues).items()
        }
        for key, node in self._tree.nodes.items():
            if node.parent is None:
                self._accumulate(key)

    def _accumulate(self, key: str) -> dict[tuple[str, str], int]:
        """A cohort's usage: per child, what it uses beyond its ``localQuota`` (``accumulateFromChild``)."""
        if key.startswith("cq:"):
            return self._usage.setdefault(key, {})
        used: dict[tuple[str, str], int] = {}
        for child in self._tree.children.get(key, []):
            node = self._tree.nodes[child]
            for fr, amount in self._accumulate(child).items():
                used[fr] = used.get(fr, 0) + max(0, amount - guaranteed_quota(node, fr))
        self._usage[key] = used
        return used

    def reserved(self, cluster_queue: str) -> Mapping[tuple[str, str], int]:
        """(flavor, resource) → what ``cluster_queue``'s workloads reserve now (stored units)."""
        return self._usage.get(f"cq:{cluster_queue}", {})

    def available(self, cluster_queue: str, flavor: str, resource: str) -> int:
        """Kueue's ``available``: what ``cluster_queue`` can take of ``resource`` in ``flavor`` now (stored units;
        negative when over-admitted)."""
        return self._available(f"cq:{cluster_queue}", (flavor, resource))

    def _available(self, key: str, fr: tuple[str, str]) -> int:
        node = self._tree.nodes[key]
        used = self._usage.get(key, {}).get(fr, 0)
        if node.parent is None:
            return node.subtree.get(fr, 0) - used
        parent = self._available(node.parent, fr)
        local = guaranteed_quota(node, fr)
        if fr in node.borrowing:
            stored_in_parent = node.subtree.get(fr, 0) - local
            used_in_parent = max(0, used - local)
            parent = min(stored_in_parent - used_in_parent + node.borrowing[fr], parent)
        return max(0, local - used) + parent


@dataclass
class LiveDecision:
    """What the objects say of a pending Workload.

    Attributes:
        verdict: ``never-fits``, ``waits-for-quota``, ``fits-now`` or ``not-checked``.
        reasons: Kueue-worded reasons, per PodSet that does not fit (``insufficient unused quota for … N more
            needed`` / ``… > maximum capacity (N)`` / ``resource … unavailable in ClusterQueue``) or, for never fits,
            the webhook's shortfalls.
        flavors: for ``fits-now``, the flavors it would take.
        borrowing: for ``fits-now``, what its ClusterQueue then uses beyond its nominal quota, per flavor and
            resource (``4 nvidia.com/gpu on h100``).
    """

    verdict: str
    reasons: list[str] = field(default_factory=list)
    flavors: list[str] = field(default_factory=list)
    borrowing: list[str] = field(default_factory=list)


def workload_demands(workload: Mapping[str, Any], queue: QueueModel) -> list[Demand]:
    """The Workload's PodSets as :class:`Demand` (count × the stored pod template's requests), with Kueue's own
    totals from ``status.resourceRequests`` where it wrote them (they include LimitRange defaults, RuntimeClass
    overhead and resource transformations: ``apis/kueue/v1beta2/workload_types.go`` L885-897 @v0.19.2).

    Raises:
        AccountingError: ``spec.podSets`` cannot be read.
    """
    wanted = demands(workload_requests(workload), queue)
    totals: dict[str, Mapping[str, Any]] = {
        str(r.get("name")): r.get("resources") or {}
        for r in (workload.get("status") or {}).get("resourceRequests") or []
        if isinstance(r, Mapping)
    }
    for d in wanted:
        given = totals.get(d.name)
        if not given or d.partial:
            continue
        requests: dict[str, int] = {}
        for resource, quantity in given.items():
            try:
                amount = to_stored(str(resource), parse_quantity(str(quantity)))
            except ValueError:
                continue
            if amount > 0:
                requests[str(resource)] = amount
        if PODS in queue.covered and d.count > 0:
            requests.setdefault(PODS, d.count)
        d.requests = requests
    return wanted


def decide(quota: LiveQuota, cluster_queue: str, workload: Mapping[str, Any]) -> LiveDecision:
    """Never fits / waits for quota / fits now, for a pending ``workload`` of ``cluster_queue``.

    Never fits exactly when the webhook's :func:`check_workload_ever_fits` refuses it on the live queue (Kueue's
    ``potentialAvailable``: with every other queue idle); otherwise the PodSets are placed in order, each on the
    first flavor whose free quota holds it (``available``), and the verdict is fits-now or waits-for-quota with
    Kueue's reasons for every flavor tried.
    """
    queue = quota.queues.get(cluster_queue)
    if queue is None:
        return LiveDecision(
            "not-checked", [f"ClusterQueue {cluster_queue} is not among the listed ClusterQueues"]
        )
    try:
        wanted = workload_demands(workload, queue)
    except AccountingError as exc:
        return LiveDecision("not-checked", [str(exc)])
    undeclared = [
        f"resource {r} unavailable in ClusterQueue (PodSet {d.name} requests {show(r, d.requests[r])}; the "
        f"ClusterQueue covers {', '.join(sorted(queue.covered)) or 'nothing'})"
        for d in wanted
        for r in sorted(set(d.requests) - queue.covered)
    ]
    if undeclared:
        return LiveDecision("never-fits", undeclared)
    refused = [
        s.detail for s in check_workload_ever_fits(wanted, queue, quota.flavors) if s.kind != "unmodelled"
    ]
    if refused:
        return LiveDecision("never-fits", refused)
    return _place_now(wanted, queue, quota, cluster_queue)


def _place_now(wanted: Sequence[Demand], queue: QueueModel, quota: LiveQuota, cq: str) -> LiveDecision:
    """Fits now when Kueue's own flavor assigner and its retries (:func:`~batchplane.webhook.assign.kueue_attempts`)
    admit it with each flavor's quota capped at what is free now; else waits, with ``fitsResourceQuota``'s reasons
    for the first PodSet no flavor takes (where Kueue's attempt ends, ``assignFlavors`` flavorassigner.go
    L707-858)."""
    free = {
        fr: replace(c, maximum=min(c.maximum, max(0, quota.available(cq, *fr))))
        for fr, c in queue.capacity.items()
    }
    attempts, _ = kueue_attempts(wanted, replace(queue, capacity=free), quota.flavors)
    last = attempts[-1]
    if last.failed < 0:
        adds: dict[tuple[str, str], int] = {}
        for d, row in zip(wanted, last.flavors, strict=True):
            for group, flavor in zip(queue.groups, row, strict=True):
                adds.update({(flavor, r): adds.get((flavor, r), 0) + d.requests[r] for r in group.resources
                             if flavor and d.requests.get(r)})  # fmt: skip
        own = quota.reserved(cq)
        borrowing = [
            f"{show(r, over)} {r} on {f}"
            for (f, r), v in sorted(adds.items())
            if (over := own.get((f, r), 0) + v - queue.capacity[(f, r)].nominal) > 0
        ]
        flavors = list(dict.fromkeys(f for row in last.flavors for f in row if f))
        return LiveDecision("fits-now", [], flavors, borrowing)
    used: dict[tuple[str, str], int] = {}
    for d in wanted:
        failed: list[str] = []
        for group in queue.groups:
            vector = [(r, d.requests.get(r, 0)) for r in group.resources if d.requests.get(r, 0)]
            if not vector:
                continue
            tried: list[str] = []
            for name in group.flavors:
                mismatch = kueue_mismatch(
                    d.pod_spec, quota.flavors.get(name) or unconstrained_flavor(name), group.match_keys
                )
                if mismatch is not None:
                    tried.append(mismatch)
                    continue
                short = _shortfalls(vector, name, used, queue, quota, cq)
                if not short:
                    for r, amount in vector:
                        used[(name, r)] = used.get((name, r), 0) + amount
                    break
                tried.extend(short)
            else:
                failed.extend(tried)
        if failed:
            return LiveDecision(
                "waits-for-quota",
                [f"couldn't assign flavors to pod set {d.name}: " + ", ".join(sorted(failed))],
            )
    # Every PodSet fits on its first free flavor, but Kueue's retries do not find it (a long retry sequence).
    return LiveDecision("waits-for-quota", ["Kueue's flavor assigner does not place it in the free quota"])


def _shortfalls(
    vector: Sequence[tuple[str, int]],
    name: str,
    used: Mapping[tuple[str, str], int],
    queue: QueueModel,
    quota: LiveQuota,
    cq: str,
) -> list[str]:
    """``fitsResourceQuota`` per resource of the group on flavor ``name``: Kueue's reasons, empty when it fits."""
    out: list[str] = []
    for r, amount in vector:
        before = used.get((name, r), 0)
        value = before + amount
        maximum = queue.capacity[(name, r)].maximum
        if value > maximum:
            out.append(
                f"insufficient quota for {r} in flavor {name}, previously considered podsets requests "
                f"({show(r, before)}) + current podset request ({show(r, amount)}) > maximum capacity "
                f"({show(r, maximum)})"
            )
            break  # noFit: Kueue checks no other resource of this flavor
        free = quota.available(cq, name, r)
        if value > free:
            out.append(
                f"insufficient unused quota for {r} in flavor {name}, {show(r, value - free)} more needed"
            )
    return out


def message_verdict(reason: str, message: str) -> str | None:
    """What Kueue's own QuotaReserved condition says, for the cross-check: its v0.19.2 reasons
    (``ExceedsMaxQuota`` / ``NoMatchingFlavor``: never fits; ``WaitingForQuota``: waits; ``apis/kueue/v1beta2/
    workload_types.go`` L945-958), else its message read as a whole — any flavor with ``insufficient unused quota``
    means it waits, only ``> maximum capacity`` or ``unavailable in ClusterQueue`` means never."""
    if reason in ("ExceedsMaxQuota", "NoMatchingFlavor"):
        return "never-fits"
    if reason in ("WaitingForQuota", "WaitingForPreemptedWorkloads"):
        return "waits-for-quota"
    if "unavailable in ClusterQueue" in message:
        return "never-fits"
    if "insufficient unused quota" in message:
        return "waits-for-quota"
    if "> maximum capacity (" in message:
        return "never-fits"
    return None


__all__ = ["LiveDecision", "LiveQuota", "PolicyError", "decide", "message_verdict", "workload_demands"]

"""``batchplane explain --context CTX [-n NS] NAME``: why a workload on a live cluster is pending, read-only.

Reads, with the kubeconfig's own credentials (the kubernetes client, as ``batchplane preflight`` does): the Kueue API
group (absent: Kueue is not installed; neither ``v1beta2`` nor ``v1beta1`` served: a Kueue version this does not
read), the Workload (by its name, else the Workload a job of that name owns), its LocalQueue and ClusterQueue (status,
usage, pending workloads, the ``Active`` condition and why not), the cohort's other ClusterQueues (who borrows), the
admitted Workloads that hold the queue's quota, the admission checks' states and their ProvisioningRequests
(``Provisioned`` / ``Failed`` / ``CapacityRevoked`` / ``BookingExpired``, with how long it has waited), eviction and
preemption conditions and the Workload's events. Then one class:

* ``never-fits`` / ``waits-for-quota`` / ``pending`` (fits the free quota now) — decided from the objects, not from
  Kueue's message: the ClusterQueues, Cohorts, ResourceFlavors, the queues' reserved usage and the Workload's PodSets,
  by the webhook's own decision code (:mod:`batchplane.explain.live_quota`). Kueue's message is quoted and
  cross-checked; when it and the objects disagree, both are said. ``waits-for-quota`` names which admitted Workloads
  hold the quota and who borrows;
* ``waits-for-capacity`` — quota reserved, a ProvisioningRequest (DWS) admission check pending or retrying (when
  Kueue retries: :mod:`batchplane.explain.live_conditions`);
* ``queue-misconfigured`` — the LocalQueue or ClusterQueue is missing or not ``Active`` (Kueue's reason: a missing
  ResourceFlavor, AdmissionCheck, a stop policy …), or the namespace lacks a label the ClusterQueue's
  ``namespaceSelector`` needs (``kueue.openshift.io/managed=true`` on OpenShift);
* ``not-managed`` — no Workload: the job has no queue label and no default LocalQueue applies;
* ``admitted``, ``finished`` for the rest.

A Workload Kueue preempted or evicted and that waits again says so first: by whom, why (cohort reclamation or
priority within the queue), when, then what it waits for now. Kueue's own condition reasons and messages are quoted as they are. Nothing is written to the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from batchplane.explain.live_conditions import (
    parse_time,
    preemption_lead,
    retry_sentence,
    retry_strategy,
    unmet_requirements,
)

KUEUE_GROUP = "kueue.x-k8s.io"
SUPPORTED_VERSIONS = ("v1beta2", "v1beta1")
PROVISIONING_GROUP = "autoscaling.x-k8s.io"
OPENSHIFT_MANAGED_LABEL = "kueue.openshift.io/managed"


class LiveError(Exception):
    """The cluster cannot be read: no access (403), no Kueue (404 on the API group), another Kueue version."""


@dataclass
class LiveExplanation:
    """One workload on a live cluster, classified."""

    name: str
    namespace: str
    verdict: str
    sentence: str
    workload: str | None = None
    local_queue: str | None = None
    cluster_queue: str | None = None
    kueue_reason: str = ""
    """Kueue's own reason/message of the deciding condition, as written."""
    preempted: str = ""
    """How Kueue preempted or evicted it (by whom, why, when), when it waits again after that; ``""`` otherwise."""
    objects_say: list[str] = field(default_factory=list)
    """What the objects say per PodSet (Kueue-worded reasons), for never-fits and waits-for-quota."""
    details: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A plain dict (``--json``)."""
        return asdict(self)


class _Reader:
    """GETs through the kubernetes client's ``ApiClient`` (read-only), raising :class:`LiveError` on 403."""

    def __init__(self, api_client: Any) -> None:
        self.api = api_client

    def get(self, path: str, query: list[tuple[str, str]] | None = None) -> dict[str, Any] | None:
        """The JSON object at ``path``; None on 404."""
        import json

        from kubernetes.client.exceptions import ApiException

        method, url, headers, body, post = self.api.param_serialize(
            "GET",
            path,
            query_params=query or [],
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        try:
            response = self.api.call_api(method, url, header_params=headers, body=body, post_params=post)
            response.read()
        except ApiException as exc:  # transport-level failures the client raises itself
            raise LiveError(f"GET {path} failed: {exc.status} {exc.reason}") from None
        status = int(response.status)
        if status == 404:
            return None
        if status in (401, 403):
            raise LiveError(
                f"no access: GET {path} answered {status}; explain needs get/list on Kueue's Workloads, LocalQueues, "
                "ClusterQueues, Cohorts, ResourceFlavors, AdmissionChecks and ProvisioningRequestConfigs, on "
                "ProvisioningRequests, Namespaces and Events with this kubeconfig's credentials"
            )
        if status >= 400:
            raise LiveError(f"GET {path} failed: {status}")
        try:
            data = json.loads(response.data or b"null")
        except ValueError:
            raise LiveError(f"GET {path} did not answer JSON") from None
        return data if isinstance(data, dict) else None


def _conditions(obj: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    status = (obj or {}).get("status") or {}
    return {str(c.get("type")): c for c in status.get("conditions") or [] if isinstance(c, Mapping)}


def _true(conds: Mapping[str, Mapping[str, Any]], kind: str) -> bool:
    return str(conds.get(kind, {}).get("status")) == "True"


def _since(timestamp: Any, now: datetime) -> str:
    then = parse_time(timestamp)
    if then is None:
        return "an unknown time"
    minutes = int((now - then).total_seconds() // 60)
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


class LiveExplainer:
    """Explains one workload on a cluster.

    Args:
        api_client: a ``kubernetes.client.ApiClient`` (``kubernetes.config.new_client_from_config``).
        now: the time waits are measured to. Defaults to the current time.

    Raises:
        LiveError: (from :meth:`explain`) no access, no Kueue, an unsupported Kueue API version.
    """

    def __init__(self, api_client: Any, now: datetime | None = None) -> None:
        self.read = _Reader(api_client)
        self.now = now or datetime.now(UTC)
        self.version = ""
        self._listed: dict[str, list[dict[str, Any]]] = {}

    def _items(self, path: str) -> list[dict[str, Any]]:
        """The items of a cluster-wide Kueue list (read once per explain); none when the kind is not served."""
        if path not in self._listed:
            listed = self._kueue(path) or {}
            self._listed[path] = [dict(i) for i in listed.get("items") or [] if isinstance(i, Mapping)]
        return self._listed[path]

    def _kueue_version(self) -> str:
        group = self.read.get(f"/apis/{KUEUE_GROUP}")
        if group is None:
            raise LiveError(
                f"Kueue is not installed on this cluster: the API group {KUEUE_GROUP} is not served (404)"
            )
        served = [str(v.get("version")) for v in group.get("versions") or [] if isinstance(v, Mapping)]
        for version in SUPPORTED_VERSIONS:
            if version in served:
                return version
        raise LiveError(
            f"this Kueue serves {KUEUE_GROUP} {', '.join(served) or 'no version'}; explain reads "
            f"{' or '.join(SUPPORTED_VERSIONS)} (Kueue v0.9 and later)"
        )

    def _kueue(self, path: str) -> dict[str, Any] | None:
        return self.read.get(f"/apis/{KUEUE_GROUP}/{self.version}/{path}")

    def _find_workload(self, namespace: str, name: str) -> dict[str, Any] | None:
        direct = self._kueue(f"namespaces/{namespace}/workloads/{name}")
        if direct is not None:
            return direct
        listed = self._kueue(f"namespaces/{namespace}/workloads") or {}
        for item in listed.get("items") or []:
            owners = (item.get("metadata") or {}).get("ownerReferences") or []
            if any(o.get("name") == name for o in owners if isinstance(o, Mapping)):
                return dict(item)
        return None

    def explain(self, namespace: str, name: str) -> LiveExplanation:
        """Classify the workload ``name`` (a Workload, or the job owning one) in ``namespace``."""
        self.version = self._kueue_version()
        out = LiveExplanation(name, namespace, "unknown", "")
        wl = self._find_workload(namespace, name)
        if wl is None:
            return self._not_managed(out, namespace, name)
        out.workload = str((wl.get("metadata") or {}).get("name"))
        spec, status = wl.get("spec") or {}, wl.get("status") or {}
        out.local_queue = str(spec.get("queueName") or "") or None
        conds = _conditions(wl)
        lq = self._kueue(f"namespaces/{namespace}/localqueues/{out.local_queue}") if out.local_queue else None
        if lq is None:
            out.verdict = "queue-misconfigured"
            out.sentence = (
                f'queue misconfigured: LocalQueue "{out.local_queue}" does not exist in namespace {namespace} — '
                "set kueue.x-k8s.io/queue-name to one of the namespace's LocalQueues"
            )
            return out
        out.cluster_queue = str((lq.get("spec") or {}).get("clusterQueue"))
        cq = self._kueue(f"clusterqueues/{out.cluster_queue}")
        if cq is None:
            out.verdict = "queue-misconfigured"
            out.sentence = (
                f'queue misconfigured: LocalQueue "{out.local_queue}" points at ClusterQueue "{out.cluster_queue}", '
                "which does not exist"
            )
            return out
        self._queue_details(out, cq)
        self._events(out, namespace)
        for kind in ("Evicted", "Preempted"):
            if _true(conds, kind):
                c = conds[kind]
                out.details.append(f"{kind}: {c.get('reason')}: {c.get('message')}")
        if _true(conds, "Finished"):
            out.verdict, out.sentence = (
                "finished",
                f"finished: {conds['Finished'].get('message') or ''}".rstrip(": "),
            )
            return out
        active = _conditions(cq).get("Active", {})
        if str(active.get("status")) == "False":
            out.verdict = "queue-misconfigured"
            out.kueue_reason = f"{active.get('reason')}: {active.get('message')}"
            out.sentence = (
                f'queue inactive: ClusterQueue "{out.cluster_queue}" is not Active ({active.get("reason")}: '
                f"{active.get('message')}) — nothing is admitted until the platform team fixes it"
            )
            return out
        namespace_problem = self._namespace_selector_problem(cq, namespace)
        if namespace_problem:
            out.verdict, out.sentence = "queue-misconfigured", namespace_problem
            return out
        if _true(conds, "Admitted"):
            out.verdict = "admitted"
            admission = status.get("admission") or {}
            flavors = sorted(
                {
                    str(f)
                    for psa in admission.get("podSetAssignments") or []
                    for f in (psa.get("flavors") or {}).values()
                }
            )
            out.sentence = (
                f"admitted on {', '.join(flavors) or 'its flavors'} by ClusterQueue {out.cluster_queue}"
            )
            return out
        if _true(conds, "QuotaReserved"):
            return self._checks(out, wl, namespace)
        reserved = conds.get("QuotaReserved", {})
        message = str(reserved.get("message") or "")
        reason = str(reserved.get("reason") or "")
        out.kueue_reason = f"{reason}: {message}" if reason else message
        out.preempted = preemption_lead(conds, self._items("workloads"), self.now)
        retrying = self._retry_pending(out, wl, namespace)
        if retrying is not None:
            return self._lead(retrying)
        return self._lead(self._decide(out, cq, wl, reason, message))

    def _lead(self, out: LiveExplanation) -> LiveExplanation:
        """A preempted or evicted Workload's first sentence is that, then what it waits for now."""
        if out.preempted:
            out.sentence = f"{out.preempted} — now it {out.sentence}"
        return out

    def _decide(
        self, out: LiveExplanation, cq: Mapping[str, Any], wl: Mapping[str, Any], reason: str, message: str
    ) -> LiveExplanation:
        """Never fits / waits for quota / fits now from the objects (:func:`~batchplane.explain.live_quota.decide`),
        cross-checked against Kueue's own condition."""
        from batchplane.explain.live_quota import LiveQuota, PolicyError, decide, message_verdict

        try:
            quota = LiveQuota(
                self._items("clusterqueues"), self._items("cohorts"), self._items("resourceflavors")
            )
        except PolicyError as exc:
            out.verdict = "pending"
            out.sentence = (
                f"pending: the ClusterQueues cannot be read as quota ({exc}); Kueue says: {message}"
            )
            return out
        decision = decide(quota, str(out.cluster_queue), wl)
        out.objects_say = decision.reasons
        kueue_says = message_verdict(reason, message)
        quoted = f"{reason}: {message}" if reason else message
        if decision.verdict == "never-fits":
            out.verdict = "never-fits"
            undeclared = any(" unavailable in ClusterQueue" in r for r in decision.reasons)
            advice = (
                "use a LocalQueue whose ClusterQueue offers that resource, or drop the request"
                if undeclared
                else "ask for less, or ask the platform team for more quota"
            )
            out.sentence = (
                f"never fits: ClusterQueue {out.cluster_queue} can never admit it, even with every other queue "
                f"idle — {'; '.join(decision.reasons)} — {advice}"
            )
        elif decision.verdict == "waits-for-quota":
            self._waits_for_quota(out, cq, "; ".join(decision.reasons))
        elif decision.verdict == "fits-now":
            out.verdict = "pending"
            cohort = (cq.get("spec") or {}).get("cohortName") or (cq.get("spec") or {}).get("cohort")
            borrows = (
                f", by borrowing {', '.join(decision.borrowing)} from cohort {cohort} — it can be preempted when "
                "the lenders reclaim them"
                if decision.borrowing
                else ""
            )
            out.sentence = (
                f"pending: the free quota of ClusterQueue {out.cluster_queue} holds it now (on "
                f"{', '.join(decision.flavors) or 'its flavors'}){borrows}; Kueue admits it at its next scheduling "
                "attempt"
            )
        else:
            out.verdict = "pending"
            out.sentence = f"pending: not checked from the objects ({'; '.join(decision.reasons)})"
            return out
        said = {"never-fits": "it never fits", "waits-for-quota": "it waits for quota"}
        if kueue_says is not None and message and kueue_says != decision.verdict:
            out.sentence += (
                f" — Kueue's own message says {said[kueue_says]} ({quoted}); the objects read now say otherwise: "
                "quota or usage changed since Kueue last tried"
            )
        elif message and message == "; ".join(decision.reasons):
            out.sentence += f" (Kueue's {reason or 'QuotaReserved'} message says the same)"
        elif message:
            out.sentence += f" (Kueue: {quoted})"
        return out

    def _not_managed(self, out: LiveExplanation, namespace: str, name: str) -> LiveExplanation:
        queues = self._kueue(f"namespaces/{namespace}/localqueues") or {}
        names = sorted(str((q.get("metadata") or {}).get("name")) for q in queues.get("items") or [])
        out.verdict = "not-managed"
        if not names:
            out.sentence = (
                f"not managed by Kueue: no Workload for {name}, and namespace {namespace} has no LocalQueue — it runs "
                "outside quota (ask the platform team for a queue in this namespace)"
            )
        elif "default" not in names:
            out.sentence = (
                f"not managed by Kueue: no Workload for {name}; it has no kueue.x-k8s.io/queue-name label and "
                f"namespace {namespace} has no LocalQueue named default — add the label (LocalQueues: "
                f"{', '.join(names)})"
            )
        else:
            out.sentence = (
                f"not managed by Kueue: no Workload for {name} in namespace {namespace} (is it the job's name, and "
                "is its kind an integration Kueue enables?)"
            )
        return out

    def _namespace_selector_problem(self, cq: Mapping[str, Any], namespace: str) -> str:
        """Why the ClusterQueue's ``namespaceSelector`` (``matchLabels`` and ``matchExpressions``) does not select
        ``namespace``; ``""`` when it does."""
        spec = cq.get("spec") or {}
        selector = spec.get("namespaceSelector")
        name = (cq.get("metadata") or {}).get("name")
        if selector == {}:
            return ""
        labels: Mapping[str, str] = {}
        if selector is not None:
            ns = self.read.get(f"/api/v1/namespaces/{namespace}") or {}
            labels = (ns.get("metadata") or {}).get("labels") or {}
        unmet = unmet_requirements(selector, labels)
        if unmet == []:
            return ""
        if unmet is None:
            return (
                f"queue misconfigured: ClusterQueue {name} has no namespaceSelector, which selects no namespace — "
                "nothing from any namespace is admitted (the platform team sets namespaceSelector: {} for all)"
            )
        hint = (
            " (OpenShift's Kueue manages only namespaces so labelled)"
            if any(OPENSHIFT_MANAGED_LABEL in u for u in unmet)
            else ""
        )
        if selector is not None and not selector.get("matchExpressions"):
            needs = f"lacks the label {', '.join(unmet)} that"
        else:
            needs = f"does not meet {', '.join(unmet)}, which"
        return (
            f"queue misconfigured: namespace {namespace} {needs} ClusterQueue {name}'s namespaceSelector needs{hint} "
            "— nothing from it is admitted"
        )

    def _events(self, out: LiveExplanation, namespace: str) -> None:
        """The Workload's last events (Kueue's Pending / QuotaReserved / Admitted / Preempted …); none when the
        events cannot be read (they only add detail)."""
        try:
            events = self.read.get(
                f"/api/v1/namespaces/{namespace}/events",
                [("fieldSelector", f"involvedObject.kind=Workload,involvedObject.name={out.workload}")],
            )
        except LiveError:
            return
        items = [e for e in (events or {}).get("items") or [] if isinstance(e, Mapping)]
        items.sort(key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
        for event in items[-5:]:
            out.details.append(f"event {event.get('type')} {event.get('reason')}: {event.get('message')}")

    def _queue_details(self, out: LiveExplanation, cq: Mapping[str, Any]) -> None:
        status = cq.get("status") or {}
        out.details.append(
            f"ClusterQueue {out.cluster_queue}: {status.get('admittedWorkloads', 0)} admitted, "
            f"{status.get('pendingWorkloads', 0)} pending"
        )
        for flavor in status.get("flavorsUsage") or []:
            for r in flavor.get("resources") or []:
                borrowed = r.get("borrowed")
                out.details.append(
                    f"  {flavor.get('name')} {r.get('name')}: uses {r.get('total')}"
                    + (f", borrows {borrowed}" if borrowed not in (None, "0", 0) else "")
                )

    def _waits_for_quota(self, out: LiveExplanation, cq: Mapping[str, Any], needs: str) -> LiveExplanation:
        out.verdict = "waits-for-quota"
        spec = cq.get("spec") or {}
        cohort = spec.get("cohortName") or spec.get("cohort")
        members = {
            str((q.get("metadata") or {}).get("name"))
            for q in self._items("clusterqueues")
            if cohort
            and ((q.get("spec") or {}).get("cohortName") or (q.get("spec") or {}).get("cohort")) == cohort
        }
        holders: list[str] = []
        in_cohort: list[str] = []
        for item in self._items("workloads"):
            queue = ((item.get("status") or {}).get("admission") or {}).get("clusterQueue")
            if not _true(_conditions(item), "QuotaReserved"):
                continue
            meta = item.get("metadata") or {}
            if queue == out.cluster_queue:
                holders.append(f"{meta.get('namespace')}/{meta.get('name')}")
            elif queue in members:
                in_cohort.append(f"{meta.get('namespace')}/{meta.get('name')} (ClusterQueue {queue})")
        borrowers: list[str] = []
        if cohort:
            for other in self._items("clusterqueues"):
                other_spec = other.get("spec") or {}
                if (other_spec.get("cohortName") or other_spec.get("cohort")) != cohort:
                    continue
                status = other.get("status") or {}
                for flavor in status.get("flavorsReservation") or status.get("flavorsUsage") or []:
                    for r in flavor.get("resources") or []:
                        if r.get("borrowed") not in (None, "0", 0):
                            borrowers.append(
                                f"{(other.get('metadata') or {}).get('name')} borrows {r.get('borrowed')} "
                                f"{r.get('name')} on {flavor.get('name')}"
                            )
        held = f"held by {', '.join(holders)}" if holders else "held by no workload of the queue"
        if not holders and in_cohort:
            held += f"; the cohort's quota is used by {', '.join(in_cohort)}"
        lent = f"; in cohort {cohort}: {'; '.join(borrowers)}" if borrowers else ""
        out.sentence = (
            f"waits for quota: ClusterQueue {out.cluster_queue}'s quota is {held}{lent} — it is admitted when they "
            f"finish or are preempted ({needs})"
        )
        return out

    def _retry_config(self, check_name: str) -> tuple[int, int, int]:
        """The retry strategy of the ProvisioningRequestConfig the AdmissionCheck names (Kueue's defaults when it
        names none or it cannot be read)."""
        check = self._kueue(f"admissionchecks/{check_name}") or {}
        parameters = (check.get("spec") or {}).get("parameters") or {}
        config = None
        if parameters.get("kind") == "ProvisioningRequestConfig" and parameters.get("name"):
            config = self._kueue(f"provisioningrequestconfigs/{parameters['name']}")
        return retry_strategy(config)

    def _retry_pending(
        self, out: LiveExplanation, wl: Mapping[str, Any], namespace: str
    ) -> LiveExplanation | None:
        """A Workload whose quota Kueue released to retry an admission check, waiting for the retry time
        (``status.requeueState.requeueAt`` in the future); None otherwise."""
        status = wl.get("status") or {}
        requeue_at = ((status.get("requeueState") or {}).get("requeueAt")) or ""
        due = parse_time(requeue_at)
        if due is None or due <= self.now:
            return None
        for check in status.get("admissionChecks") or []:
            if isinstance(check, Mapping) and int(check.get("retryCount") or 0) > 0:
                out.verdict = "waits-for-capacity"
                out.sentence = "waits for capacity: " + retry_sentence(
                    check, self._retry_config(str(check.get("name"))), str(out.cluster_queue), self.now, due
                )
                return out
        return None

    def _checks(self, out: LiveExplanation, wl: Mapping[str, Any], namespace: str) -> LiveExplanation:
        status = wl.get("status") or {}
        states = [c for c in status.get("admissionChecks") or [] if isinstance(c, Mapping)]
        pending = [c for c in states if c.get("state") != "Ready"]
        if not pending:
            out.verdict = "pending"
            out.sentence = "quota reserved; waiting for Kueue to admit it"
            return out
        wl_name = str((wl.get("metadata") or {}).get("name"))
        requests = (
            self.read.get(f"/apis/{PROVISIONING_GROUP}/v1/namespaces/{namespace}/provisioningrequests") or {}
        )
        texts: list[str] = []
        retry = ""
        for check in pending:
            check_name = str(check.get("name"))
            prefix = f"{wl_name}-{check_name}-"
            related = [
                pr
                for pr in requests.get("items") or []
                if str((pr.get("metadata") or {}).get("name", "")).startswith(prefix)
            ]
            line = f"AdmissionCheck {check_name} is {check.get('state')}"
            if check.get("message"):
                line += f" ({check.get('message')})"
            for pr in related:
                pr_name = (pr.get("metadata") or {}).get("name")
                conds = _conditions(pr)
                waited = _since((pr.get("metadata") or {}).get("creationTimestamp"), self.now)
                shown = [
                    f"{kind} ({conds[kind].get('reason')}: {conds[kind].get('message')})"
                    for kind in ("Provisioned", "Failed", "CapacityRevoked", "BookingExpired")
                    if _true(conds, kind)
                ]
                line += f"; ProvisioningRequest {pr_name}, waiting {waited}: " + (
                    ", ".join(shown) or "not provisioned yet"
                )
                for kind in ("Failed", "BookingExpired", "CapacityRevoked"):
                    if _true(conds, kind):
                        out.kueue_reason = str(conds[kind].get("message") or "")
            if check.get("state") == "Retry" and not retry:
                retry = retry_sentence(
                    check, self._retry_config(check_name), str(out.cluster_queue), self.now
                )
            texts.append(line)
        out.verdict = "waits-for-capacity"
        if retry:
            out.sentence = f"waits for capacity: {retry} ({'; '.join(texts)})"
            return out
        out.sentence = (
            f"waits for capacity: ClusterQueue {out.cluster_queue} reserved its quota; nodes are being provisioned "
            f"({'; '.join(texts)})"
        )
        return out

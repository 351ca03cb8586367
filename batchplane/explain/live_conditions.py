"""What a live Workload's conditions say before its quota does: preempted or evicted, an admission check in retry,
and whether a ClusterQueue's ``namespaceSelector`` selects the namespace.

* **Preempted.** Kueue evicts a preempted Workload with ``Evicted`` (reason ``Preempted``) and ``Preempted`` (reason
  ``InClusterQueue``, ``InCohortReclamation``, ``InCohortReclaimWhileBorrowing`` or ``InCohortFairSharing``;
  kubernetes-sigs/kueue v0.19.2 ``apis/kueue/v1beta2/workload_types.go`` L1033-1050, chosen in
  ``pkg/scheduler/preemption/classical/hierarchical_preemption.go`` L48-60), both with the message
  ``Preempted to accommodate a workload (UID: …, JobUID: …) due to <reason>; preemptor path: /cohort/cq; preemptee
  path: …`` (``pkg/scheduler/preemption/preemption.go`` L161-190). Once its pods are gone it is pending again
  (``QuotaReserved`` False, ``Requeued``: ``pkg/controller/jobframework/reconciler.go`` L590-615); both conditions
  stay True until quota is reserved again (``SetQuotaReservation``, ``pkg/workload/workload.go`` L893-936).
* **An admission check in retry** (a ProvisioningRequest that ``Failed`` or whose booking expired): the check goes to
  ``Retry`` with ``requeueAfterSeconds`` = the retry strategy's backoff for its ``retryCount``
  (``pkg/controller/admissionchecks/provisioning/controller.go`` L614-660; ``UpdateAdmissionCheckRequeueState``,
  ``pkg/workload/admissionchecks.go`` L230-242: base × 2^(n−1), at most the cap), and Kueue then evicts the Workload,
  releasing its quota, and requeues it at the check's ``lastTransitionTime`` + ``requeueAfterSeconds``
  (``reconcileCheckBasedEviction``, ``pkg/controller/core/workload_controller.go`` L967-997; ``GetMaxRetryTime``,
  ``pkg/workload/admissionchecks.go`` L178-203). A ProvisioningRequestConfig without ``retryStrategy`` gets
  ``backoffLimitCount: 3``, ``backoffBaseSeconds: 60``, ``backoffMaxSeconds: 1800``
  (``apis/kueue/v1beta2/provisioningrequestconfig_types.go`` L67-78).
* **Namespace selectors**: ``matchLabels`` and ``matchExpressions`` (``In``, ``NotIn``, ``Exists``,
  ``DoesNotExist``) ANDed, as ``metav1.LabelSelectorAsSelector`` builds them (k8s.io/apimachinery
  ``pkg/apis/meta/v1/helpers.go``); an unset selector selects no namespace (the ClusterQueue CRD's
  ``namespaceSelector`` doc: "Defaults to null which is a nothing selector").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from batchplane.webhook.flavors import match_expression

#: ``Preempted`` condition reasons and what they mean for the person whose job stopped.
PREEMPTION_REASONS = {
    "InClusterQueue": "priority within the queue: a higher-priority workload of its own ClusterQueue needed the quota",
    "InCohortReclamation": (
        "cohort reclamation: the quota it borrowed was reclaimed by the ClusterQueue that lends it"
    ),
    "InCohortReclaimWhileBorrowing": (
        "cohort reclamation while borrowing: a ClusterQueue of the cohort took the quota it borrowed, though that "
        "queue borrows too (its borrowWithinCohort policy allows it)"
    ),
    "InCohortFairSharing": "fair sharing in the cohort: its ClusterQueue used more than its fair share",
}
#: Kueue's ``ProvisioningRequestConfig.spec.retryStrategy`` defaults (backoffLimitCount, base s, max s).
DEFAULT_RETRY = (3, 60, 1800)

_PREEMPTOR = re.compile(r"\(UID: (?P<uid>[^,]*), JobUID: (?P<job>[^)]*)\).*?preemptor path: (?P<path>[^;]*)")


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp as Kubernetes writes it, or None."""
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def ago(then: datetime | None, now: datetime) -> str:
    """``35 min ago (11:25 UTC)``."""
    if then is None:
        return "at an unknown time"
    minutes = int((now - then).total_seconds() // 60)
    span = f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60} min"
    return f"{span} ago ({then:%Y-%m-%d %H:%M} UTC)"


def _workload_name(wl: Mapping[str, Any]) -> str:
    meta = wl.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def preemption_lead(
    conditions: Mapping[str, Mapping[str, Any]],
    workloads: Sequence[Mapping[str, Any]],
    now: datetime,
) -> str:
    """The first sentence for a Workload Kueue preempted or evicted and that is not admitted again, else ``""``.

    Args:
        conditions: the Workload's conditions by type.
        workloads: Workloads to find the preemptor among (by the UID Kueue's message names).
        now: the time "ago" is measured to.
    """
    evicted = conditions.get("Evicted") or {}
    preempted = conditions.get("Preempted") or {}
    if str(preempted.get("status")) == "True":
        reason = str(preempted.get("reason") or "")
        message = str(preempted.get("message") or "")
        why = PREEMPTION_REASONS.get(reason, f"Kueue's reason {reason}")
        by = ""
        match = _PREEMPTOR.search(message)
        if match:
            path = match.group("path").strip()
            queue = path.rstrip("/").rsplit("/", 1)[-1] if path and path != "UNKNOWN" else ""
            uid = match.group("uid").strip()
            preemptor = next(
                (
                    w
                    for w in workloads
                    if str((w.get("metadata") or {}).get("uid")) == uid and uid != "UNKNOWN"
                ),
                None,
            )
            who = (
                f"Workload {_workload_name(preemptor)}"
                if preemptor is not None
                else f"a workload (UID {uid})"
            )
            by = f" by {who}" + (f" of ClusterQueue {queue} ({path})" if queue else "")
        when = ago(parse_time(preempted.get("lastTransitionTime")), now)
        return f"preempted {when}{by}, because of {why} ({reason})"
    if str(evicted.get("status")) == "True":
        when = ago(parse_time(evicted.get("lastTransitionTime")), now)
        return f"evicted {when} ({evicted.get('reason')}: {evicted.get('message')})"
    return ""


def backoff_seconds(attempt: int, base: int, cap: int) -> int:
    """Kueue's wait before retry ``attempt`` (1-based): ``base × 2^(attempt−1)``, at most ``cap``
    (``wait.NewBackoff(base, cap, 2, 0.0001).WaitTime(attempt)``, jitter ignored)."""
    wait: int = base << max(0, attempt - 1)
    return min(wait, cap) if cap > 0 else wait


def retry_strategy(config: Mapping[str, Any] | None) -> tuple[int, int, int]:
    """(backoffLimitCount, backoffBaseSeconds, backoffMaxSeconds) of a ProvisioningRequestConfig (Kueue's defaults
    where unset)."""
    given = ((config or {}).get("spec") or {}).get("retryStrategy") or {}
    limit, base, cap = DEFAULT_RETRY
    return (
        int(given.get("backoffLimitCount", limit)),
        int(given.get("backoffBaseSeconds", base)),
        int(given.get("backoffMaxSeconds", cap)),
    )


def retry_sentence(
    check: Mapping[str, Any],
    strategy: tuple[int, int, int],
    cluster_queue: str,
    now: datetime,
    requeue_at: datetime | None = None,
) -> str:
    """The sentence for an admission check in ``Retry`` (quota still reserved) or, given the Workload's
    ``status.requeueState.requeueAt``, ``Pending`` after the retry's eviction (quota released): which attempt comes
    next of how many, and when Kueue tries again."""
    quota_reserved = requeue_at is None
    limit, base, cap = strategy
    retries = int(check.get("retryCount") or 0)
    after = check.get("requeueAfterSeconds")
    state = str(check.get("state"))
    attempt = retries + 1 if state == "Retry" else retries
    wait = int(after) if after is not None else backoff_seconds(max(attempt, 1), base, cap)
    since = parse_time(check.get("lastTransitionTime"))
    at = requeue_at or (since + timedelta(seconds=wait) if since is not None else None)
    if at is None:
        when = f"about {wait} s after the failure"
    elif at <= now:
        when = f"now (due {at:%H:%M} UTC)"
    else:
        when = f"at {at:%H:%M} UTC, in {int((at - now).total_seconds() // 60)} min"
    held = (
        f"quota held: ClusterQueue {cluster_queue} still reserves its quota (QuotaReserved), but AdmissionCheck "
        f"{check.get('name')} is in Retry, so Kueue evicts it, releasing the quota, and"
        if quota_reserved
        else f"quota released after AdmissionCheck {check.get('name')} asked for a retry; Kueue"
    )
    return (
        f"{held} retries {when} (attempt {attempt + 1} of {limit + 1}; backoff {wait} s from retryStrategy "
        f"backoffBaseSeconds {base}, backoffMaxSeconds {cap}, backoffLimitCount {limit}): {check.get('message') or ''}"
    ).rstrip(": ")


# --- namespace selectors ------------------------------------------------------------------------


def _requirement(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """One ``matchExpressions`` requirement: ``In``, ``NotIn``, ``Exists``, ``DoesNotExist`` as Kubernetes'
    ``labels.Requirement`` matches them (the webhook's :func:`~batchplane.webhook.flavors.match_expression`); any
    other operator ``LabelSelectorAsSelector`` refuses, so the ClusterQueue selects nothing."""
    if expr.get("operator") not in ("In", "NotIn", "Exists", "DoesNotExist"):
        return False
    return match_expression(expr, labels)


def unmet_requirements(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> list[str] | None:
    """The requirements of a ``namespaceSelector`` that ``labels`` do not meet (``key=value``, ``key in (a,b)``,
    ``key notin (a)``, ``key``, ``!key``); ``None`` for an unset selector, which selects nothing."""
    if selector is None:
        return None
    out: list[str] = []
    for key, value in sorted((selector.get("matchLabels") or {}).items()):
        if labels.get(key) != value:
            out.append(f"{key}={value}")
    for expr in selector.get("matchExpressions") or []:
        if not isinstance(expr, Mapping) or _requirement(expr, labels):
            continue
        key, operator = str(expr.get("key")), str(expr.get("operator"))
        values = ",".join(str(v) for v in expr.get("values") or [])
        out.append(
            {
                "In": f"{key} in ({values})",
                "NotIn": f"{key} notin ({values})",
                "Exists": key,
                "DoesNotExist": f"!{key}",
            }.get(operator, f"{key} {operator} ({values})")
        )
    return out

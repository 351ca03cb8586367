"""Alert and recording rules generated from a stack, and their renderings (docs/observability.md).

:func:`alert_inputs` reads what the rules need from a validated stack (plain data); :func:`rule_groups` builds the
groups; the renderings are a Prometheus rule file (:func:`rule_file`, what ``promtool check rules`` reads), a
Prometheus Operator ``PrometheusRule`` (:func:`prometheus_rule`, ``monitoring.coreos.com/v1``) and Managed Service
for Prometheus ``ClusterRules`` (:func:`cluster_rules`, ``monitoring.googleapis.com/v1``).

Every expression names only metrics of :mod:`batchplane.observability.metrics` (Kueue v0.19.2, the quota webhook,
kube-state-metrics), with their label values as the exporters write them:

* ``kueue_cluster_queue_status{status}`` is 1 for the current status and 0 for the others (``pending``, ``active``,
  ``terminating``: ``pkg/metrics/metrics.go`` ``ReportClusterQueueStatus``, lines 1193–1203 at v0.19.2);
* a ProvisioningRequest that failed, or whose booking expired, with retries left puts its admission check in
  ``Retry`` and Kueue evicts the workload with reason ``AdmissionCheck``; one out of retries, or whose capacity
  was revoked, puts it in ``Rejected`` and Kueue deactivates the workload (eviction reason ``Deactivated``,
  underlying cause ``AdmissionCheck``) — ``pkg/controller/admissionchecks/provisioning/controller.go`` lines
  617–657 and ``pkg/controller/core/workload_controller.go`` lines 969–999, 672–683 at v0.19.2. Kueue exports no
  ProvisioningRequest metric, so the two alerts cannot tell failure, revoked capacity and expired booking apart;
* Kueue v0.19.2 exports no metric of a MultiKueueCluster's ``Active`` condition: no MultiKueue alert is generated.

Each alert carries ``severity`` and ``runbook_url`` (``<runbook page>#<alert name, lower case>``: a heading of
docs/observability.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from batchplane.config.observability import AlertsConfig, QueueAlerts, duration_seconds

if TYPE_CHECKING:
    from batchplane.stack import Stack

#: Where the ``runbook_url`` annotations point: docs/observability.md in the project's repository.
RUNBOOK_PAGE = "https://github.com/batchplane/batchplane/blob/main/docs/observability.md"
#: Reviews a webhook must answer in the refusal window before its refusal share can alert (one refused job among
#: three is not a storm).
MIN_REVIEWS_FOR_REFUSAL_ALERT = 10
#: Reasons of ``/validate`` reviews that judge nothing (:data:`batchplane.webhook.decisions.ALLOW_REASONS`): updates
#: that neither move nor grow a job, and operations the webhook does not judge. The refusal share counts only the
#: submissions and edits that were judged — Kueue's own ``suspend`` flips would otherwise dilute it, as ``/mutate``'s
#: reviews (one per CREATE, never denied) would.
NOT_JUDGED_REASONS: tuple[str, ...] = ("unchanged-on-update", "smaller-on-update", "operation-not-checked")
#: Eviction reasons Kueue v0.19.2 writes for a ProvisioningRequest check in Retry / Rejected (see the module doc).
RETRY_EVICTION = 'reason="AdmissionCheck"'
REJECTED_EVICTION = 'reason="Deactivated",underlying_cause="AdmissionCheck"'
#: The group names (also the rule objects' names, prefixed with ``batchplane-``).
KUEUE_GROUP = "batchplane-kueue"
ACTIVE = 'status="active"'
WEBHOOK_GROUP = "batchplane-webhook"


@dataclass(frozen=True)
class Rule:
    """One alerting or recording rule (Prometheus rule-file fields).

    Attributes:
        name: the alert name, or the recorded series for a recording rule.
        expr: the PromQL expression.
        recording: a recording rule (``record:``) rather than an alert (``alert:``).
        for_: how long the expression must hold before the alert fires (``for:``), or ``None``.
        labels: labels added to the alert or recorded series.
        annotations: ``summary``, ``description``, ``runbook_url`` (alerts only).
    """

    name: str
    expr: str
    recording: bool = False
    for_: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The rule as a Prometheus rule-file entry (also the ``PrometheusRule``/``ClusterRules`` shape)."""
        out: dict[str, Any] = {"record" if self.recording else "alert": self.name, "expr": self.expr}
        if self.for_ is not None:
            out["for"] = self.for_
        if self.labels:
            out["labels"] = dict(self.labels)
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        return out


@dataclass(frozen=True)
class RuleGroup:
    """A rule group and the namespace whose metrics it reads (where a namespaced rule object goes).

    Attributes:
        name: the group name.
        namespace: Kueue's namespace for Kueue rules, the webhook's for webhook rules.
        rules: the rules, in evaluation order (recording rules first).
        interval: the evaluation interval.
    """

    name: str
    namespace: str
    rules: tuple[Rule, ...]
    interval: str = "1m"

    def as_dict(self) -> dict[str, Any]:
        """The group as a Prometheus rule-file group."""
        return {"name": self.name, "interval": self.interval, "rules": [r.as_dict() for r in self.rules]}


@dataclass(frozen=True)
class WebhookInputs:
    """What the webhook rules need.

    Attributes:
        namespace: the webhook's namespace.
        deployment: its Deployment's name.
        timeout_seconds: ``webhook.timeoutSeconds`` (the API server's deadline per review).
        failure_policy: ``Fail`` or ``Ignore`` (CREATE reviews).
        update_failure_policy: ``Fail`` or ``Ignore`` (the UPDATE review's own entry). Defaults to ``Ignore``.
    """

    namespace: str
    deployment: str
    timeout_seconds: int
    failure_policy: str
    update_failure_policy: str = "Ignore"


@dataclass(frozen=True)
class AlertInputs:
    """Everything the rules are generated from (plain data; :func:`alert_inputs` reads it from a stack).

    Attributes:
        alerts: ``observability.alerts``.
        kueue_namespace: Kueue's namespace on the cluster.
        cluster_queues: every ClusterQueue's name.
        provisioning_queues: the ClusterQueues with a ProvisioningRequest admission check (DWS, OpenShift's
            ProvisioningRequests).
        gpu_resources: the resource names counted as GPUs (``webhook.gpuResources``).
        webhook: the webhook's inputs, or ``None`` when the stack does not deploy it.
    """

    alerts: AlertsConfig
    kueue_namespace: str
    cluster_queues: tuple[str, ...]
    provisioning_queues: tuple[str, ...]
    gpu_resources: tuple[str, ...]
    webhook: WebhookInputs | None


def alert_inputs(stack: Stack) -> AlertInputs:
    """The rules' inputs of a validated stack: its thresholds, ClusterQueues (those behind a ProvisioningRequest
    check), GPU resource names, Kueue's namespace and the webhook's deployment (when deployed)."""
    from batchplane.components.quota_webhook.manifests import webhook_deployment
    from batchplane.stack.model import webhook_enabled
    from batchplane.wellknown import PROVISIONING_CONTROLLER

    kueue = stack.kueue
    provisioning = {
        ac.obj.name
        for ac in kueue.admission_checks
        if ac.obj.resolved_controller_name() == PROVISIONING_CONTROLLER
    }
    webhook = None
    if webhook_enabled(stack):
        d = webhook_deployment(stack)
        webhook = WebhookInputs(
            d.namespace, d.name, d.timeout_seconds, d.failure_policy, d.update_failure_policy
        )
    return AlertInputs(
        alerts=stack.config.observability.alerts,
        kueue_namespace=stack.platform.kueue_namespace(stack.config.operators),
        cluster_queues=tuple(cq.obj.name for cq in kueue.cluster_queues),
        provisioning_queues=tuple(
            cq.obj.name
            for cq in kueue.cluster_queues
            if any(ref.name in provisioning for ref in cq.obj.admission_checks or ())
        ),
        gpu_resources=tuple(stack.config.webhook.gpu_resources),
        webhook=webhook,
    )


def _regex(values: Iterable[str]) -> str:
    """A PromQL regex matching exactly ``values`` (DNS names and resource names: only ``.`` is special)."""
    return "|".join(v.replace(".", "\\\\.") for v in values)


def _selector(*matchers: str) -> str:
    inner = ",".join(m for m in matchers if m)
    return f"{{{inner}}}" if inner else ""


def _queue_scopes(inputs: AlertInputs, queues: Sequence[str]) -> list[tuple[str, QueueAlerts]]:
    """``(cluster_queue matcher, thresholds)`` for ``queues``: one matcher per overridden queue, then one for the
    rest with the stack's defaults (omitted when every queue is overridden)."""
    overridden = [q for q in queues if q in inputs.alerts.cluster_queues]
    scopes = [(f'cluster_queue="{q}"', inputs.alerts.for_queue(q)) for q in overridden]
    rest = [q for q in queues if q not in overridden]
    if rest:
        matcher = f'cluster_queue!~"{_regex(overridden)}"' if overridden else ""
        scopes.append((matcher, inputs.alerts.queues))
    return scopes


def _alert(
    name: str, expr: str, for_: str, severity: str, summary: str, description: str, **labels: str
) -> Rule:
    return Rule(
        name=name,
        expr=expr,
        for_=for_,
        labels={"severity": severity, **labels},
        annotations={
            "summary": summary,
            "description": description,
            "runbook_url": f"{RUNBOOK_PAGE}#{name.lower()}",
        },
    )


def _seconds(duration: str) -> str:
    value = duration_seconds(duration)
    return str(int(value)) if value == int(value) else repr(value)


def kueue_rules(inputs: AlertInputs) -> RuleGroup:
    """The ClusterQueue and ProvisioningRequest rules (recording rules first)."""
    gpu = f'resource=~"{_regex(inputs.gpu_resources)}"'
    rules: list[Rule] = [
        Rule(
            "cluster_queue:kueue_admission_wait_time_seconds:p95_1h",
            "histogram_quantile(0.95, sum by (cluster_queue, le) "
            "(rate(kueue_admission_wait_time_seconds_bucket[1h])))",
            recording=True,
        ),
        Rule(
            "cluster_queue_resource:kueue_cluster_queue_gpu_usage:ratio",
            f"sum by (cluster_queue, resource) (kueue_cluster_queue_resource_usage{{{gpu}}}) "
            f"/ on (cluster_queue, resource) (sum by (cluster_queue, resource) "
            f"(kueue_cluster_queue_nominal_quota{{{gpu}}}) > 0)",
            recording=True,
        ),
    ]
    for matcher, t in _queue_scopes(inputs, inputs.cluster_queues):
        sel = _selector(matcher)
        gsel = _selector(matcher, gpu)
        usage = f"sum by (cluster_queue, resource) (kueue_cluster_queue_resource_usage{gsel})"
        nominal = f"sum by (cluster_queue, resource) (kueue_cluster_queue_nominal_quota{gsel})"
        rules += [
            _alert(
                "KueuePendingTooLong",
                f"(sum by (cluster_queue) (kueue_pending_workloads{sel}) > 0) unless on (cluster_queue) "
                f"(sum by (cluster_queue) (increase(kueue_admitted_workloads_total{sel}[{t.pending_too_long}])) > 0)",
                t.pending_too_long,
                "warning",
                "ClusterQueue {{ $labels.cluster_queue }} has pending workloads and admitted none for "
                f"{t.pending_too_long}",
                "{{ $value }} workloads are pending in ClusterQueue {{ $labels.cluster_queue }} and none was "
                f"admitted in the last {t.pending_too_long}.",
            ),
            _alert(
                "KueueAdmissionWaitHigh",
                "histogram_quantile(0.95, sum by (cluster_queue, le) "
                f"(rate(kueue_admission_wait_time_seconds_bucket{sel}[1h]))) > {_seconds(t.admission_wait_p95)}",
                "15m",
                "warning",
                "95th percentile admission wait in {{ $labels.cluster_queue }} is above "
                f"{t.admission_wait_p95}",
                "Over the last hour, 95% of the workloads admitted by ClusterQueue {{ $labels.cluster_queue }} "
                "waited up to {{ $value | humanizeDuration }}.",
            ),
            _alert(
                "KueueGpuQuotaSaturated",
                f"{usage} >= on (cluster_queue, resource) ({nominal} > 0)",
                t.gpu_saturated_for,
                "info",
                "ClusterQueue {{ $labels.cluster_queue }} uses all its nominal {{ $labels.resource }}",
                "ClusterQueue {{ $labels.cluster_queue }} has used {{ $value }} {{ $labels.resource }}, at or above "
                f"its nominal quota, for {t.gpu_saturated_for}: new workloads wait or borrow.",
            ),
            _alert(
                "KueueGpuBorrowing",
                f"{usage} > on (cluster_queue, resource) {nominal}",
                t.borrowing_for,
                "info",
                "ClusterQueue {{ $labels.cluster_queue }} borrows {{ $labels.resource }} from its cohort",
                "ClusterQueue {{ $labels.cluster_queue }} has used {{ $value }} {{ $labels.resource }}, above its "
                f"nominal quota, for {t.borrowing_for}; borrowed capacity can be reclaimed by its lenders.",
            ),
            _alert(
                "KueueClusterQueueInactive",
                f"kueue_cluster_queue_status{_selector(matcher, ACTIVE)} == 0",
                t.inactive_for,
                "warning",
                "ClusterQueue {{ $labels.cluster_queue }} is not active",
                "ClusterQueue {{ $labels.cluster_queue }} has not been active for "
                f"{t.inactive_for}: it admits nothing.",
            ),
        ]
    for matcher, t in _queue_scopes(inputs, inputs.provisioning_queues) if inputs.provisioning_queues else []:
        scope = f'cluster_queue=~"{_regex(inputs.provisioning_queues)}"'
        sel = _selector(scope, matcher)
        rules.append(
            _alert(
                "KueueProvisioningSlow",
                "histogram_quantile(0.95, sum by (cluster_queue, le) "
                f"(rate(kueue_admission_checks_wait_time_seconds_bucket{sel}[3h]))) > "
                f"{_seconds(t.provisioning_wait_p95)}",
                "15m",
                "warning",
                "Provisioning in {{ $labels.cluster_queue }} takes longer than " + t.provisioning_wait_p95,
                "Over the last 3 hours, 95% of the workloads of ClusterQueue {{ $labels.cluster_queue }} waited up to "
                "{{ $value | humanizeDuration }} from quota reservation to admission (their ProvisioningRequests).",
            )
        )
    if inputs.provisioning_queues:
        sel = f'cluster_queue=~"{_regex(inputs.provisioning_queues)}"'
        rules += [
            _alert(
                "KueueProvisioningRetried",
                f"sum by (cluster_queue) (increase(kueue_evicted_workloads_total{{{sel},{RETRY_EVICTION}}}[30m])) > 0",
                "0m",
                "warning",
                "ProvisioningRequests of {{ $labels.cluster_queue }} failed or their booking expired",
                "{{ $value }} workloads of ClusterQueue {{ $labels.cluster_queue }} were evicted in the last 30 minutes "
                "because their ProvisioningRequest failed or its booking expired; Kueue retries them.",
            ),
            _alert(
                "KueueProvisioningRejected",
                f"sum by (cluster_queue) (increase(kueue_evicted_workloads_total{{{sel},{REJECTED_EVICTION}}}[30m]))"
                " > 0",
                "0m",
                "critical",
                "Workloads of {{ $labels.cluster_queue }} were deactivated by their ProvisioningRequest check",
                "{{ $value }} workloads of ClusterQueue {{ $labels.cluster_queue }} were deactivated in the last 30 "
                "minutes: their ProvisioningRequest failed out of retries, its booking expired out of retries, or "
                "its capacity was revoked. They stay inactive until resubmitted.",
            ),
        ]
    return RuleGroup(KUEUE_GROUP, inputs.kueue_namespace, tuple(rules))


def webhook_rules(inputs: AlertInputs) -> RuleGroup | None:
    """The quota webhook's rules, or ``None`` when the stack does not deploy it."""
    w = inputs.webhook
    if w is None:
        return None
    t = inputs.alerts.webhook
    live = 'dry_run="false"'
    judged = f'endpoint="validate",{live},reason!~"{"|".join(NOT_JUDGED_REASONS)}"'
    latency_limit = t.latency_fraction_of_timeout * w.timeout_seconds
    rules: list[Rule] = [
        Rule(
            "endpoint_decision_reason:batchplane_webhook_reviews:rate5m",
            f"sum by (endpoint, decision, reason) (rate(batchplane_webhook_reviews_total{{{live}}}[5m]))",
            recording=True,
        ),
        Rule(
            "endpoint:batchplane_webhook_review_seconds:p99_5m",
            "histogram_quantile(0.99, sum by (endpoint, le) (rate(batchplane_webhook_review_seconds_bucket[5m])))",
            recording=True,
        ),
        _alert(
            "BatchplaneWebhookRefusing",
            f'sum(rate(batchplane_webhook_reviews_total{{endpoint="validate",decision="denied",{live}}}[15m])) '
            f"/ sum(rate(batchplane_webhook_reviews_total{{{judged}}}[15m])) > {t.refusal_ratio} "
            f"and on () sum(increase(batchplane_webhook_reviews_total{{{judged}}}[15m])) "
            f">= {MIN_REVIEWS_FOR_REFUSAL_ALERT}",
            t.refusal_for,
            "warning",
            f"The quota webhook refuses more than {t.refusal_ratio:.0%} of submissions",
            "{{ $value | humanizePercentage }} of the reviews in the last 15 minutes were denied: a quota or "
            "queue change may have made common jobs never admissible.",
        ),
        _alert(
            "BatchplaneWebhookErrors",
            '((sum(rate(batchplane_webhook_reviews_total{reason="internal-error"}[10m])) or vector(0)) '
            "+ (sum(rate(batchplane_webhook_bad_requests_total[10m])) or vector(0))) "
            "/ ((sum(rate(batchplane_webhook_reviews_total[10m])) or vector(0)) "
            f"+ (sum(rate(batchplane_webhook_bad_requests_total[10m])) or vector(0))) > {t.error_ratio}",
            "5m",
            "critical",
            "The quota webhook answers with errors",
            "{{ $value | humanizePercentage }} of the requests in the last 10 minutes were internal errors or "
            "malformed (HTTP 400).",
        ),
        _alert(
            "BatchplaneWebhookSlow",
            "histogram_quantile(0.99, sum by (le) (rate(batchplane_webhook_review_seconds_bucket[5m]))) "
            f"> {latency_limit:g}",
            "10m",
            "warning",
            f"The quota webhook's p99 latency is near its {w.timeout_seconds}s timeout",
            "99% of reviews took up to {{ $value | humanizeDuration }}; the API server gives up after "
            f"{w.timeout_seconds}s (failurePolicy {w.failure_policy}).",
        ),
    ]
    if w.failure_policy == "Fail":
        rules.append(
            _alert(
                "BatchplaneWebhookUnavailable",
                f'kube_deployment_status_replicas_available{{namespace="{w.namespace}",deployment="{w.deployment}"}}'
                " < 1",
                t.unavailable_for,
                "critical",
                "No quota webhook pod is available: every submission is refused",
                f"Deployment {w.namespace}/{w.deployment} has had no available replica for {t.unavailable_for}; "
                "with failurePolicy Fail the API server refuses every new job of a reviewed kind in the tenant "
                "namespaces"
                + (
                    ", and with updateFailurePolicy Fail every update of one too — Kueue's start of admitted jobs "
                    "among them. "
                    if w.update_failure_policy == "Fail"
                    else "; updates pass unchecked (updateFailurePolicy Ignore). "
                )
                + "(Needs kube-state-metrics.)",
            )
        )
    return RuleGroup(WEBHOOK_GROUP, w.namespace, tuple(rules))


def rule_groups(inputs: AlertInputs) -> list[RuleGroup]:
    """Every rule group of the stack (Kueue's, then the webhook's when deployed); none when alerts are off."""
    if not inputs.alerts.enabled:
        return []
    groups = [kueue_rules(inputs)]
    webhook = webhook_rules(inputs)
    if webhook is not None:
        groups.append(webhook)
    return groups


def rule_file(groups: Sequence[RuleGroup]) -> dict[str, Any]:
    """A Prometheus rule file (``groups:``), what ``promtool check rules`` and ``rule_files`` read."""
    return {"groups": [g.as_dict() for g in groups]}


def prometheus_rule(group: RuleGroup, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A Prometheus Operator ``PrometheusRule`` (``monitoring.coreos.com/v1``) holding ``group``, in the namespace
    whose metrics it reads."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": group.name, "namespace": group.namespace, "labels": dict(labels or {})},
        "spec": {"groups": [group.as_dict()]},
    }


def cluster_rules(groups: Sequence[RuleGroup], name: str = "batchplane") -> dict[str, Any]:
    """Managed Service for Prometheus ``ClusterRules`` (``monitoring.googleapis.com/v1``): cluster-scoped, its
    queries see the whole cluster's series (a namespaced ``Rules`` sees only its namespace's)."""
    return {
        "apiVersion": "monitoring.googleapis.com/v1",
        "kind": "ClusterRules",
        "metadata": {"name": name},
        "spec": {"groups": [g.as_dict() for g in groups]},
    }

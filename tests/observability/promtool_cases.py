"""``promtool test rules`` cases generated for every alert of a stack: a synthetic series that trips it and one that
does not, evaluated after the alert's ``for:`` and range windows have passed.

Series carry the label names Kueue v0.19.2 and the webhook write (checked against the metric catalog by the tests),
so a rule that selects on a label the exporter does not write cannot pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from batchplane.config.observability import QueueAlerts, duration_seconds
from batchplane.observability.alerts import AlertInputs, _queue_scopes

Case = dict[str, Any]


def _minutes(duration: str) -> int:
    return max(1, int(duration_seconds(duration) // 60))


def _series(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{name}{{{inner}}}", "values": values}


def _case(alert: str, series: list[dict[str, str]], eval_minutes: int, fires: list[dict[str, str]]) -> Case:
    return {
        "interval": "1m",
        "input_series": series,
        "alert_rule_test": [
            {
                "eval_time": f"{eval_minutes}m",
                "alertname": alert,
                "exp_alerts": [{"exp_labels": labels} for labels in fires],
            }
        ],
    }


def _histogram(
    name: str, labels: dict[str, str], low: float, high: float, fast: bool, samples: int
) -> list[Any]:
    """Buckets ``low``, ``high``, ``+Inf``: every observation above ``low`` (slow) or at most ``low`` (fast), one a
    minute."""
    grow = f"0+1x{samples}"
    flat = f"0x{samples}"
    bucket = f"{name}_bucket"
    return [
        _series(bucket, {**labels, "le": f"{low:g}"}, grow if fast else flat),
        _series(bucket, {**labels, "le": f"{high:g}"}, grow),
        _series(bucket, {**labels, "le": "+Inf"}, grow),
    ]


def _cq(queue: str) -> dict[str, str]:
    return {"cluster_queue": queue, "replica_role": "leader"}


def _resource(queue: str, resource: str) -> dict[str, str]:
    return {
        "cohort": "ml",
        "cluster_queue": queue,
        "flavor": "gpu",
        "resource": resource,
        "replica_role": "leader",
    }


def _scoped_queues(inputs: AlertInputs, queues: tuple[str, ...]) -> Iterator[tuple[str, QueueAlerts]]:
    """One queue of each threshold scope (an overridden queue, or one of the rest) and its thresholds."""
    for matcher, thresholds in _queue_scopes(inputs, queues):
        if matcher.startswith('cluster_queue="'):
            yield matcher.split('"')[1], thresholds
        else:
            yield next(q for q in queues if q not in inputs.alerts.cluster_queues), thresholds


def queue_cases(inputs: AlertInputs) -> Iterator[tuple[str, Case]]:
    """``(alert, case)`` for every per-ClusterQueue alert and threshold scope, tripping and silent."""
    gpu = inputs.gpu_resources[0]
    for queue, t in _scoped_queues(inputs, inputs.cluster_queues):
        m = _minutes(t.pending_too_long)
        n = 2 * m + 10
        pending = _series("kueue_pending_workloads", {**_cq(queue), "status": "active"}, f"3x{n}")
        admitted = {**_cq(queue), "priority_class": ""}
        yield (
            "KueuePendingTooLong",
            _case(
                "KueuePendingTooLong",
                [pending, _series("kueue_admitted_workloads_total", admitted, f"5x{n}")],
                2 * m + 5,
                [{"severity": "warning", "cluster_queue": queue}],
            ),
        )
        yield (
            "KueuePendingTooLong",
            _case(
                "KueuePendingTooLong",
                [pending, _series("kueue_admitted_workloads_total", admitted, f"5+1x{n}")],
                2 * m + 5,
                [],
            ),
        )
        wait = duration_seconds(t.admission_wait_p95)
        for fast in (False, True):
            yield (
                "KueueAdmissionWaitHigh",
                _case(
                    "KueueAdmissionWaitHigh",
                    _histogram("kueue_admission_wait_time_seconds", admitted, wait / 2, wait * 4, fast, 100),
                    90,
                    [] if fast else [{"severity": "warning", "cluster_queue": queue}],
                ),
            )
        for alert, minutes, nominal, trip, calm in (
            ("KueueGpuQuotaSaturated", _minutes(t.gpu_saturated_for), 8, 8, 4),
            ("KueueGpuBorrowing", _minutes(t.borrowing_for), 8, 10, 8),
        ):
            for usage in (trip, calm):
                yield (
                    alert,
                    _case(
                        alert,
                        [
                            _series(
                                "kueue_cluster_queue_resource_usage",
                                _resource(queue, gpu),
                                f"{usage}x{minutes + 20}",
                            ),
                            _series(
                                "kueue_cluster_queue_nominal_quota",
                                _resource(queue, gpu),
                                f"{nominal}x{minutes + 20}",
                            ),
                        ],
                        minutes + 10,
                        [{"severity": "info", "cluster_queue": queue, "resource": gpu}]
                        if usage == trip
                        else [],
                    ),
                )
        m = _minutes(t.inactive_for)
        for active in (0, 1):
            labels = {**_cq(queue), "status": "active"}
            yield (
                "KueueClusterQueueInactive",
                _case(
                    "KueueClusterQueueInactive",
                    [_series("kueue_cluster_queue_status", labels, f"{active}x{m + 20}")],
                    m + 10,
                    [{"severity": "warning", **labels}] if active == 0 else [],
                ),
            )
    for queue, t in _scoped_queues(inputs, inputs.provisioning_queues) if inputs.provisioning_queues else []:
        wait = duration_seconds(t.provisioning_wait_p95)
        labels = {**_cq(queue), "priority_class": ""}
        for fast in (False, True):
            yield (
                "KueueProvisioningSlow",
                _case(
                    "KueueProvisioningSlow",
                    _histogram(
                        "kueue_admission_checks_wait_time_seconds", labels, wait / 2, wait * 4, fast, 230
                    ),
                    200,
                    [] if fast else [{"severity": "warning", "cluster_queue": queue}],
                ),
            )
    if inputs.provisioning_queues:
        queue = inputs.provisioning_queues[0]
        base = {"cluster_queue": queue, "priority_class": "", "replica_role": "leader"}
        for alert, trip, calm, severity in (
            (
                "KueueProvisioningRetried",
                {"reason": "AdmissionCheck", "underlying_cause": ""},
                {"reason": "Preempted", "underlying_cause": ""},
                "warning",
            ),
            (
                "KueueProvisioningRejected",
                {"reason": "Deactivated", "underlying_cause": "AdmissionCheck"},
                {"reason": "Deactivated", "underlying_cause": ""},
                "critical",
            ),
        ):
            for reasons, fires in ((trip, True), (calm, False)):
                yield (
                    alert,
                    _case(
                        alert,
                        [
                            _series(
                                "kueue_evicted_workloads_total",
                                {**base, **reasons},
                                "0 0 0 0 0 1 1 1 1 1 1 1",
                            )
                        ],
                        10,
                        [{"severity": severity, "cluster_queue": queue}] if fires else [],
                    ),
                )


def webhook_cases(inputs: AlertInputs) -> Iterator[tuple[str, Case]]:
    """``(alert, case)`` for every webhook alert, tripping and silent."""
    w = inputs.webhook
    if w is None:
        return
    t = inputs.alerts.webhook

    def reviews(
        decision: str, reason: str, per_minute: int, samples: int, endpoint: str = "validate"
    ) -> dict[str, str]:
        labels = {
            "endpoint": endpoint,
            "kind": "Job",
            "decision": decision,
            "reason": reason,
            "dry_run": "false",
        }
        return _series("batchplane_webhook_reviews_total", labels, f"0+{per_minute}x{samples}")

    m = _minutes(t.refusal_for)
    for denied, allowed, fires in ((10, 1, True), (1, 10, False)):
        yield (
            "BatchplaneWebhookRefusing",
            _case(
                "BatchplaneWebhookRefusing",
                [
                    reviews("denied", "never-admissible", denied, m + 40),
                    reviews("allowed", "ok", allowed, m + 40),
                    # judged nothing: /mutate's review of every CREATE, Kueue's suspend flips, a scale-down — they
                    # must not dilute the refusal share (with them counted, 10 denied of 51 would stay silent)
                    reviews("allowed", "defaulted", denied + allowed, m + 40, endpoint="mutate"),
                    reviews("allowed", "unchanged-on-update", 20, m + 40),
                    reviews("allowed", "smaller-on-update", 10, m + 40),
                ],
                m + 25,
                [{"severity": "warning"}] if fires else [],
            ),
        )
    bad = _series("batchplane_webhook_bad_requests_total", {"endpoint": "validate"}, "0x40")
    for series, fires in (
        ([reviews("allowed", "internal-error", 5, 40), reviews("allowed", "ok", 10, 40), bad], True),
        ([reviews("allowed", "ok", 10, 40), bad], False),
    ):
        yield (
            "BatchplaneWebhookErrors",
            _case("BatchplaneWebhookErrors", series, 25, [{"severity": "critical"}] if fires else []),
        )
    limit = t.latency_fraction_of_timeout * w.timeout_seconds
    for fast in (False, True):
        yield (
            "BatchplaneWebhookSlow",
            _case(
                "BatchplaneWebhookSlow",
                _histogram(
                    "batchplane_webhook_review_seconds",
                    {"endpoint": "validate"},
                    limit / 4,
                    limit * 2,
                    fast,
                    40,
                ),
                25,
                [] if fast else [{"severity": "warning"}],
            ),
        )
    if w.failure_policy == "Fail":
        m = _minutes(t.unavailable_for)
        labels = {"namespace": w.namespace, "deployment": w.deployment}
        for available in (0, 2):
            yield (
                "BatchplaneWebhookUnavailable",
                _case(
                    "BatchplaneWebhookUnavailable",
                    [_series("kube_deployment_status_replicas_available", labels, f"{available}x{m + 20}")],
                    m + 10,
                    [{"severity": "critical", **labels}] if available == 0 else [],
                ),
            )


CASES: tuple[Callable[[AlertInputs], Iterator[tuple[str, Case]]], ...] = (queue_cases, webhook_cases)


def promtool_tests(inputs: AlertInputs) -> list[tuple[str, Case]]:
    """Every generated ``(alert, case)`` of the stack."""
    return [pair for generate in CASES for pair in generate(inputs)]

"""The ``batchplane:observability`` section: what the stack collects and alerts on (docs/observability.md).

Every template scrapes Kueue's controller metrics and the quota webhook's ``/metrics`` the way its platform does
(Managed Service for Prometheus on GKE, user-workload monitoring on OpenShift, the Prometheus Operator elsewhere)
and ships alert rules generated from the stack. This section holds the thresholds (typed, with defaults) and, on
kind and existing clusters, which Prometheus collects.

Durations are Prometheus durations (``30s``, ``30m``, ``1h``, ``1h30m``; units ``ms s m h d w y``), as the rules'
``for:`` and range selectors take them.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from batchplane.config.base import ConfigModel, DnsSubdomain
from batchplane.config.dashboards import DashboardsConfig

#: Prometheus duration units in seconds (https://prometheus.io/docs/prometheus/latest/configuration/configuration/
#: ``<duration>``: ``((([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?``).
_UNITS = {"y": 365 * 86400, "w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1, "ms": 0.001}
_DURATION = re.compile(r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$")

#: The kube-prometheus-stack chart versions Batchplane installs (``prometheus-community/kube-prometheus-stack``;
#: 88.0.0 ships Prometheus Operator v0.93.0, whose CRDs ``../shared/crds/prometheus-operator/v0.93.0`` holds:
#: https://github.com/prometheus-community/helm-charts/releases/tag/kube-prometheus-stack-88.0.0).
KUBE_PROMETHEUS_STACK_VERSIONS: tuple[str, ...] = ("88.0.0",)
KUBE_PROMETHEUS_STACK_REPO = "https://prometheus-community.github.io/helm-charts"


def duration_seconds(text: str) -> float:
    """Seconds in a Prometheus duration (``"1h30m"`` → 5400.0).

    Raises:
        ValueError: not a Prometheus duration, or zero.
    """
    match = _DURATION.match(text)
    if not text or match is None:
        raise ValueError(
            f'"{text}" is not a Prometheus duration (e.g. 30s, 10m, 1h30m; units ms s m h d w y)'
        )
    seconds = sum(int(v) * unit for v, unit in zip(match.groups(), _UNITS.values(), strict=True) if v)
    if seconds <= 0:
        raise ValueError(f'"{text}" is zero: give a positive duration')
    return float(seconds)


def _check_duration(text: str) -> str:
    duration_seconds(text)
    return text


Duration = Annotated[str, AfterValidator(_check_duration)]
"""A positive Prometheus duration (``30s``, ``10m``, ``1h30m``)."""

Ratio = Annotated[float, Field(gt=0, le=1)]
"""A fraction in (0, 1]."""


class QueueAlerts(ConfigModel):
    """Per-ClusterQueue alert thresholds (the defaults for every ClusterQueue of the stack)."""

    pending_too_long: Duration = "30m"
    """``KueuePendingTooLong``: the ClusterQueue has had pending workloads and admitted none for this long.
    Defaults to ``30m``."""
    admission_wait_p95: Duration = "1h"
    """``KueueAdmissionWaitHigh``: the 95th percentile of the time from creation (or requeue) to admission, over
    the last hour, is above this. Defaults to ``1h``."""
    gpu_saturated_for: Duration = "2h"
    """``KueueGpuQuotaSaturated``: GPU usage has been at (or above) the nominal quota for this long. Needs Kueue's
    ClusterQueue resource metrics (``metrics.enableClusterQueueResources``, switched on by the stack). Defaults to
    ``2h``."""
    borrowing_for: Duration = "1h"
    """``KueueGpuBorrowing``: GPU usage has been above the nominal quota (borrowed from the cohort) for this long.
    Defaults to ``1h``."""
    inactive_for: Duration = "10m"
    """``KueueClusterQueueInactive``: the ClusterQueue's status has not been ``active`` for this long (a missing
    ResourceFlavor or AdmissionCheck, or stopped). Defaults to ``10m``."""
    provisioning_wait_p95: Duration = "2h"
    """``KueueProvisioningSlow`` (ClusterQueues with a ProvisioningRequest admission check only): the 95th
    percentile of the time from quota reservation to admission — the DWS request's queueing — over the last
    3 hours is above this. Defaults to ``2h``."""


class QueueAlertOverrides(ConfigModel):
    """Thresholds for one ClusterQueue (a team), each replacing the stack's default when given."""

    pending_too_long: Duration | None = None
    """See :attr:`QueueAlerts.pending_too_long`. Defaults to the stack's."""
    admission_wait_p95: Duration | None = None
    """See :attr:`QueueAlerts.admission_wait_p95`. Defaults to the stack's."""
    gpu_saturated_for: Duration | None = None
    """See :attr:`QueueAlerts.gpu_saturated_for`. Defaults to the stack's."""
    borrowing_for: Duration | None = None
    """See :attr:`QueueAlerts.borrowing_for`. Defaults to the stack's."""
    inactive_for: Duration | None = None
    """See :attr:`QueueAlerts.inactive_for`. Defaults to the stack's."""
    provisioning_wait_p95: Duration | None = None
    """See :attr:`QueueAlerts.provisioning_wait_p95`. Defaults to the stack's."""

    def over(self, defaults: QueueAlerts) -> QueueAlerts:
        """``defaults`` with the thresholds given here replaced."""
        return defaults.model_copy(update=self.model_dump(exclude_none=True))


class WebhookAlerts(ConfigModel):
    """Quota-webhook alert thresholds."""

    refusal_ratio: Ratio = 0.5
    """``BatchplaneWebhookRefusing``: the share of (non-dry-run) judged ``/validate`` reviews denied over 15 minutes
    is above this (``/mutate`` and updates that judge nothing are not counted). Defaults to ``0.5``."""
    refusal_for: Duration = "15m"
    """How long the refusal share must stay above ``refusalRatio``. Defaults to ``15m``."""
    error_ratio: Ratio = 0.01
    """``BatchplaneWebhookErrors``: the share of requests answered with an internal error or HTTP 400 over 10
    minutes is above this. Defaults to ``0.01``."""
    latency_fraction_of_timeout: Ratio = 0.8
    """``BatchplaneWebhookSlow``: the 99th percentile review latency over 5 minutes is above this fraction of
    ``webhook.timeoutSeconds`` (the API server gives up at the timeout). Defaults to ``0.8``."""
    unavailable_for: Duration = "5m"
    """``BatchplaneWebhookUnavailable`` (``failurePolicy: Fail`` only): the webhook Deployment has had no available
    replica for this long, so every submission in a tenant namespace is refused. Needs kube-state-metrics.
    Defaults to ``5m``."""


class AlertsConfig(ConfigModel):
    """``observability.alerts``: the generated alert rules."""

    enabled: bool = True
    """Declare the alert and recording rules. Defaults to true."""
    queues: QueueAlerts = QueueAlerts()
    """Thresholds for every ClusterQueue. Defaults to :class:`QueueAlerts`' defaults."""
    cluster_queues: Annotated[dict[DnsSubdomain, QueueAlertOverrides], Field(max_length=500)] = {}
    """Thresholds for one ClusterQueue (a team: the teams shorthand names the ClusterQueue after the team), by
    ClusterQueue name; each must name a ClusterQueue of the stack. Defaults to none."""
    webhook: WebhookAlerts = WebhookAlerts()
    """Thresholds for the quota webhook. Defaults to :class:`WebhookAlerts`' defaults."""

    def for_queue(self, name: str) -> QueueAlerts:
        """The thresholds that apply to ClusterQueue ``name``."""
        override = self.cluster_queues.get(name)
        return override.over(self.queues) if override is not None else self.queues


PrometheusSource = Literal["operator", "kube-prometheus-stack", "none"]


def _pinned_kps(value: str) -> str:
    if value not in KUBE_PROMETHEUS_STACK_VERSIONS:
        raise ValueError(
            f'kube-prometheus-stack "{value}" is not a version Batchplane is tested with: one of '
            + ", ".join(KUBE_PROMETHEUS_STACK_VERSIONS)
        )
    return value


class KubePrometheusStackInstall(ConfigModel):
    """The opt-in kube-prometheus-stack Helm release (Prometheus Operator, Prometheus, Alertmanager, Grafana,
    kube-state-metrics, node-exporter)."""

    version: Annotated[str, AfterValidator(_pinned_kps)] = "88.0.0"
    """Chart version, one of :data:`KUBE_PROMETHEUS_STACK_VERSIONS`. Defaults to ``88.0.0``."""
    namespace: DnsSubdomain = "monitoring"
    """Release namespace (created). Defaults to ``monitoring``."""
    values: dict[str, object] = {}
    """Raw Helm values, deep-merged over Batchplane's. Defaults to none."""


class ObservabilityConfig(ConfigModel):
    """``batchplane:observability``: metrics collection and alert rules (docs/observability.md)."""

    enabled: bool = True
    """Declare the scrape objects and alert rules. Defaults to true."""
    prometheus: PrometheusSource = "operator"
    """Kind and existing clusters only — which Prometheus collects: ``operator`` (``ServiceMonitor`` and
    ``PrometheusRule`` objects for a Prometheus Operator already on the cluster; ``batchplane preflight`` checks
    its CRDs), ``kube-prometheus-stack`` (the stack installs the pinned Helm release, then declares the same
    objects) or ``none`` (no scrape or rule object declared). GKE uses Managed
    Service for Prometheus and OpenShift user-workload monitoring whatever this says. Defaults to ``operator``."""
    kube_prometheus_stack: KubePrometheusStackInstall = KubePrometheusStackInstall()
    """The release installed when ``prometheus: kube-prometheus-stack``. Defaults to chart ``88.0.0`` in
    ``monitoring``."""
    monitor_labels: Annotated[dict[str, str], Field(max_length=16)] = {}
    """Labels put on every ``ServiceMonitor`` and ``PrometheusRule`` (kind, existing, OpenShift), for a Prometheus
    whose ``serviceMonitorSelector``/``ruleSelector`` selects by label (a kube-prometheus-stack release installed
    by someone else selects ``release: <its release name>``). Defaults to none (the release the stack installs
    selects every object)."""
    scrape_interval: Duration = "30s"
    """How often Kueue and the webhook are scraped. Defaults to ``30s``."""
    alerts: AlertsConfig = AlertsConfig()
    """Alert thresholds. Defaults to :class:`AlertsConfig`' defaults."""
    dashboards: DashboardsConfig = DashboardsConfig()
    """The generated dashboards and how they are delivered (docs/dashboards.md). Defaults to
    :class:`DashboardsConfig`' defaults: on, delivered the platform's way."""

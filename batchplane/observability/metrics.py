"""The metric catalog: every metric family Kueue v0.19.2 and the quota webhook export, with its label names.

Queries (dashboards, alert and recording rules) name only metrics listed here; a test parses each generated
PromQL expression and checks every selector's metric and label names against this catalog.

**Kueue.** Transcribed from Kueue's ``pkg/metrics/metrics.go`` at tag v0.19.2 (commit
8eab68778fc1b52affe165fdf5af29d1e9b4f3cb):
https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/metrics/metrics.go — ``InitMetricVectors``
(lines 344–970) declares each vector; ``source_line`` is the line of its ``Name:``. Every name is
``<Subsystem>_<Name>`` with Subsystem ``kueue`` or ``multikueue`` (``pkg/constants/constants.go`` lines 24–25) and
no Namespace. Every vector also carries the label names of Kueue's ``metrics.customLabels`` (the
``CustomMetricLabels`` feature); Batchplane configures none, so the catalog lists the fixed names only.
``Register()`` (lines 1452–1501) registers them all except: ``kueue_workload_creation_latency_seconds`` (feature
gate ``MetricForWorkloadCreationLatency``) and the ``kueue_local_queue_*`` vectors (``LocalQueueMetrics``). Some
are registered but only *reported* under a setting (``MetricFamily.requires``): the ClusterQueue resource
vectors (``kueue_cluster_queue_resource_usage``, ``_nominal_quota``, ``_borrowing_limit``, …) only when the
Kueue Configuration sets ``metrics.enableClusterQueueResources: true`` (``cmd/kueue/main.go`` lines 303/313,
``pkg/controller/core/core.go`` line 96); the cohort vectors under ``MetricsForCohorts``; the unadmitted
vectors under ``UnadmittedWorkloadsObservability`` (feature defaults: ``pkg/features/kube_features.go``).

**ProvisioningRequest (DWS) and MultiKueue.** Kueue v0.19.2 exports no metric about ProvisioningRequests or
admission checks other than ``kueue_admission_checks_wait_time_seconds`` (time from quota reservation to
admission, which on a DWS flavor is the time the ProvisioningRequest takes) and the ``kueue_evicted_workloads_total``
``reason``/``underlying_cause`` labels; ``metrics.go`` is the only file under ``pkg/`` that creates collectors.
MultiKueue exports ``multikueue_workloads_dispatched_total`` and ``multikueue_workloads_admitted_total``; there
is no metric of a MultiKueueCluster's ``Active`` condition.

**Webhook.** Derived from the quota webhook's own registry (:class:`batchplane.webhook.metrics.WebhookMetrics`):
a fresh instance's collectors, their names as exposed (``_total`` on counters) and label names.

Shapes: :data:`KUEUE_METRICS` and :data:`WEBHOOK_METRICS` map a family name to a :class:`MetricFamily`;
:func:`known_metric` resolves a series name (histogram ``_bucket``/``_sum``/``_count`` included) to its family;
:data:`KUBE_STATE_METRICS` (the webhook availability rule's) and :data:`RECORDED_METRICS` (the recording rules'
series) are known too, and :data:`TARGET_LABELS` lists the labels scraping adds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, cast

MetricType = Literal["counter", "gauge", "histogram"]

#: The upstream file the Kueue catalog is transcribed from.
KUEUE_METRICS_SOURCE = "https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/metrics/metrics.go"
#: The Kueue release the catalog mirrors.
KUEUE_VERSION = "v0.19.2"
#: Histogram series suffixes (Prometheus text format).
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


@dataclass(frozen=True)
class MetricFamily:
    """One metric family.

    Attributes:
        name: the family name queries use (counters end in ``_total``; a histogram's series add
            ``_bucket``/``_sum``/``_count``).
        type: ``counter``, ``gauge`` or ``histogram``.
        labels: the label names every series carries (histogram buckets add ``le``).
        help: the exporter's help text (first sentence for Kueue's multi-line texts).
        source: where it is defined: ``metrics.go:<line>`` for Kueue, the Python collector for the webhook.
        requires: the Kueue setting or feature gate under which it is reported, or ``None`` when always.
    """

    name: str
    type: MetricType
    labels: tuple[str, ...]
    help: str
    source: str
    requires: str | None = None

    def series_labels(self, series: str) -> frozenset[str]:
        """The label names a series of this family may carry: ``labels`` plus ``le`` on ``_bucket``."""
        if self.type == "histogram" and series == f"{self.name}_bucket":
            return frozenset((*self.labels, "le"))
        return frozenset(self.labels)


def _kueue(
    name: str, type_: MetricType, labels: tuple[str, ...], line: int, help_: str, requires: str | None = None
) -> MetricFamily:
    return MetricFamily(name, type_, labels, help_, f"metrics.go:{line}", requires)


_KUEUE: tuple[MetricFamily, ...] = (
    _kueue(
        "kueue_admission_attempts_total",
        "counter",
        ("result", "replica_role"),
        354,
        "The total number of attempts to admit workloads.",
    ),
    _kueue(
        "kueue_admission_attempt_duration_seconds",
        "histogram",
        ("result", "replica_role"),
        366,
        "The latency of an admission attempt.",
    ),
    _kueue(
        "multikueue_workloads_dispatched_total",
        "counter",
        ("cluster_queue", "cluster", "replica_role"),
        377,
        "The total number of remote workloads created by the MultiKueue manager on a worker cluster, per 'cluster_queue' and 'cluster'.",
    ),
    _kueue(
        "multikueue_workloads_admitted_total",
        "counter",
        ("cluster_queue", "cluster", "replica_role"),
        385,
        "The total number of remote workload admissions on a worker cluster, per 'cluster_queue' and 'cluster'. A workload may be counted more than once if it is evicted and re-admitted.",
    ),
    _kueue(
        "kueue_admission_cycle_preemption_skips",
        "gauge",
        ("cluster_queue", "replica_role"),
        393,
        "The number of Workloads in the ClusterQueue that got preemption candidates but had to be skipped because other ClusterQueues needed the same resources in the same cycle.",
    ),
    _kueue(
        "kueue_build_info",
        "gauge",
        ("git_version", "git_commit", "build_date", "go_version", "compiler", "platform"),
        403,
        "Kueue build information. 1 labeled by git version, git commit, build date, go version, compiler, platform",
    ),
    _kueue(
        "kueue_pending_workloads",
        "gauge",
        ("cluster_queue", "status", "replica_role"),
        414,
        "The number of pending workloads, per 'cluster_queue' and 'status'.",
    ),
    _kueue(
        "kueue_local_queue_pending_workloads",
        "gauge",
        ("name", "namespace", "status", "replica_role"),
        426,
        "The number of pending workloads, per 'local_queue' and 'status'.",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_finished_workloads",
        "gauge",
        ("cluster_queue", "replica_role"),
        438,
        "The number of finished workloads per 'cluster_queue'.",
    ),
    _kueue(
        "kueue_local_queue_finished_workloads",
        "gauge",
        ("name", "namespace", "replica_role"),
        447,
        "The number of finished workloads, per 'local_queue'.",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_quota_reserved_workloads_total",
        "counter",
        ("cluster_queue", "priority_class", "replica_role"),
        456,
        "The total number of quota reserved workloads per 'cluster_queue'",
    ),
    _kueue(
        "kueue_local_queue_quota_reserved_workloads_total",
        "counter",
        ("name", "namespace", "priority_class", "replica_role"),
        464,
        "The total number of quota reserved workloads per 'local_queue'",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_finished_workloads_total",
        "counter",
        ("cluster_queue", "priority_class", "replica_role"),
        472,
        "The total number of finished workloads per 'cluster_queue'",
    ),
    _kueue(
        "kueue_local_queue_finished_workloads_total",
        "counter",
        ("name", "namespace", "priority_class", "replica_role"),
        480,
        "The total number of finished workloads per 'local_queue'",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_quota_reserved_wait_time_seconds",
        "histogram",
        ("cluster_queue", "priority_class", "replica_role"),
        488,
        "The time between a workload was created or requeued until it got quota reservation, per 'cluster_queue'",
    ),
    _kueue(
        "kueue_pods_ready_to_evicted_time_seconds",
        "histogram",
        ("cluster_queue", "reason", "underlying_cause", "replica_role"),
        497,
        "The number of seconds between a workload's pods being ready and eviction workloads per 'cluster_queue'",
    ),
    _kueue(
        "kueue_local_queue_quota_reserved_wait_time_seconds",
        "histogram",
        ("name", "namespace", "priority_class", "replica_role"),
        519,
        "The time between a workload was created or requeued until it got quota reservation, per 'local_queue'",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_admitted_workloads_total",
        "counter",
        ("cluster_queue", "priority_class", "replica_role"),
        528,
        "The total number of admitted workloads per 'cluster_queue'",
    ),
    _kueue(
        "kueue_local_queue_admitted_workloads_total",
        "counter",
        ("name", "namespace", "priority_class", "replica_role"),
        536,
        "The total number of admitted workloads per 'local_queue'",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_admission_wait_time_seconds",
        "histogram",
        ("cluster_queue", "priority_class", "replica_role"),
        544,
        "The time between a workload was created or requeued until admission, per 'cluster_queue'",
    ),
    _kueue(
        "kueue_ready_wait_time_seconds",
        "histogram",
        ("cluster_queue", "priority_class", "replica_role"),
        553,
        "The time between a workload was created or requeued until ready, per 'cluster_queue'",
    ),
    _kueue(
        "kueue_admitted_until_ready_wait_time_seconds",
        "histogram",
        ("cluster_queue", "priority_class", "replica_role"),
        562,
        "The time between a workload was admitted until ready, per 'cluster_queue'",
    ),
    _kueue(
        "kueue_local_queue_admission_wait_time_seconds",
        "histogram",
        ("name", "namespace", "priority_class", "replica_role"),
        571,
        "The time between a workload was created or requeued until admission, per 'local_queue'",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_admission_checks_wait_time_seconds",
        "histogram",
        ("cluster_queue", "priority_class", "replica_role"),
        580,
        "The time from when a workload got the quota reservation until admission, per 'cluster_queue'",
    ),
    _kueue(
        "kueue_local_queue_admission_checks_wait_time_seconds",
        "histogram",
        ("name", "namespace", "priority_class", "replica_role"),
        589,
        "The time from when a workload got the quota reservation until admission, per 'local_queue'",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_local_queue_ready_wait_time_seconds",
        "histogram",
        ("name", "namespace", "priority_class", "replica_role"),
        598,
        "The time between a workload was created or requeued until ready, per 'local_queue'",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_local_queue_admitted_until_ready_wait_time_seconds",
        "histogram",
        ("name", "namespace", "priority_class", "replica_role"),
        607,
        "The time between a workload was admitted until ready, per 'local_queue'",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_workload_creation_latency_seconds",
        "histogram",
        ("job_kind", "replica_role"),
        616,
        "The time between a job was created until its workload was created, per 'job_kind'. Entries are only recorded for objects with generation 1.",
        requires="feature gate MetricForWorkloadCreationLatency (Beta, on by default since 0.18)",
    ),
    _kueue(
        "kueue_pod_scheduling_gate_removal_seconds",
        "histogram",
        ("name", "cluster_queue", "is_group", "replica_role"),
        625,
        "Duration from Workload admission to removal of a Pod scheduling gate.",
    ),
    _kueue(
        "kueue_evicted_workloads_total",
        "counter",
        ("cluster_queue", "reason", "underlying_cause", "priority_class", "replica_role"),
        633,
        "The number of evicted workloads per 'cluster_queue'",
    ),
    _kueue(
        "kueue_replaced_workload_slices_total",
        "counter",
        ("cluster_queue", "replica_role"),
        654,
        "The number of replaced workload slices per 'cluster_queue'",
    ),
    _kueue(
        "kueue_local_queue_evicted_workloads_total",
        "counter",
        ("name", "namespace", "reason", "underlying_cause", "priority_class", "replica_role"),
        662,
        "The number of evicted workloads per 'local_queue'",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_evicted_workloads_once_total",
        "counter",
        ("cluster_queue", "reason", "underlying_cause", "priority_class", "replica_role"),
        683,
        "The number of unique workload evictions per 'cluster_queue'",
    ),
    _kueue(
        "kueue_preempted_workloads_total",
        "counter",
        ("preempting_cluster_queue", "reason", "replica_role"),
        706,
        "The number of preempted workloads per 'preempting_cluster_queue'",
    ),
    _kueue(
        "kueue_workload_eviction_latency_seconds",
        "histogram",
        ("cluster_queue", "reason", "replica_role"),
        719,
        "The time from workload eviction (WorkloadEvicted condition becomes True) until the workload returns to Pending (quota released).",
    ),
    _kueue(
        "kueue_reserving_active_workloads",
        "gauge",
        ("cluster_queue", "replica_role"),
        739,
        "The number of Workloads that are reserving quota, per 'cluster_queue'",
    ),
    _kueue(
        "kueue_local_queue_reserving_active_workloads",
        "gauge",
        ("name", "namespace", "replica_role"),
        748,
        "The number of Workloads that are reserving quota, per 'localQueue'",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_admitted_active_workloads",
        "gauge",
        ("cluster_queue", "replica_role"),
        757,
        "The number of admitted Workloads that are active, per 'cluster_queue'",
    ),
    _kueue(
        "kueue_local_queue_admitted_active_workloads",
        "gauge",
        ("name", "namespace", "replica_role"),
        766,
        "The number of admitted Workloads that are active, per 'localQueue'",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_cluster_queue_status",
        "gauge",
        ("cluster_queue", "status", "replica_role"),
        775,
        "Reports 'cluster_queue' with its 'status' (with possible values 'pending', 'active' or 'terminated').",
    ),
    _kueue(
        "kueue_local_queue_status",
        "gauge",
        ("name", "namespace", "active", "replica_role"),
        785,
        "Reports 'localQueue' with its 'active' status (with possible values 'True', 'False', or 'Unknown').",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_unadmitted_workloads",
        "gauge",
        ("cluster_queue", "reason", "underlying_cause", "replica_role"),
        795,
        "The number of unadmitted workloads, per 'cluster_queue', 'reason', and 'underlying_cause'. This metric is only emitted when UnadmittedWorkloadsObservability feature gate is enabled.",
        requires="feature gate UnadmittedWorkloadsObservability (Beta, off by default in 0.19)",
    ),
    _kueue(
        "kueue_local_queue_unadmitted_workloads",
        "gauge",
        ("name", "namespace", "cluster_queue", "reason", "underlying_cause", "replica_role"),
        804,
        "The number of unadmitted workloads, per 'name', 'namespace', 'cluster_queue', 'reason', and 'underlying_cause'. This metric is only emitted when UnadmittedWorkloadsObservability feature gate is enabled.",
        requires="feature gates LocalQueueMetrics and UnadmittedWorkloadsObservability",
    ),
    _kueue(
        "kueue_cluster_queue_resource_reservation",
        "gauge",
        ("cohort", "cluster_queue", "flavor", "resource", "replica_role"),
        813,
        "Reports the cluster_queue's total resource reservation within all the flavors",
        requires="Configuration metrics.enableClusterQueueResources: true",
    ),
    _kueue(
        "kueue_cluster_queue_resource_pending",
        "gauge",
        ("cluster_queue", "resource", "replica_role"),
        822,
        "Reports the cluster_queue's total pending resource requests. Unlike resource_reservation, pending workloads have not yet been assigned to flavors.",
        requires="Configuration metrics.enableClusterQueueResources: true",
    ),
    _kueue(
        "kueue_cluster_queue_resource_usage",
        "gauge",
        ("cohort", "cluster_queue", "flavor", "resource", "replica_role"),
        831,
        "Reports the cluster_queue's total resource usage within all the flavors",
        requires="Configuration metrics.enableClusterQueueResources: true",
    ),
    _kueue(
        "kueue_local_queue_resource_reservation",
        "gauge",
        ("name", "namespace", "flavor", "resource", "replica_role"),
        840,
        "Reports the localQueue's total resource reservation within all the flavors",
        requires="feature gate LocalQueueMetrics and Configuration metrics.enableClusterQueueResources: true",
    ),
    _kueue(
        "kueue_local_queue_resource_usage",
        "gauge",
        ("name", "namespace", "flavor", "resource", "replica_role"),
        849,
        "Reports the localQueue's total resource usage within all the flavors",
        requires="feature gate LocalQueueMetrics and Configuration metrics.enableClusterQueueResources: true",
    ),
    _kueue(
        "kueue_local_queue_admission_fair_sharing_usage",
        "gauge",
        ("name", "namespace", "cluster_queue", "replica_role"),
        858,
        "Reports a value representing the LocalQueue's Admission Fair Sharing usage",
        requires="feature gate LocalQueueMetrics (Beta, on by default since 0.17)",
    ),
    _kueue(
        "kueue_cluster_queue_nominal_quota",
        "gauge",
        ("cohort", "cluster_queue", "flavor", "resource", "replica_role"),
        869,
        "Reports the cluster_queue's resource nominal quota within all the flavors",
        requires="Configuration metrics.enableClusterQueueResources: true",
    ),
    _kueue(
        "kueue_cluster_queue_borrowing_limit",
        "gauge",
        ("cohort", "cluster_queue", "flavor", "resource", "replica_role"),
        878,
        "Reports the cluster_queue's resource borrowing limit within all the flavors. If borrowingLimit is unset, this metric reports +Inf.",
        requires="Configuration metrics.enableClusterQueueResources: true",
    ),
    _kueue(
        "kueue_cluster_queue_lending_limit",
        "gauge",
        ("cohort", "cluster_queue", "flavor", "resource", "replica_role"),
        887,
        "Reports the cluster_queue's resource lending limit within all the flavors. If lendingLimit is unset, this metric reports +Inf.",
        requires="Configuration metrics.enableClusterQueueResources: true",
    ),
    _kueue(
        "kueue_cluster_queue_weighted_share",
        "gauge",
        ("cluster_queue", "cohort", "replica_role"),
        896,
        "Reports a value that representing the maximum of the ratios of usage above nominal",
    ),
    _kueue(
        "kueue_cohort_weighted_share",
        "gauge",
        ("cohort", "replica_role"),
        909,
        "Reports a value that representing the maximum of the ratios of usage above nominal",
        requires="feature gate MetricsForCohorts (Beta, on by default since 0.18)",
    ),
    _kueue(
        "kueue_cohort_subtree_quota",
        "gauge",
        ("cohort", "flavor", "resource", "replica_role"),
        922,
        "Reports the cohort's nominal quota aggregated within the cohort's subtree. The values are reported per resource and flavor",
        requires="feature gate MetricsForCohorts (Beta, on by default since 0.18)",
    ),
    _kueue(
        "kueue_cohort_subtree_admitted_workloads_total",
        "counter",
        ("cohort", "priority_class", "replica_role"),
        931,
        "The total number of admitted workloads per cohort's subtree",
        requires="feature gate MetricsForCohorts (Beta, on by default since 0.18)",
    ),
    _kueue(
        "kueue_cohort_subtree_resource_reservations",
        "gauge",
        ("cohort", "flavor", "resource", "replica_role"),
        939,
        "Reports the cohort's resource reservations aggregated within the cohort's subtree. The values are reported per resource and flavor",
        requires="feature gate MetricsForCohorts (Beta, on by default since 0.18)",
    ),
    _kueue(
        "kueue_cohort_subtree_admitted_active_workloads",
        "gauge",
        ("cohort", "replica_role"),
        949,
        "The number of admitted Workloads that are active, per cohort's subtree",
        requires="feature gate MetricsForCohorts (Beta, on by default since 0.18)",
    ),
    _kueue(
        "kueue_cohort_info",
        "gauge",
        ("cohort", "parent_cohort", "root_cohort", "replica_role"),
        958,
        "Reports Cohort hierarchy information. The metric has value 1 and can be joined using labels.",
        requires="feature gate MetricsForCohorts (Beta, on by default since 0.18)",
    ),
    _kueue(
        "kueue_cluster_queue_info",
        "gauge",
        ("cluster_queue", "parent_cohort", "root_cohort", "replica_role"),
        966,
        "Reports ClusterQueue hierarchy information. The metric has value 1 and can be joined using labels.",
    ),
)

#: Kueue v0.19.2's metric families by name (see the module docstring for the source and conditions).
KUEUE_METRICS: Mapping[str, MetricFamily] = MappingProxyType({m.name: m for m in _KUEUE})


def _webhook_families() -> dict[str, MetricFamily]:
    """The quota webhook's families, read from a fresh :class:`~batchplane.webhook.metrics.WebhookMetrics`."""
    from prometheus_client.metrics import MetricWrapperBase

    from batchplane.webhook.metrics import WebhookMetrics

    families: dict[str, MetricFamily] = {}
    source = WebhookMetrics()
    for attribute, collector in vars(source).items():
        if not isinstance(collector, MetricWrapperBase):
            continue
        # prometheus-client keeps the declared name, type and label names on the wrapper (``_name``, ``_type``,
        # ``_labelnames``, ``_documentation``): what ``collect()`` would report once a child exists.
        type_ = collector._type
        if type_ not in ("counter", "gauge", "histogram"):
            raise TypeError(
                f"webhook collector {attribute} has type {type_!r}; the catalog knows counter, gauge, histogram"
            )
        name = f"{collector._name}_total" if type_ == "counter" else collector._name
        families[name] = MetricFamily(
            name=name,
            type=cast("MetricType", type_),
            labels=tuple(collector._labelnames),
            help=collector._documentation,
            source=f"batchplane.webhook.metrics.WebhookMetrics.{attribute}",
        )
    return families


#: The quota webhook's metric families by name (from its registry; ``_total`` on counters).
WEBHOOK_METRICS: Mapping[str, MetricFamily] = MappingProxyType(_webhook_families())

#: The kube-state-metrics families the webhook's availability rule reads (it needs kube-state-metrics installed:
#: kube-prometheus-stack and OpenShift's monitoring ship it; on GKE it is Managed Prometheus's optional "kube state
#: metrics" package). Source: https://github.com/kubernetes/kube-state-metrics/blob/06d14813741ca10fb225c3d07aff6347f373e054/docs/metrics/workload/deployment-metrics.md
#: (both STABLE).
KUBE_STATE_METRICS: Mapping[str, MetricFamily] = MappingProxyType(
    {
        m.name: m
        for m in (
            MetricFamily(
                "kube_deployment_spec_replicas",
                "gauge",
                ("deployment", "namespace"),
                "Number of desired pods for a deployment.",
                "kube-state-metrics docs/metrics/workload/deployment-metrics.md",
            ),
            MetricFamily(
                "kube_deployment_status_replicas_available",
                "gauge",
                ("deployment", "namespace"),
                "The number of available replicas per deployment.",
                "kube-state-metrics docs/metrics/workload/deployment-metrics.md",
            ),
        )
    }
)

#: Labels Prometheus attaches to every scraped series (``job``, ``instance``) and those the scrape objects
#: Batchplane declares add from the target (Managed Prometheus: ``namespace``, ``pod``, ``container``,
#: ``cluster``, ``location``, ``project_id``; Prometheus Operator: ``namespace``, ``pod``, ``service``,
#: ``container``, ``endpoint``). A query may select on these as well as on a family's own labels.
TARGET_LABELS: frozenset[str] = frozenset(
    {
        "job",
        "instance",
        "namespace",
        "pod",
        "container",
        "service",
        "endpoint",
        "cluster",
        "location",
        "project_id",
    }
)

#: The series the stack's recording rules write (:mod:`batchplane.observability.alerts`; named
#: ``level:metric:operations`` after Prometheus' recording-rule convention), with the labels they keep. They exist
#: wherever the rules are loaded; dashboards may read them.
RECORDED_METRICS: Mapping[str, MetricFamily] = MappingProxyType(
    {
        m.name: m
        for m in (
            MetricFamily(
                "cluster_queue:kueue_admission_wait_time_seconds:p95_1h",
                "gauge",
                ("cluster_queue",),
                "95th percentile of kueue_admission_wait_time_seconds over 1h, per ClusterQueue (seconds).",
                "batchplane.observability.alerts.kueue_rules",
            ),
            MetricFamily(
                "cluster_queue_resource:kueue_cluster_queue_gpu_usage:ratio",
                "gauge",
                ("cluster_queue", "resource"),
                "GPU usage over nominal quota per ClusterQueue and GPU resource (above 1: borrowing).",
                "batchplane.observability.alerts.kueue_rules",
            ),
            MetricFamily(
                "endpoint_decision_reason:batchplane_webhook_reviews:rate5m",
                "gauge",
                ("endpoint", "decision", "reason"),
                "Non-dry-run reviews per second over 5m, by endpoint, decision and reason.",
                "batchplane.observability.alerts.webhook_rules",
            ),
            MetricFamily(
                "endpoint:batchplane_webhook_review_seconds:p99_5m",
                "gauge",
                ("endpoint",),
                "99th percentile review latency over 5m per endpoint (seconds).",
                "batchplane.observability.alerts.webhook_rules",
            ),
        )
    }
)

#: Every family queries may name.
ALL_METRICS: Mapping[str, MetricFamily] = MappingProxyType(
    {**KUEUE_METRICS, **WEBHOOK_METRICS, **KUBE_STATE_METRICS, **RECORDED_METRICS}
)


def known_metric(name: str) -> MetricFamily | None:
    """The family a series name belongs to, or ``None``.

    Args:
        name: a series name as written in PromQL: a family name, or a histogram's ``_bucket``/``_sum``/``_count``.

    Returns:
        The :class:`MetricFamily` (from :data:`ALL_METRICS`), or ``None`` for a name neither Kueue v0.19.2 nor the
        webhook exports (a ``_bucket`` of a non-histogram is unknown).
    """
    family = ALL_METRICS.get(name)
    if family is not None:
        return family
    for suffix in HISTOGRAM_SUFFIXES:
        if name.endswith(suffix):
            base = ALL_METRICS.get(name[: -len(suffix)])
            if base is not None and base.type == "histogram":
                return base
    return None

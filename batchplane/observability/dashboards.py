"""The stack's dashboards (issue #32), generated from the stack — pure: a validated stack in, dashboard models out.

Four kinds, each a :class:`DashboardSpec` of panels whose queries are PromQL over the metric catalog
(:mod:`batchplane.observability.metrics`: Kueue v0.19.2, the quota webhook's registry, two kube-state-metrics
families):

* **overview** — every ClusterQueue of the stack: GPUs in use, nominal and borrowed, pending workloads, admitted
  per hour, admission wait time (p50/p95), queues that are not active;
* **one per ClusterQueue** (a team's queue) — the same for that queue by flavor, evictions and preemptions, and for
  a queue with admission checks (DWS) the time its checks take;
* **capacity** — GPU quota reserved against nominal by flavor; each node pool the target declares
  (:meth:`~batchplane.targets.platform.Platform.backed_pools`: GKE GPU pools, OpenShift GPU MachineSets) with the
  GPUs reserved on its flavors between the pool's minimum and maximum size; for ClusterQueues with a
  ProvisioningRequest admission check, workloads holding quota while their ProvisioningRequest is pending, the
  checks' wait time and evictions by a failed check (Kueue v0.19.2 exports no metric of ProvisioningRequest states
  themselves: ``metrics.go`` is the only file under ``pkg/`` that creates collectors);
* **webhook** (when the stack deploys it) — refusals by reason, reviews by decision, errors, latency p50/p99
  against ``webhook.timeoutSeconds`` and available replicas (kube-state-metrics).

Three renderings of the same specs:

* :func:`grafana_dashboard` — Grafana's classic dashboard JSON model (``schemaVersion`` 42), built with Grafana's
  Foundation SDK (``grafana-foundation-sdk`` v0.0.21, the builders generated from Grafana's own schemas). Panels
  take their datasource from a ``datasource`` template variable (type ``prometheus``); the overview and capacity
  dashboards filter ClusterQueues with a ``cluster_queue`` query variable (``label_values``), and rate windows are
  ``$__rate_interval``. The classic model (not the v2 schema) because it is what the Grafana sidecar's file
  provisioning, the Grafana Operator's ``spec.json`` and every Grafana's import take; Grafana 12 migrates it
  on load.
* :func:`console_dashboard` — the subset of that model the OpenShift console's dashboards page renders (panel types
  ``graph`` and ``singlestat``, no template variables: fixed ClusterQueue selectors, ``$__rate_interval``, which the
  console substitutes).
* :func:`cloud_monitoring_dashboard` — a Cloud Monitoring dashboard (``projects.dashboards`` JSON,
  ``mosaicLayout``) whose charts query Managed Service for Prometheus with ``timeSeriesQuery.prometheusQuery``;
  template variables become fixed selectors over the stack's ClusterQueues, a pinned ``cluster_queue`` filter and
  ``5m`` rate windows.

Every dashboard has a uid that depends only on the stack name and the dashboard (:func:`dashboard_uid`: ≤ 40
characters of ``[A-Za-z0-9_-]``, Grafana's limit, ``pkg/util/shortid_generator.go`` ``MaxUIDLength``).
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from batchplane.backed_pools import GPU_RESOURCE, BackedPool, flavor_pools
from batchplane.components.quota_webhook.manifests import webhook_deployment
from batchplane.config.dashboards import CONSOLE_DASHBOARDS_NAMESPACE, DashboardsConfig, DashboardTarget
from batchplane.stack import Stack
from batchplane.stack.model import webhook_enabled
from batchplane.stack.observability import resolve_delivery
from batchplane.wellknown import PROVISIONING_CONTROLLER

with warnings.catch_warnings():
    # The SDK's classic-dashboard builders warn at import ("Prefer using dashboardv2.Dashboard"): the classic model
    # is still what file provisioning, the Grafana Operator and dashboard import take (module docstring).
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"grafana_foundation_sdk\.")
    from grafana_foundation_sdk.builders import dashboard as gf_dashboard
    from grafana_foundation_sdk.builders import prometheus as gf_prometheus
    from grafana_foundation_sdk.builders import stat as gf_stat
    from grafana_foundation_sdk.builders import timeseries as gf_timeseries
    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.models import common as gf_common
    from grafana_foundation_sdk.models import dashboard as gf_model

__all__ = [
    "MAX_UID_LENGTH",
    "DashboardSpec",
    "DashboardsPlan",
    "PanelSpec",
    "Query",
    "cloud_monitoring_dashboard",
    "console_dashboard",
    "console_dashboard_configmap",
    "dashboard_configmap",
    "dashboard_specs",
    "dashboard_uid",
    "dashboards_plan",
    "grafana_dashboard",
    "grafana_dashboard_resource",
    "grafana_json",
]

MAX_UID_LENGTH = 40
"""Grafana's longest dashboard uid (``MaxUIDLength``, grafana/grafana ``pkg/util/shortid_generator.go``)."""
UID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
"""The characters Grafana allows in a uid (``validUIDPattern``, same file)."""
DATASOURCE_VARIABLE = "datasource"
CLUSTER_QUEUE_VARIABLE = "cluster_queue"
GRAFANA_RATE_WINDOW = "$__rate_interval"
"""Grafana's rate window: at least four scrape intervals (Grafana's Prometheus data source docs)."""
CLOUD_MONITORING_RATE_WINDOW = "5m"
KUEUE_REPLICAS = 'replica_role!="follower"'
"""Kueue v0.19.2 labels every series with the replica's ``replica_role`` (``leader``, ``follower``, ``standalone``);
followers' gauges would count every queue twice."""
GPU = f'resource="{GPU_RESOURCE}"'

Dialect = Literal["grafana", "cloud-monitoring", "openshift-console"]
Kind = Literal["overview", "cluster-queue", "capacity", "webhook"]


@dataclass(frozen=True)
class Query:
    """One PromQL query of a panel.

    Attributes:
        expr: the PromQL expression (Grafana's ``$__rate_interval`` / ``$cluster_queue`` in the Grafana dialect).
        legend: Grafana legend format (``{{cluster_queue}}``); ``""`` for the series name.
    """

    expr: str
    legend: str = ""


@dataclass(frozen=True)
class PanelSpec:
    """One panel.

    Attributes:
        title: the panel title.
        description: what it shows and how to read it.
        queries: its queries (at least one).
        unit: Grafana unit id (``short``, ``s``, ``percentunit``, ``reqps``). Defaults to ``short``.
        kind: ``timeseries`` or ``stat``. Defaults to ``timeseries``.
        width: grid columns of 24. Defaults to 12.
        height: grid rows. Defaults to 8.
    """

    title: str
    description: str
    queries: tuple[Query, ...]
    unit: str = "short"
    kind: Literal["timeseries", "stat"] = "timeseries"
    width: int = 12
    height: int = 8


@dataclass(frozen=True)
class DashboardSpec:
    """One dashboard, independent of where it is shown.

    Attributes:
        kind: ``overview``, ``cluster-queue``, ``capacity`` or ``webhook``.
        key: unique within the stack (``overview``, ``cluster-queue-<name>``, ``capacity``, ``webhook``); names the
            JSON file, ConfigMap and CR.
        uid: :func:`dashboard_uid` of the stack and key.
        title: the dashboard title.
        description: one sentence.
        tags: Grafana tags (``batchplane``, the stack name, the kind).
        panels: the panels, in layout order.
        cluster_queues: the ClusterQueues the ``cluster_queue`` variable offers (empty: the dashboard has none).
    """

    kind: Kind
    key: str
    uid: str
    title: str
    description: str
    tags: tuple[str, ...]
    panels: tuple[PanelSpec, ...]
    cluster_queues: tuple[str, ...] = field(default=())


def dashboard_uid(stack_name: str, key: str) -> str:
    """A Grafana uid stable per stack and dashboard: ``bp-<key, ≤ 24 chars>-<10 hex of SHA-256(stack, key)>``.

    Only ``[A-Za-z0-9_-]`` (a ``.`` of a ClusterQueue name becomes ``-``) and at most :data:`MAX_UID_LENGTH` (40)
    characters; the hash keeps keys that truncate alike, and the same key in two stacks, apart.
    """
    digest = hashlib.sha256(f"{stack_name}\0{key}".encode()).hexdigest()[:10]
    readable = re.sub(r"[^A-Za-z0-9_-]", "-", key)[:24].rstrip("-")
    return f"bp-{readable}-{digest}"


# --- PromQL ----------------------------------------------------------------------------------------------------


def _matchers(*parts: str) -> str:
    """Label matchers joined with ``, ``, empty parts left out."""
    return ", ".join(p for p in parts if p)


def _selector(metric: str, *parts: str) -> str:
    """``metric{<parts>}``, or the bare name when every part is empty."""
    matchers = _matchers(*parts)
    return f"{metric}{{{matchers}}}" if matchers else metric


def _regex_of(names: Sequence[str]) -> str:
    """A PromQL regex matching exactly ``names`` (RE2, anchored by PromQL; ``.`` escaped, ``\\`` doubled for the
    string literal)."""
    return "|".join(re.sub(r"([^A-Za-z0-9_-])", r"\\\\\1", n) for n in names) or "^$"


@dataclass(frozen=True)
class _Scope:
    """How a dialect selects ClusterQueues and windows rates."""

    dialect: Dialect
    all_queues: tuple[str, ...]
    cluster: str | None = None

    @property
    def base(self) -> str:
        """The matcher of the cluster's series in a store shared by several clusters (Cloud Monitoring: Managed
        Service for Prometheus's ``cluster`` label), or ``""``."""
        return f'cluster="{self.cluster}"' if self.cluster else ""

    @property
    def kueue(self) -> str:
        """The matchers every Kueue selector starts with: the leader's (or a standalone replica's) series, of this
        cluster."""
        return _matchers(KUEUE_REPLICAS, self.base)

    @property
    def window(self) -> str:
        return CLOUD_MONITORING_RATE_WINDOW if self.dialect == "cloud-monitoring" else GRAFANA_RATE_WINDOW

    def queues(self) -> str:
        """The ``cluster_queue`` matcher of a dashboard over every queue of the stack."""
        if self.dialect == "grafana":
            return f'cluster_queue=~"${CLUSTER_QUEUE_VARIABLE}"'
        return f'cluster_queue=~"{_regex_of(self.all_queues)}"'

    @staticmethod
    def queue(name: str) -> str:
        return f'cluster_queue="{name}"'

    @staticmethod
    def some(names: Sequence[str]) -> str:
        return f'cluster_queue=~"{_regex_of(names)}"'


def _quantiles(metric: str, matchers: str, by: str, window: str, qs: Sequence[str]) -> tuple[Query, ...]:
    """``histogram_quantile`` of a histogram family's buckets for each quantile in ``qs``."""
    grouping = f"{by}, le" if by else "le"
    label = f"{{{{{by}}}}} " if by else ""
    return tuple(
        Query(
            f"histogram_quantile({q}, sum by ({grouping}) (rate({metric}_bucket{{{matchers}}}[{window}])))",
            f"{label}p{int(Decimal(q) * 100)}",
        )
        for q in qs
    )


def _gpu_panels(m: str, by: str) -> tuple[PanelSpec, ...]:
    """GPUs in use, nominal and borrowed, summed by ``by`` (``cluster_queue`` or ``flavor``)."""
    usage = f"kueue_cluster_queue_resource_usage{{{m}, {GPU}}}"
    nominal = f"kueue_cluster_queue_nominal_quota{{{m}, {GPU}}}"
    legend = f"{{{{{by}}}}}"
    return (
        PanelSpec(
            "GPUs in use",
            f"GPUs of admitted workloads ({GPU_RESOURCE}), by {by} "
            "(kueue_cluster_queue_resource_usage; needs metrics.enableClusterQueueResources).",
            (Query(f"sum by ({by}) ({usage})", legend),),
            width=8,
        ),
        PanelSpec(
            "GPU nominal quota",
            f"The ClusterQueue's nominalQuota of {GPU_RESOURCE}, by {by} (kueue_cluster_queue_nominal_quota).",
            (Query(f"sum by ({by}) ({nominal})", legend),),
            width=8,
        ),
        PanelSpec(
            "GPUs borrowed",
            "GPUs in use above the nominal quota of their flavor: borrowed from the cohort.",
            (
                Query(
                    f"sum by ({by}) (clamp_min({usage} - on (cluster_queue, flavor, resource) {nominal}, 0))",
                    legend,
                ),
            ),
            width=8,
        ),
    )


def _overview(stack: Stack, scope: _Scope) -> DashboardSpec:
    m = f"{scope.kueue}, {scope.queues()}"
    w = scope.window
    panels = (
        *_gpu_panels(m, "cluster_queue"),
        PanelSpec(
            "Pending workloads",
            "Workloads waiting for admission: active (in the queue) and inadmissible (a failed attempt, retried when "
            "the cluster changes).",
            (
                Query(
                    f"sum by (cluster_queue, status) (kueue_pending_workloads{{{m}}})",
                    "{{cluster_queue}} {{status}}",
                ),
            ),
        ),
        PanelSpec(
            "Admitted per hour",
            "Workloads admitted in the last hour (kueue_admitted_workloads_total).",
            (
                Query(
                    f"sum by (cluster_queue) (increase(kueue_admitted_workloads_total{{{m}}}[1h]))",
                    "{{cluster_queue}}",
                ),
            ),
        ),
        PanelSpec(
            "Admission wait time",
            "Time from creation to admission, p50 and p95 (kueue_admission_wait_time_seconds).",
            _quantiles("kueue_admission_wait_time_seconds", m, "cluster_queue", w, ("0.5", "0.95")),
            unit="s",
        ),
        PanelSpec(
            "ClusterQueues not active",
            "ClusterQueues whose status is pending or terminated (kueue_cluster_queue_status): they admit nothing.",
            (
                Query(
                    f'count(kueue_cluster_queue_status{{{m}, status!="active"}} == 1) or vector(0)',
                    "not active",
                ),
            ),
            kind="stat",
        ),
    )
    return _spec(
        stack,
        "overview",
        "overview",
        "Overview",
        "Every ClusterQueue: GPUs, pending, admitted, wait time.",
        panels,
        scope.all_queues,
    )


def _cluster_queue(stack: Stack, scope: _Scope, name: str, checks: Sequence[str]) -> DashboardSpec:
    m = f"{scope.kueue}, {scope.queue(name)}"
    w = scope.window
    panels: list[PanelSpec] = [
        PanelSpec(
            "Active",
            "1 when the ClusterQueue is active (kueue_cluster_queue_status); 0 means it admits nothing.",
            (Query(f'max(kueue_cluster_queue_status{{{m}, status="active"}})', "active"),),
            kind="stat",
            width=6,
        ),
        PanelSpec(
            "Pending workloads",
            "Active (in the queue) and inadmissible (a failed attempt) workloads.",
            (Query(f"sum by (status) (kueue_pending_workloads{{{m}}})", "{{status}}"),),
            kind="stat",
            width=6,
        ),
        PanelSpec(
            "Admitted per hour",
            "Workloads admitted in the last hour.",
            (Query(f"sum(increase(kueue_admitted_workloads_total{{{m}}}[1h]))", "admitted"),),
            kind="stat",
            width=6,
        ),
        PanelSpec(
            "Admitted and reserving workloads",
            "Workloads holding quota (reserving) and admitted (running).",
            (
                Query(f"sum(kueue_reserving_active_workloads{{{m}}})", "reserving quota"),
                Query(f"sum(kueue_admitted_active_workloads{{{m}}})", "admitted"),
            ),
            kind="stat",
            width=6,
        ),
        *_gpu_panels(m, "flavor"),
        PanelSpec(
            "Admission wait time",
            "Time from creation to admission, p50 and p95.",
            _quantiles("kueue_admission_wait_time_seconds", m, "", w, ("0.5", "0.95")),
            unit="s",
        ),
        PanelSpec(
            "Evictions and preemptions per hour",
            "Workloads evicted (by reason and underlying cause) and preempted by this queue in the last hour.",
            (
                Query(
                    f"sum by (reason, underlying_cause) (increase(kueue_evicted_workloads_total{{{m}}}[1h]))",
                    "evicted: {{reason}} {{underlying_cause}}",
                ),
                Query(
                    f'sum by (reason) (increase(kueue_preempted_workloads_total{{{scope.kueue}, preempting_cluster_queue="{name}"}}[1h]))',
                    "preempted by this queue: {{reason}}",
                ),
            ),
        ),
    ]
    if checks:
        panels.append(
            PanelSpec(
                "Admission checks wait time",
                f"Time from quota reservation to admission — the admission checks ({', '.join(checks)}): on a DWS "
                "flavor, the ProvisioningRequest. p50 and p95.",
                _quantiles("kueue_admission_checks_wait_time_seconds", m, "", w, ("0.5", "0.95")),
                unit="s",
                width=24,
            )
        )
    return _spec(
        stack,
        "cluster-queue",
        f"cq-{name}",
        f"ClusterQueue {name}",
        f"The team queue {name}: GPUs by flavor, pending, admissions, wait time, evictions.",
        tuple(panels),
    )


def _pool_panel(pool: BackedPool, flavors: Sequence[str], kueue: str) -> PanelSpec:
    """GPUs reserved on a pool's flavors, between the pool's min and max size in GPUs (when GPUs per node are
    known)."""
    reserved = Query(
        f'sum(kueue_cluster_queue_resource_reservation{{{kueue}, {GPU}, flavor=~"{_regex_of(flavors)}"}}) '
        "or vector(0)",
        "GPUs reserved",
    )
    queries = [reserved]
    gpus = pool.per_node.get(GPU_RESOURCE)
    size = f"{pool.min_nodes}–{pool.max_nodes if pool.max_nodes is not None else '?'} nodes"
    if gpus is not None:
        queries.append(Query(f"vector({pool.min_nodes * gpus})", f"minimum ({pool.min_nodes} nodes)"))
        if pool.max_nodes is not None:
            queries.append(Query(f"vector({pool.max_nodes * gpus})", f"maximum ({pool.max_nodes} nodes)"))
    return PanelSpec(
        f"Pool {pool.name}",
        f"{pool.kind} {pool.name} ({size}, flavor {', '.join(flavors)}): GPUs Kueue reserved on it against the "
        "GPUs of its minimum and maximum size.",
        tuple(queries),
    )


def _provisioning_queues(stack: Stack) -> dict[str, list[str]]:
    """ClusterQueue → the ProvisioningRequest admission checks it requires (DWS), in queue order."""
    provisioning = {
        loc.obj.name
        for loc in stack.kueue.admission_checks
        if loc.obj.resolved_controller_name() == PROVISIONING_CONTROLLER
    }
    out: dict[str, list[str]] = {}
    for loc in stack.kueue.cluster_queues:
        names = [ref.name for ref in loc.obj.admission_checks if ref.name in provisioning]
        if names:
            out[loc.obj.name] = names
    return out


def _capacity(stack: Stack, scope: _Scope) -> DashboardSpec:
    m = f"{scope.kueue}, {scope.queues()}"
    w = scope.window
    panels: list[PanelSpec] = [
        PanelSpec(
            "GPU quota reserved and nominal, by flavor",
            "GPUs Kueue reserved for admitted workloads and the nominal quota, summed over ClusterQueues, per flavor.",
            (
                Query(
                    f"sum by (flavor) (kueue_cluster_queue_resource_reservation{{{m}, {GPU}}})",
                    "{{flavor}} reserved",
                ),
                Query(
                    f"sum by (flavor) (kueue_cluster_queue_nominal_quota{{{m}, {GPU}}})", "{{flavor}} nominal"
                ),
            ),
            width=24,
        )
    ]
    pools = stack.platform.backed_pools()
    by_pool: dict[str, list[str]] = {}
    for flavor, pool in flavor_pools(stack.kueue, pools).items():
        by_pool.setdefault(pool.name, []).append(flavor)
    panels += [
        _pool_panel(pool, sorted(by_pool.get(pool.name, [pool.flavor_name])), scope.kueue) for pool in pools
    ]
    dws = _provisioning_queues(stack)
    if dws:
        d = f"{scope.kueue}, {scope.some(list(dws))}"
        panels += [
            PanelSpec(
                "Waiting for ProvisioningRequests",
                "Workloads holding quota but not yet admitted: their admission checks (the ProvisioningRequest) are "
                "pending.",
                (
                    Query(
                        f"sum by (cluster_queue) (kueue_reserving_active_workloads{{{d}}}) - "
                        f"sum by (cluster_queue) (kueue_admitted_active_workloads{{{d}}})",
                        "{{cluster_queue}}",
                    ),
                ),
            ),
            PanelSpec(
                "ProvisioningRequest time",
                "Time from quota reservation to admission on queues with a ProvisioningRequest check, p50 and p95.",
                _quantiles(
                    "kueue_admission_checks_wait_time_seconds", d, "cluster_queue", w, ("0.5", "0.95")
                ),
                unit="s",
            ),
            PanelSpec(
                "Evicted by an admission check per hour",
                "Workloads evicted because an admission check turned False or was rejected: a failed "
                "ProvisioningRequest, revoked capacity, an expired booking.",
                (
                    Query(
                        f'sum by (cluster_queue, underlying_cause) (increase(kueue_evicted_workloads_total{{{d}, reason="AdmissionCheck"}}[1h]))',
                        "{{cluster_queue}} check False {{underlying_cause}}",
                    ),
                    Query(
                        f'sum by (cluster_queue, reason) (increase(kueue_evicted_workloads_total{{{d}, underlying_cause="AdmissionCheck"}}[1h]))',
                        "{{cluster_queue}} check rejected ({{reason}})",
                    ),
                ),
            ),
            PanelSpec(
                "Pending on ProvisioningRequest queues",
                "Workloads pending on queues whose flavors need a ProvisioningRequest.",
                (
                    Query(
                        f"sum by (cluster_queue, status) (kueue_pending_workloads{{{d}}})",
                        "{{cluster_queue}} {{status}}",
                    ),
                ),
            ),
        ]
    return _spec(
        stack,
        "capacity",
        "capacity",
        "Capacity",
        "GPU quota by flavor, node pools from minimum to maximum, ProvisioningRequests.",
        tuple(panels),
        scope.all_queues,
    )


def _webhook(stack: Stack, scope: _Scope) -> DashboardSpec:
    d = webhook_deployment(stack)
    w = scope.window
    reviews = "batchplane_webhook_reviews_total"
    b = scope.base
    deployment = _matchers(f'namespace="{d.namespace}", deployment="{d.name}"', b)
    denied = _matchers('decision="denied", dry_run="false"', b)
    internal = _matchers('reason="internal-error"', b)
    reload_errors = _matchers('result="error"', b)
    panels = (
        PanelSpec(
            "Refusals by reason",
            "Workloads the quota webhook refused per second, by reason (dry runs excluded).",
            (
                Query(
                    f"sum by (reason) (rate({reviews}{{{denied}}}[{w}]))",
                    "{{reason}}",
                ),
            ),
            unit="reqps",
        ),
        PanelSpec(
            "Reviews by decision",
            "AdmissionReviews answered per second: allowed, patched (queue label defaulted), denied.",
            (Query(f"sum by (decision) (rate({_selector(reviews, b)}[{w}]))", "{{decision}}"),),
            unit="reqps",
        ),
        PanelSpec(
            "Errors",
            "Internal errors (answered per onInternalError), malformed requests (HTTP 400), clients gone before the "
            "body arrived, failed certificate reloads.",
            (
                Query(
                    f"sum(rate({reviews}{{{internal}}}[{w}]))",
                    "internal errors",
                ),
                Query(
                    f"sum(rate({_selector('batchplane_webhook_bad_requests_total', b)}[{w}]))", "bad requests"
                ),
                Query(
                    f"sum(rate({_selector('batchplane_webhook_client_disconnects_total', b)}[{w}]))",
                    "client disconnects",
                ),
                Query(
                    f"sum(increase(batchplane_webhook_certificate_reloads_total{{{reload_errors}}}[{w}]))",
                    "certificate reload errors",
                ),
            ),
            unit="reqps",
        ),
        PanelSpec(
            "Review latency vs timeoutSeconds",
            f"p50 and p99 time to answer a review; the API server gives up after timeoutSeconds ({d.timeout_seconds} s) "
            f"and then applies failurePolicy {d.failure_policy}.",
            (
                *_quantiles(
                    "batchplane_webhook_review_seconds",
                    _matchers('endpoint=~"validate|mutate"', b),
                    "",
                    w,
                    ("0.5", "0.99"),
                ),
                Query(f"vector({d.timeout_seconds})", "timeoutSeconds"),
            ),
            unit="s",
        ),
        PanelSpec(
            "Available replicas",
            f"Available and desired pods of Deployment {d.namespace}/{d.name} (kube-state-metrics). With "
            f"failurePolicy {d.failure_policy} and none available, "
            + (
                "every submission in a tenant namespace is refused."
                if d.failure_policy == "Fail"
                else "workloads are admitted unchecked."
            ),
            (
                Query(
                    f"sum(kube_deployment_status_replicas_available{{{deployment}}})",
                    "available",
                ),
                Query(
                    f"sum(kube_deployment_spec_replicas{{{deployment}}})",
                    "desired",
                ),
            ),
            width=24,
        ),
    )
    return _spec(
        stack,
        "webhook",
        "webhook",
        "Quota webhook",
        "Refusals, errors and latency of the quota webhook.",
        panels,
    )


def _spec(
    stack: Stack,
    kind: Kind,
    key: str,
    title: str,
    description: str,
    panels: tuple[PanelSpec, ...],
    cluster_queues: tuple[str, ...] = (),
) -> DashboardSpec:
    return DashboardSpec(
        kind=kind,
        key=key,
        uid=dashboard_uid(stack.name, key),
        title=f"Batchplane {stack.name} · {title}",
        description=description,
        tags=("batchplane", stack.name, kind),
        panels=panels,
        cluster_queues=cluster_queues,
    )


def dashboard_specs(stack: Stack, dialect: Dialect = "grafana") -> list[DashboardSpec]:
    """Every dashboard of a validated stack: overview, one per ClusterQueue (config order), capacity, and the
    webhook's when the stack deploys the webhook.

    Args:
        stack: a validated stack (:func:`batchplane.stack.load_stack`).
        dialect: ``grafana`` (template variables, ``$__rate_interval``), ``cloud-monitoring`` (fixed selectors,
            ``5m`` windows) or ``openshift-console`` (fixed selectors, ``$__rate_interval``, which the console
            substitutes). Defaults to ``grafana``.
    """
    queues = tuple(loc.obj.name for loc in stack.kueue.cluster_queues)
    cluster = stack.platform.monitoring_cluster_name() if dialect == "cloud-monitoring" else None
    scope = _Scope(dialect, queues, cluster)
    dws = _provisioning_queues(stack)
    specs = [_overview(stack, scope)]
    specs += [_cluster_queue(stack, scope, name, dws.get(name, [])) for name in queues]
    specs.append(_capacity(stack, scope))
    if webhook_enabled(stack):
        specs.append(_webhook(stack, scope))
    return specs


# --- Grafana ---------------------------------------------------------------------------------------------------


def _datasource() -> gf_common.DataSourceRef:
    return gf_common.DataSourceRef(type_val="prometheus", uid=f"${{{DATASOURCE_VARIABLE}}}")


def _grafana_panel(panel: PanelSpec, panel_id: int) -> Any:
    builder: Any = gf_stat.Panel() if panel.kind == "stat" else gf_timeseries.Panel()
    builder = (
        builder.id(panel_id)
        .title(panel.title)
        .description(panel.description)
        .datasource(_datasource())
        .unit(panel.unit)
        .span(panel.width)
        .height(panel.height)
    )
    for index, query in enumerate(panel.queries):
        target = (
            gf_prometheus.Dataquery().ref_id(chr(ord("A") + index)).expr(query.expr).datasource(_datasource())
        )
        if query.legend:
            target = target.legend_format(query.legend)
        builder = builder.with_target(target)
    return builder


def grafana_dashboard(spec: DashboardSpec) -> dict[str, Any]:
    """The Grafana dashboard JSON model of ``spec`` (built with the Foundation SDK, encoded as Grafana stores it).
    Folders are a delivery matter (:func:`dashboard_configmap`, :func:`grafana_dashboard_resource`).

    Args:
        spec: one of :func:`dashboard_specs` (``grafana`` dialect).

    Returns:
        The dashboard as JSON-ready dicts: ``uid``, ``title``, ``tags``, ``templating`` (``datasource`` and, for
        dashboards over several ClusterQueues, ``cluster_queue``), ``panels`` with ids 1…n.
    """
    builder = (
        gf_dashboard.Dashboard(spec.title)
        .uid(spec.uid)
        .description(spec.description)
        .tags(list(spec.tags))
        .editable()
        .time("now-6h", "now")
        .refresh("1m")
        .timezone("browser")
        .with_variable(
            gf_dashboard.DatasourceVariable(DATASOURCE_VARIABLE).label("Data source").type("prometheus")
        )
    )
    if spec.cluster_queues:
        builder = builder.with_variable(
            gf_dashboard.QueryVariable(CLUSTER_QUEUE_VARIABLE)
            .label("ClusterQueue")
            .datasource(_datasource())
            .query(
                f'label_values(kueue_cluster_queue_status{{cluster_queue=~"{_regex_of(spec.cluster_queues)}"}}, '
                "cluster_queue)"
            )
            .refresh(gf_model.VariableRefresh.ON_TIME_RANGE_CHANGED)
            .multi(True)
            .include_all(True)
            .all_value(_regex_of(spec.cluster_queues))
        )
    for panel_id, panel in enumerate(spec.panels, start=1):
        builder = builder.with_panel(_grafana_panel(panel, panel_id))
    encoded: dict[str, Any] = json.loads(JSONEncoder(sort_keys=True).encode(builder.build()))
    return encoded


def grafana_json(spec: DashboardSpec) -> str:
    """:func:`grafana_dashboard` as indented JSON text (what files, ConfigMaps and CRs carry)."""
    return json.dumps(grafana_dashboard(spec), indent=2, sort_keys=True) + "\n"


# --- OpenShift console ---------------------------------------------------------------------------------------------

#: The panel types the console's dashboards page renders; it skips any other (openshift/monitoring-plugin
#: ``web/src/components/dashboards/legacy/legacy-dashboard.tsx``, ``Card``: gauge, grafana-piechart-panel, graph,
#: singlestat, table; rows are flattened). Grafana's ``timeseries`` and ``stat`` are not among them.
CONSOLE_PANEL_TYPES = frozenset({"gauge", "grafana-piechart-panel", "graph", "singlestat", "table"})
#: The variables the console substitutes in a query without a template variable of that name
#: (``evaluateVariableTemplate`` in ``legacy-variable-dropdowns.tsx``: intervals ≥ 5m, ranges).
CONSOLE_BUILTIN_VARIABLES = ("__rate_interval", "__interval", "__range", "__range_s", "__range_ms")
#: ``console.openshift.io/dashboard=true`` is the label selector of the console's dashboard ConfigMap lister
#: (openshift/console ``cmd/bridge/main.go``, ``MonitoringDashboardConfigMapLister``, namespace
#: ``openshift-config-managed``).
CONSOLE_DASHBOARD_LABEL = ("console.openshift.io/dashboard", "true")
_CONSOLE_PANEL_TYPE = {"timeseries": "graph", "stat": "singlestat"}
#: A variable reference in a query (``$name``, ``${name}``), its name captured.
_VARIABLE = re.compile(r"\$\{?(\w+)")


def _console_panel(panel: PanelSpec, panel_id: int) -> dict[str, Any]:
    kind = _CONSOLE_PANEL_TYPE[panel.kind]
    rendered: dict[str, Any] = {
        "id": panel_id,
        "type": kind,
        "title": panel.title,
        "description": panel.description,
        # The console lays panels out by ``span`` of 12 columns (``getPanelSpan``); the specs use Grafana's 24.
        "span": max(1, min(12, panel.width // 2)),
        "targets": [
            {
                "refId": chr(ord("A") + index),
                "expr": query.expr,
                **({"legendFormat": query.legend} if query.legend else {}),
            }
            for index, query in enumerate(panel.queries)
        ],
    }
    if kind == "graph":
        rendered["legend"] = {"show": True}
        rendered["yaxes"] = [{"format": panel.unit, "show": True}, {"format": "short", "show": False}]
    else:
        rendered["format"] = panel.unit
    return rendered


def console_dashboard(spec: DashboardSpec) -> dict[str, Any]:
    """``spec`` as the OpenShift console's dashboards page (Observe → Dashboards) renders it: the classic Grafana
    model with panel types ``graph`` (time series; unit in ``yaxes[0].format``) and ``singlestat`` (first series'
    value; unit in ``format``), 12-column ``span`` widths, no template variables.

    Args:
        spec: one of :func:`dashboard_specs` with ``dialect="openshift-console"`` (fixed ClusterQueue selectors).

    Raises:
        ValueError: a query refers to a variable other than the console's built-in ones
            (:data:`CONSOLE_BUILTIN_VARIABLES`): the spec is not of the openshift-console dialect.
    """
    for panel in spec.panels:
        for query in panel.queries:
            names = {m.group(1) for m in _VARIABLE.finditer(query.expr)} - set(CONSOLE_BUILTIN_VARIABLES)
            if names:
                raise ValueError(f"panel {panel.title!r}: {query.expr!r} holds variables {sorted(names)}")
    return {
        "uid": spec.uid,
        "title": spec.title,
        "description": spec.description,
        "tags": list(spec.tags),
        "editable": False,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "1m",
        "templating": {"list": []},
        "panels": [_console_panel(panel, panel_id) for panel_id, panel in enumerate(spec.panels, start=1)],
    }


# --- Cloud Monitoring ------------------------------------------------------------------------------------------

#: Grafana unit id → the UCUM unit Cloud Monitoring's ``unitOverride`` takes.
_UCUM = {"s": "s", "reqps": "1/s", "short": "1"}
#: A Grafana variable reference (``$name``, ``${name}``); a regex's ``$`` anchor is not one.
_GRAFANA_VARIABLE = re.compile(r"\$(?:\{|\w)")
#: Cloud Monitoring's mosaic layout is 48 columns wide (Grafana's grid: 24).
MOSAIC_COLUMNS = 48


def cloud_monitoring_dashboard(spec: DashboardSpec, folder: str = "Batchplane") -> dict[str, Any]:
    """The Cloud Monitoring dashboard (``projects.dashboards`` JSON) of ``spec``: one ``xyChart`` (or
    ``scorecard`` for a stat panel) tile per panel, each query a ``timeSeriesQuery.prometheusQuery``.

    Args:
        spec: one of :func:`dashboard_specs` with ``dialect="cloud-monitoring"``.
        folder: prefixes the display name (Cloud Monitoring has no folders). Defaults to ``Batchplane``.

    Returns:
        ``displayName``, ``mosaicLayout`` (48 columns; tiles placed left to right as Grafana places the panels),
        ``labels`` and, over several ClusterQueues, a pinned ``cluster_queue`` filter (``dashboardFilters``).

    Raises:
        ValueError: a query still holds a Grafana variable (``$name``): the spec is not of the cloud-monitoring
            dialect.
    """
    tiles: list[dict[str, Any]] = []
    x = y = row_height = 0
    for panel in spec.panels:
        width, height = panel.width * MOSAIC_COLUMNS // 24, panel.height * 2
        if x + width > MOSAIC_COLUMNS:
            x, y, row_height = 0, y + row_height, 0
        unit = _UCUM.get(panel.unit, "1")
        for query in panel.queries:
            if _GRAFANA_VARIABLE.search(query.expr):
                raise ValueError(f"panel {panel.title!r}: {query.expr!r} holds a Grafana variable")
        widget: dict[str, Any] = {"title": panel.title}
        if panel.kind == "stat":
            widget["scorecard"] = {
                "timeSeriesQuery": {"prometheusQuery": panel.queries[0].expr, "unitOverride": unit}
            }
        else:
            widget["xyChart"] = {
                "chartOptions": {"mode": "COLOR"},
                "dataSets": [
                    {
                        "plotType": "LINE",
                        "targetAxis": "Y1",
                        "timeSeriesQuery": {"prometheusQuery": q.expr, "unitOverride": unit},
                    }
                    for q in panel.queries
                ],
                "yAxis": {"scale": "LINEAR"},
            }
        tiles.append({"xPos": x, "yPos": y, "width": width, "height": height, "widget": widget})
        x += width
        row_height = max(row_height, height)
    dashboard: dict[str, Any] = {
        "displayName": f"{folder} / {spec.title}",
        "labels": {"batchplane": "", spec.kind: ""},
        "mosaicLayout": {"columns": MOSAIC_COLUMNS, "tiles": tiles},
    }
    if spec.cluster_queues:
        dashboard["dashboardFilters"] = [{"filterType": "METRIC_LABEL", "labelKey": "cluster_queue"}]
    return dashboard


# --- delivery ----------------------------------------------------------------------------------------------------

#: The label kube-prometheus-stack's Grafana sidecar selects dashboard ConfigMaps by, and its value
#: (``grafana.sidecar.dashboards.label`` / ``labelValue`` in the chart's values.yaml).
SIDECAR_LABEL = ("grafana_dashboard", "1")
#: The ConfigMap annotation a sidecar with ``folderAnnotation: grafana_folder`` files the dashboard under.
SIDECAR_FOLDER_ANNOTATION = "grafana_folder"
GRAFANA_OPERATOR_API_VERSION = "grafana.integreatly.org/v1beta1"
MANAGED_BY = {
    "app.kubernetes.io/managed-by": "batchplane",
    "app.kubernetes.io/part-of": "batchplane-dashboards",
}


@dataclass(frozen=True)
class DashboardsPlan:
    """What the stack delivers, resolved from ``dashboards`` and the platform (pure data for the component).

    Attributes:
        delivery: ``openshift-console``, ``grafana-operator``, ``configmap`` or ``cloud-monitoring``.
        namespace: where the Kubernetes objects go (``None`` for Cloud Monitoring).
        objects: ``(key, ConfigMap or GrafanaDashboard dict)`` per dashboard, in :func:`dashboard_specs` order.
        cloud_dashboards: ``(key, dashboard JSON)`` per dashboard for Cloud Monitoring.
        project: the Cloud Monitoring project (``None``: the GCP provider's).
        note: one line for the preview when the delivery depends on something optional (the OpenShift console's
            default, the Grafana Operator), saying which is used and what it needs; ``""`` otherwise.
    """

    delivery: DashboardTarget
    namespace: str | None
    objects: tuple[tuple[str, dict[str, Any]], ...] = ()
    cloud_dashboards: tuple[tuple[str, dict[str, Any]], ...] = ()
    project: str | None = None
    note: str = ""


def dashboards_namespace(stack: Stack, config: DashboardsConfig) -> str:
    """Where ConfigMaps / GrafanaDashboard CRs go: ``dashboards.namespace``; else, when the stack installs
    kube-prometheus-stack (``observability.prometheus``), its release namespace — its Grafana's sidecar watches its
    own namespace unless told otherwise; else Kueue's namespace."""
    if config.namespace is not None:
        return config.namespace
    section = stack.config.observability
    if section.prometheus == "kube-prometheus-stack":
        return section.kube_prometheus_stack.namespace
    return stack.platform.kueue_namespace(stack.config.operators)


def _metadata(spec: DashboardSpec, namespace: str) -> dict[str, Any]:
    return {
        "name": spec.uid,
        "namespace": namespace,
        "labels": {**MANAGED_BY, "batchplane.dev/dashboard": spec.kind},
    }


def dashboard_configmap(spec: DashboardSpec, namespace: str, folder: str) -> dict[str, Any]:
    """A ConfigMap the Grafana sidecar loads: labelled ``grafana_dashboard: "1"``, the JSON under ``<key>.json``,
    the folder in the ``grafana_folder`` annotation. Named after the dashboard's uid (≤ 40 characters)."""
    metadata = _metadata(spec, namespace)
    metadata["labels"][SIDECAR_LABEL[0]] = SIDECAR_LABEL[1]
    metadata["annotations"] = {SIDECAR_FOLDER_ANNOTATION: folder}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata,
        "data": {f"{spec.key}.json": grafana_json(spec)},
    }


def console_dashboard_configmap(spec: DashboardSpec) -> dict[str, Any]:
    """A ConfigMap the OpenShift console lists under Observe → Dashboards: in ``openshift-config-managed``, labelled
    ``console.openshift.io/dashboard: "true"``, :func:`console_dashboard` as the JSON under ``<key>.json`` (the
    console parses the ConfigMap's first data value: ``useLegacyDashboards.ts``). Named after the dashboard's uid."""
    metadata = _metadata(spec, CONSOLE_DASHBOARDS_NAMESPACE)
    metadata["labels"][CONSOLE_DASHBOARD_LABEL[0]] = CONSOLE_DASHBOARD_LABEL[1]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata,
        "data": {f"{spec.key}.json": json.dumps(console_dashboard(spec), indent=2, sort_keys=True) + "\n"},
    }


def grafana_dashboard_resource(
    spec: DashboardSpec, namespace: str, folder: str, selector: dict[str, str]
) -> dict[str, Any]:
    """A ``GrafanaDashboard`` (Grafana Operator v5, ``grafana.integreatly.org/v1beta1``) carrying the JSON model,
    imported by the ``Grafana`` instances matching ``selector`` in any namespace, into ``folder``."""
    return {
        "apiVersion": GRAFANA_OPERATOR_API_VERSION,
        "kind": "GrafanaDashboard",
        "metadata": _metadata(spec, namespace),
        "spec": {
            "instanceSelector": {"matchLabels": dict(selector)},
            "allowCrossNamespaceImport": True,
            "folder": folder,
            "json": grafana_json(spec),
        },
    }


def dashboards_plan(stack: Stack, config: DashboardsConfig) -> DashboardsPlan | None:
    """What the stack delivers, or ``None`` when ``dashboards.enabled`` is false.

    The namespace is :func:`dashboards_namespace`.
    """
    if not config.enabled:
        return None
    platform = stack.platform
    delivery = resolve_delivery(config, platform)
    how = "dashboards.delivery" + (f" auto ({platform.kind})" if config.delivery == "auto" else "")
    if delivery == "cloud-monitoring":
        cloud = tuple(
            (spec.key, cloud_monitoring_dashboard(spec, config.folder))
            for spec in dashboard_specs(stack, "cloud-monitoring")
        )
        return DashboardsPlan(
            delivery=delivery,
            namespace=None,
            cloud_dashboards=cloud,
            project=platform.cloud_monitoring_project(),
        )
    if delivery == "openshift-console":
        objects = tuple(
            (spec.key, console_dashboard_configmap(spec))
            for spec in dashboard_specs(stack, "openshift-console")
        )
        return DashboardsPlan(
            delivery=delivery,
            namespace=CONSOLE_DASHBOARDS_NAMESPACE,
            objects=objects,
            note=f"dashboards: {len(objects)} OpenShift console dashboards, ConfigMaps in "
            f"{CONSOLE_DASHBOARDS_NAMESPACE} (Observe -> Dashboards; {how}); GrafanaDashboard CRs need a Grafana "
            "Operator and dashboards.delivery: grafana-operator",
        )
    namespace = dashboards_namespace(stack, config)
    specs = dashboard_specs(stack)
    if delivery == "configmap":
        objects = tuple((spec.key, dashboard_configmap(spec, namespace, config.folder)) for spec in specs)
        note = ""
    else:
        objects = tuple(
            (spec.key, grafana_dashboard_resource(spec, namespace, config.folder, config.grafana_selector))
            for spec in specs
        )
        note = (
            f"dashboards: {len(objects)} GrafanaDashboard CRs in {namespace} ({how}); the cluster must run the "
            "Grafana Operator v5 (batchplane preflight, check monitoring)"
        )
    return DashboardsPlan(delivery=delivery, namespace=namespace, objects=objects, note=note)

"""The ``dashboards`` settings: whether the stack ships its Grafana / Cloud Monitoring dashboards, how they are
delivered and into which folder (docs/dashboards.md).

The dashboards themselves are generated from the stack (:mod:`batchplane.observability.dashboards`); this model
holds only the knobs a platform team sets.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from batchplane.config.base import ConfigModel, DnsLabel, LabelValue, QualifiedName
from batchplane.errors import ConfigIssue

#: How dashboards reach a dashboard server. ``auto`` asks the target's platform
#: (:attr:`batchplane.targets.platform.Platform.dashboard_delivery`).
DashboardDelivery = Literal["auto", "openshift-console", "grafana-operator", "configmap", "cloud-monitoring"]
#: A delivery once ``auto`` is resolved.
DashboardTarget = Literal["openshift-console", "grafana-operator", "configmap", "cloud-monitoring"]

DEFAULT_FOLDER = "Batchplane"
"""The Grafana folder the dashboards are filed under when ``dashboards.folder`` is omitted."""
DEFAULT_GRAFANA_SELECTOR = {"dashboards": "grafana"}
"""``spec.instanceSelector.matchLabels`` of the GrafanaDashboard CRs when ``dashboards.grafanaSelector`` is
omitted: the label the Grafana Operator's own examples put on their ``Grafana`` instance
(https://github.com/grafana/grafana-operator/tree/v5.24.0/examples)."""


CONSOLE_DASHBOARDS_NAMESPACE = "openshift-config-managed"
"""Where the OpenShift console lists dashboard ConfigMaps (label ``console.openshift.io/dashboard=true``;
openshift/console ``cmd/bridge/main.go``, ``MonitoringDashboardConfigMapLister``)."""


class DashboardsConfig(ConfigModel):
    """The stack's generated dashboards: an overview of every ClusterQueue, one per ClusterQueue, capacity (DWS and
    node pools) and the quota webhook (docs/dashboards.md)."""

    enabled: bool = True
    """Generate and deliver the dashboards with the stack. Defaults to true. ``batchplane dashboards`` writes the
    same dashboards as JSON files either way."""
    delivery: DashboardDelivery = "auto"
    """How they reach a dashboard server: ``openshift-console`` (ConfigMaps in ``openshift-config-managed`` labelled
    ``console.openshift.io/dashboard: "true"``, shown by the OpenShift console under Observe → Dashboards; OpenShift
    only), ``grafana-operator`` (``GrafanaDashboard`` CRs, Grafana Operator v5, which the cluster must run),
    ``configmap`` (ConfigMaps labelled ``grafana_dashboard: "1"``, the label the Grafana chart's dashboard sidecar
    watches in kube-prometheus-stack), ``cloud-monitoring`` (Cloud Monitoring dashboards with PromQL charts, GKE
    only) or ``auto``: the platform's way, which needs nothing the stack does not install (GKE: ``cloud-monitoring``;
    OpenShift: ``openshift-console``; kind and existing clusters: ``configmap``). Defaults to ``auto``."""
    folder: Annotated[str, Field(min_length=1, max_length=128)] = DEFAULT_FOLDER
    """The Grafana folder title (``spec.folder`` of a GrafanaDashboard; the ``grafana_folder`` annotation of a
    ConfigMap, read by a sidecar with ``folderAnnotation: grafana_folder``); on Cloud Monitoring it prefixes each
    dashboard's display name. Defaults to ``Batchplane``."""
    namespace: DnsLabel | None = None
    """Namespace of the ConfigMaps / GrafanaDashboard CRs (it must exist; ``openshift-console`` delivery: only
    ``openshift-config-managed``, where the console reads them). Defaults to kube-prometheus-stack's
    namespace when the stack installs it (``observability.prometheus``), else Kueue's namespace. kube-prometheus-stack's
    Grafana sidecar searches every namespace (``searchNamespace: ALL`` in its values); a Grafana chart of its own
    must watch this one (``sidecar.dashboards.searchNamespace``)."""
    grafana_selector: Annotated[dict[QualifiedName, LabelValue], Field(min_length=1, max_length=16)] = dict(
        DEFAULT_GRAFANA_SELECTOR
    )
    """``grafana-operator`` delivery: the labels of the ``Grafana`` instances that import the dashboards
    (``spec.instanceSelector.matchLabels``; the CRs allow cross-namespace import). Defaults to
    ``{dashboards: grafana}``."""


def check_dashboards(
    section: DashboardsConfig,
    platform_kind: str,
    deliveries: tuple[DashboardTarget, ...],
    key: str,
    auto: DashboardTarget = "configmap",
) -> list[ConfigIssue]:
    """``dashboards.delivery`` must be one the target's platform offers
    (:attr:`~batchplane.targets.platform.Platform.dashboard_deliveries`: Cloud Monitoring only on GKE, the OpenShift
    console only on OpenShift).

    Args:
        section: the parsed ``dashboards`` settings.
        platform_kind: the target's ``kind`` (for the message).
        deliveries: what the platform offers.
        key: the section's config key (``batchplane:observability.dashboards``).
        auto: what ``auto`` resolves to on the platform. Defaults to ``configmap``.

    Also: ``namespace`` other than ``openshift-config-managed`` is refused for ``openshift-console`` delivery.
    """
    issues: list[ConfigIssue] = []
    if section.delivery != "auto" and section.delivery not in deliveries:
        issues.append(
            ConfigIssue(
                f"{key}.delivery",
                f"{section.delivery} is not offered on target kind {platform_kind} (offered: auto, "
                f"{', '.join(deliveries)})",
            )
        )
    resolved = auto if section.delivery == "auto" else section.delivery
    if resolved == "openshift-console" and section.namespace not in (None, CONSOLE_DASHBOARDS_NAMESPACE):
        issues.append(
            ConfigIssue(
                f"{key}.namespace",
                f"the OpenShift console reads dashboard ConfigMaps only from {CONSOLE_DASHBOARDS_NAMESPACE}, not "
                f"{section.namespace}: remove the key (or set delivery: configmap for a Grafana sidecar there)",
            )
        )
    return issues

"""Stack rules and resolved defaults of ``batchplane:observability`` (docs/observability.md).

* every ``observability.alerts.clusterQueues`` key names a ClusterQueue of the stack;
* ``observability.prometheus`` other than the default is refused where the platform collects metrics its own way
  (:attr:`~batchplane.targets.platform.Platform.monitoring`: GKE, OpenShift);
* Kueue's ClusterQueue resource metrics (``kueue_cluster_queue_resource_usage``, ``_nominal_quota``, …; the GPU
  alerts and dashboards read them) are reported only with the Configuration's ``metrics.enableClusterQueueResources``
  (Kueue v0.19.2 ``cmd/kueue/main.go`` lines 303/313): when the stack installs Kueue with Helm, collects metrics and
  leaves that field unset, the resolved config sets it (the Red Hat build of Kueue always sets it);
* the dashboards' settings as the stack uses them (:func:`dashboards_config`) and where they go
  (:func:`resolve_delivery`), read by the dashboards, preflight and the program alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchplane.config.dashboards import DashboardsConfig, DashboardTarget
from batchplane.config.rules import ExpandedKueue
from batchplane.errors import ConfigIssue
from batchplane.targets.platform import Platform

if TYPE_CHECKING:
    from batchplane.stack.model import Stack, StackConfig

CONFIG_KEY = "batchplane:observability"


def observability_issues(
    config: StackConfig, platform: Platform, kueue: ExpandedKueue | None
) -> list[ConfigIssue]:
    """Errors of ``batchplane:observability`` against the rest of the stack, all at once.

    Args:
        config: the parsed stack config.
        platform: the target's platform.
        kueue: the expanded Kueue objects, or ``None`` when they did not expand (the ClusterQueue rule is skipped).
    """
    section = config.observability
    issues: list[ConfigIssue] = []
    if "prometheus" in section.model_fields_set and platform.monitoring != "prometheus-operator":
        issues.append(
            ConfigIssue(
                f"{CONFIG_KEY}.prometheus",
                f"target kind {platform.kind} collects metrics with {platform.monitoring}: remove "
                "observability.prometheus (it chooses the Prometheus on kind and existing clusters)",
            )
        )
    if kueue is not None:
        declared = {cq.obj.name for cq in kueue.cluster_queues}
        for name in section.alerts.cluster_queues:
            if name not in declared:
                known = ", ".join(sorted(declared)) or "none"
                issues.append(
                    ConfigIssue(
                        f"{CONFIG_KEY}.alerts.clusterQueues.{name}",
                        f'"{name}" is not a ClusterQueue of this stack (declared: {known})',
                    )
                )
    return issues


def with_cluster_queue_resources(config: StackConfig) -> StackConfig:
    """``config`` with the Kueue Configuration's ``metrics.enableClusterQueueResources`` on when the stack installs
    Kueue with Helm, observability is enabled and the field was not set; else ``config`` itself."""
    ops = config.operators
    if not config.observability.enabled or ops is None or not ops.kueue.enabled:
        return config
    configuration = ops.kueue.configuration
    if "enable_cluster_queue_resources" in configuration.metrics.model_fields_set:
        return config
    metrics = configuration.metrics.model_copy(update={"enable_cluster_queue_resources": True})
    kueue = ops.kueue.model_copy(
        update={"configuration": configuration.model_copy(update={"metrics": metrics})}
    )
    return config.model_copy(update={"operators": ops.model_copy(update={"kueue": kueue})})


def resolve_observability(
    config: StackConfig, failed: set[str], kueue: ExpandedKueue | None
) -> tuple[StackConfig, list[ConfigIssue]]:
    """:func:`observability_issues` and :func:`with_cluster_queue_resources` for :func:`~batchplane.stack.load_stack`:
    skipped when ``observability`` or ``target`` did not parse; the config unchanged when ``operators`` did not.

    Args:
        config: the parsed stack config.
        failed: the top-level keys that did not parse.
        kueue: the expanded Kueue objects, or ``None`` when they did not expand.
    """
    if failed & {"observability", "target"}:
        return config, []
    from batchplane.stack.target import platform_for

    issues = observability_issues(config, platform_for(config.target), kueue)
    return (config if "operators" in failed else with_cluster_queue_resources(config)), issues


def dashboards_config(stack: Stack) -> DashboardsConfig:
    """The stack's ``observability.dashboards`` settings; ``enabled`` is false when ``observability.enabled`` is
    (the dashboards read what the stack's observability collects)."""
    section = stack.config.observability
    if not section.enabled and section.dashboards.enabled:
        return section.dashboards.model_copy(update={"enabled": False})
    return section.dashboards


def resolve_delivery(config: DashboardsConfig, platform: Platform) -> DashboardTarget:
    """``dashboards.delivery``, with ``auto`` replaced by the platform's
    (:attr:`~batchplane.targets.platform.Platform.dashboard_delivery`)."""
    if config.delivery == "auto":
        return platform.dashboard_delivery
    return config.delivery

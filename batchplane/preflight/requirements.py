"""What a validated stack needs from the world before ``pulumi up``: a pure model, computed offline.

:func:`stack_requirements` turns a :class:`~batchplane.stack.Stack` (and the MultiKueue workers it declares) into
:class:`Requirements`. Each platform among its targets adds its own part through its preflight half, in its home
(:class:`~batchplane.targets.preflight.PlatformPreflight`): GKE the Google Cloud APIs, quotas, org policies, zone
offerings, versions, permissions and repositories (:mod:`batchplane.targets.gke.requirements`, where the quota
arithmetic is documented), OpenShift its OLM packages, operator namespaces, MachineSets, feature gates and Kueue
(:mod:`batchplane.targets.openshift.requirements`), kind its cluster (:mod:`batchplane.targets.kind.requirements`), and
every platform reached through a kubeconfig its context. The stack adds the images a registry must serve, the image
build and what its observability objects need. Every item carries the config key path it comes from. The checkers
compare it with what the world answers (:mod:`batchplane.preflight.run`); the generated requirements pages
(:mod:`batchplane.preflight.docs`) print it.
"""

from __future__ import annotations

from typing import Any

from batchplane.preflight.model import ImageRequirement, Requirements
from batchplane.stack import Stack
from batchplane.stack.model import webhook_enabled
from batchplane.stack.observability import dashboards_config, resolve_delivery
from batchplane.targets.existing.config import ExistingTarget
from batchplane.targets.gke.config import GkeTarget
from batchplane.targets.kind.config import KindTarget
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.preflight import PlatformPreflight, StackFacts
from batchplane.targets.registry import descriptor

__all__ = ["preflight_half", "stack_facts", "stack_requirements"]


TARGET = "batchplane:target"


def stack_requirements(stack: Stack) -> Requirements:
    """The requirements of a validated stack and of the MultiKueue workers it declares.

    Each platform among the targets (the stack's own, then every declared worker's) adds its part through its
    preflight half (:meth:`~batchplane.targets.preflight.PlatformPreflight.add_requirements`, named by the platform
    registry :data:`~batchplane.targets.registry.REGISTRY`); the images and the monitoring needs are the stack's own.

    Args:
        stack: a stack from :func:`batchplane.stack.load_stack` / ``load_stack_file``.

    Returns:
        :class:`Requirements`; GKE quotas are summed over every declared cluster (per region for regional
        quotas, over the project for ``*_ALL_REGIONS``).
    """
    target = stack.config.target
    req = Requirements(stack=stack.name, platform=target.kind)
    targets: list[tuple[ExistingTarget | GkeTarget | KindTarget | OpenShiftTarget, str]] = [(target, TARGET)]
    mk = stack.config.multi_kueue
    if mk is not None:
        for i, worker in enumerate(mk.workers):
            if worker.name in stack.workers and worker.target is not None:
                targets.append(
                    (stack.workers[worker.name].config.target, f"batchplane:multiKueue.workers[{i}].target")
                )
    by_kind: dict[str, list[tuple[Any, str]]] = {}
    for t, p in targets:
        by_kind.setdefault(t.kind, []).append((t, p))
    facts = stack_facts(stack)
    for kind, group in by_kind.items():
        req.platforms.append(kind)
        preflight_half(kind).add_requirements(facts, group, req)
    build = stack.config.webhook.build
    if webhook_enabled(stack):
        if build is None:
            req.images.append(
                ImageRequirement(stack.config.webhook.resolved_image, "batchplane:webhook.image")
            )
        elif not build.in_cluster:  # an in-cluster build (OpenShift BuildConfig) needs no Docker and no route
            req.builds_image = build.registry
    _monitoring_requirements(stack, req)
    return req


def stack_facts(stack: Stack) -> StackFacts:
    """What the platforms' requirements read from the stack (:class:`~batchplane.targets.preflight.StackFacts`)."""
    value = stack.other_config.get("gcp:project")
    return StackFacts(
        name=stack.name,
        environment=stack.config.environment,
        gcp_project=value if isinstance(value, str) and value else None,
        webhook=stack.config.webhook,
        webhook_enabled=webhook_enabled(stack),
        operators=stack.config.operators,
        kueue_api_version=stack.kueue.api_version,
        cluster_queues=tuple(cq.obj.name for cq in stack.kueue.cluster_queues),
    )


def preflight_half(kind: str) -> PlatformPreflight:
    """A new preflight half of the platform with ``kind`` tag (its registry descriptor's, imported now)."""
    return descriptor(kind).preflight_class()()


def _monitoring_requirements(stack: Stack, req: Requirements) -> None:
    """What the observability objects need on the cluster (:mod:`batchplane.preflight.monitoring`)."""
    section = stack.config.observability
    if not section.enabled:
        return
    monitoring = stack.platform.monitoring
    if monitoring == "user-workload-monitoring":
        req.user_workload_monitoring = "batchplane:observability"
    elif monitoring == "prometheus-operator" and section.prometheus == "operator":
        req.prometheus_operator = "batchplane:observability.prometheus"
    dashboards = dashboards_config(stack)
    if dashboards.enabled and resolve_delivery(dashboards, stack.platform) == "grafana-operator":
        req.grafana_operator = ("batchplane:observability.dashboards", dict(dashboards.grafana_selector))

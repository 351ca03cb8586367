"""Render a validated stack into the quota webhook's policy document (:class:`~batchplane.webhook.policy.PolicyDocument`).

Lives beside the :class:`~batchplane.components.quota_webhook.component.QuotaWebhook` component, which ships the
document as a ConfigMap: rendering needs the whole stack (:mod:`batchplane.stack`), the webhook process never does
(it loads only the document's schema and loader, :mod:`batchplane.webhook.policy`). ``batchplane webhook policy
--stack NAME`` prints what :func:`render_policy` returns (serialized by :func:`~batchplane.webhook.policy.policy_json`).

:func:`render_policy` builds the document in one pass, each section by the module that owns its facts:

========================  =======================================================================================
``kueue``                 :func:`batchplane.kueue.policy.kueue_settings` (the Kueue install and version)
``webhook``               :func:`webhook_settings` (the ``webhook`` config: this component's own)
``namespaces``            :func:`batchplane.kueue.policy.namespace_policies` (LocalQueues), limits from
                          :meth:`~batchplane.config.webhook.WebhookConfig.limits_by_namespace` and
                          :meth:`~batchplane.config.teams.TeamsConfig.limits_by_namespace`
``clusterQueues``         :func:`batchplane.kueue.policy.cluster_queue_policies`
``cohorts``               :func:`batchplane.kueue.policy.cohort_policies`
``resourceFlavors``       :func:`batchplane.kueue.policy.flavor_policies`, their nodes from the stack's pools
                          (:func:`flavor_nodes`)
``admissionChecks``       :func:`batchplane.kueue.policy.admission_check_policies` (with ProvisioningRequestConfigs)
``multiKueue``            :func:`batchplane.multikueue.policy.multi_kueue_policy`, each declared worker's document
                          rendered by :func:`render_policy`
========================  =======================================================================================

No Pulumi here.
"""

from __future__ import annotations

from batchplane.backed_pools import BackedPool
from batchplane.config.kueue import ResourceFlavor
from batchplane.config.webhook import WebhookConfig
from batchplane.kueue.policy import (
    admission_check_policies,
    cluster_queue_policies,
    cohort_policies,
    flavor_policies,
    kueue_settings,
    namespace_policies,
)
from batchplane.multikueue.policy import multi_kueue_policy
from batchplane.quantity import format_quantity
from batchplane.stack.model import Stack
from batchplane.stack.pool_hooks import backed_pools
from batchplane.webhook.policy import NodeShapePolicy, PolicyDocument, WebhookSettings

__all__ = ["flavor_nodes", "render_policy", "webhook_settings"]


def flavor_nodes(flavor: ResourceFlavor, pools: list[BackedPool]) -> list[NodeShapePolicy]:
    """The pools whose nodes ``flavor``'s node labels select (:meth:`BackedPool.selects`), each with one node's
    capacity and allocatable (:attr:`BackedPool.allocatable`); empty when no pool is known to back it."""
    return [
        NodeShapePolicy(
            pool=pool.name,
            machine_type=pool.machine,
            capacity={r: format_quantity(v, r) for r, v in sorted(pool.per_node.items())},
            allocatable={r: format_quantity(v, r) for r, v in sorted(pool.allocatable.items())},
            key=str(pool.path.key("machineType" if pool.kind.startswith("GKE") else "aws")),
        )
        for pool in pools
        if pool.selects(flavor) and pool.per_node
    ]


def webhook_settings(webhook: WebhookConfig) -> WebhookSettings:
    """The document's ``webhook`` section: how the server decides and fails, from the ``webhook`` config."""
    return WebhookSettings(
        on_internal_error=webhook.on_internal_error,
        default_queue_label=webhook.default_queue_label,
        gpu_resources=list(webhook.gpu_resources),
        refuse_undeclared_queues=webhook.refuse_undeclared_queues,
    )


def render_policy(stack: Stack) -> PolicyDocument:
    """Render the policy document of a validated stack.

    Tenant namespaces are every LocalQueue namespace plus ``webhook.namespaces``, minus system and
    operator namespaces (:func:`~batchplane.config.webhook.is_system_namespace`). Limits come from
    ``webhook.namespaces[].limits``, else from the team owning the namespace. Kueue options come from
    ``operators.kueue.configuration`` when the stack installs Kueue; ``kueue.nodeAffinityKeys`` from the Kueue
    version the target's platform runs (:meth:`~batchplane.targets.platform.Platform.kueue_version`). A declared
    MultiKueue worker carries its own document, rendered the same way.

    Args:
        stack: the result of :func:`batchplane.stack.load_stack`.

    Returns:
        The document; deterministic for a given config (the component checksums it).
    """
    k = stack.kueue
    cfg = stack.config
    pools = backed_pools(cfg)
    return PolicyDocument(
        stack=stack.name,
        kueue=kueue_settings(
            cfg.operators,
            stack.platform.kueue_version(cfg.operators, cfg.environment),
            [w.obj.name for w in k.workload_priority_classes],
        ),
        webhook=webhook_settings(cfg.webhook),
        namespaces=namespace_policies(
            k,
            cfg.webhook.limits_by_namespace(),
            {} if cfg.teams is None else cfg.teams.limits_by_namespace(),
        ),
        cluster_queues=cluster_queue_policies(k),
        cohorts=cohort_policies(k),
        resource_flavors=flavor_policies(k, lambda flavor: flavor_nodes(flavor, pools)),
        admission_checks=admission_check_policies(k),
        multi_kueue=multi_kueue_policy(
            cfg.multi_kueue,
            {} if cfg.multi_kueue is None else {name: render_policy(w) for name, w in stack.workers.items()},
        ),
    )

"""Render a validated stack into the quota webhook's policy document (:class:`~batchplane.webhook.policy.PolicyDocument`).

Lives beside the :class:`~batchplane.components.quota_webhook.component.QuotaWebhook` component, which ships the
document as a ConfigMap: rendering needs the whole stack (:mod:`batchplane.stack`), the webhook process never does
(it loads only the document's types, :mod:`batchplane.webhook.policy`). ``batchplane webhook policy --stack NAME``
prints what :func:`render_policy` returns. No Pulumi here.
"""

from __future__ import annotations

from batchplane.backed_pools import BackedPool
from batchplane.config.kueue import ClusterQueue, FlavorFungibility, ResourceFlavor, ResourceGroup
from batchplane.config.operators import helm_flag_feature_gates, kueue_frameworks
from batchplane.config.rules import Located, tenant_namespaces
from batchplane.config.webhook import WorkloadLimits, is_system_namespace
from batchplane.quantity import format_quantity
from batchplane.stack.load import Stack
from batchplane.stack.pool_hooks import backed_pools
from batchplane.webhook.policy import (
    DECISION_FEATURE_GATES,
    AdmissionCheckPolicy,
    AdmissionCheckUse,
    ClusterQueuePolicy,
    CohortPolicy,
    FlavorFungibilityPolicy,
    FlavorPolicy,
    FlavorQuotasPolicy,
    KueueSettings,
    MultiKueuePolicy,
    NamespacePolicy,
    NodeShapePolicy,
    PolicyDocument,
    ProvisioningPolicy,
    QuotaPolicy,
    ResourceGroupPolicy,
    WebhookSettings,
    WorkerPolicy,
    node_affinity_keys_of,
)

__all__ = ["flavor_nodes", "quota_keys", "render_policy"]

TEAMS_MEMBERS = "batchplane:teams.members["


def quota_keys(cq: Located[ClusterQueue]) -> dict[str, str]:
    """``<flavor>/<resource>`` → the stack config key that sets that quota of the ClusterQueue.

    A team's generated ClusterQueue (path ``batchplane:teams.members[i] (generated …)``) →
    ``batchplane:teams.members[i].quotas.<flavor>.<resource>``; a declared one →
    ``batchplane:kueue.clusterQueues[i].resourceGroups[g].flavors[f].resources[r]``.
    """
    out: dict[str, str] = {}
    path = cq.path
    team = path.note is not None and path.base.startswith(TEAMS_MEMBERS) and not path.parts
    for g, group in enumerate(cq.obj.resource_groups):
        for f, flavor in enumerate(group.flavors):
            for r, quota in enumerate(flavor.resources):
                out[f"{flavor.name}/{quota.name}"] = (
                    f"{path.base}.quotas.{flavor.name}.{quota.name}"
                    if team
                    else str(
                        path.key("resourceGroups").index(g).key("flavors").index(f).key("resources").index(r)
                    )
                )
    return out


def flavor_nodes(flavor: ResourceFlavor, pools: list[BackedPool]) -> list[NodeShapePolicy]:
    """The pools whose nodes ``flavor``'s node labels select (:meth:`BackedPool.selects`), each with one node's
    capacity; empty when no pool is known to back it."""
    return [
        NodeShapePolicy(
            pool=pool.name,
            machine_type=pool.machine,
            capacity={r: format_quantity(v, r) for r, v in sorted(pool.per_node.items())},
            key=str(pool.path.key("machineType" if pool.kind.startswith("GKE") else "aws")),
        )
        for pool in pools
        if pool.selects(flavor) and pool.per_node
    ]


def _groups(groups: list[ResourceGroup]) -> list[ResourceGroupPolicy]:
    return [
        ResourceGroupPolicy(
            covered_resources=list(g.covered_resources),
            flavors=[
                FlavorQuotasPolicy(
                    name=f.name,
                    resources={
                        r.name: QuotaPolicy(
                            nominal_quota=r.nominal_quota,
                            borrowing_limit=r.borrowing_limit,
                            lending_limit=r.lending_limit,
                        )
                        for r in f.resources
                    },
                )
                for f in g.flavors
            ],
        )
        for g in groups
    ]


def render_policy(stack: Stack) -> PolicyDocument:
    """Render the policy document of a validated stack.

    Tenant namespaces are every LocalQueue namespace plus ``webhook.namespaces``, minus system and
    operator namespaces (:func:`~batchplane.config.webhook.is_system_namespace`). Limits come from
    ``webhook.namespaces[].limits``, else from the team owning the namespace. Kueue options come from
    ``operators.kueue.configuration`` when the stack installs Kueue; ``kueue.nodeAffinityKeys`` from the Kueue
    version the target's platform runs (:meth:`~batchplane.targets.platform.Platform.kueue_version`).

    Args:
        stack: the result of :func:`batchplane.stack.load_stack`.

    Returns:
        The document; deterministic for a given config (the component checksums it).
    """
    k = stack.kueue
    cfg = stack.config
    pools = backed_pools(cfg)
    team_limits: dict[str, WorkloadLimits] = {}
    if cfg.teams is not None:
        for team in cfg.teams.members:
            if team.limits is not None:
                team_limits[team.namespace or team.name] = team.limits
    explicit = {ns.name: ns.limits for ns in cfg.webhook.namespaces}

    queues: dict[str, dict[str, str]] = {}
    defaults: dict[str, str] = {}
    for lq in k.local_queues:
        queues.setdefault(lq.obj.namespace, {})[lq.obj.name] = lq.obj.cluster_queue
        if lq.obj.default:
            defaults[lq.obj.namespace] = lq.obj.name
    names = [ns.name for ns in tenant_namespaces(k) if ns.name in queues] + list(explicit)
    namespaces: dict[str, NamespacePolicy] = {}
    for name in names:
        if is_system_namespace(name) or name in namespaces:
            continue
        namespaces[name] = NamespacePolicy(
            local_queues=dict(sorted(queues.get(name, {}).items())),
            default_queue=defaults.get(name),
            limits=explicit.get(name) or team_limits.get(name),
        )

    prcs = {p.obj.name: p.obj for p in k.provisioning_request_configs}
    checks: dict[str, AdmissionCheckPolicy] = {}
    for ac in k.admission_checks:
        params = ac.obj.resolved_parameters()
        prc = (
            prcs.get(params.name)
            if params is not None and params.kind == "ProvisioningRequestConfig"
            else None
        )
        checks[ac.obj.name] = AdmissionCheckPolicy(
            controller_name=ac.obj.resolved_controller_name(),
            provisioning_request_config=None
            if prc is None
            else ProvisioningPolicy(
                name=prc.name,
                provisioning_class_name=prc.provisioning_class_name,
                managed_resources=list(prc.managed_resources),
                pod_set_merge_policy=prc.pod_set_merge_policy,
            ),
        )

    return PolicyDocument(
        stack=stack.name,
        kueue=_kueue_settings(stack),
        webhook=WebhookSettings(
            on_internal_error=cfg.webhook.on_internal_error,
            default_queue_label=cfg.webhook.default_queue_label,
            gpu_resources=list(cfg.webhook.gpu_resources),
            refuse_undeclared_queues=cfg.webhook.refuse_undeclared_queues,
        ),
        namespaces=namespaces,
        cluster_queues={
            cq.obj.name: ClusterQueuePolicy(
                cohort=cq.obj.cohort_name,
                resource_groups=_groups(cq.obj.resource_groups),
                admission_checks=[
                    AdmissionCheckUse(name=a.name, on_flavors=list(a.on_flavors))
                    for a in cq.obj.admission_checks
                ],
                stop_policy=cq.obj.stop_policy,
                flavor_fungibility=_fungibility(cq.obj.flavor_fungibility),
                quota_keys=quota_keys(cq),
            )
            for cq in k.cluster_queues
        },
        cohorts={
            co.obj.name: CohortPolicy(
                parent=co.obj.parent_name, resource_groups=_groups(co.obj.resource_groups)
            )
            for co in k.cohorts
        },
        resource_flavors={
            rf.obj.name: FlavorPolicy(
                node_labels=dict(rf.obj.node_labels),
                node_taints=list(rf.obj.node_taints),
                tolerations=list(rf.obj.tolerations),
                nodes=flavor_nodes(rf.obj, pools),
            )
            for rf in k.resource_flavors
        },
        admission_checks=checks,
        multi_kueue=_multi_kueue(stack),
    )


def _multi_kueue(stack: Stack) -> MultiKueuePolicy | None:
    section = stack.config.multi_kueue
    if section is None:
        return None
    return MultiKueuePolicy(
        admission_check=section.name,
        workers=[
            WorkerPolicy(
                name=w.name,
                policy=render_policy(stack.workers[w.name]) if w.name in stack.workers else None,
            )
            for w in section.workers
        ],
    )


def _kueue_settings(stack: Stack) -> KueueSettings:
    ops = stack.config.operators
    affinity_keys = node_affinity_keys_of(stack.platform.kueue_version(ops, stack.config.environment))
    if ops is None or not ops.kueue.enabled:
        return KueueSettings(node_affinity_keys=affinity_keys)
    resources = ops.kueue.configuration.resources
    gates = dict(ops.kueue.configuration.feature_gates)
    for flag in helm_flag_feature_gates(ops.kueue.values):
        if (
            isinstance(flag, dict)
            and isinstance(flag.get("name"), str)
            and isinstance(flag.get("enabled"), bool)
        ):
            gates[flag["name"]] = flag["enabled"]
    return KueueSettings(
        resources={} if resources is None else resources.model_dump(by_alias=True, exclude_none=True),
        frameworks=kueue_frameworks(ops),
        feature_gates={n: v for n, v in sorted(gates.items()) if n in DECISION_FEATURE_GATES},
        node_affinity_keys=affinity_keys,
    )


def _fungibility(ff: FlavorFungibility | None) -> FlavorFungibilityPolicy | None:
    if ff is None:
        return None
    return FlavorFungibilityPolicy.model_validate(ff.model_dump(exclude_none=True))

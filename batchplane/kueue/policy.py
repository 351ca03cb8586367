"""The Kueue sections of the quota webhook's policy document, built from the expanded Kueue model.

:func:`batchplane.components.quota_webhook.policy.render_policy` assembles the document
(:class:`~batchplane.webhook.policy.PolicyDocument`, whose schema and loader live in :mod:`batchplane.webhook.policy`)
from one builder per section, each beside the facts it reads. This module holds the ones that read the Kueue model
(:class:`~batchplane.config.rules.ExpandedKueue`) and the Kueue install: ClusterQueues, Cohorts, ResourceFlavors,
AdmissionChecks with their ProvisioningRequestConfig, the tenant namespaces' LocalQueues, and the Kueue
Configuration options and version behaviour (:func:`kueue_settings`). Pure functions; no Pulumi, no stack loading.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from batchplane.config.kueue import ClusterQueue, FlavorFungibility, ResourceFlavor, ResourceGroup
from batchplane.config.operators import OperatorsConfig, helm_flag_feature_gates, kueue_frameworks
from batchplane.config.rules import ExpandedKueue, Located, tenant_namespaces
from batchplane.config.webhook import WorkloadLimits, is_system_namespace
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
    NamespacePolicy,
    NodeAffinityKeys,
    NodeShapePolicy,
    ProvisioningPolicy,
    QuotaPolicy,
    ResourceGroupPolicy,
)

__all__ = [
    "admission_check_policies",
    "cluster_queue_policies",
    "cohort_policies",
    "flavor_policies",
    "kueue_settings",
    "namespace_policies",
    "node_affinity_keys_of",
    "quota_keys",
]

TEAMS_MEMBERS = "batchplane:teams.members["

#: The first patch release of each minor line that matches on per-flavor keys (the fix cherry-picked; no release
#: of v0.16 or older has it): https://github.com/kubernetes-sigs/kueue/blob/v0.17.6/pkg/scheduler/flavorassigner/flavorassigner.go
#: line 936 and https://github.com/kubernetes-sigs/kueue/blob/v0.18.2/pkg/scheduler/flavorassigner/flavorassigner.go
#: line 971; v0.16.9 and older still call ``flavorSelector`` with ``resourceGroup.LabelKeys``.
_PER_FLAVOR_SINCE: dict[int, int] = {17: 6, 18: 2}
#: The first minor whose every release matches on per-flavor keys (v0.19.0).
_PER_FLAVOR_MINOR = 19


def node_affinity_keys_of(kueue_version: str | None) -> NodeAffinityKeys:
    """The :data:`~batchplane.webhook.policy.NodeAffinityKeys` of a Kueue version (``0.19.2``, ``v0.18.1``,
    ``0.16`` for a whole minor line).

    ``ResourceGroup`` only when every release the version may stand for matches on the resource group's keys
    (before v0.17.6, v0.18.0, v0.18.1, and pre-releases of those); ``Flavor`` otherwise — for a newer version, for a
    minor line whose patch is not known (``0.18``) and for an unknown or unparseable version (``None``): the
    per-flavor keys refuse fewer workloads, and the webhook must never refuse what Kueue could admit.
    """
    if kueue_version is None:
        return "Flavor"
    core = kueue_version.removeprefix("v").split("-", 1)[0].split("+", 1)[0]
    parts = core.split(".")
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        return "Flavor"
    major, minor = int(parts[0]), int(parts[1])
    if major != 0 or minor >= _PER_FLAVOR_MINOR:
        return "Flavor"
    if minor not in _PER_FLAVOR_SINCE:
        return "ResourceGroup"  # every release of v0.16 and older
    if len(parts) < 3:
        return "Flavor"  # v0.17 / v0.18 without a patch: some of their releases match per flavor
    since = _PER_FLAVOR_SINCE[minor]
    return "ResourceGroup" if int(parts[2]) < since else "Flavor"


def kueue_settings(
    ops: OperatorsConfig | None, kueue_version: str | None, priority_classes: list[str] | None = None
) -> KueueSettings:
    """The document's ``kueue`` section: the Kueue Configuration options that change the decisions.

    Args:
        ops: the stack's ``operators`` section; ``None`` or Kueue not enabled = Kueue is not installed by the
            stack, so only ``nodeAffinityKeys`` is known (``frameworks`` stays ``None``: unknown).
        kueue_version: the Kueue version the target's platform runs
            (:meth:`~batchplane.targets.platform.Platform.kueue_version`); ``None`` = unknown.
        priority_classes: the names of the stack's WorkloadPriorityClasses (``workloadPriorityClasses``, kept
            when the stack installs Kueue).

    Returns:
        ``resources`` from ``operators.kueue.configuration.resources`` (camelCase), the enabled
        ``integrations.frameworks`` (:func:`~batchplane.config.operators.kueue_frameworks`), the feature gates of
        :data:`~batchplane.webhook.policy.DECISION_FEATURE_GATES` the stack sets (``configuration.featureGates``,
        overridden by the Helm ``controllerManager.featureGates`` flag list), and :func:`node_affinity_keys_of`.
    """
    affinity_keys = node_affinity_keys_of(kueue_version)
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
        workload_priority_classes=sorted(priority_classes or []),
    )


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


def _fungibility(ff: FlavorFungibility | None) -> FlavorFungibilityPolicy | None:
    if ff is None:
        return None
    return FlavorFungibilityPolicy.model_validate(ff.model_dump(exclude_none=True))


def cluster_queue_policies(k: ExpandedKueue) -> dict[str, ClusterQueuePolicy]:
    """The document's ``clusterQueues``: every ClusterQueue by name — cohort, resource groups with quotas, the
    admission checks it requires, ``stopPolicy``, ``flavorFungibility`` and :func:`quota_keys`."""
    return {
        cq.obj.name: ClusterQueuePolicy(
            cohort=cq.obj.cohort_name,
            resource_groups=_groups(cq.obj.resource_groups),
            admission_checks=[
                AdmissionCheckUse(name=a.name, on_flavors=list(a.on_flavors)) for a in cq.obj.admission_checks
            ],
            stop_policy=cq.obj.stop_policy,
            reclaim_within_cohort=cq.obj.preemption.reclaim_within_cohort if cq.obj.preemption else None,
            flavor_fungibility=_fungibility(cq.obj.flavor_fungibility),
            quota_keys=quota_keys(cq),
        )
        for cq in k.cluster_queues
    }


def cohort_policies(k: ExpandedKueue) -> dict[str, CohortPolicy]:
    """The document's ``cohorts``: every Cohort object by name — its parent and its own quota."""
    return {
        co.obj.name: CohortPolicy(parent=co.obj.parent_name, resource_groups=_groups(co.obj.resource_groups))
        for co in k.cohorts
    }


def flavor_policies(
    k: ExpandedKueue, nodes_of: Callable[[ResourceFlavor], list[NodeShapePolicy]]
) -> dict[str, FlavorPolicy]:
    """The document's ``resourceFlavors``: every ResourceFlavor by name — node labels, taints, tolerations, and the
    nodes that back it as ``nodes_of`` finds them (the stack's pools:
    :func:`batchplane.components.quota_webhook.policy.flavor_nodes`)."""
    return {
        rf.obj.name: FlavorPolicy(
            node_labels=dict(rf.obj.node_labels),
            node_taints=list(rf.obj.node_taints),
            tolerations=list(rf.obj.tolerations),
            nodes=nodes_of(rf.obj),
            topology_levels=[
                level.node_label
                for t in k.topologies
                if t.obj.name == rf.obj.topology_name
                for level in t.obj.levels
            ],
        )
        for rf in k.resource_flavors
    }


def admission_check_policies(k: ExpandedKueue) -> dict[str, AdmissionCheckPolicy]:
    """The document's ``admissionChecks``: every AdmissionCheck by name with its controller and, when its
    parameters name a ProvisioningRequestConfig the stack declares (a DWS pool's, or ``kueue.
    provisioningRequestConfigs``), that config's class, managed resources and PodSet merge policy."""
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
    return checks


def namespace_policies(
    k: ExpandedKueue,
    webhook_namespaces: Mapping[str, WorkloadLimits | None],
    team_limits: Mapping[str, WorkloadLimits],
) -> dict[str, NamespacePolicy]:
    """The document's ``namespaces``: the tenant namespaces with their LocalQueues, default queue and limits.

    Tenant namespaces are every namespace with a LocalQueue (:func:`~batchplane.config.rules.tenant_namespaces`)
    plus ``webhook_namespaces``, minus system and operator namespaces
    (:func:`~batchplane.config.webhook.is_system_namespace`).

    Args:
        k: the expanded Kueue model.
        webhook_namespaces: ``webhook.namespaces[]``: name → its ``limits``
            (:meth:`~batchplane.config.webhook.WebhookConfig.limits_by_namespace`).
        team_limits: namespace → the limits of the team owning it
            (:meth:`~batchplane.config.teams.TeamsConfig.limits_by_namespace`); used where ``webhook_namespaces``
            sets none.
    """
    queues: dict[str, dict[str, str]] = {}
    defaults: dict[str, str] = {}
    for lq in k.local_queues:
        queues.setdefault(lq.obj.namespace, {})[lq.obj.name] = lq.obj.cluster_queue
        if lq.obj.default:
            defaults[lq.obj.namespace] = lq.obj.name
    names = [ns.name for ns in tenant_namespaces(k) if ns.name in queues] + list(webhook_namespaces)
    namespaces: dict[str, NamespacePolicy] = {}
    for name in names:
        if is_system_namespace(name) or name in namespaces:
            continue
        namespaces[name] = NamespacePolicy(
            local_queues=dict(sorted(queues.get(name, {}).items())),
            default_queue=defaults.get(name),
            limits=webhook_namespaces.get(name) or team_limits.get(name),
        )
    return namespaces

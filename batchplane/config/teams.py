"""The ``batchplane:teams`` shorthand: one entry per team → namespace + LocalQueue + ClusterQueue.

A pure expansion into the full Kueue model (the project-codeflare/mlbatch layout,
https://github.com/project-codeflare/mlbatch/tree/main/setup.k8s): every team gets a ClusterQueue named after it
in one shared cohort, selecting only the team's namespace, and a default LocalQueue in that namespace. What the
expansion produces is validated by exactly the same rules as hand-written objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import BeforeValidator, Field

from batchplane.config.base import ConfigModel, DnsLabel, DnsSubdomain, QualifiedName, Quantity
from batchplane.config.kueue import (
    AdmissionCheckRef,
    ClusterQueue,
    FairSharing,
    FlavorFungibility,
    FlavorQuotas,
    LabelSelector,
    LocalQueue,
    Preemption,
    ResourceGroup,
    ResourceQuota,
    _name_to_ref,
)
from batchplane.config.webhook import WorkloadLimits
from batchplane.wellknown import NAMESPACE_NAME_LABEL


class TeamResourceQuota(ConfigModel):
    """Quota of one resource; a bare quantity ``cpu: 8`` means ``{nominalQuota: 8}``."""

    nominal_quota: Quantity
    """Required. Guaranteed quantity (CPU cores, memory bytes, device count)."""
    borrowing_limit: Quantity | None = None
    """How much more the team may borrow from the cohort. Omitted = unlimited."""
    lending_limit: Quantity | None = None
    """How much of the nominal quota others may borrow. Omitted = all unused quota."""


def _scalar_to_quota(value: object) -> object:
    return value if isinstance(value, dict) else {"nominalQuota": value}


TeamQuotas = dict[
    DnsSubdomain,
    Annotated[
        dict[QualifiedName, Annotated[TeamResourceQuota, BeforeValidator(_scalar_to_quota)]],
        Field(min_length=1),
    ],
]


class Team(ConfigModel):
    """One team (tenant): a namespace, its default LocalQueue and its own ClusterQueue."""

    name: DnsLabel
    """Required. Team name; also the ClusterQueue's name."""
    namespace: DnsLabel | None = None
    """The team's namespace. Defaults to the team name."""
    local_queue_name: DnsSubdomain = "default"
    """Name of the team's LocalQueue. Defaults to ``default`` so Kueue's own queue defaulting
    applies; it is also marked with the ``kueue.x-k8s.io/default-queue`` annotation."""
    quotas: Annotated[TeamQuotas, Field(min_length=1)]
    """Required. ``{flavor: {resource: quantity | {nominalQuota, borrowingLimit, lendingLimit}}}``.
    Flavors are tried in the order they are declared in the stack (``kueue.resourceFlavors``, then
    GPU pools), not in this map's order (Pulumi passes maps with sorted keys); flavors with the same
    set of resources share a resource group; resources are listed by name."""
    admission_checks: Annotated[
        list[Annotated[AdmissionCheckRef, BeforeValidator(_name_to_ref)]], Field(max_length=64)
    ] = []
    """Admission checks for this team's ClusterQueue, added to ``teams.admissionChecks``. Defaults to none."""
    preemption: Preemption | None = None
    """Overrides ``teams.preemption`` for this team. Defaults to the teams-wide setting."""
    fair_sharing: FairSharing | None = None
    """Fair-sharing weight of the team's ClusterQueue. Defaults to Kueue's (1)."""
    limits: WorkloadLimits | None = None
    """Per-workload limits in the team's namespace, enforced by the quota webhook (max GPUs per
    workload, max requests per resource, allowed priority classes). Defaults to none (no limits)."""


class TeamsConfig(ConfigModel):
    """``batchplane:teams``: settings shared by every team, and the teams."""

    cohort_name: DnsSubdomain = "teams"
    """The cohort every team's ClusterQueue joins, so idle quota is borrowed. Defaults to ``teams``."""
    preemption: Preemption | None = None
    """Preemption policy of every team's ClusterQueue. Defaults to Kueue's (none)."""
    flavor_fungibility: FlavorFungibility | None = None
    """Flavor fungibility of every team's ClusterQueue. Defaults to Kueue's."""
    admission_checks: Annotated[
        list[Annotated[AdmissionCheckRef, BeforeValidator(_name_to_ref)]], Field(max_length=64)
    ] = []
    """Admission checks of every team's ClusterQueue. Defaults to none."""
    members: list[Team] = []
    """The teams. Defaults to none."""

    def limits_by_namespace(self) -> dict[str, WorkloadLimits]:
        """Namespace (``namespace``, else the team's name) → the ``limits`` of the team owning it, for every team
        that sets limits (the quota webhook's per-namespace limits, below ``webhook.namespaces[].limits``)."""
        return {team.namespace or team.name: team.limits for team in self.members if team.limits is not None}


def expand_team(
    teams: TeamsConfig, team: Team, flavor_order: Sequence[str] = ()
) -> tuple[ClusterQueue, LocalQueue]:
    """Expand one team into its ClusterQueue and LocalQueue (pure; no validation beyond the types).

    The result never depends on the order of the ``quotas`` maps, because the Pulumi CLI hands
    object config to the program as JSON with sorted keys (Go maps): flavors are placed — and so
    tried by Kueue — in ``flavor_order`` (the stack's declared ResourceFlavors, then its GPU pools),
    flavors not in it last by name; each flavor's resources are sorted by name.

    Args:
        teams: the teams-wide settings.
        team: the team to expand.
        flavor_order: flavor names in declaration order. Defaults to none (all by name).

    Returns:
        ``(cluster_queue, local_queue)``: ClusterQueue ``<team>`` in cohort ``teams.cohortName`` whose
        namespaceSelector matches only the team namespace (``kubernetes.io/metadata.name``), and a
        LocalQueue ``<localQueueName>`` in that namespace marked default.
    """
    namespace = team.namespace or team.name
    groups: list[ResourceGroup] = []
    by_resources: dict[tuple[str, ...], list[FlavorQuotas]] = {}
    rank = {name: i for i, name in enumerate(flavor_order)}
    for flavor in sorted(team.quotas, key=lambda f: (rank.get(f, len(rank)), f)):
        resources = team.quotas[flavor]
        key = tuple(sorted(resources))
        quotas = [
            ResourceQuota(
                name=res,
                nominal_quota=resources[res].nominal_quota,
                borrowing_limit=resources[res].borrowing_limit,
                lending_limit=resources[res].lending_limit,
            )
            for res in key
        ]
        by_resources.setdefault(key, []).append(FlavorQuotas(name=flavor, resources=quotas))
    for key, flavors in by_resources.items():
        groups.append(ResourceGroup(covered_resources=list(key), flavors=flavors))
    cluster_queue = ClusterQueue(
        name=team.name,
        cohort_name=teams.cohort_name,
        namespace_selector=LabelSelector(match_labels={NAMESPACE_NAME_LABEL: namespace}),
        resource_groups=groups,
        preemption=team.preemption or teams.preemption,
        flavor_fungibility=teams.flavor_fungibility,
        admission_checks=[*teams.admission_checks, *team.admission_checks],
        fair_sharing=team.fair_sharing,
    )
    local_queue = LocalQueue(
        name=team.local_queue_name, namespace=namespace, cluster_queue=team.name, default=True
    )
    return cluster_queue, local_queue

"""GKE rules stated once, for the program and the CrossGuard policy pack (``policies/batchplane_policies/gke.py``).

The program checks the stack config (:func:`batchplane.targets.gke.config.validate_gke_target`); the pack checks the
``gcp:container/cluster:Cluster`` inputs a program registers. Both ask the same question here. No Pulumi, no
pydantic model: plain values, so the pack imports it without the program.
"""

from __future__ import annotations


def deletion_protection_refused(deletion_protection: bool | None, *, production: bool) -> bool:
    """Whether a cluster's deletion protection breaks the production rule: a production cluster must not be
    deletable by ``pulumi destroy`` or a replacement.

    Args:
        deletion_protection: the cluster's ``deletion_protection`` (``deletionProtection``); ``None`` when not set,
            which keeps it on (pulumi-gcp's default is ``true``; Batchplane's default in production is ``true``).
        production: whether the stack's environment is a production one.

    Returns:
        ``True`` only for an explicit ``False`` on a production stack.
    """
    return production and deletion_protection is False


#: GKE NodePool input paths whose change replaces the pool: the ForceNew fields of ``schemaNodeConfig`` and the pool
#: itself in terraform-provider-google ``google/services/container/node_config.go`` (commit 00b984c6), which
#: pulumi-gcp v10.2.0 bridges. ``batchplane diff`` and the policy pack's replacement rule read this one list.
NODE_POOL_REPLACE: tuple[str, ...] = (
    "name",
    "cluster",
    "location",
    "project",
    "nodeConfig.guestAccelerators",
    "nodeConfig.spot",
    "nodeConfig.preemptible",
    "nodeConfig.serviceAccount",
    "nodeConfig.oauthScopes",
    "nodeConfig.metadata",
    "nodeConfig.minCpuPlatform",
    "nodeConfig.localSsdCount",
    "nodeConfig.reservationAffinity",
    "nodeConfig.shieldedInstanceConfig",
    "nodeConfig.bootDiskKmsKey",
    "nodeConfig.gvnic",
    "nodeConfig.gcfsConfig",
    "nodeConfig.secondaryBootDisks",
    "nodeConfig.localNvmeSsdBlockConfig",
    "nodeConfig.ephemeralStorageLocalSsdConfig",
)


def node_pool_max_nodes(
    *, node_count: int | None, max_node_count: int | None, total_max_node_count: int | None, zones: int
) -> tuple[int, str] | None:
    """The most nodes a GKE node pool can have over all its zones, and how that was computed.

    The program reads these from a ``gpuPools[]`` entry (:func:`batchplane.targets.gke.node_pools.max_nodes`), the pack
    from the registered ``gcp:container/nodePool:NodePool`` inputs; both ask here.

    Args:
        node_count: ``nodeCount``, a static size per zone.
        max_node_count: ``autoscaling.maxNodeCount``, a maximum per zone.
        total_max_node_count: ``autoscaling.totalMaxNodeCount``, a maximum over all zones.
        zones: ``len(nodeLocations)``.

    Returns:
        ``(nodes, basis)`` — e.g. ``(4, "4 nodes")``, ``(6, "2 nodes per zone × 3 zones")`` — or ``None`` when no
        size is set or a per-zone size meets zero known zones. Autoscaling limits win over ``nodeCount`` (pulumi-gcp
        v10.2.0 ``NodePoolAutoscaling``: "Total maximum number of nodes in the NodePool", "Maximum number of nodes
        per zone"; ``nodeCount`` "should not be used alongside autoscaling").
    """
    if total_max_node_count is not None:
        return total_max_node_count, f"{total_max_node_count} nodes"
    for per_zone in (max_node_count, node_count):
        if per_zone is not None:
            if zones == 0:
                return None
            return per_zone * zones, f"{per_zone} nodes per zone × {zones} zones"
    return None

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

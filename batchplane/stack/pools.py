"""Platform hooks of the stack expansion: node pools that back ResourceFlavors, and their rules.

:func:`expand_pools` runs at the end of :func:`batchplane.stack.load.expand` (derived flavors
and ProvisioningRequest admission checks join the expanded Kueue model, so every Kueue rule and
builder sees them); :func:`check_pools` runs in :func:`batchplane.stack.load.load_stack` next to
the Kueue rules. GKE GPU node pools and OpenShift GPU MachineSets are pools; other targets have none.
Both platforms go through the same functions of :mod:`batchplane.pools`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchplane.config.rules import ExpandedKueue
from batchplane.errors import ConfigIssue
from batchplane.pools import (
    BackedPool,
    attach_pool_flavors,
    check_capacity,
    check_pool_flavors,
    check_provisioning,
    wire_provisioning,
)
from batchplane.targets.gke.config import GkeTarget, check_gke_target
from batchplane.targets.gke.pools import gke_backed_pools
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.machines import check_gang_sizes, check_gpu_capacity, openshift_backed_pools

if TYPE_CHECKING:
    from batchplane.stack.load import StackConfig

__all__ = ["backed_pools", "check_pools", "expand_pools"]


def backed_pools(config: StackConfig) -> list[BackedPool]:
    """The node pools of the stack's target that back ResourceFlavors (GKE GPU pools, OpenShift GPU
    MachineSets)."""
    if isinstance(config.target, GkeTarget):
        return gke_backed_pools(config.target)
    if isinstance(config.target, OpenShiftTarget):
        return openshift_backed_pools(config.target)
    return []


def expand_pools(config: StackConfig, k: ExpandedKueue) -> None:
    """Add derived ResourceFlavors and ProvisioningRequest admission checks to ``k`` (in place)."""
    pools = backed_pools(config)
    if pools:
        attach_pool_flavors(k, pools)
        wire_provisioning(k, pools)


def check_pools(config: StackConfig, k: ExpandedKueue) -> list[ConfigIssue]:
    """The target's platform rules (GKE, OpenShift GPU capacity), flavor/pool consistency, provisioning
    checks and capacity."""
    issues: list[ConfigIssue] = []
    if isinstance(config.target, GkeTarget):
        issues += check_gke_target(config.target, config.environment)
    if isinstance(config.target, OpenShiftTarget):
        issues += check_gpu_capacity(config.target)
        issues += check_gang_sizes(k, config.target)
    pools = backed_pools(config)
    if pools:
        issues += check_pool_flavors(k, pools)
        issues += check_provisioning(k, pools)
        issues += check_capacity(k, pools)
    return issues

"""Platform hooks of the stack expansion: node pools that back ResourceFlavors, and their rules.

:func:`expand_pools` runs at the end of :func:`batchplane.config.stack.expand` (derived flavors
and ProvisioningRequest admission checks join the expanded Kueue model, so every Kueue rule and
builder sees them); :func:`check_pools` runs in :func:`batchplane.config.stack.load_stack` next to
the Kueue rules. Only GKE targets have pools today; other targets get nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchplane.config.gke import GkeTarget, check_gke_target
from batchplane.config.rules import ExpandedKueue
from batchplane.errors import ConfigIssue
from batchplane.platform.gke import gke_backed_pools
from batchplane.platform.pools import (
    BackedPool,
    attach_pool_flavors,
    check_capacity,
    check_pool_flavors,
    check_provisioning,
    wire_provisioning,
)

if TYPE_CHECKING:
    from batchplane.config.stack import StackConfig

__all__ = ["backed_pools", "check_pools", "expand_pools"]


def backed_pools(config: StackConfig) -> list[BackedPool]:
    """The node pools of the stack's target that back ResourceFlavors (GKE GPU pools)."""
    if isinstance(config.target, GkeTarget):
        return gke_backed_pools(config.target)
    return []


def expand_pools(config: StackConfig, k: ExpandedKueue) -> None:
    """Add derived ResourceFlavors and ProvisioningRequest admission checks to ``k`` (in place)."""
    pools = backed_pools(config)
    if pools:
        attach_pool_flavors(k, pools)
        wire_provisioning(k, pools)


def check_pools(config: StackConfig, k: ExpandedKueue) -> list[ConfigIssue]:
    """The target's platform rules (GKE), flavor/pool consistency, provisioning checks and capacity."""
    issues: list[ConfigIssue] = []
    if isinstance(config.target, GkeTarget):
        issues += check_gke_target(config.target, config.environment)
    pools = backed_pools(config)
    if pools:
        issues += check_pool_flavors(k, pools)
        issues += check_provisioning(k, pools)
        issues += check_capacity(k, pools)
    return issues

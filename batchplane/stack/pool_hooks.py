"""Platform hooks of the stack expansion: node pools that back ResourceFlavors, and their rules.

:func:`expand_pools` runs at the end of :func:`batchplane.stack.load.expand` (derived flavors
and ProvisioningRequest admission checks join the expanded Kueue model, so every Kueue rule and
builder sees them); :func:`check_pools` runs in :func:`batchplane.stack.load.load_stack` next to
the Kueue rules. GKE GPU node pools and OpenShift GPU MachineSets are pools; other targets have none.
Both platforms go through the same functions of :mod:`batchplane.backed_pools`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchplane.backed_pools import (
    BackedPool,
    attach_pool_flavors,
    check_pool_flavors,
    check_provisioning,
    check_quota_against_pool_capacity,
    wire_provisioning,
)
from batchplane.config.rules import ExpandedKueue
from batchplane.errors import ConfigIssue
from batchplane.stack.target import platform_for

if TYPE_CHECKING:
    from batchplane.stack.model import StackConfig

__all__ = ["backed_pools", "check_pools", "expand_pools"]


def backed_pools(config: StackConfig) -> list[BackedPool]:
    """The node pools of the stack's target that back ResourceFlavors (GKE GPU pools, OpenShift GPU
    MachineSets): :meth:`~batchplane.targets.platform.Platform.backed_pools`."""
    return platform_for(config.target).backed_pools()


def expand_pools(config: StackConfig, k: ExpandedKueue) -> None:
    """Add derived ResourceFlavors and ProvisioningRequest admission checks to ``k`` (in place)."""
    pools = backed_pools(config)
    if pools:
        attach_pool_flavors(k, pools)
        wire_provisioning(k, pools)


def check_pools(config: StackConfig, k: ExpandedKueue) -> list[ConfigIssue]:
    """The target's platform rules (:meth:`~batchplane.targets.platform.Platform.check_target`: GKE, OpenShift GPU
    capacity), flavor/pool consistency, provisioning checks and capacity."""
    platform = platform_for(config.target)
    issues = platform.check_target(config.environment, k)
    pools = platform.backed_pools()
    if pools:
        issues += check_pool_flavors(k, pools)
        issues += check_provisioning(k, pools)
        issues += check_quota_against_pool_capacity(k, pools)
    return issues

"""``target.secureBoot``: Shielded nodes with Secure Boot on every pool and on the cluster's initial default pool, as
``constraints/compute.requireShieldedVm`` requires (issue #29, item 12)."""

from __future__ import annotations

from batchplane.stack import load_stack
from batchplane.targets.gke.config import GkeTarget
from batchplane.targets.gke.resources import cluster_args, node_pool_args, system_pool_args
from tests.gke.conftest import gke_with

SECURE = {"enable_secure_boot": True, "enable_integrity_monitoring": True}


def target(**changes: object) -> GkeTarget:
    stack = load_stack(gke_with(**changes))
    assert isinstance(stack.config.target, GkeTarget)
    return stack.config.target


def test_secure_boot_shields_every_pool_and_the_default_pool_the_cluster_creates_first() -> None:
    t = target(target__secureBoot=True)
    assert cluster_args(t, "dev")["node_config"]["shielded_instance_config"] == SECURE
    assert system_pool_args(t)["node_config"]["shielded_instance_config"] == SECURE
    assert all(node_pool_args(t, p)["node_config"]["shielded_instance_config"] == SECURE for p in t.gpu_pools)


def test_without_secure_boot_the_pools_keep_gkes_default_and_are_not_replaced() -> None:
    t = target()
    assert "node_config" not in cluster_args(t, "dev")
    assert "shielded_instance_config" not in system_pool_args(t)["node_config"]

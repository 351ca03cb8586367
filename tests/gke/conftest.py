"""Helpers for the GKE tests: a small valid GKE stack config and dotted-path edits of it."""

from __future__ import annotations

from typing import Any

from tests.config.factories import apply_changes
from tests.support.stacks import one_pool_kueue

"""A change value that removes the key."""


def gke_config() -> dict[str, Any]:
    """A valid GKE stack: a regional cluster, one queued L4 pool (4 × g2-standard-4) and one
    ClusterQueue with an empty flavor for CPU-only pods and the pool's derived flavor ``l4``."""
    return {
        "batchplane:environment": "dev",
        "batchplane:target": {
            "kind": "gke",
            "region": "us-central1",
            "minMasterVersion": "1.35",
            "gpuPools": [
                {
                    "name": "l4",
                    "provisioning": "queued",
                    "machineType": "g2-standard-4",
                    "nodeLocations": ["us-central1-a"],
                    "maxNodes": 4,
                }
            ],
        },
        "batchplane:kueue": one_pool_kueue(
            "l4", cpu=2, memory="8Gi", gpus=4, pool_cpu=16, pool_memory="64Gi"
        ),
    }


def gke_with(**changes: Any) -> dict[str, Any]:
    """``gke_config()`` with changes: ``target__gpuPools__0__minNodes=1`` sets
    ``batchplane:target.gpuPools[0].minNodes``; a list index equal to the length appends;
    :data:`DELETE` removes the key."""
    return apply_changes(gke_config(), **changes)


def a3_ultra_with(**changes: Any) -> dict[str, Any]:
    """``gke_config()`` with its pool an A3 Ultra reservation pool (``a3-ultragpu-8g``: 8 × H200, 224 vCPU, 2952 GiB)
    of at most 2 nodes on reservation ``res-1``, the pool flavor's quota sized to it, then ``changes``."""
    pool = "target__gpuPools__0__"
    quota = "kueue__clusterQueues__0__resourceGroups__0__flavors__1__resources__"
    base = {
        pool + "provisioning": "reservation",
        pool + "machineType": "a3-ultragpu-8g",
        pool + "reservation": {"name": "res-1"},
        pool + "maxNodes": 2,
        quota + "0__nominalQuota": 448,
        quota + "1__nominalQuota": "5000Gi",
        quota + "2__nominalQuota": 16,
    }
    return gke_with(**{**base, **changes})

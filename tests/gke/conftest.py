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

"""Helpers for the OpenShift GPU tests: a small valid stack with one AWS GPU MachineSet, and edits of it."""

from __future__ import annotations

from typing import Any

from tests.config.factories import apply_changes
from tests.support.stacks import one_pool_kueue

"""A change value that removes the key."""

INFRA = "ocp-7x2kq"
"""The infrastructure ID of :func:`ocp_config`."""


def ocp_config() -> dict[str, Any]:
    """A valid OpenShift stack: one ``atomic`` AWS pool ``a10g`` (0–4 × g5.2xlarge: 1 A10G, 8 vCPU,
    32 GiB), a ClusterAutoscaler baseline, the GPU Operator, and ClusterQueue ``cq`` with an empty
    flavor for CPU-only pods and the pool's derived flavor ``a10g`` (4 GPUs, 28 cores, 112Gi)."""
    return {
        "batchplane:target": {
            "kind": "openshift",
            "context": "ocp",
            "infrastructureId": INFRA,
            "openshiftVersion": "4.21",
            "featureSet": "DevPreviewNoUpgrade",
            "allowNoUpgradeFeatureSet": True,
            "gpuOperator": {"install": True},
            "gpuPools": [
                {
                    "name": "a10g",
                    "aws": {
                        "instanceType": "g5.2xlarge",
                        "ami": "ami-0123456789abcdef0",
                        "region": "us-east-1",
                        "zone": "us-east-1a",
                    },
                    "maxReplicas": 4,
                }
            ],
            "clusterAutoscaler": {"baseline": {"nodes": 6, "cores": 48, "memoryGiB": 192}},
        },
        "batchplane:kueue": one_pool_kueue(
            "a10g", cpu=4, memory="16Gi", gpus=4, pool_cpu=28, pool_memory="112Gi"
        ),
    }


def ocp_with(**changes: Any) -> dict[str, Any]:
    """``ocp_config()`` with changes: ``target__gpuPools__0__minReplicas=1`` sets
    ``batchplane:target.gpuPools[0].minReplicas``; a list index equal to the length appends;
    :data:`DELETE` removes the key."""
    return apply_changes(ocp_config(), **changes)

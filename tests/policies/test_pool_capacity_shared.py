"""The program and the policy pack refuse the same over-capacity stack with the same numbers: both state
"GPU quota ≤ pool capacity" through :class:`batchplane.backed_pools.PoolQuota` and count a GKE pool's nodes through
:func:`batchplane.targets.gke.rules.node_pool_max_nodes`."""

from __future__ import annotations

from typing import Any

import pytest
from batchplane_policies import kueue as k

from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from tests.gke.conftest import gke_with
from tests.policies.factories import Stack, cluster_queue_spec, flavor_quota, kueue

FLAVOR_L4 = "kueue__clusterQueues__0__resourceGroups__0__flavors__1__"
P = "target__gpuPools__0__"


def program_refusal(changes: dict[str, Any]) -> str:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(gke_with(**changes))
    (found,) = [i.message for i in caught.value.issues if i.message.startswith("nvidia.com/gpu quota")]
    return found


def pack_refusal(gpus: int, pool: dict[str, Any]) -> str:
    """The same stack as the program declares it: the pool ``l4`` (one L4 per g2-standard-4 node), its flavor,
    and the ClusterQueue ``cq`` with ``gpus`` on it."""
    s = Stack()
    s.add(
        "gcp:container/nodePool:NodePool",
        "gke-l4",
        {"name": "l4", "nodeConfig": {"guestAccelerators": [{"type": "nvidia-l4", "count": 1}]}, **pool},
    )
    rf_type, rf = kueue("ResourceFlavor", "l4", {"nodeLabels": {"cloud.google.com/gke-nodepool": "l4"}})
    s.add(rf_type, "rf", rf)
    cq_type, cq = kueue("ClusterQueue", "cq", cluster_queue_spec(flavor_quota("l4", cpu=16, gpu=gpus)))
    s.add(cq_type, "cq", cq)
    ((message, urn),) = s.check(k.kueue_gpu_quota_within_capacity)
    assert urn == "gke-l4"
    return message


SHARED = (
    'nvidia.com/gpu quota on flavor "l4" is {gpus} (ClusterQueue "cq" {gpus}) but {pool} has at most {cap} '
    "({basis} × 1 nvidia.com/gpu per node): {excess} nvidia.com/gpu of nominal quota can never be backed by "
    "nodes; raise {key} or lower the quotas"
)


@pytest.mark.parametrize(
    ("changes", "pool", "gpus", "cap", "basis", "keys"),
    [
        pytest.param(
            {},
            {"autoscaling": {"totalMaxNodeCount": 4}, "nodeLocations": ["us-central1-a"]},
            6,
            4,
            "4 nodes",
            ("maxNodes", "autoscaling.totalMaxNodeCount"),
            id="total-limit",
        ),
        pytest.param(
            {
                P + "provisioning": "on-demand",
                P + "autoscalingLimits": "per-zone",
                P + "maxNodes": 1,
                P + "nodeLocations": ["us-central1-a", "us-central1-b", "us-central1-c"],
            },
            {
                "autoscaling": {"maxNodeCount": 1},
                "nodeLocations": ["us-central1-a", "us-central1-b", "us-central1-c"],
            },
            5,
            3,
            "1 nodes per zone × 3 zones",
            ("maxNodes", "autoscaling.maxNodeCount"),
            id="per-zone-limit",
        ),
    ],
)
def test_program_and_pack_refuse_the_same_over_capacity_pool_with_the_same_numbers(
    changes: dict[str, Any], pool: dict[str, Any], gpus: int, cap: int, basis: str, keys: tuple[str, str]
) -> None:
    program = program_refusal({**changes, FLAVOR_L4 + "resources__2__nominalQuota": gpus})
    pack = pack_refusal(gpus, pool)
    numbers = {"gpus": gpus, "cap": cap, "basis": basis, "excess": gpus - cap}
    assert program == SHARED.format(
        pool='GKE node pool "l4" (batchplane:target.gpuPools[0])', key=keys[0], **numbers
    )
    assert pack == SHARED.format(pool='GKE node pool "l4"', key=keys[1], **numbers)


def test_the_pack_counts_the_same_gpu_resources_as_the_webhook_by_default() -> None:
    """One definition (:data:`batchplane.wellknown.DEFAULT_GPU_RESOURCES`): the pack once counted only nvidia.com/gpu."""
    from batchplane.config.webhook import WebhookConfig
    from batchplane.webhook.policy import WebhookSettings

    schema = k.kueue_gpu_quota_within_capacity.config_schema
    assert schema is not None
    pack_default = schema.properties["gpuResources"]["default"]
    assert pack_default == list(WebhookConfig().gpu_resources) == WebhookSettings().gpu_resources

"""ResourceFlavors derived from GKE pools, hand-written flavors checked against their pool, the DWS
admission-check wiring, and the plan-time quota-vs-capacity check (pure: config → expanded Kueue)."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.kueue import kueue_objects
from batchplane.stack import load_stack
from tests.config.factories import DELETE
from tests.gke.conftest import gke_with

P = "target__gpuPools__0__"
RF = "kueue__resourceFlavors__1"
FLAVOR_L4 = "kueue__clusterQueues__0__resourceGroups__0__flavors__1__"
POOL = 'GKE node pool "l4" (batchplane:target.gpuPools[0])'
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
QUEUED_TOLERATION = {
    "key": "cloud.google.com/gke-queued",
    "operator": "Equal",
    "value": "true",
    "effect": "NoSchedule",
}


def objects(config: dict[str, Any]) -> list[dict[str, Any]]:
    return kueue_objects(load_stack(config).kueue)


def named(objs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (obj,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    return obj


def issues(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    return [str(i) for i in caught.value.issues]


# --- derived flavors ---------------------------------------------------------------------------


def test_queued_pool_flavor_selects_the_pool_and_tolerates_gpu_and_queued_taints() -> None:
    flavor = named(objects(gke_with()), "ResourceFlavor", "l4")
    assert flavor["spec"] == {
        "nodeLabels": {"cloud.google.com/gke-nodepool": "l4"},
        "tolerations": [GPU_TOLERATION, QUEUED_TOLERATION],
    }


def test_flex_start_pool_flavor_tolerates_gpu_and_configured_taints_only() -> None:
    config = gke_with(
        **{
            P + "provisioning": "flex-start",
            P + "taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}],
        }
    )
    flavor = named(objects(config), "ResourceFlavor", "l4")
    assert flavor["spec"]["tolerations"] == [
        GPU_TOLERATION,
        {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
    ]


def test_flex_start_with_queued_provisioning_also_tolerates_the_queued_taint() -> None:
    config = gke_with(**{P + "provisioning": "flex-start", P + "queuedProvisioning": True})
    assert named(objects(config), "ResourceFlavor", "l4")["spec"]["tolerations"] == [
        GPU_TOLERATION,
        QUEUED_TOLERATION,
    ]


def test_flavor_name_can_differ_from_the_pool_name() -> None:
    config = gke_with(**{P + "flavorName": "gpu-l4", FLAVOR_L4 + "name": "gpu-l4"})
    flavor = named(objects(config), "ResourceFlavor", "gpu-l4")
    assert flavor["spec"]["nodeLabels"] == {"cloud.google.com/gke-nodepool": "l4"}


def test_matching_hand_written_flavor_is_used_instead_of_a_derived_one() -> None:
    written = {
        "name": "l4",
        "nodeLabels": {
            "cloud.google.com/gke-nodepool": "l4",
            "cloud.google.com/gke-accelerator": "nvidia-l4",
        },
        "tolerations": [{"operator": "Exists"}],
    }
    stack = load_stack(gke_with(**{RF: written}))
    assert [str(f.path) for f in stack.kueue.resource_flavors] == [
        "batchplane:kueue.resourceFlavors[0]",
        "batchplane:kueue.resourceFlavors[1]",
    ]


def test_derived_flavor_is_reported_under_its_pool_path() -> None:
    stack = load_stack(gke_with())
    assert (
        str(stack.kueue.resource_flavors[1].path)
        == 'batchplane:target.gpuPools[0] (generated ResourceFlavor "l4")'
    )


MISMATCHES = [
    pytest.param(
        {"name": "l4"},
        [
            'batchplane:kueue.resourceFlavors[1].nodeLabels: missing "cloud.google.com/gke-nodepool: l4": '
            'flavor "l4" '
            f"is the flavor of {POOL} and must select its nodes",
        ],
        id="named-after-pool-without-selector",
    ),
    pytest.param(
        {"name": "l4", "nodeLabels": {"cloud.google.com/gke-nodepool": "other"}},
        [
            'batchplane:kueue.resourceFlavors[1].nodeLabels: "cloud.google.com/gke-nodepool: other" selects '
            "another "
            f'pool, but flavor "l4" is the flavor of {POOL}; use "cloud.google.com/gke-nodepool: l4" or '
            "rename the "
            "flavor",
        ],
        id="named-after-pool-selecting-another",
    ),
    pytest.param(
        {
            "name": "l4",
            "nodeLabels": {
                "cloud.google.com/gke-nodepool": "l4",
                "cloud.google.com/gke-accelerator": "nvidia-tesla-t4",
            },
            "tolerations": [{"operator": "Exists"}],
        },
        [
            'batchplane:kueue.resourceFlavors[1].nodeLabels: "cloud.google.com/gke-accelerator: '
            'nvidia-tesla-t4" is '
            f'not carried by the nodes of {POOL} (they have "nvidia-l4"): no node would match this flavor'
        ],
        id="label-the-nodes-do-not-carry",
    ),
    pytest.param(
        {
            "name": "gpus",
            "nodeLabels": {"cloud.google.com/gke-nodepool": "l4"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        },
        [
            "batchplane:kueue.resourceFlavors[1].tolerations: does not tolerate "
            f"cloud.google.com/gke-queued=true:NoSchedule of {POOL}: admitted pods would not schedule on its "
            "nodes"
        ],
        id="queued-taint-not-tolerated",
    ),
    pytest.param(
        {
            "name": "l4",
            "nodeLabels": {"cloud.google.com/gke-nodepool": "l4"},
            "nodeTaints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}],
            "tolerations": [{"operator": "Exists"}],
        },
        [
            "batchplane:kueue.resourceFlavors[1].nodeTaints[0]: dedicated=ml:NoSchedule is not a taint of "
            f"{POOL}"
        ],
        id="node-taint-the-pool-lacks",
    ),
]


@pytest.mark.parametrize(("flavor", "want"), MISMATCHES)
def test_hand_written_flavor_disagreeing_with_its_pool_is_an_error(
    flavor: dict[str, Any], want: list[str]
) -> None:
    changes: dict[str, Any] = {RF: flavor}
    if flavor["name"] != "l4":
        changes[FLAVOR_L4 + "name"] = flavor["name"]
    assert issues(gke_with(**changes)) == want


# --- DWS wiring --------------------------------------------------------------------------------


def test_queue_mixing_flavors_gets_the_generated_check_scoped_to_the_queued_flavor() -> None:
    objs = objects(gke_with())
    assert named(objs, "ClusterQueue", "cq")["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "l4-dws", "onFlavors": ["l4"]}]
    }
    assert named(objs, "AdmissionCheck", "l4-dws")["spec"] == {
        "controllerName": "kueue.x-k8s.io/provisioning-request",
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "l4-dws"},
    }
    assert named(objs, "ProvisioningRequestConfig", "l4-dws")["spec"] == {
        "provisioningClassName": "queued-provisioning.gke.io",
        "managedResources": ["nvidia.com/gpu"],
        "retryStrategy": {"backoffLimitCount": 3, "backoffBaseSeconds": 60, "backoffMaxSeconds": 1800},
        "podSetMergePolicy": "IdenticalWorkloadSchedulingRequirements",
    }


def test_queue_with_only_the_queued_flavor_gets_an_unscoped_check() -> None:
    group = {
        "coveredResources": ["nvidia.com/gpu"],
        "flavors": [{"name": "l4", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 4}]}],
    }
    objs = objects(gke_with(kueue__clusterQueues__0__resourceGroups=[group], kueue__resourceFlavors=[]))
    assert named(objs, "ClusterQueue", "cq")["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "l4-dws"}]
    }


def test_provisioning_settings_reach_the_generated_config() -> None:
    settings = {
        "maxRunDurationSeconds": 3600,
        "podSetMergePolicy": None,
        "retryStrategy": {"backoffLimitCount": 0},
    }
    prc = named(
        objects(gke_with(**{P + "provisioningRequest": settings})), "ProvisioningRequestConfig", "l4-dws"
    )
    assert prc["spec"] == {
        "provisioningClassName": "queued-provisioning.gke.io",
        "parameters": {"maxRunDurationSeconds": "3600"},
        "managedResources": ["nvidia.com/gpu"],
        "retryStrategy": {"backoffLimitCount": 0},
    }


def test_generated_check_is_shared_by_every_queue_on_the_pool() -> None:
    second = {
        "name": "cq2",
        "resourceGroups": [
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [{"name": "l4", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 0}]}],
            }
        ],
    }
    objs = objects(gke_with(kueue__clusterQueues__1=second))
    assert [o["metadata"]["name"] for o in objs if o["kind"] == "AdmissionCheck"] == ["l4-dws"]
    assert named(objs, "ClusterQueue", "cq2")["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "l4-dws"}]
    }


def test_on_demand_pool_gets_no_admission_check() -> None:
    objs = objects(gke_with(**{P + "provisioning": "on-demand"}))
    assert [o["kind"] for o in objs if o["kind"] in ("AdmissionCheck", "ProvisioningRequestConfig")] == []
    assert "admissionChecksStrategy" not in named(objs, "ClusterQueue", "cq")["spec"]


def test_hand_wired_provisioning_check_is_kept_and_nothing_is_generated() -> None:
    config = gke_with(
        kueue__provisioningRequestConfigs=[
            {
                "name": "dws",
                "provisioningClassName": "queued-provisioning.gke.io",
                "managedResources": ["nvidia.com/gpu"],
                "podSetMergePolicy": "IdenticalPodTemplates",
            }
        ],
        kueue__admissionChecks=[{"name": "dws", "provisioningRequestConfig": "dws"}],
        kueue__clusterQueues__0__admissionChecks=[{"name": "dws", "onFlavors": ["l4"]}],
    )
    stack = load_stack(config)
    assert [a.obj.name for a in stack.kueue.admission_checks] == ["dws"]
    assert stack.warnings == []


def test_hand_wired_check_with_another_provisioning_class_is_an_error() -> None:
    config = gke_with(
        kueue__provisioningRequestConfigs=[
            {"name": "p", "provisioningClassName": "check-capacity.autoscaling.x-k8s.io"}
        ],
        kueue__admissionChecks=[{"name": "ac", "provisioningRequestConfig": "p"}],
        kueue__clusterQueues__0__admissionChecks=["ac"],
    )
    assert issues(config) == [
        "batchplane:kueue.provisioningRequestConfigs[0].provisioningClassName: "
        '"check-capacity.autoscaling.x-k8s.io"'
        f' cannot obtain nodes of {POOL} (flavor "l4"): they are provisioned only through '
        "queued-provisioning.gke.io",
        "warning: batchplane:kueue.provisioningRequestConfigs[0].managedResources: empty: every PodSet "
        "(CPU-only "
        f"ones too) goes into the ProvisioningRequest for {POOL}; GKE accepts one PodSet per request, so a "
        "RayJob "
        "with head and workers is rejected. Use [nvidia.com/gpu]",
        "warning: batchplane:kueue.provisioningRequestConfigs[0].podSetMergePolicy: not set: several GPU "
        "PodSets "
        "(e.g. RayJob worker groups) stay separate PodSets and GKE rejects the request; "
        "IdenticalWorkloadSchedulingRequirements merges identical ones",
    ]


# --- capacity ----------------------------------------------------------------------------------

CAPACITY = [
    pytest.param(
        {FLAVOR_L4 + "resources__0__nominalQuota": 17},
        'batchplane:target.gpuPools[0].maxNodes: cpu quota on flavor "l4" is 17 (ClusterQueue "cq" 17) but '
        f"{POOL} has at most 16 (4 nodes × 4 cpu per node): 1 cpu of nominal quota can never be backed by "
        "nodes; "
        "raise maxNodes or lower the quotas",
        id="cpu-above-capacity",
    ),
    pytest.param(
        {FLAVOR_L4 + "resources__1__nominalQuota": "65Gi"},
        'batchplane:target.gpuPools[0].maxNodes: memory quota on flavor "l4" is 65Gi (ClusterQueue "cq" '
        "65Gi) but "
        f"{POOL} has at most 64Gi (4 nodes × 16Gi memory per node): 1Gi memory of nominal quota can never be "
        "backed by nodes; raise maxNodes or lower the quotas",
        id="memory-above-capacity",
    ),
    pytest.param(
        {
            P + "provisioning": "on-demand",
            P + "autoscalingLimits": "per-zone",
            P + "maxNodes": 1,
            P + "nodeLocations": ["us-central1-a", "us-central1-b", "us-central1-c"],
        },
        'batchplane:target.gpuPools[0].maxNodes: nvidia.com/gpu quota on flavor "l4" is 4 (ClusterQueue "cq" '
        "4) "
        f"but {POOL} has at most 3 (1 nodes per zone × 3 zones × 1 nvidia.com/gpu per node): 1 "
        "nvidia.com/gpu of "
        "nominal quota can never be backed by nodes; raise maxNodes or lower the quotas",
        id="per-zone-limit-times-zones",
    ),
]


@pytest.mark.parametrize(("changes", "want"), CAPACITY)
def test_quota_that_nodes_can_never_back_is_an_error(changes: dict[str, Any], want: str) -> None:
    assert want in issues(gke_with(**changes))


def test_quota_across_queues_and_cohorts_is_summed() -> None:
    second = {
        "name": "cq2",
        "cohortName": "co",
        "resourceGroups": [
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": "l4",
                        "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 1, "borrowingLimit": 2}],
                    }
                ],
            }
        ],
    }
    cohort = {
        "name": "co",
        "resourceGroups": [
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [{"name": "l4", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 1}]}],
            }
        ],
    }
    got = issues(gke_with(kueue__clusterQueues__1=second, kueue__cohorts=[cohort]))
    assert got == [
        'batchplane:target.gpuPools[0].maxNodes: nvidia.com/gpu quota on flavor "l4" is 6 (ClusterQueue "cq" '
        "4; "
        'ClusterQueue "cq2" 1 + borrowing up to 2; Cohort "co" 1) but '
        f"{POOL} has at most 4 (4 nodes × 1 nvidia.com/gpu per node): 2 nvidia.com/gpu of nominal quota can "
        "never "
        "be backed by nodes; raise maxNodes or lower the quotas"
    ]


def test_quota_far_below_capacity_is_a_warning() -> None:
    stack = load_stack(gke_with(**{FLAVOR_L4 + "resources__2__nominalQuota": 1}))
    assert [str(w) for w in stack.warnings] == [
        'warning: batchplane:target.gpuPools[0].maxNodes: nvidia.com/gpu quota on flavor "l4" is 1 '
        "(ClusterQueue "
        f'"cq" 1), 25% of the 4 {POOL} can provide (4 nodes × 1 nvidia.com/gpu per node): Kueue never admits '
        "workloads onto the rest; lower maxNodes or raise the quotas (warned below 50%)"
    ]


def test_quota_at_half_capacity_is_not_warned() -> None:
    stack = load_stack(
        gke_with(
            **{
                FLAVOR_L4 + "resources__0__nominalQuota": 8,
                FLAVOR_L4 + "resources__1__nominalQuota": "32Gi",
                FLAVOR_L4 + "resources__2__nominalQuota": 2,
            }
        )
    )
    assert stack.warnings == []


def test_unknown_machine_shape_skips_the_cpu_and_memory_check() -> None:
    changes = {
        P + "machineType": "n1-standard-16",
        P + "accelerator": {"type": "nvidia-tesla-t4", "count": 1},
        FLAVOR_L4 + "resources__0__nominalQuota": 1000,
        FLAVOR_L4 + "resources__1__nominalQuota": "1Ti",
    }
    stack = load_stack(gke_with(**changes))
    assert stack.warnings == []


def _quota_only_on_default_flavor() -> dict[str, Any]:
    return gke_with(
        **{
            "kueue__clusterQueues__0__resourceGroups__0__flavors": [
                {
                    "name": "default-flavor",
                    "resources": [
                        {"name": "cpu", "nominalQuota": 2},
                        {"name": "memory", "nominalQuota": "8Gi"},
                        {"name": "nvidia.com/gpu", "nominalQuota": 0},
                    ],
                }
            ]
        }
    )


def test_pool_without_quota_on_a_flavor_that_selects_it_is_a_warning() -> None:
    config = _quota_only_on_default_flavor()
    config["batchplane:kueue"]["resourceFlavors"].append(
        {
            "name": "l4",
            "nodeLabels": {"cloud.google.com/gke-nodepool": "l4"},
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"},
            ],
        }
    )
    assert [str(w) for w in load_stack(config).warnings] == [
        "warning: batchplane:target.gpuPools[0].maxNodes: no ClusterQueue or Cohort has quota on the flavor "
        f"of {POOL} "
        '(flavors: "l4"): Kueue never admits workloads onto its nodes'
    ]


def test_quota_on_an_empty_flavor_is_not_warned_as_never_reaching_the_pool() -> None:
    """The RHOAI "empty flavor" design: Kueue adds no node selector for an empty flavor, so what it admits there
    may run on the pool's nodes; only the pool's generated flavor selects the pool."""
    config = _quota_only_on_default_flavor()
    assert [str(w) for w in load_stack(config).warnings if "never admits" in str(w)] == []
    config["batchplane:kueue"]["clusterQueues"][0]["resourceGroups"][0]["flavors"][0]["resources"] = [
        {"name": "cpu", "nominalQuota": 0},
        {"name": "memory", "nominalQuota": 0},
        {"name": "nvidia.com/gpu", "nominalQuota": 0},
    ]
    assert [str(w) for w in load_stack(config).warnings if "never admits" in str(w)] != []


def test_static_pool_capacity_is_node_count_per_zone_times_zones() -> None:
    changes = {
        P + "provisioning": "on-demand",
        P + "maxNodes": DELETE,
        P + "nodeCount": 2,
        P + "nodeLocations": ["us-central1-a", "us-central1-b"],
    }
    assert load_stack(gke_with(**changes)).warnings == []


# --- the empty flavor's quota against every node of the cluster ----------------------------------------------------

DEFAULT_CPU = "kueue__clusterQueues__0__resourceGroups__0__flavors__0__resources__0__nominalQuota"
DEFAULT_MEMORY = "kueue__clusterQueues__0__resourceGroups__0__flavors__0__resources__1__nominalQuota"
EVERY_NODE = 'GKE system pool "system": 3 nodes × {system}; ' + POOL + ": 4 nodes × {pool}"


def test_an_infinite_default_flavor_quota_is_warned_with_every_node_summed() -> None:
    """The vendor docs' 10000-CPU default flavor: no node of this cluster (3 × e2-standard-4 system nodes, 4 ×
    g2-standard-4 GPU nodes: 28 vCPUs) can ever back it."""
    stack = load_stack(gke_with(**{DEFAULT_CPU: 10000}))
    assert [str(w) for w in stack.warnings] == [
        'warning: batchplane:target.systemPool.maxNodes: cpu quota on flavor "default-flavor" is 10000 (ClusterQueue '
        '"cq" 10000) (empty flavors: no nodeLabels, so their pods may run on any node) but every node the stack can '
        f"have holds at most 28 cpu ({EVERY_NODE.format(system=4, pool=4)}): 9972 cpu of nominal quota can never be "
        "backed by nodes; lower the quotas or raise the pools' maxNodes"
    ]


@pytest.mark.parametrize(
    ("changes", "warned"),
    [
        pytest.param({DEFAULT_CPU: 28}, False, id="cpu-at-every-node"),
        pytest.param({DEFAULT_CPU: "28001m"}, True, id="cpu-one-millicore-over"),
        pytest.param({DEFAULT_MEMORY: "112Gi"}, False, id="memory-at-every-node"),
        pytest.param({DEFAULT_MEMORY: "113Gi"}, True, id="memory-over"),
        pytest.param({DEFAULT_CPU: 40, "target__systemPool": {"maxNodes": 6}}, False, id="a-larger-system-pool"),
        pytest.param({DEFAULT_CPU: 10000, "target__systemPool": {"machineType": "c4-custom-9"}}, False,
                     id="unknown-system-machine-not-checked"),
        pytest.param({DEFAULT_CPU: 10000, P + "machineType": "n1-standard-16",
                      P + "accelerator": {"type": "nvidia-tesla-t4", "count": 1}}, False,
                     id="unknown-gpu-machine-not-checked"),
    ],
)  # fmt: skip
def test_the_empty_flavor_check_is_exact_at_the_edge_and_silent_when_a_node_shape_is_unknown(
    changes: dict[str, Any], warned: bool
) -> None:
    warnings = [str(w) for w in load_stack(gke_with(**changes)).warnings]
    assert any("empty flavors" in w for w in warnings) is warned, warnings

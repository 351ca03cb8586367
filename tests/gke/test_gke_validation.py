"""Every GKE rule rejects a violating stack config with a message naming the key — all at once.

One case per rule (shared/docs/platforms.md §1.1–1.2, §7; cluster-toolkit ``gke-node-pool``
preconditions): queued pools (NO_RESERVATION, autoscaling with total min 0 and initial count 0,
location policy ANY, not Spot, no COMPACT placement, auto-repair off), flex-start pools (auto-repair
off, no static node count, no reservations), fixed-GPU machine types, node locations, GPU driver,
minimum versions, cluster location, deletion protection, private nodes, pool names and sizes,
reservations, and the quota-vs-capacity check. Messages are pinned: they are the user interface.
"""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from tests.config.factories import DELETE
from tests.gke.conftest import gke_config, gke_with

P = "target__gpuPools__0__"
PATH = "batchplane:target.gpuPools[0]"
GPU_QUOTA = "kueue__clusterQueues__0__resourceGroups__0__flavors__1__resources__2__nominalQuota"

GKE_RULES = [
    pytest.param(
        {P + "autoUpgrade": False},
        [
            f"{PATH}.autoUpgrade: must be true: the cluster is on the REGULAR release channel and GKE does not "
            "allow node auto-upgrade to be turned off on a channel (use a maintenance exclusion to hold upgrades)"
        ],
        id="auto-upgrade-off-on-a-channel",
    ),
    # --- queued provisioning ---------------------------------------------------------------
    pytest.param(
        {P + "reservation": {"affinity": "ANY_RESERVATION"}},
        [
            f"{PATH}.reservation: queued pools must not consume reservations: GKE requires reservation "
            "affinity "
            "NO_RESERVATION for queued provisioning and flex-start"
        ],
        id="queued-needs-no-reservation",
    ),
    pytest.param(
        {P + "minNodes": 1},
        [
            f"{PATH}.minNodes: must be 0 for queued pools: nodes exist only for ProvisioningRequests "
            "(GKE requires total min 0)"
        ],
        id="queued-total-min-0",
    ),
    pytest.param(
        {P + "initialNodeCount": 1},
        [f"{PATH}.initialNodeCount: must be 0 for queued pools (GKE: --num-nodes=0)"],
        id="queued-initial-count-0",
    ),
    pytest.param(
        {P + "locationPolicy": "BALANCED"},
        [f"{PATH}.locationPolicy: must be ANY for queued pools: nodes come from whichever zone has capacity"],
        id="queued-location-policy-any",
    ),
    pytest.param(
        {P + "autoscalingLimits": "per-zone"},
        [
            f"{PATH}.autoscalingLimits: must be total for queued pools: GKE's queued provisioning needs "
            "total "
            "node limits"
        ],
        id="queued-total-limits",
    ),
    pytest.param(
        {P + "nodeCount": 4, P + "maxNodes": DELETE},
        [
            f"{PATH}.nodeCount: queued pools autoscale from 0: a static node count is not allowed; use "
            "maxNodes"
        ],
        id="queued-autoscaling-on",
    ),
    pytest.param(
        {P + "provisioning": "spot", P + "queuedProvisioning": True},
        [
            f"{PATH}.queuedProvisioning: Spot VMs cannot use queued provisioning; use provisioning: queued "
            "or "
            "flex-start"
        ],
        id="queued-not-spot",
    ),
    pytest.param(
        {P + "placement": {"type": "COMPACT"}},
        [f"{PATH}.placement: COMPACT placement is not supported for GPU pools with queued provisioning"],
        id="queued-no-compact-placement",
    ),
    pytest.param(
        {P + "autoRepair": True},
        [
            f"{PATH}.autoRepair: must be false for queued pools: GKE requires auto-repair off "
            "(--no-enable-autorepair)"
        ],
        id="queued-auto-repair-off",
    ),
    pytest.param(
        {P + "queuedProvisioning": False},
        [
            f"{PATH}.queuedProvisioning: queued pools always use queued provisioning; remove "
            "queuedProvisioning "
            "or use provisioning: flex-start"
        ],
        id="queued-flag-cannot-be-false",
    ),
    # --- flex-start ------------------------------------------------------------------------
    pytest.param(
        {P + "provisioning": "flex-start", P + "autoRepair": True},
        [
            f"{PATH}.autoRepair: must be false for flex-start pools: GKE requires auto-repair off "
            "(--no-enable-autorepair)"
        ],
        id="flex-start-auto-repair-off",
    ),
    pytest.param(
        {P + "provisioning": "flex-start", P + "nodeCount": 4, P + "maxNodes": DELETE},
        [
            f"{PATH}.nodeCount: flex-start pools autoscale from 0: a static node count is not allowed; use "
            "maxNodes"
        ],
        id="flex-start-no-static-count",
    ),
    pytest.param(
        {P + "provisioning": "flex-start", P + "reservation": {"name": "r"}},
        [
            f"{PATH}.reservation: flex-start pools must not consume reservations: GKE requires reservation "
            "affinity NO_RESERVATION for queued provisioning and flex-start"
        ],
        id="flex-start-needs-no-reservation",
    ),
    pytest.param(
        {P + "maxRunDurationSeconds": 600},
        [
            f"{PATH}.maxRunDurationSeconds: only flex-start pools take a node run duration; for queued pools "
            "use "
            "provisioningRequest.maxRunDurationSeconds"
        ],
        id="run-duration-only-flex-start",
    ),
    # --- accelerators ----------------------------------------------------------------------
    pytest.param(
        {P + "accelerator": {"type": "nvidia-tesla-t4", "count": 1}},
        [
            f'{PATH}.accelerator.type: "nvidia-tesla-t4" does not match machine type g2-standard-4, which '
            "comes "
            "with 1 × nvidia-l4"
        ],
        id="accelerator-type-matches-machine",
    ),
    pytest.param(
        {P + "accelerator": {"type": "nvidia-l4", "count": 2}},
        [
            f"{PATH}.accelerator.count: 2 does not match machine type g2-standard-4, which comes with 1 × "
            "nvidia-l4"
        ],
        id="accelerator-count-matches-machine",
    ),
    pytest.param(
        {P + "machineType": "g2-standard-5"},
        [
            f'{PATH}.machineType: "g2-standard-5" is not a known g2 machine type (known: g2-standard-12, '
            "g2-standard-16, g2-standard-24, g2-standard-32, g2-standard-4, g2-standard-48, g2-standard-8, "
            "g2-standard-96)"
        ],
        id="fixed-gpu-family-machine-known",
    ),
    pytest.param(
        {P + "machineType": "n1-standard-8"},
        [
            f"{PATH}.accelerator: required for machine type n1-standard-8: only a2/a3/a4/g2 machine types "
            "come "
            "with GPUs"
        ],
        id="accelerator-required-outside-fixed-families",
    ),
    # --- node locations --------------------------------------------------------------------
    pytest.param(
        {P + "nodeLocations": ["europe-west4-a"]},
        [f'{PATH}.nodeLocations[0]: "europe-west4-a" is not a zone of the cluster\'s region us-central1'],
        id="node-location-in-cluster-region",
    ),
    pytest.param(
        {P + "nodeLocations": ["us-central1"]},
        [f'{PATH}.nodeLocations[0]: "us-central1" is not a zone (e.g. us-central1-a)'],
        id="node-location-is-a-zone",
    ),
    pytest.param(
        {P + "nodeLocations": ["us-central1-a", "us-central1-a"]},
        [f'{PATH}.nodeLocations[1]: "us-central1-a" is listed twice'],
        id="node-location-unique",
    ),
    pytest.param(
        {P + "nodeLocations": []},
        [f"{PATH}.nodeLocations: at least 1 entries allowed, 0 given"],
        id="node-locations-stated",
    ),
    # --- GPU driver ------------------------------------------------------------------------
    pytest.param(
        {P + "gpuDriver": "INSTALLATION_DISABLED"},
        [
            f"{PATH}.gpuDriver: INSTALLATION_DISABLED installs no NVIDIA driver: set target.gpuOperator: "
            "true if "
            "the NVIDIA GPU Operator installs it, or use DEFAULT or LATEST"
        ],
        id="driver-disabled-needs-gpu-operator",
    ),
    pytest.param(
        {"target__gpuOperator": True, P + "gpuDriver": "LATEST"},
        [
            f"{PATH}.gpuDriver: must be INSTALLATION_DISABLED when target.gpuOperator is true: GKE and the "
            "GPU "
            "Operator would both install drivers"
        ],
        id="driver-not-twice-with-gpu-operator",
    ),
    # --- versions --------------------------------------------------------------------------
    pytest.param(
        {"target__minMasterVersion": "1.30"},
        [
            'batchplane:target.minMasterVersion: "1.30" is below 1.31.1, the minimum GKE version for queued '
            "provisioning with Kueue ≥ 0.13 (autoscaling.x-k8s.io/v1 ProvisioningRequests; gpuPools[0] "
            '"l4"); '
            "use 1.31.1 or later"
        ],
        id="version-floor-queued",
    ),
    pytest.param(
        {P + "provisioning": "flex-start", "target__minMasterVersion": "1.32"},
        [
            'batchplane:target.minMasterVersion: "1.32" is below 1.32.2-gke.1652000, the minimum GKE version '
            "for "
            'flex-start node pools (gpuPools[0] "l4"); use 1.32.2-gke.1652000 or later'
        ],
        id="version-floor-flex-start",
    ),
    pytest.param(
        {"target__minMasterVersion": "v1.33"},
        [
            'batchplane:target.minMasterVersion: "v1.33" is not a GKE version (e.g. 1.33 or '
            "1.32.2-gke.1652000)"
        ],
        id="version-syntax",
    ),
    # --- cluster ---------------------------------------------------------------------------
    pytest.param(
        {"target__zone": "us-central1-a"},
        [
            "batchplane:target.zone: give either region (a regional cluster) or zone (a zonal cluster), not "
            "both"
        ],
        id="region-or-zone-not-both",
    ),
    pytest.param(
        {"target__region": DELETE},
        ["batchplane:target.region: region or zone is required: the cluster's location"],
        id="region-or-zone-required",
    ),
    pytest.param(
        {"environment": "production", "target__deletionProtection": False},
        [
            "batchplane:target.deletionProtection: must be true when environment is production: a production "
            "cluster must not be deletable by pulumi destroy or a replacement"
        ],
        id="production-keeps-deletion-protection",
    ),
    pytest.param(
        {"target__privateNodes": {"masterIpv4CidrBlock": "10.0.0.0/24"}},
        [
            'batchplane:target.privateNodes.masterIpv4CidrBlock: "10.0.0.0/24" must be a /28 range: GKE '
            "reserves "
            "a /28 for the private control plane"
        ],
        id="private-control-plane-range-is-28",
    ),
    # --- pools -----------------------------------------------------------------------------
    pytest.param(
        {
            "target__gpuPools__1": {
                "name": "l4",
                "provisioning": "on-demand",
                "machineType": "g2-standard-4",
                "nodeLocations": ["us-central1-b"],
                "maxNodes": 4,
            }
        },
        [
            'batchplane:target.gpuPools[1].name: duplicate node pool name "l4" (first defined at '
            "batchplane:target.gpuPools[0])",
        ],
        id="pool-names-unique",
    ),
    pytest.param(
        {P + "name": "system", "kueue__clusterQueues__0__resourceGroups__0__flavors__1__name": "system"},
        [f'{PATH}.name: duplicate node pool name "system" (first defined at batchplane:target.systemPool)'],
        id="pool-name-not-the-system-pool",
    ),
    pytest.param(
        {P + "maxNodes": DELETE},
        [f"{PATH}.maxNodes: required: the autoscaling maximum (or give nodeCount for a static pool)"],
        id="max-nodes-required",
    ),
    pytest.param(
        {P + "provisioning": "on-demand", P + "minNodes": 5},
        [f"{PATH}.minNodes: 5 must be less than or equal to maxNodes (4)"],
        id="min-nodes-at-most-max",
    ),
    pytest.param(
        {P + "provisioning": "reservation"},
        [f"{PATH}.reservation: required when provisioning is reservation: the reservation to consume"],
        id="reservation-mode-needs-reservation",
    ),
    pytest.param(
        {P + "provisioning": "reservation", P + "reservation": {"affinity": "SPECIFIC_RESERVATION"}},
        [f"{PATH}.reservation.name: required when affinity is SPECIFIC_RESERVATION"],
        id="specific-reservation-needs-name",
    ),
    pytest.param(
        {P + "provisioning": "on-demand", P + "reservation": {"name": "r"}},
        [
            f"{PATH}.reservation: only pools with provisioning: reservation consume reservations (this pool "
            "is "
            "on-demand)"
        ],
        id="reservation-only-in-reservation-mode",
    ),
    pytest.param(
        {P + "provisioning": "on-demand", P + "queuedProvisioning": True},
        [
            f"{PATH}.queuedProvisioning: only flex-start pools take queuedProvisioning (this pool is "
            "on-demand)"
        ],
        id="queued-flag-only-flex-start",
    ),
    pytest.param(
        {P + "provisioning": "on-demand", P + "provisioningRequest": {"maxRunDurationSeconds": 600}},
        [
            f"{PATH}.provisioningRequest: only queued pools (provisioning: queued, or flex-start with "
            "queuedProvisioning) create ProvisioningRequests"
        ],
        id="provisioning-request-only-queued",
    ),
    # --- capacity --------------------------------------------------------------------------
    pytest.param(
        {GPU_QUOTA: 5},
        [
            f'{PATH}.maxNodes: nvidia.com/gpu quota on flavor "l4" is 5 (ClusterQueue "cq" 5) but GKE node '
            "pool "
            f'"l4" ({PATH}) has at most 4 (4 nodes × 1 nvidia.com/gpu per node): 1 nvidia.com/gpu of nominal '
            "quota "
            "can never be backed by nodes; raise maxNodes or lower the quotas"
        ],
        id="quota-backed-by-pool-capacity",
    ),
    # --- the system pool starts with one node per zone -------------------------------------------
    pytest.param(
        {"target__systemPool": {"minNodes": 1, "maxNodes": 2}},
        [
            "batchplane:target.systemPool.maxNodes: 2 is fewer than the 3 nodes the pool starts with (one in each "
            "of the 3 zones GKE spreads a regional cluster's pool over): set maxNodes to at least 3 or list fewer "
            "systemPool.nodeLocations"
        ],
        id="regional-system-pool-starts-above-its-maximum",
    ),
    pytest.param(
        {"target__systemPool": {"maxNodes": 1, "nodeLocations": ["us-central1-a", "us-central1-b"]}},
        [
            "batchplane:target.systemPool.maxNodes: 1 is fewer than the 2 nodes the pool starts with (one in each "
            "of its 2 nodeLocations): set maxNodes to at least 2 or list fewer systemPool.nodeLocations"
        ],
        id="system-pool-node-locations-above-its-maximum",
    ),
    pytest.param(
        {"target__systemPool": {"minNodes": 4, "maxNodes": 3}},
        ["batchplane:target.systemPool.minNodes: 4 must be less than or equal to maxNodes (3)"],
        id="system-pool-min-above-max",
    ),
]


def test_base_gke_config_is_valid_without_warnings() -> None:
    stack = load_stack(gke_config())
    assert stack.warnings == []
    assert [f.obj.name for f in stack.kueue.resource_flavors] == ["default-flavor", "l4"]


@pytest.mark.parametrize(("changes", "want_messages"), GKE_RULES)
def test_gke_rule_rejects_a_violating_config_with_a_pinned_message(
    changes: dict[str, Any], want_messages: list[str]
) -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(gke_with(**changes))
    assert [str(issue) for issue in caught.value.issues] == want_messages


def test_every_gke_error_is_reported_at_once() -> None:
    changes = {P + "minNodes": 1, P + "autoRepair": True, "target__zone": "us-central1-a", GPU_QUOTA: 5}
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(gke_with(**changes))
    assert sorted(i.path for i in caught.value.errors) == [
        "batchplane:target.gpuPools[0].autoRepair",
        "batchplane:target.gpuPools[0].maxNodes",
        "batchplane:target.gpuPools[0].minNodes",
        "batchplane:target.zone",
    ]


def test_an_unset_min_master_version_is_not_warned_about_it_is_checked_at_deploy_time() -> None:
    # tests/gke/test_gke_versions.py holds the deploy-time check of the channel's default against the floor
    assert load_stack(gke_with(target__minMasterVersion=DELETE)).warnings == []


@pytest.mark.parametrize(
    ("version", "provisioning"),
    [("1.31.1", "queued"), ("1.32.2-gke.1652000", "flex-start"), ("1.33", "flex-start")],
    ids=["queued-at-floor", "flex-start-at-floor", "prefix-above-floor"],
)
def test_versions_at_or_above_the_floor_are_accepted(version: str, provisioning: str) -> None:
    stack = load_stack(gke_with(target__minMasterVersion=version, **{P + "provisioning": provisioning}))
    assert stack.warnings == []


def test_gke_is_listed_among_target_kinds() -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(gke_with(target__kind="gce"))
    assert "'gke'" in caught.value.issues[0].message


@pytest.mark.parametrize(
    "system_pool",
    [
        {"minNodes": 1, "maxNodes": 3},
        {"minNodes": 1, "maxNodes": 2, "nodeLocations": ["us-central1-a", "us-central1-b"]},
        {"minNodes": 0, "maxNodes": 1, "nodeLocations": ["us-central1-a"]},
    ],
)
def test_a_system_pool_whose_start_fits_its_maximum_is_accepted(system_pool: dict[str, Any]) -> None:
    assert load_stack(gke_with(target__systemPool=system_pool)).warnings == []


def test_a_zonal_clusters_system_pool_starts_with_one_node() -> None:
    zonal = gke_with(
        target__region=DELETE, target__zone="us-central1-a", target__systemPool={"minNodes": 1, "maxNodes": 1}
    )
    assert load_stack(zonal).warnings == []

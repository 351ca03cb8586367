"""Kueue policies called directly: finite quotas, references, pool capacity, cohort borrowing, DWS
multi-PodSet scoping. Each has a passing stack, failing ones with pinned messages, and stacks with
missing properties that must not crash."""

from __future__ import annotations

from typing import Any

import pytest
from batchplane_policies import kueue as k
from pulumi_policy.proxy import UnknownValueError

from tests.policies.factories import (
    DEV,
    PRODUCTION,
    UNKNOWN,
    Stack,
    check_resource,
    cluster_queue_spec,
    flavor_quota,
    kueue,
)

CQ_TYPE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"


# --- kueue-finite-quotas ---------------------------------------------------------------------------

INFINITE = cluster_queue_spec(flavor_quota("default-flavor", cpu=10000, memory="10000Gi", gpu=10000))
SIZED = cluster_queue_spec(flavor_quota("default-flavor", cpu=9, memory="36Gi", gpu=5))


@pytest.mark.parametrize(
    ("spec", "tags", "config", "want"),
    [
        (SIZED, PRODUCTION, None, []),
        (INFINITE, DEV, None, []),
        (
            INFINITE,
            PRODUCTION,
            None,
            [
                'flavor "default-flavor" cpu nominalQuota 10000 is an "infinite" quota (≥ 10000) on a production stack',
                'flavor "default-flavor" memory nominalQuota 10000Gi is an "infinite" quota (≥ 10000Gi) on a production stack',
                'flavor "default-flavor" nvidia.com/gpu nominalQuota 10000 is an "infinite" quota (≥ 10000) on a production stack',
            ],
        ),
        (
            cluster_queue_spec(flavor_quota("f", cpu=500)),
            {"batchplane:environment": "staging"},
            {"infiniteQuotas": {"cpu": 256}},
            ['flavor "f" cpu nominalQuota 500 is an "infinite" quota (≥ 256) on a staging stack'],
        ),
        (INFINITE, {"batchplane:environment": "staging"}, {"exemptEnvironments": ["dev", "staging"]}, []),
        ({}, PRODUCTION, None, []),
        (
            {
                "resourceGroups": [
                    {"flavors": [{"resources": [{"name": "cpu"}]}, {"name": "x", "resources": "?"}]}
                ]
            },
            PRODUCTION,
            None,
            [],
        ),
    ],
    ids=[
        "sized",
        "dev-infinite",
        "prod-infinite",
        "configured-threshold",
        "configured-exempt",
        "no-spec",
        "malformed-groups",
    ],
)
def test_quotas_are_finite_outside_dev(
    spec: dict[str, Any], tags: dict[str, str], config: dict[str, Any] | None, want: list[str]
) -> None:
    resource_type, props = kueue("ClusterQueue", "cq", spec)
    assert check_resource(k.kueue_finite_quotas, resource_type, props, stack_tags=tags, config=config) == want


def test_cohort_objects_need_finite_quotas_too() -> None:
    resource_type, props = kueue("Cohort", "ml", cluster_queue_spec(flavor_quota("f", gpu=20000)))
    assert check_resource(k.kueue_finite_quotas, resource_type, props, stack_tags=PRODUCTION) == [
        'flavor "f" nvidia.com/gpu nominalQuota 20000 is an "infinite" quota (≥ 10000) on a production stack'
    ]


def test_finite_quotas_cannot_judge_an_unknown_quota() -> None:
    resource_type, props = kueue("ClusterQueue", "cq", cluster_queue_spec(flavor_quota("f", cpu=UNKNOWN)))
    with pytest.raises(UnknownValueError):
        check_resource(k.kueue_finite_quotas, resource_type, props, stack_tags=PRODUCTION)


# --- kueue-references-exist --------------------------------------------------------------------------


def dws_stack(
    *,
    with_prc: bool = True,
    with_check: bool = True,
    with_flavor: bool = True,
    with_cq: bool = True,
    version: str = "v1beta2",
) -> Stack:
    """ResourceFlavor → ProvisioningRequestConfig → AdmissionCheck → ClusterQueue → LocalQueue."""
    s = Stack()

    if with_flavor:
        s.add(
            *_named(kueue("ResourceFlavor", "gpu", {"nodeLabels": {"cloud.google.com/gke-nodepool": "gpu"}}))
        )
    if with_prc:
        s.add(
            *_named(
                kueue(
                    "ProvisioningRequestConfig",
                    "dws",
                    {
                        "provisioningClassName": k.QUEUED_PROVISIONING_CLASS,
                        "managedResources": ["nvidia.com/gpu"],
                    },
                )
            )
        )
    if with_check:
        s.add(
            *_named(
                kueue(
                    "AdmissionCheck",
                    "dws",
                    {
                        "controllerName": k.PROVISIONING_CONTROLLER,
                        "parameters": {
                            "apiGroup": "kueue.x-k8s.io",
                            "kind": "ProvisioningRequestConfig",
                            "name": "dws",
                        },
                    },
                )
            )
        )
    if with_cq:
        if version == "v1beta1":
            spec = cluster_queue_spec(flavor_quota("gpu", gpu=8))
            spec["admissionChecks"] = ["dws"]
        else:
            spec = cluster_queue_spec(flavor_quota("gpu", gpu=8), checks=["dws"])
        s.add(*_named(kueue("ClusterQueue", "team", spec, version=version)))
    s.add(*_named(kueue("LocalQueue", "user", {"clusterQueue": "team"}, namespace="team")))
    return s


def _named(pair: tuple[str, dict[str, Any]]) -> tuple[str, str, dict[str, Any]]:
    resource_type, props = pair
    return resource_type, f"{props['kind'].lower()}-{props['metadata']['name']}", props


@pytest.mark.parametrize(
    ("stack", "config", "want"),
    [
        (dws_stack(), None, []),
        (dws_stack(version="v1beta1"), None, []),
        (
            dws_stack(with_cq=False),
            None,
            [
                (
                    'LocalQueue "user" points at ClusterQueue "team", which the stack does not define',
                    "localqueue-user",
                )
            ],
        ),
        (
            dws_stack(with_flavor=False, with_check=False),
            None,
            [
                (
                    'ClusterQueue "team" uses ResourceFlavor "gpu", which the stack does not define',
                    "clusterqueue-team",
                ),
                (
                    'ClusterQueue "team" uses AdmissionCheck "dws", which the stack does not define',
                    "clusterqueue-team",
                ),
            ],
        ),
        (
            dws_stack(with_prc=False),
            None,
            [
                (
                    'AdmissionCheck "dws" uses ProvisioningRequestConfig "dws", which the stack does not define',
                    "admissioncheck-dws",
                ),
            ],
        ),
        (
            dws_stack(with_prc=False, with_flavor=False),
            {"external": ["ProvisioningRequestConfig/dws", "ResourceFlavor/gpu"]},
            [],
        ),
    ],
    ids=[
        "complete",
        "complete-v1beta1",
        "no-cluster-queue",
        "no-flavor-no-check",
        "no-prc",
        "external-objects",
    ],
)
def test_kueue_references_resolve_inside_the_stack(
    stack: Stack, config: dict[str, Any] | None, want: list[tuple[str, str]]
) -> None:
    assert stack.check(k.kueue_references_exist, config=config) == want


def test_references_tolerate_objects_without_names_or_specs() -> None:
    s = Stack()
    s.add("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "lq", {})
    s.add("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "cq", {"spec": {"resourceGroups": [{}]}})
    s.add(
        "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck", "ac", {"spec": {"parameters": {"kind": "Other"}}}
    )
    assert s.check(k.kueue_references_exist) == []


# --- kueue-gpu-quota-within-pool-capacity -------------------------------------------------------------


def capacity_stack(
    *gpu_quotas: int, autoscaling: dict[str, Any] | None = None, zones: int = 2, pool_label: str = "h100"
) -> Stack:
    s = Stack()
    s.add(
        "gcp:container/nodePool:NodePool",
        "gke-h100",
        {
            "name": "h100",
            "autoscaling": autoscaling or {"totalMinNodeCount": 0, "totalMaxNodeCount": 4},
            "nodeLocations": [f"us-central1-{z}" for z in "abc"[:zones]],
            "nodeConfig": {
                "machineType": "a3-highgpu-8g",
                "guestAccelerators": [{"type": "nvidia-h100-80gb", "count": 8}],
            },
        },
    )
    s.add(
        *_named(
            kueue("ResourceFlavor", "h100", {"nodeLabels": {"cloud.google.com/gke-nodepool": pool_label}})
        )
    )
    for i, quota in enumerate(gpu_quotas):
        s.add(
            *_named(
                kueue(
                    "ClusterQueue", f"team-{i}", cluster_queue_spec(flavor_quota("h100", cpu=10, gpu=quota))
                )
            )
        )
    return s


@pytest.mark.parametrize(
    ("stack", "want"),
    [
        (capacity_stack(8, 8, 8), []),
        (capacity_stack(8, 8, 8, 8), []),
        (
            capacity_stack(16, 8, 16),
            [
                (
                    'nvidia.com/gpu quota on flavor "h100" is 40 (ClusterQueue "team-0" 16; ClusterQueue "team-1" 8; '
                    'ClusterQueue "team-2" 16) but GKE node pool "h100" has at most 32 (4 nodes × 8 nvidia.com/gpu '
                    "per node): 8 nvidia.com/gpu of nominal quota can never be backed by nodes; raise "
                    "autoscaling.totalMaxNodeCount or lower the quotas",
                    "gke-h100",
                )
            ],
        ),
        (
            capacity_stack(24, autoscaling={"minNodeCount": 0, "maxNodeCount": 1}, zones=2),
            [
                (
                    'nvidia.com/gpu quota on flavor "h100" is 24 (ClusterQueue "team-0" 24) but GKE node pool "h100" '
                    "has at most 16 (1 nodes per zone × 2 zones × 8 nvidia.com/gpu per node): 8 nvidia.com/gpu of "
                    "nominal quota can never be backed by nodes; raise autoscaling.maxNodeCount or lower the quotas",
                    "gke-h100",
                )
            ],
        ),
        (capacity_stack(24, autoscaling={"maxNodeCount": 1}, zones=0), []),
        (capacity_stack(99, pool_label="other-pool"), []),
    ],
    ids=[
        "24-of-32",
        "32-of-32",
        "40-of-32",
        "per-zone-limit",
        "unknown-zones",
        "flavor-selects-another-pool",
    ],
)
def test_gpu_quota_on_a_pool_flavor_fits_the_pool(stack: Stack, want: list[tuple[str, str]]) -> None:
    assert stack.check(k.kueue_gpu_quota_within_capacity) == want


def test_cohort_quota_counts_against_pool_capacity() -> None:
    s = capacity_stack(24)
    s.add(*_named(kueue("Cohort", "ml", cluster_queue_spec(flavor_quota("h100", gpu=16)))))
    assert s.check(k.kueue_gpu_quota_within_capacity) == [
        (
            'nvidia.com/gpu quota on flavor "h100" is 40 (ClusterQueue "team-0" 24; Cohort "ml" 16) but GKE node '
            'pool "h100" has at most 32 (4 nodes × 8 nvidia.com/gpu per node): 8 nvidia.com/gpu of nominal quota '
            "can never be backed by nodes; raise autoscaling.totalMaxNodeCount or lower the quotas",
            "gke-h100",
        )
    ]


def test_capacity_tolerates_pools_and_flavors_without_properties() -> None:
    s = Stack()
    s.add("gcp:container/nodePool:NodePool", "p", {})
    s.add("gcp:container/nodePool:NodePool", "q", {"name": "q"})
    s.add("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor", "rf", {"spec": {"nodeLabels": {}}})
    s.add(*_named(kueue("ResourceFlavor", "q", {"nodeLabels": {"cloud.google.com/gke-nodepool": "q"}})))
    s.add(*_named(kueue("ClusterQueue", "cq", cluster_queue_spec(flavor_quota("q", gpu=4)))))
    assert s.check(k.kueue_gpu_quota_within_capacity) == []


def two_clusters(east_gpus: int, west_gpus: int) -> Stack:
    """Two BatchClusters (a MultiKueue manager's workers), each with its own 32-GPU pool "h100", flavor and
    ClusterQueue of the same names."""
    s = Stack()
    for cluster, gpus in (("east", east_gpus), ("west", west_gpus)):
        s.add("batchplane:cluster:BatchCluster", cluster, {})
        s.add(
            "gcp:container/nodePool:NodePool",
            f"{cluster}-gke-h100",
            {
                "name": "h100",
                "autoscaling": {"totalMaxNodeCount": 4},
                "nodeConfig": {"guestAccelerators": [{"type": "nvidia-h100-80gb", "count": 8}]},
            },
            parent=cluster,
        )
        rf_type, rf = kueue(
            "ResourceFlavor", "h100", {"nodeLabels": {"cloud.google.com/gke-nodepool": "h100"}}
        )
        s.add(rf_type, f"{cluster}-rf", rf, parent=cluster)
        cq_type, cq = kueue("ClusterQueue", "team-a", cluster_queue_spec(flavor_quota("h100", gpu=gpus)))
        s.add(cq_type, f"{cluster}-cq", cq, parent=cluster)
    return s


def test_capacity_is_checked_per_cluster_not_across_a_multikueue_program() -> None:
    assert two_clusters(24, 24).check(k.kueue_gpu_quota_within_capacity) == []


def test_capacity_names_the_one_cluster_whose_pool_is_too_small() -> None:
    assert two_clusters(40, 24).check(k.kueue_gpu_quota_within_capacity) == [
        (
            'nvidia.com/gpu quota on flavor "h100" is 40 (ClusterQueue "team-a" 40) but GKE node pool "h100" has '
            "at most 32 (4 nodes × 8 nvidia.com/gpu per node): 8 nvidia.com/gpu of nominal quota can never be "
            "backed by nodes; raise autoscaling.totalMaxNodeCount or lower the quotas",
            "east-gke-h100",
        )
    ]


# --- kueue-cohort-borrowing ---------------------------------------------------------------------------


def cohort(*members: dict[str, Any], cohort_name: str | None = "ml") -> Stack:
    s = Stack()
    for i, gpu in enumerate(members):
        s.add(
            *_named(
                kueue(
                    "ClusterQueue",
                    f"team-{i}",
                    cluster_queue_spec(flavor_quota("l4", gpu=gpu), cohort=cohort_name),
                )
            )
        )
    return s


@pytest.mark.parametrize(
    ("stack", "want"),
    [
        (cohort({"nominalQuota": 4, "borrowingLimit": 4}, {"nominalQuota": 4}, {"nominalQuota": 4}), []),
        (
            cohort({"nominalQuota": 4, "borrowingLimit": 6}, {"nominalQuota": 4, "lendingLimit": 2}),
            [
                (
                    'ClusterQueue "team-0" flavor "l4" nvidia.com/gpu: borrowingLimit 6 exceeds what the rest of cohort '
                    '"ml" can lend (2)',
                    "clusterqueue-team-0",
                )
            ],
        ),
        (
            cohort({"nominalQuota": 4, "borrowingLimit": 1}),
            [
                (
                    'ClusterQueue "team-0" flavor "l4" nvidia.com/gpu: borrowingLimit 1 exceeds what the rest of cohort '
                    '"ml" can lend (0)',
                    "clusterqueue-team-0",
                )
            ],
        ),
        (
            cohort({"nominalQuota": 2, "lendingLimit": 3}, {"nominalQuota": 2}),
            [
                (
                    'ClusterQueue "team-0" flavor "l4" nvidia.com/gpu: lendingLimit 3 exceeds nominalQuota 2',
                    "clusterqueue-team-0",
                )
            ],
        ),
        (
            cohort({"nominalQuota": 2, "borrowingLimit": 2}, cohort_name=None),
            [
                (
                    'ClusterQueue "team-0" flavor "l4" nvidia.com/gpu: borrowingLimit/lendingLimit set without a cohort',
                    "clusterqueue-team-0",
                )
            ],
        ),
        (cohort({"nominalQuota": 2}, cohort_name=None), []),
    ],
    ids=[
        "within-cohort",
        "beyond-lendable",
        "alone-in-cohort",
        "lending-above-nominal",
        "no-cohort",
        "plain",
    ],
)
def test_borrowing_is_satisfiable_within_the_cohort(stack: Stack, want: list[tuple[str, str]]) -> None:
    assert stack.check(k.kueue_cohort_borrowing) == want


def test_cohort_objects_and_parent_cohorts_lend_to_members() -> None:
    s = cohort({"nominalQuota": 0, "borrowingLimit": 8}, cohort_name="research")
    s.add(*_named(kueue("Cohort", "research", {"parentName": "org"})))
    s.add(*_named(kueue("Cohort", "org", cluster_queue_spec(flavor_quota("l4", gpu=8)))))
    assert s.check(k.kueue_cohort_borrowing) == []


def test_borrowing_tolerates_missing_properties() -> None:
    s = Stack()
    s.add("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "cq", {"spec": {"cohortName": "ml"}})
    s.add("kubernetes:kueue.x-k8s.io/v1beta2:Cohort", "co", {})
    assert s.check(k.kueue_cohort_borrowing) == []


# --- kueue-dws-multi-podset ---------------------------------------------------------------------------


def prc_stack(prc_spec: dict[str, Any], *, version: str = "v1beta2") -> Stack:
    s = Stack()
    s.add(*_named(kueue("ProvisioningRequestConfig", "dws", prc_spec)))
    s.add(
        *_named(
            kueue(
                "AdmissionCheck",
                "dws",
                {
                    "controllerName": k.PROVISIONING_CONTROLLER,
                    "parameters": {
                        "apiGroup": "kueue.x-k8s.io",
                        "kind": "ProvisioningRequestConfig",
                        "name": "dws",
                    },
                },
            )
        )
    )
    spec = cluster_queue_spec(flavor_quota("gpu", gpu=8))
    if version == "v1beta1":
        spec["admissionChecks"] = ["dws"]
    else:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": "dws", "onFlavors": ["gpu"]}]}
    s.add(*_named(kueue("ClusterQueue", "team", spec, version=version)))
    return s


BARE_MESSAGE = (
    'ClusterQueue "team" uses AdmissionCheck "dws" (queued-provisioning.gke.io) whose ProvisioningRequestConfig '
    '"dws" has neither podSetMergePolicy nor managedResources: GKE provisions one PodSet per request, so '
    "multi-PodSet jobs (RayJob head + workers, PyTorchJob master + workers) are never admitted"
)


@pytest.mark.parametrize(
    ("stack", "want"),
    [
        (
            prc_stack(
                {
                    "provisioningClassName": "queued-provisioning.gke.io",
                    "managedResources": ["nvidia.com/gpu"],
                    "podSetMergePolicy": "IdenticalWorkloadSchedulingRequirements",
                }
            ),
            [],
        ),
        (
            prc_stack(
                {
                    "provisioningClassName": "queued-provisioning.gke.io",
                    "managedResources": ["nvidia.com/gpu"],
                }
            ),
            [],
        ),
        (
            prc_stack(
                {
                    "provisioningClassName": "queued-provisioning.gke.io",
                    "podSetMergePolicy": "IdenticalPodTemplates",
                }
            ),
            [],
        ),
        (
            prc_stack({"provisioningClassName": "queued-provisioning.gke.io"}),
            [(BARE_MESSAGE, "clusterqueue-team")],
        ),
        (
            prc_stack(
                {"provisioningClassName": "queued-provisioning.gke.io", "managedResources": []},
                version="v1beta1",
            ),
            [(BARE_MESSAGE, "clusterqueue-team")],
        ),
        (prc_stack({"provisioningClassName": "check-capacity.autoscaling.x-k8s.io"}), []),
        (prc_stack({}), []),
    ],
    ids=["both", "managed-resources", "merge-policy", "bare", "bare-v1beta1", "other-class", "empty-spec"],
)
def test_dws_queues_scope_their_provisioning_requests(stack: Stack, want: list[tuple[str, str]]) -> None:
    assert stack.check(k.kueue_dws_multi_podset) == want


def test_dws_check_cannot_judge_an_unknown_class() -> None:
    s = prc_stack({"provisioningClassName": UNKNOWN})
    with pytest.raises(UnknownValueError):
        s.check(k.kueue_dws_multi_podset)


def test_policies_ignore_non_kueue_types() -> None:
    assert (
        check_resource(
            k.kueue_finite_quotas, "kubernetes:core/v1:ConfigMap", {"spec": INFINITE}, stack_tags=PRODUCTION
        )
        == []
    )
    assert kueue("ClusterQueue", "x")[0] == CQ_TYPE

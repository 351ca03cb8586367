"""One provisioning abstraction for every target: the admission check each platform's pool gets, through
the same :mod:`batchplane.backed_pools` code path, and the pure pieces behind it (pool shapes, the
EC2 instance table, the GPU Operator plan)."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.kueue import kueue_objects
from batchplane.stack import load_stack
from batchplane.targets.openshift.aws_instances import GPU_INSTANCE_PREFIXES, INSTANCE_SHAPES
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.machines import pool_shape
from batchplane.targets.openshift.olm import openshift_plan
from tests.gke.conftest import gke_config
from tests.openshift.conftest import ocp_config, ocp_with


def generated(config: dict[str, Any]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """(ProvisioningRequestConfig name → class, the ClusterQueue's admission checks) of a stack."""
    objects = kueue_objects(load_stack(config).kueue)
    classes = {
        o["metadata"]["name"]: o["spec"]["provisioningClassName"]
        for o in objects
        if o["kind"] == "ProvisioningRequestConfig"
    }
    (queue,) = [o for o in objects if o["kind"] == "ClusterQueue"]
    return classes, queue["spec"]["admissionChecksStrategy"]["admissionChecks"]


CLASSES = [
    pytest.param(
        gke_config(), {"l4-dws": "queued-provisioning.gke.io"}, "l4-dws", "l4", id="gke-queued-pool"
    ),
    pytest.param(
        ocp_config(),
        {"a10g-provisioning": "best-effort-atomic-scale-up.autoscaling.x-k8s.io"},
        "a10g-provisioning",
        "a10g",
        id="openshift-atomic-pool",
    ),
    pytest.param(
        ocp_with(target__gpuPools__0__provisioning="check-capacity", target__gpuPools__0__minReplicas=2),
        {"a10g-provisioning": "check-capacity.autoscaling.x-k8s.io"},
        "a10g-provisioning",
        "a10g",
        id="openshift-check-capacity-pool",
    ),
]


@pytest.mark.parametrize(("config", "want_classes", "check", "flavor"), CLASSES)
def test_pool_flavor_gets_the_provisioning_class_of_its_platform(
    config: dict[str, Any], want_classes: dict[str, str], check: str, flavor: str
) -> None:
    classes, checks = generated(config)
    assert classes == want_classes
    assert checks == [{"name": check, "onFlavors": [flavor]}]


def test_pool_without_provisioning_gets_no_admission_check() -> None:
    objects = kueue_objects(load_stack(ocp_with(target__gpuPools__0__provisioning="none")).kueue)
    assert [o["kind"] for o in objects if o["kind"] in ("AdmissionCheck", "ProvisioningRequestConfig")] == []
    (queue,) = [o for o in objects if o["kind"] == "ClusterQueue"]
    assert "admissionChecksStrategy" not in queue["spec"]


def test_hand_written_atomic_check_on_the_flavor_replaces_the_generated_one() -> None:
    config = ocp_with(
        kueue__provisioningRequestConfigs=[
            {
                "name": "mine",
                "provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
                "managedResources": ["nvidia.com/gpu"],
            }
        ],
        kueue__admissionChecks=[{"name": "mine", "provisioningRequestConfig": "mine"}],
        kueue__clusterQueues__0__admissionChecks=[{"name": "mine", "onFlavors": ["a10g"]}],
    )
    classes, checks = generated(config)
    assert classes == {"mine": "check-capacity.autoscaling.x-k8s.io"}
    assert checks == [{"name": "mine", "onFlavors": ["a10g"]}]


def test_every_instance_type_belongs_to_a_listed_family_with_sane_shapes() -> None:
    assert {t.split(".", 1)[0] + "." for t in INSTANCE_SHAPES} == set(GPU_INSTANCE_PREFIXES)
    assert all(
        s.gpus in (1, 2, 4, 8) and s.vcpus >= 4 and s.memory_gib >= 4 * s.gpus
        for s in INSTANCE_SHAPES.values()
    )
    assert INSTANCE_SHAPES["p4d.24xlarge"].accelerator_label == "nvidia-a100"


def test_pool_shape_prefers_configured_values_over_the_instance_table() -> None:
    target = load_stack(
        ocp_with(target__gpuPools__0__vcpus=7, target__gpuPools__0__memoryGiB=30)
    ).config.target
    assert isinstance(target, OpenShiftTarget)
    shape = pool_shape(target.gpu_pools[0])
    assert shape.accelerator is not None
    assert (shape.accelerator.type, shape.accelerator.count, shape.vcpus, shape.memory_gib) == (
        "nvidia-a10g",
        1,
        7,
        30,
    )


@pytest.mark.parametrize(
    ("install", "roles"),
    [
        (True, ["cert-manager", "kueue", "jobset-operator", "openshift-ai", "nfd", "gpu-operator"]),
        (False, ["cert-manager", "kueue", "jobset-operator", "openshift-ai"]),
    ],
    ids=["gpu-operator-installed", "gpu-operator-not-installed"],
)
def test_gpu_operator_installs_follow_the_other_olm_installs(install: bool, roles: list[str]) -> None:
    target = load_stack(ocp_with(target__gpuOperator={"install": install})).config.target
    assert isinstance(target, OpenShiftTarget)
    plan = openshift_plan(target)
    assert [i.role for i in plan.installs] == roles
    jobset = [("jobset-operator-cr", "jobset-operator", "JobSetOperator")]  # trainer Managed on 3.x
    assert [(o.role, o.after, o.obj["kind"]) for o in plan.operands] == jobset + (
        [("nfd-instance", "nfd", "NodeFeatureDiscovery"), ("cluster-policy", "gpu-operator", "ClusterPolicy")]
        if install
        else []
    )


def test_cluster_policy_and_nfd_specs_can_be_replaced() -> None:
    gpu = {"install": True, "clusterPolicy": {"driver": {"enabled": False}}, "nodeFeatureDiscovery": {}}
    target = load_stack(ocp_with(target__gpuOperator=gpu)).config.target
    assert isinstance(target, OpenShiftTarget)
    specs = {o.role: o.obj["spec"] for o in openshift_plan(target).operands if o.after != "jobset-operator"}
    assert specs == {"nfd-instance": {}, "cluster-policy": {"driver": {"enabled": False}}}

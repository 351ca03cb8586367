"""The Pulumi program on an OpenShift target with GPU pools, under the offline mock engine: the exact
MachineSet / MachineAutoscaler / ClusterAutoscaler inputs (template stack, MachineSet files, inline
provider specs), the derived flavor and ProvisioningRequest check wired to the team's ClusterQueue,
the GPU Operator installs and their CRs behind CSV gates, and that a bad config registers nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from batchplane.errors import ConfigValidationError
from batchplane.offline.engine import run_program
from batchplane.offline.model import ProgramRun, RecordedResource
from batchplane.offline.stackfile import read_stack_file
from tests.config.factories import DELETE
from tests.conftest import REPO_ROOT, template_path
from tests.openshift.conftest import ocp_with

pytestmark = pytest.mark.slow

MACHINE_SET = "kubernetes:machine.openshift.io/v1beta1:MachineSet"
MACHINE_AUTOSCALER = "kubernetes:autoscaling.openshift.io/v1beta1:MachineAutoscaler"
CLUSTER_AUTOSCALER = "kubernetes:autoscaling.openshift.io/v1:ClusterAutoscaler"
GATE = "pulumi-python:dynamic:Resource"
MANAGED = {"app.kubernetes.io/managed-by": "batchplane"}
INFRA = "ocp-ai-7x2kq"
ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"


@pytest.fixture(scope="module")
def template_run() -> ProgramRun:
    return run_program(REPO_ROOT, "openshift-ai-gpu", read_stack_file(template_path("openshift-ai-gpu")))


def kueue_object(run: ProgramRun, kind: str, name: str) -> dict[str, Any]:
    (found,) = [
        r
        for r in run.resources
        if r.type.startswith("kubernetes:kueue.x-k8s.io/") and r.type.endswith(f":{kind}")
        if r.inputs["metadata"]["name"] == name
    ]
    return found.inputs


def test_template_machineset_is_an_aws_g5_machineset_labelled_and_tainted_for_the_pool(
    template_run: ProgramRun,
) -> None:
    name = f"{INFRA}-a10g"
    assert template_run.get(MACHINE_SET, "gpu-a10g-machineset").inputs == {
        "apiVersion": "machine.openshift.io/v1beta1",
        "kind": "MachineSet",
        "metadata": {
            "name": name,
            "namespace": "openshift-machine-api",
            "labels": {"machine.openshift.io/cluster-api-cluster": INFRA, **MANAGED},
        },
        "spec": {
            "replicas": 0,
            "selector": {
                "matchLabels": {
                    "machine.openshift.io/cluster-api-cluster": INFRA,
                    "machine.openshift.io/cluster-api-machineset": name,
                }
            },
            "template": {
                "metadata": {
                    "labels": {
                        "machine.openshift.io/cluster-api-cluster": INFRA,
                        "machine.openshift.io/cluster-api-machine-role": "worker",
                        "machine.openshift.io/cluster-api-machine-type": "worker",
                        "machine.openshift.io/cluster-api-machineset": name,
                    }
                },
                "spec": {
                    "metadata": {
                        "labels": {
                            "batchplane.dev/gpu-pool": "a10g",
                            "cluster-api/accelerator": "nvidia-a10g",
                            "node-role.kubernetes.io/gpu": "",
                        }
                    },
                    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
                    "providerSpec": {
                        "value": {  # offline: the lookup's placeholder, then what the pool sets itself
                            "batchplane.dev/not-checked-offline": "copied at deploy time from a worker MachineSet "
                            "in us-east-1a; run batchplane preflight to see which",
                            "instanceType": "g5.2xlarge",
                            "placement": {"availabilityZone": "us-east-1a", "region": "us-east-1"},
                            "tags": [{"name": f"kubernetes.io/cluster/{INFRA}", "value": "owned"}],
                        }
                    },
                },
            },
        },
    }
    lookup = template_run.get(GATE, "gpu-a10g-machineset-source")
    assert (lookup.inputs["gate"], lookup.inputs["zone"], lookup.inputs["infrastructureId"]) == (
        "machineset-source",
        "us-east-1a",
        INFRA,
    )
    assert lookup.urn in template_run.get(MACHINE_SET, "gpu-a10g-machineset").dependencies
    [note] = [
        m.message for m in template_run.logs if "not checked offline" in m.message and "a10g" in m.message
    ]
    assert "run batchplane preflight" in note


def test_template_machine_autoscaler_scales_the_machineset_from_zero_to_four(
    template_run: ProgramRun,
) -> None:
    autoscaler = template_run.get(MACHINE_AUTOSCALER, "gpu-a10g-machineautoscaler")
    assert autoscaler.inputs == {
        "apiVersion": "autoscaling.openshift.io/v1beta1",
        "kind": "MachineAutoscaler",
        "metadata": {"name": f"{INFRA}-a10g", "namespace": "openshift-machine-api", "labels": MANAGED},
        "spec": {
            "minReplicas": 0,
            "maxReplicas": 4,
            "scaleTargetRef": {
                "apiVersion": "machine.openshift.io/v1beta1",
                "kind": "MachineSet",
                "name": f"{INFRA}-a10g",
            },
        },
    }
    machine_set = template_run.get(MACHINE_SET, "gpu-a10g-machineset")
    cluster = template_run.get(CLUSTER_AUTOSCALER, "gpu-cluster-autoscaler")
    assert {machine_set.urn, cluster.urn} <= set(autoscaler.dependencies)


def test_template_cluster_autoscaler_limits_cover_the_baseline_plus_every_pool_at_max(
    template_run: ProgramRun,
) -> None:
    assert template_run.get(CLUSTER_AUTOSCALER, "gpu-cluster-autoscaler").inputs == {
        "apiVersion": "autoscaling.openshift.io/v1",
        "kind": "ClusterAutoscaler",
        "metadata": {"name": "default", "labels": MANAGED},
        "spec": {
            "resourceLimits": {
                "maxNodesTotal": 10,  # 6 + 4 machines
                "cores": {"min": 0, "max": 80},  # 48 + 4 × 8 vCPU
                "memory": {"min": 0, "max": 320},  # 192 + 4 × 32 GiB
                "gpus": [{"type": "nvidia-a10g", "min": 0, "max": 4}],
            },
            "scaleDown": {"enabled": True, "unneededTime": "10m"},
            "maxNodeProvisionTime": "30m",
        },
    }


def test_gpu_capacity_children_use_the_upserting_provider_and_the_component(template_run: ProgramRun) -> None:
    (component,) = template_run.of_type("batchplane:openshift:GpuCapacity")
    children = template_run.children(component.urn)
    assert [(c.type, c.name) for c in children] == [
        (CLUSTER_AUTOSCALER, "gpu-cluster-autoscaler"),
        (GATE, "gpu-a10g-machineset-source"),
        (MACHINE_SET, "gpu-a10g-machineset"),
        (MACHINE_AUTOSCALER, "gpu-a10g-machineautoscaler"),
    ]
    provider = template_run.get("pulumi:providers:kubernetes", "k8s")
    assert provider.inputs["upsertExistingObjects"] == "true"  # provider inputs are strings
    assert {c.provider_urn for c in children if c.type != GATE} == {provider.urn}


def test_template_team_queue_is_gated_by_an_atomic_provisioning_request_on_the_derived_flavor(
    template_run: ProgramRun,
) -> None:
    assert kueue_object(template_run, "ResourceFlavor", "a10g")["spec"] == {
        "nodeLabels": {"batchplane.dev/gpu-pool": "a10g"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }
    assert kueue_object(template_run, "ProvisioningRequestConfig", "a10g-provisioning")["spec"] == {
        "provisioningClassName": ATOMIC,
        "managedResources": ["nvidia.com/gpu"],
        "retryStrategy": {"backoffLimitCount": 3, "backoffBaseSeconds": 60, "backoffMaxSeconds": 1800},
    }
    assert kueue_object(template_run, "AdmissionCheck", "a10g-provisioning")["spec"] == {
        "controllerName": "kueue.x-k8s.io/provisioning-request",
        "parameters": {
            "apiGroup": "kueue.x-k8s.io",
            "kind": "ProvisioningRequestConfig",
            "name": "a10g-provisioning",
        },
    }
    spec = kueue_object(template_run, "ClusterQueue", "team-a")["spec"]
    assert spec["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "a10g-provisioning", "onFlavors": ["a10g"]}]
    }
    assert [f["name"] for f in spec["resourceGroups"][0]["flavors"]] == ["default-flavor", "a10g"]


def test_gpu_operator_crs_wait_for_their_operators_csv_gates(template_run: ProgramRun) -> None:
    subs = template_run.of_type("kubernetes:operators.coreos.com/v1alpha1:Subscription")
    assert [(s.name, s.inputs["spec"]["name"], s.inputs["spec"]["source"]) for s in subs][-2:] == [
        ("olm-nfd-subscription", "nfd", "redhat-operators"),
        ("olm-gpu-operator-subscription", "gpu-operator-certified", "certified-operators"),
    ]
    groups = {
        g.name: g.inputs["spec"]
        for g in template_run.of_type("kubernetes:operators.coreos.com/v1:OperatorGroup")
    }
    assert groups["olm-nfd-operatorgroup"] == {"targetNamespaces": ["openshift-nfd"]}
    assert groups["olm-gpu-operator-operatorgroup"] == {"targetNamespaces": ["nvidia-gpu-operator"]}
    nfd = template_run.get("kubernetes:nfd.openshift.io/v1:NodeFeatureDiscovery", "olm-nfd-instance")
    policy = template_run.get("kubernetes:nvidia.com/v1:ClusterPolicy", "olm-cluster-policy")
    assert nfd.dependencies == [template_run.get(GATE, "olm-nfd-csv-ready").urn]
    assert policy.dependencies == [template_run.get(GATE, "olm-gpu-operator-csv-ready").urn]
    assert policy.inputs["metadata"] == {"name": "gpu-cluster-policy", "labels": MANAGED}
    assert policy.inputs["spec"]["operator"] == {
        "defaultRuntime": "crio",
        "use_ocp_driver_toolkit": True,
        "initContainer": {},
    }


# --- other pool shapes -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shapes_run(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    """Three pools: an Azure MachineSet file (check-capacity, min 1), an inline GCP provider spec
    (``provisioning: none``, extra label and taint) and the base AWS pool; no ClusterAutoscaler baseline."""
    file = tmp_path_factory.mktemp("ms") / "azure-gpu.yaml"
    file.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "machine.openshift.io/v1beta1",
                "kind": "MachineSet",
                "metadata": {
                    "name": "copied",
                    "labels": {"machine.openshift.io/cluster-api-cluster": "ocp-7x2kq"},
                },
                "spec": {"template": {"spec": {"providerSpec": {"value": AZURE_SPEC}}}},
            }
        )
    )
    config = ocp_with(
        target__clusterAutoscaler=DELETE,
        target__gpuPools__1={
            "name": "t4",
            "template": {"path": str(file)},
            "accelerator": {"type": "nvidia-t4", "count": 1},
            "minReplicas": 1,
            "maxReplicas": 2,
            "provisioning": "check-capacity",
        },
        target__gpuPools__2={
            "name": "l4",
            "template": {"providerSpec": GCP_SPEC},
            "accelerator": {"type": "nvidia-l4", "count": 2},
            "maxReplicas": 3,
            "provisioning": "none",
            "machineSetName": "gcp-l4",
            "labels": {"team": "ml"},
            "taints": [{"key": "dedicated", "value": "ml", "effect": "NoExecute"}],
        },
    )
    return run_program(REPO_ROOT, "shapes", config)


AZURE_SPEC = {
    "apiVersion": "machine.openshift.io/v1beta1",
    "kind": "AzureMachineProviderSpec",
    "vmSize": "Standard_NC4as_T4_v3",
}
GCP_SPEC = {
    "apiVersion": "machine.openshift.io/v1beta1",
    "kind": "GCPMachineProviderSpec",
    "machineType": "g2-standard-24",
}


def machine_set_spec(run: ProgramRun, pool: str) -> dict[str, Any]:
    spec: dict[str, Any] = run.get(MACHINE_SET, f"gpu-{pool}-machineset").inputs["spec"]["template"]["spec"]
    return spec


def test_machineset_file_keeps_its_provider_spec_and_gets_batchplane_labels(shapes_run: ProgramRun) -> None:
    ms = shapes_run.get(MACHINE_SET, "gpu-t4-machineset").inputs
    assert ms["metadata"]["name"] == "ocp-7x2kq-t4"
    assert ms["spec"]["replicas"] == 1
    assert machine_set_spec(shapes_run, "t4") == {
        "metadata": {
            "labels": {
                "batchplane.dev/gpu-pool": "t4",
                "cluster-api/accelerator": "nvidia-t4",
                "node-role.kubernetes.io/gpu": "",
            }
        },
        "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
        "providerSpec": {"value": AZURE_SPEC},
    }


def test_inline_provider_spec_pool_carries_extra_labels_and_taints(shapes_run: ProgramRun) -> None:
    assert shapes_run.get(MACHINE_SET, "gpu-l4-machineset").inputs["metadata"]["name"] == "gcp-l4"
    assert machine_set_spec(shapes_run, "l4") == {
        "metadata": {
            "labels": {
                "batchplane.dev/gpu-pool": "l4",
                "cluster-api/accelerator": "nvidia-l4",
                "node-role.kubernetes.io/gpu": "",
                "team": "ml",
            }
        },
        "taints": [
            {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
            {"key": "dedicated", "value": "ml", "effect": "NoExecute"},
        ],
        "providerSpec": {"value": GCP_SPEC},
    }
    assert kueue_object(shapes_run, "ResourceFlavor", "l4")["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoExecute"},
    ]


def test_cluster_autoscaler_without_baseline_limits_only_gpus_per_type(shapes_run: ProgramRun) -> None:
    assert shapes_run.get(CLUSTER_AUTOSCALER, "gpu-cluster-autoscaler").inputs["spec"] == {
        "resourceLimits": {
            "gpus": [
                {"type": "nvidia-a10g", "min": 0, "max": 4},
                {"type": "nvidia-l4", "min": 0, "max": 6},
                {"type": "nvidia-t4", "min": 0, "max": 2},
            ]
        },
        "scaleDown": {"enabled": True},
    }


def test_provisioning_class_follows_the_pool_option_and_only_used_pools_get_checks(
    shapes_run: ProgramRun,
) -> None:
    configs = {
        r.inputs["metadata"]["name"]: r.inputs["spec"]["provisioningClassName"]
        for r in shapes_run.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ProvisioningRequestConfig")
    }
    # t4 (check-capacity) and l4 (none) have no ClusterQueue quota: no check is generated for them.
    assert configs == {"a10g-provisioning": ATOMIC}
    autoscalers = {
        r.name: (r.inputs["spec"]["minReplicas"], r.inputs["spec"]["maxReplicas"])
        for r in shapes_run.of_type(MACHINE_AUTOSCALER)
    }
    assert autoscalers == {
        "gpu-a10g-machineautoscaler": (0, 4),
        "gpu-t4-machineautoscaler": (1, 2),
        "gpu-l4-machineautoscaler": (0, 3),
    }


def test_cluster_autoscaler_owned_elsewhere_is_not_declared() -> None:
    run = run_program(REPO_ROOT, "no-ca", ocp_with(target__clusterAutoscaler={"create": False}))
    assert run.of_type(CLUSTER_AUTOSCALER) == []
    autoscaler: RecordedResource = run.get(MACHINE_AUTOSCALER, "gpu-a10g-machineautoscaler")
    assert autoscaler.dependencies == [run.get(MACHINE_SET, "gpu-a10g-machineset").urn]


def test_openshift_stack_without_gpu_pools_declares_no_gpu_capacity() -> None:
    run = run_program(REPO_ROOT, "openshift-ai", read_stack_file(template_path("openshift-ai")))
    assert run.of_type("batchplane:openshift:GpuCapacity") == []
    assert run.of_type("kubernetes:nvidia.com/v1:ClusterPolicy") == []


def test_rejected_gpu_pool_registers_nothing() -> None:
    with pytest.raises(ConfigValidationError) as caught:
        run_program(REPO_ROOT, "bad", ocp_with(target__gpuPools__0__minReplicas=2))
    assert [i.path for i in caught.value.errors] == ["batchplane:target.gpuPools[0].minReplicas"]


def test_template_file_path_resolves_against_the_project_directory(tmp_path: Path) -> None:
    # A relative path is read from the project directory, where Pulumi (and the offline engine) run.
    with pytest.raises(ConfigValidationError) as caught:
        run_program(
            REPO_ROOT,
            "rel",
            ocp_with(
                target__gpuPools__0__aws=DELETE,
                target__gpuPools__0__template={"path": "no-such-machineset.yaml"},
                target__gpuPools__0__accelerator={"type": "nvidia-a10g", "count": 1},
                target__clusterAutoscaler=DELETE,
            ),
        )
    assert [str(i) for i in caught.value.errors] == [
        f'batchplane:target.gpuPools[0].template.path: cannot read "no-such-machineset.yaml" (from {REPO_ROOT})'
    ]

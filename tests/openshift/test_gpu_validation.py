"""Every OpenShift GPU-capacity rule rejects a violating stack with a pinned message naming the key.

One case per rule of :func:`batchplane.targets.openshift.machines.check_gpu_capacity` and
:func:`~batchplane.targets.openshift.machines.check_gang_sizes`, plus the shared pool rules (flavor vs pool,
provisioning class, capacity) as they read for a MachineSet, and the warnings for what cannot be
checked at plan time (OpenShift version, feature set, GPU Operator, ClusterAutoscaler owned elsewhere).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from tests.config.factories import DELETE
from tests.openshift.conftest import ocp_config, ocp_with

P = "target__gpuPools__0__"
PATH = "batchplane:target.gpuPools[0]"
GPU_QUOTA = "kueue__clusterQueues__0__resourceGroups__0__flavors__1__resources__2__"
QUOTA_PATH = "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[1].resources[2].nominalQuota"
POOL = f'OpenShift GPU MachineSet "a10g" ({PATH})'
T4 = {"type": "nvidia-t4", "count": 1}
A10G = {"type": "nvidia-a10g", "count": 1}
SHAPE = {P + "accelerator": A10G, P + "vcpus": 8, P + "memoryGiB": 32}
"""A template pool's machine, as g5.2xlarge: 1 × A10G, 8 vCPU, 32 GiB."""
AWS_B = {
    "instanceType": "g5.xlarge",
    "ami": "ami-0123456789abcdef0",
    "region": "us-east-1",
    "zone": "us-east-1b",
}
SOURCE = (
    f"{PATH}: give exactly one of aws (a MachineSet derived from instance type, AMI and zone) or template "
    "(a MachineSet file or an inline providerSpec)"
)

RULES = [
    pytest.param({P + "template": {"providerSpec": {"kind": "X"}}}, [SOURCE], id="aws-and-template"),
    pytest.param({P + "aws": DELETE}, [SOURCE], id="neither-aws-nor-template"),
    pytest.param(
        {
            P + "aws": DELETE,
            P + "accelerator": T4,
            P + "template": {"path": "ms.yaml", "providerSpec": {"a": 1}},
        },
        [f"{PATH}.template: give exactly one of path (a MachineSet YAML file) or providerSpec (inline)"],
        id="template-path-and-inline",
    ),
    pytest.param(
        {P + "aws": DELETE, P + "template": {"providerSpec": {"kind": "AzureMachineProviderSpec"}}},
        [f"{PATH}.accelerator: required for template pools: the GPU type label and GPUs per machine"],
        id="template-needs-accelerator",
    ),
    pytest.param(
        {"target__infrastructureId": DELETE},
        [
            'batchplane:target.infrastructureId: required for gpuPools[0] "a10g": AWS MachineSets are named '
            "and filtered after the cluster's infrastructure ID "
            "(oc get infrastructure cluster -o jsonpath='{.status.infrastructureName}')"
        ],
        id="aws-needs-infrastructure-id",
    ),
    pytest.param(
        {
            "target__infrastructureId": DELETE,
            P + "aws": DELETE,
            **SHAPE,
            P + "template": {"providerSpec": {"kind": "A"}},
        },
        [
            f"{PATH}.template: no infrastructure ID: set target.infrastructureId, or use a MachineSet file "
            "labelled machine.openshift.io/cluster-api-cluster"
        ],
        id="inline-template-needs-infrastructure-id",
    ),
    pytest.param(
        {P + "aws__zone": "us-west-2a"},
        [f'{PATH}.aws.zone: "us-west-2a" is not a zone of region us-east-1'],
        id="zone-outside-region",
    ),
    pytest.param(
        {P + "aws__instanceType": "g5.3xlarge"},
        [
            f'{PATH}.aws.instanceType: "g5.3xlarge" is not a known g5 instance type (known: g5.12xlarge, '
            "g5.16xlarge, g5.24xlarge, g5.2xlarge, g5.48xlarge, g5.4xlarge, g5.8xlarge, g5.xlarge)"
        ],
        id="unknown-size-of-a-gpu-family",
    ),
    pytest.param(
        {P + "aws__instanceType": "m6i.large"},
        [
            f"{PATH}.accelerator: required for instance type m6i.large: Batchplane knows the GPUs of g4dn, "
            "g5, g6, g6e, p3, p4d, p4de, p5 instance types only"
        ],
        id="unknown-family-needs-accelerator",
    ),
    pytest.param(
        {P + "accelerator": {"type": "nvidia-t4", "count": 2}},
        [
            f'{PATH}.accelerator.type: "nvidia-t4" does not match instance type g5.2xlarge, which comes with '
            "1 × NVIDIA A10G (nvidia-a10g)",
            f"{PATH}.accelerator.count: 2 does not match instance type g5.2xlarge, which comes with 1 × "
            "NVIDIA A10G",
        ],
        id="accelerator-must-match-instance-type",
    ),
    pytest.param(
        {P + "minReplicas": 5},
        [f"{PATH}.minReplicas: 5 must be less than or equal to maxReplicas (4)"],
        id="min-above-max",
    ),
    pytest.param(
        {P + "minReplicas": 1},
        [
            f"{PATH}.minReplicas: must be 0 for provisioning: atomic: a gang pool scales from zero, machines "
            "exist only for admitted ProvisioningRequests"
        ],
        id="gang-pool-scales-from-zero",
    ),
    pytest.param(
        {P + "provisioning": "none", P + "provisioningRequest": {}},
        [
            f"{PATH}.provisioningRequest: only pools with provisioning atomic or check-capacity create "
            "ProvisioningRequests"
        ],
        id="provisioning-request-needs-a-gated-pool",
    ),
    pytest.param(
        {P + "labels": {"cluster-api/accelerator": "x"}},
        [f"{PATH}.labels.cluster-api/accelerator: is set by Batchplane on every GPU pool node; remove it"],
        id="reserved-label",
    ),
    pytest.param(
        {P + "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        [
            f"{PATH}.taints[0]: nvidia.com/gpu is the taint every GPU pool gets "
            "(nvidia.com/gpu=true:NoSchedule); remove this one"
        ],
        id="duplicate-gpu-taint",
    ),
    pytest.param(
        {"target__infrastructureId": "c" * 27, P + "name": "a" * 40, P + "flavorName": "a10g"},
        [
            f'{PATH}.name: MachineSet name "{"c" * 27}-{"a" * 40}" is 68 characters; at most 63 (it is a '
            "label value)"
        ],
        id="machineset-name-too-long",
    ),
    pytest.param(
        {
            "target__gpuPools__1": {
                "name": "b",
                "aws": AWS_B,
                "maxReplicas": 1,
                "machineSetName": "ocp-7x2kq-a10g",
            }
        },
        [
            'batchplane:target.gpuPools[1].machineSetName: MachineSet name "ocp-7x2kq-a10g" is also used by '
            "batchplane:target.gpuPools[0]",
        ],
        id="duplicate-machineset-name",
    ),
    pytest.param(
        {"target__openshiftVersion": "4.20"},
        [
            'batchplane:target.openshiftVersion: "4.20" is below 4.21, the first OpenShift release with '
            'ProvisioningRequest support in its Cluster Autoscaler (gpuPools[0] "a10g")'
        ],
        id="openshift-below-4-21",
    ),
    pytest.param(
        {"target__openshiftVersion": "3.11"},
        [
            'batchplane:target.openshiftVersion: "3.11" is not an OpenShift 4 or later version (e.g. 4.21, 4.21.3 or 5.0)'
        ],
        id="not-an-openshift-version",
    ),
    pytest.param(
        {"target__featureSet": "TechPreviewNoUpgrade"},
        [
            "batchplane:target.featureSet: TechPreviewNoUpgrade does not enable ProvisioningRequestAvailable: "
            'ProvisioningRequests need the ProvisioningRequestAvailable feature gate (gpuPools[0] "a10g"), '
            "which OpenShift 4.21 enables in DevPreviewNoUpgrade only; or "
            "use provisioning: none"
        ],
        id="feature-set-without-the-gate",
    ),
    pytest.param(
        {"target__featureSet": "CustomNoUpgrade"},
        [
            "batchplane:target.featureSet: CustomNoUpgrade: ProvisioningRequests need the "
            'ProvisioningRequestAvailable feature gate (gpuPools[0] "a10g"), and even with '
            "ProvisioningRequestAvailable listed in customNoUpgrade.enabled the cluster-version operator never "
            "creates the ProvisioningRequest CRD, which is annotated release.openshift.io/feature-set: "
            "DevPreviewNoUpgrade; use featureSet DevPreviewNoUpgrade or provisioning: none"
        ],
        id="custom-no-upgrade-gets-no-provisioning-request-crd",
    ),
    pytest.param(
        {"target__clusterAutoscaler__maxNodesTotal": 3},
        [
            "batchplane:target.clusterAutoscaler.maxNodesTotal: 3 is below the 4 machines of the GPU pools at "
            "their maxima (and the cluster's other nodes count too)"
        ],
        id="max-nodes-total-below-pools",
    ),
    pytest.param(
        {"target__clusterAutoscaler__cores": {"max": 16}},
        [
            "batchplane:target.clusterAutoscaler.cores.max: 16 is below the 32 cores of the GPU pools at their "
            "maxima (and the cluster's other nodes count too)"
        ],
        id="cores-below-pools",
    ),
    pytest.param(
        {"target__clusterAutoscaler__memoryGiB": {"max": 100}},
        [
            "batchplane:target.clusterAutoscaler.memoryGiB.max: 100 is below the 128 GiB of the GPU pools at "
            "their maxima (and the cluster's other nodes count too)"
        ],
        id="memory-below-pools",
    ),
    pytest.param(
        {"target__clusterAutoscaler__memoryGiB": {"min": 10, "max": 5}},
        ["batchplane:target.clusterAutoscaler.memoryGiB.min: 10 must be less than or equal to max (5)"],
        id="limit-min-above-max",
    ),
    pytest.param(
        {P + "aws__instanceType": "g7.xlarge", P + "accelerator": T4},
        [
            "batchplane:target.clusterAutoscaler.baseline: cannot derive the cores/memory limits: vcpus and "
            'memoryGiB of gpuPools[0] "a10g" are unknown; set them on the pools, or give cores and memoryGiB'
        ],
        id="baseline-needs-pool-shapes",
    ),
    # --- shared pool rules, as they read for a MachineSet ---------------------------------------
    pytest.param(
        {GPU_QUOTA + "nominalQuota": 6},
        [
            f'{QUOTA_PATH}: ClusterQueue "cq" admits gangs of up to 6 nvidia.com/gpu on flavor "a10g" '
            f"(nominalQuota), which need 6 machines of {POOL} at 1 GPU(s) each, but its maxReplicas is 4: "
            "the ProvisioningRequest for such a gang can never be satisfied",
            f'{PATH}.maxReplicas: nvidia.com/gpu quota on flavor "a10g" is 6 (ClusterQueue "cq" 6) but {POOL} '
            "has at most 4 (4 machines × 1 nvidia.com/gpu per node): 2 nvidia.com/gpu of nominal quota can "
            "never be backed by nodes; raise maxReplicas or lower the quotas",
        ],
        id="quota-beyond-max-machines",
    ),
    pytest.param(
        {"kueue__clusterQueues__0__cohortName": "c", GPU_QUOTA + "borrowingLimit": 2},
        [
            f'{QUOTA_PATH}: ClusterQueue "cq" admits gangs of up to 6 nvidia.com/gpu on flavor "a10g" '
            f"(nominalQuota + borrowingLimit), which need 6 machines of {POOL} at 1 GPU(s) each, but its "
            "maxReplicas is 4: the ProvisioningRequest for such a gang can never be satisfied"
        ],
        id="largest-gang-with-borrowing-beyond-max-machines",
    ),
    pytest.param(
        {"kueue__resourceFlavors__1": {"name": "a10g", "nodeLabels": {"batchplane.dev/gpu-pool": "a10g"}}},
        [
            "batchplane:kueue.resourceFlavors[1].tolerations: does not tolerate nvidia.com/gpu=true:NoSchedule "
            f"of {POOL}: admitted pods would not schedule on its nodes"
        ],
        id="hand-written-flavor-must-tolerate-the-gpu-taint",
    ),
    pytest.param(
        {
            "kueue__provisioningRequestConfigs": [
                {
                    "name": "gke",
                    "provisioningClassName": "queued-provisioning.gke.io",
                    "managedResources": ["nvidia.com/gpu"],
                }
            ],
            "kueue__admissionChecks": [{"name": "gke", "provisioningRequestConfig": "gke"}],
            "kueue__clusterQueues__0__admissionChecks": [{"name": "gke", "onFlavors": ["a10g"]}],
        },
        [
            'batchplane:kueue.provisioningRequestConfigs[0].provisioningClassName: "queued-provisioning.gke.io" '
            f'cannot obtain nodes of {POOL} (flavor "a10g"): they are provisioned only through '
            "best-effort-atomic-scale-up.autoscaling.x-k8s.io or check-capacity.autoscaling.x-k8s.io"
        ],
        id="gke-class-cannot-scale-a-machineset",
    ),
]


def test_base_openshift_gpu_config_is_valid_without_warnings() -> None:
    stack = load_stack(ocp_config())
    assert stack.warnings == []
    assert [f.obj.name for f in stack.kueue.resource_flavors] == ["default-flavor", "a10g"]


@pytest.mark.parametrize(("changes", "want_messages"), RULES)
def test_openshift_gpu_rule_rejects_a_violating_config_with_a_pinned_message(
    changes: dict[str, Any], want_messages: list[str]
) -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(ocp_with(**changes))
    assert [str(issue) for issue in caught.value.issues] == want_messages


def test_every_openshift_gpu_error_is_reported_at_once() -> None:
    changes = {P + "minReplicas": 1, P + "aws__zone": "us-west-2a", "target__featureSet": "Default"}
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(ocp_with(**changes))
    assert sorted(i.path for i in caught.value.errors) == [
        "batchplane:target.featureSet",
        "batchplane:target.gpuPools[0].aws.zone",
        "batchplane:target.gpuPools[0].minReplicas",
    ]


WARNINGS = [
    pytest.param(
        {"target__openshiftVersion": DELETE, "target__featureSet": DELETE, "target__gpuOperator": DELETE},
        [
            "warning: batchplane:target.openshiftVersion: not set: the cluster must run OpenShift 4.21 or "
            "later, the first OpenShift release with ProvisioningRequest support in its Cluster Autoscaler "
            '(gpuPools[0] "a10g"); set openshiftVersion to check it at plan time',
            "warning: batchplane:target.featureSet: not set: ProvisioningRequests need the "
            'ProvisioningRequestAvailable feature gate (gpuPools[0] "a10g"), enabled by the cluster\'s '
            "FeatureGate featureSet DevPreviewNoUpgrade; set featureSet to check it at plan time",
            "warning: batchplane:target.gpuOperator.install: false: GPU pool nodes advertise nvidia.com/gpu only "
            "once Node Feature Discovery and the NVIDIA GPU Operator run; install them yourself or set "
            "install: true",
        ],
        id="unchecked-prerequisites",
    ),
    pytest.param(
        {"target__clusterAutoscaler__create": False},
        [
            "warning: batchplane:target.clusterAutoscaler.create: false: the cluster's ClusterAutoscaler "
            "default must list resourceLimits.gpus nvidia-a10g max ≥ 4, or the autoscaler stops adding GPU "
            "machines below the pools' maxima"
        ],
        id="cluster-autoscaler-owned-elsewhere",
    ),
    pytest.param(
        {P + "provisioning": "check-capacity"},
        [
            "warning: batchplane:target.gpuPools[0].minReplicas: 0 with provisioning: check-capacity: the "
            "check never adds machines, so it passes only while other pods keep machines of this pool up; use "
            "provisioning: atomic or raise minReplicas"
        ],
        id="check-capacity-from-zero",
    ),
    pytest.param(
        {P + "provisioning": "none", P + "minReplicas": 1, "target__openshiftVersion": "4.16"},
        [],
        id="ungated-pool-needs-no-provisioning-prerequisites",
    ),
    pytest.param({"target__openshiftVersion": "5.0"}, [], id="openshift-5-is-past-the-floor"),
    pytest.param(
        {"target__openshiftVersion": "5.3", "target__featureSet": "Default"},
        [
            "warning: batchplane:target.featureSet: Default does not enable ProvisioningRequestAvailable in any "
            "OpenShift release through 5.2 (ProvisioningRequests need the ProvisioningRequestAvailable feature "
            'gate (gpuPools[0] "a10g"); DevPreviewNoUpgrade do); not known for OpenShift 5.3: '
            "pulumi up's feature-gate gate and preflight read the cluster's FeatureGate"
        ],
        id="a-release-newer-than-the-sources-read-is-decided-by-the-cluster",
    ),
    pytest.param(
        {"target__openshiftVersion": DELETE, "target__featureSet": "Default"},
        [
            "warning: batchplane:target.openshiftVersion: not set: the cluster must run OpenShift 4.21 or "
            "later, the first OpenShift release with ProvisioningRequest support in its Cluster Autoscaler "
            '(gpuPools[0] "a10g"); set openshiftVersion to check it at plan time',
            "warning: batchplane:target.featureSet: Default does not enable ProvisioningRequestAvailable in any "
            "OpenShift release through 5.2 (ProvisioningRequests need the ProvisioningRequestAvailable feature "
            'gate (gpuPools[0] "a10g"); DevPreviewNoUpgrade do); not known for an unset '
            "openshiftVersion: pulumi up's feature-gate gate and preflight read the cluster's FeatureGate",
        ],
        id="an-unknown-release-is-decided-by-the-cluster",
    ),
    pytest.param({"target__openshiftVersion": "4.21.7"}, [], id="a-patch-release-of-the-floor"),
]


@pytest.mark.parametrize(("changes", "want"), WARNINGS)
def test_what_cannot_be_checked_at_plan_time_is_a_pinned_warning(
    changes: dict[str, Any], want: list[str]
) -> None:
    assert [str(w) for w in load_stack(ocp_with(**changes)).warnings] == want


TEMPLATE_FILES = [
    pytest.param("", 'cannot read "{path}" (from {base})', id="missing"),
    pytest.param(
        "a: [",
        "\"{path}\" is not valid YAML (line 1, column 5): expected the node content, but found '<stream end>'",
        id="not-yaml",
    ),
    pytest.param(
        b"\x7fELF\x02\x01\x01\x00\xff", '"{path}" is not UTF-8 text (byte 8: invalid start byte)', id="binary"
    ),
    pytest.param(
        "a: " + "[" * 65 + "]" * 65, '"{path}": nested deeper than 64 levels at line 1, column 67', id="deep"
    ),
    pytest.param(
        "a: &a [x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{c}: &{c} [{', '.join(['*' + p] * 8)}]\n" for p, c in zip("abcdef", "bcdefg", strict=True)
        ),
        '"{path}": aliases expand to more than 200000 values (at line 6, column 4)',
        id="alias-bomb",
    ),
    pytest.param(
        "apiVersion: v1\nkind: ConfigMap\n",
        '"{path}" is not a machine.openshift.io/v1beta1 MachineSet',
        id="not-a-machineset",
    ),
    pytest.param(
        "apiVersion: machine.openshift.io/v1beta1\nkind: MachineSet\nspec: {}\n",
        '"{path}" has no spec.template.spec.providerSpec.value',
        id="no-provider-spec",
    ),
]


@pytest.mark.parametrize(("content", "want"), TEMPLATE_FILES)
def test_unusable_machineset_file_is_reported_at_the_template_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str | bytes, want: str
) -> None:
    monkeypatch.chdir(tmp_path)
    if content:
        (tmp_path / "ms.yaml").write_bytes(content if isinstance(content, bytes) else content.encode())
    changes = {P + "aws": DELETE, **SHAPE, P + "template": {"path": "ms.yaml"}}
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(ocp_with(**changes))
    message = want.format(path="ms.yaml", base=tmp_path)
    assert [str(i) for i in caught.value.errors] == [f"{PATH}.template.path: {message}"]


def test_machineset_file_of_another_cluster_is_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ms.yaml").write_text(
        "apiVersion: machine.openshift.io/v1beta1\nkind: MachineSet\n"
        "metadata: {labels: {machine.openshift.io/cluster-api-cluster: other-1a2b3}}\n"
        "spec: {template: {spec: {providerSpec: {value: {kind: GCPMachineProviderSpec}}}}}\n"
    )
    changes = {P + "aws": DELETE, **SHAPE, P + "template": {"path": "ms.yaml"}}
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(ocp_with(**changes))
    assert [str(i) for i in caught.value.errors] == [
        f"{PATH}.template.path: the MachineSet is labelled machine.openshift.io/cluster-api-cluster: "
        "other-1a2b3, but target.infrastructureId is ocp-7x2kq"
    ]

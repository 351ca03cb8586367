"""CrdCatalog.validate against the real upstream CRDs: samples pass, wrong objects fail with exact issues."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.quantity import QUANTITY_PATTERN
from tests.support.crdcheck import CrdCatalog, SchemaIssue
from tests.support.crdcheck.catalog import LABEL_MESSAGE, RULES_NOT_CHECKED, SUBDOMAIN_MESSAGE

from .conftest import (
    KUEUE,
    cluster_queue,
    local_queue,
    messages,
    provisioning_request_config,
    resource_flavor,
    sample_objects,
)

NOT_CHECKED = ("", RULES_NOT_CHECKED, "cel")
KUEUE_SAMPLES = [
    (name, obj) for name, obj in sample_objects("kueue") if obj["apiVersion"].startswith("kueue")
]
OPERATOR_GROUPS = ("ray.io/", "kubeflow.org/", "workload.codeflare.dev/")
OTHER_SAMPLES = [
    (f"{folder}/{name}", obj)
    for folder in ("kuberay", "training-operator", "appwrapper")
    for name, obj in sample_objects(folder)
    if obj["apiVersion"].startswith(OPERATOR_GROUPS)
]


def test_kueue_samples_include_every_object_kind_we_render() -> None:
    kinds = {obj["kind"] for _, obj in KUEUE_SAMPLES}
    assert kinds == {
        "AdmissionCheck",
        "ClusterQueue",
        "LocalQueue",
        "ProvisioningRequestConfig",
        "ResourceFlavor",
        "Topology",
    }


@pytest.mark.parametrize(("name", "obj"), KUEUE_SAMPLES, ids=[name for name, _ in KUEUE_SAMPLES])
def test_kueue_sample_is_valid(catalog: CrdCatalog, name: str, obj: dict[str, Any]) -> None:
    assert catalog.validate(obj) == []


def test_outdated_admission_check_controller_name_is_still_schema_valid(catalog: CrdCatalog) -> None:
    obj = next(o for n, o in KUEUE_SAMPLES if n.startswith("sample-admission-check.yaml#0"))
    assert obj["spec"]["controllerName"] == "ProvisioningRequestController"
    assert catalog.validate(obj) == []


@pytest.mark.parametrize(("name", "obj"), OTHER_SAMPLES, ids=[name for name, _ in OTHER_SAMPLES])
def test_operator_sample_is_valid_when_applied_to_a_namespace(
    catalog: CrdCatalog, name: str, obj: dict[str, Any]
) -> None:
    assert catalog.validate(obj, default_namespace="default") == []


def test_operator_samples_cover_rayjob_raycluster_pytorchjob_and_appwrapper() -> None:
    assert {obj["kind"] for _, obj in OTHER_SAMPLES} >= {"RayJob", "RayCluster", "PyTorchJob", "AppWrapper"}


def _with(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """Set ``value`` at a dotted path (``[i]`` for list items) of ``obj``; returns ``obj``."""
    parts = path.replace("[", ".[").split(".")
    node: Any = obj
    for part in parts[:-1]:
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    last = parts[-1]
    if last.startswith("["):
        node[int(last[1:-1])] = value
    else:
        node[last] = value
    return obj


FLAVOR = "spec.resourceGroups[0].flavors[0]"
_SCHEMA_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str, str]]]] = [
    (
        "bad-quantity-pattern",
        _with(cluster_queue(), f"{FLAVOR}.resources[1].nominalQuota", "36 GiB"),
        [
            (
                f"{FLAVOR}.resources[1].nominalQuota",
                f"""Invalid value: "36 GiB": should match '{QUANTITY_PATTERN}'""",
                "schema",
            )
        ],
    ),
    (
        "unknown-field-in-flavor",
        _with(cluster_queue(), f"{FLAVOR}.quota", 9),
        [(f"{FLAVOR}.quota", 'unknown field "quota"', "schema")],
    ),
    (
        "unknown-top-level-spec-field",
        cluster_queue(cohort="team"),
        [("spec.cohort", 'unknown field "cohort"', "schema")],
    ),
    (
        "missing-required-nominal-quota",
        _with(cluster_queue(), f"{FLAVOR}.resources[1]", {"name": "memory"}),
        [(f"{FLAVOR}.resources[1].nominalQuota", "Required value", "schema"), NOT_CHECKED],
    ),
    (
        "enum-queueing-strategy",
        cluster_queue(queueingStrategy="FIFO"),
        [
            (
                "spec.queueingStrategy",
                'Unsupported value: "FIFO": supported values: "StrictFIFO", "BestEffortFIFO"',
                "schema",
            ),
            NOT_CHECKED,
        ],
    ),
    (
        "max-items-resource-groups",
        cluster_queue(resourceGroups=[cluster_queue()["spec"]["resourceGroups"][0]] * 17),
        [("spec.resourceGroups", "Too many: 17: must have at most 16 items", "schema"), NOT_CHECKED],
    ),
    (
        "wrong-type-quantity",
        _with(cluster_queue(), f"{FLAVOR}.resources[0].nominalQuota", True),
        [
            (
                f"{FLAVOR}.resources[0].nominalQuota",
                "Invalid value: true: must be of type integer or string",
                "schema",
            ),
            NOT_CHECKED,
        ],
    ),
    (
        "max-length-cohort-name",
        cluster_queue(cohortName="a" * 254),
        [("spec.cohortName", "Too long: may not be more than 253 characters", "schema"), NOT_CHECKED],
    ),
    (
        "int32-out-of-range",
        cluster_queue(preemption={"borrowWithinCohort": {"policy": "Never", "maxPriorityThreshold": 2**31}}),
        [
            (
                "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
                "Invalid value: 2147483648: out of range for format int32",
                "schema",
            )
        ],
    ),
    (
        "date-time-format",
        resource_flavor(nodeTaints=[{"key": "spot", "effect": "NoSchedule", "timeAdded": "yesterday"}]),
        [
            (
                "spec.nodeTaints[0].timeAdded",
                'Invalid value: "yesterday": must be of format date-time',
                "schema",
            )
        ],
    ),
    (
        "re2-case-insensitive-pattern",
        {
            "apiVersion": KUEUE,
            "kind": "AdmissionCheck",
            "metadata": {"name": "prov"},
            "spec": {
                "controllerName": "kueue.x-k8s.io/provisioning-request",
                "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "Provisioning_Config", "name": "prov"},
            },
        },
        [
            (
                "spec.parameters.kind",
                "Invalid value: \"Provisioning_Config\": should match '^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$'",
                "schema",
            )
        ],
    ),
    (
        "map-value-too-long",
        provisioning_request_config(parameters={"region": "x" * 256}),
        # ProvisioningRequestConfig has no CEL rules, so there is no "rules were not checked" note.
        [("spec.parameters[region]", "Too long: may not be more than 255 characters", "schema")],
    ),
    (
        "set-with-duplicates",
        cluster_queue(
            admissionChecksStrategy={
                "admissionChecks": [{"name": "prov", "onFlavors": ["gpu", "spot", "gpu"]}]
            }
        ),
        [("spec.admissionChecksStrategy.admissionChecks[0].onFlavors[2]", 'Duplicate value: "gpu"', "list")],
    ),
    (
        "set-of-managed-resources-with-duplicates",
        provisioning_request_config(managedResources=["nvidia.com/gpu", "nvidia.com/gpu"]),
        [("spec.managedResources[1]", 'Duplicate value: "nvidia.com/gpu"', "list")],
    ),
    (
        "list-map-with-duplicate-keys",
        _with(cluster_queue(), f"{FLAVOR}.resources[1]", {"name": "cpu", "nominalQuota": 1}),
        [(f"{FLAVOR}.resources[1]", 'Duplicate value: {"name":"cpu"}', "list")],
    ),
    (
        "name-not-a-dns-subdomain",
        {**cluster_queue(), "metadata": {"name": "Cluster_Queue"}},
        [("metadata.name", f'Invalid value: "Cluster_Queue": {SUBDOMAIN_MESSAGE}', "metadata")],
    ),
    (
        "name-too-long",
        {**cluster_queue(), "metadata": {"name": "q" * 254}},
        [("metadata.name", f'Invalid value: "{"q" * 254}": must be no more than 253 characters', "metadata")],
    ),
    (
        "name-missing",
        {**cluster_queue(), "metadata": {}},
        [("metadata.name", "Required value: name or generateName is required", "metadata")],
    ),
    (
        "namespace-on-cluster-scoped-kind",
        {**cluster_queue(), "metadata": {"name": "cluster-queue", "namespace": "default"}},
        [("metadata.namespace", "Forbidden: ClusterQueue is cluster-scoped", "metadata")],
    ),
    (
        "namespace-missing-on-namespaced-kind",
        {**local_queue(), "metadata": {"name": "user-queue"}},
        [("metadata.namespace", "Required value: LocalQueue is namespaced", "metadata")],
    ),
    (
        "namespace-not-a-dns-label",
        {**local_queue(), "metadata": {"name": "user-queue", "namespace": "team.a"}},
        [("metadata.namespace", f'Invalid value: "team.a": {LABEL_MESSAGE}', "metadata")],
    ),
]


@pytest.mark.parametrize(("obj", "want"), [c[1:] for c in _SCHEMA_CASES], ids=[c[0] for c in _SCHEMA_CASES])
def test_wrong_object_is_reported_exactly(
    catalog: CrdCatalog, obj: dict[str, Any], want: list[tuple[str, str, str]]
) -> None:
    assert messages(catalog.validate(obj)) == want


def _taint(effect: str) -> dict[str, str]:
    return {"key": "spot", "value": "true", "effect": effect}


_TOPOLOGY_LEVELS = [
    {"nodeLabel": "kubernetes.io/hostname"},
    {"nodeLabel": "cloud.provider.com/topology-rack"},
]
_CEL_CASES: list[tuple[str, dict[str, Any], tuple[str, str]]] = [
    (
        "cq-borrowing-limit-without-cohort",
        _with(
            cluster_queue(), f"{FLAVOR}.resources[0]", {"name": "cpu", "nominalQuota": 9, "borrowingLimit": 1}
        ),
        ("spec", "borrowingLimit must be nil when cohort is empty"),
    ),
    (
        "cq-flavor-resources-differ-from-covered-resources",
        _with(cluster_queue(), f"{FLAVOR}.resources", [{"name": "cpu", "nominalQuota": 9}]),
        ("spec.resourceGroups[0]", "flavors must have the same number of resources as the coveredResources"),
    ),
    (
        "cq-reclaim-never-with-borrow-lower-priority",
        cluster_queue(
            preemption={"reclaimWithinCohort": "Never", "borrowWithinCohort": {"policy": "LowerPriority"}}
        ),
        ("spec.preemption", "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"),
    ),
    (
        "cq-fungibility-preference-without-try-next-flavor",
        cluster_queue(
            flavorFungibility={"whenCanBorrow": "MayStopSearch", "preference": "BorrowingOverPreemption"}
        ),
        (
            "spec.flavorFungibility",
            "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
        ),
    ),
    (
        "cohort-flavor-resources-differ-from-covered-resources",
        {
            "apiVersion": KUEUE,
            "kind": "Cohort",
            "metadata": {"name": "org"},
            "spec": {
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": 9}]}],
                    }
                ]
            },
        },
        ("spec.resourceGroups[0]", "flavors must have the same number of resources as the coveredResources"),
    ),
    (
        "rf-toleration-seconds-without-no-execute",
        resource_flavor(
            tolerations=[
                {"key": "spot", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 30}
            ]
        ),
        ("spec.tolerations", "effect must be 'NoExecute' when 'tolerationSeconds' is set"),
    ),
    (
        "rf-toleration-without-key-must-use-exists",
        resource_flavor(tolerations=[{"operator": "Equal", "value": "x", "effect": "NoSchedule"}]),
        (
            "spec.tolerations",
            "operator must be Exists when 'key' is empty, which means 'match all values and all keys'",
        ),
    ),
    (
        "rf-toleration-exists-with-value",
        resource_flavor(tolerations=[{"key": "spot", "operator": "Exists", "value": "true"}]),
        ("spec.tolerations", "a value must be empty when 'operator' is 'Exists'"),
    ),
    (
        "rf-taint-effect-invalid",
        resource_flavor(nodeTaints=[_taint("NoSchedule"), _taint("Sometimes")]),
        ("spec.nodeTaints", "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"),
    ),
    (
        "rf-topology-with-empty-node-labels",
        resource_flavor(topologyName="default", nodeLabels={}),
        ("spec", "at least one nodeLabel is required when topology is set"),
    ),
    (
        "rf-topology-without-node-labels-is-an-evaluation-error",
        resource_flavor(topologyName="default"),
        (
            "spec",
            "no such key: nodeLabels evaluating rule: "
            "at least one nodeLabel is required when topology is set",
        ),
    ),
    (
        "topology-hostname-not-lowest-level",
        {
            "apiVersion": KUEUE,
            "kind": "Topology",
            "metadata": {"name": "default"},
            "spec": {"levels": _TOPOLOGY_LEVELS},
        },
        ("spec.levels", "the kubernetes.io/hostname label can only be used at the lowest level of topology"),
    ),
    (
        "topology-duplicate-levels",
        {
            "apiVersion": KUEUE,
            "kind": "Topology",
            "metadata": {"name": "default"},
            "spec": {"levels": [{"nodeLabel": "rack"}, {"nodeLabel": "rack"}]},
        },
        ("spec.levels", "must be unique"),
    ),
    (
        "multikueue-cluster-with-two-sources",
        {
            "apiVersion": KUEUE,
            "kind": "MultiKueueCluster",
            "metadata": {"name": "worker-1"},
            "spec": {
                "clusterSource": {
                    "kubeConfig": {"location": "worker-1-secret"},
                    "clusterProfileRef": {"name": "worker-1"},
                }
            },
        },
        ("spec.clusterSource", "exactly one of the fields in [kubeConfig clusterProfileRef] must be set"),
    ),
]


@pytest.mark.parametrize(("obj", "want"), [c[1:] for c in _CEL_CASES], ids=[c[0] for c in _CEL_CASES])
def test_kueue_cel_rule_violation_is_reported_at_its_location(
    catalog: CrdCatalog, obj: dict[str, Any], want: tuple[str, str]
) -> None:
    assert catalog.validate(obj) == [SchemaIssue(want[0], want[1], "cel")]


def test_workload_min_count_above_count_violates_the_pod_set_rule(catalog: CrdCatalog) -> None:
    template = {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}
    workload = {
        "apiVersion": KUEUE,
        "kind": "Workload",
        "metadata": {"name": "job-1", "namespace": "team-a"},
        "spec": {"podSets": [{"name": "main", "count": 2, "minCount": 3, "template": template}]},
    }
    assert messages(catalog.validate(workload)) == [
        ("spec.podSets[0]", "minCount should be positive and less or equal to count", "cel")
    ]
    workload["spec"]["podSets"][0]["minCount"] = 2
    assert catalog.validate(workload) == []


def test_every_issue_of_a_ray_job_is_reported_with_its_full_path(catalog: CrdCatalog) -> None:
    ray_job = next(
        obj
        for name, obj in OTHER_SAMPLES
        if name == "kuberay/kueue-ray-job-sample.yaml#0 RayJob/rayjob-sample"
    )
    ray_job = {
        **ray_job,
        "spec": {**ray_job["spec"], "managedBy": "someone-else", "shutdownAfterJobFinishes": "yes"},
    }
    assert messages(catalog.validate(ray_job, default_namespace="default")) == [
        ("spec.shutdownAfterJobFinishes", 'Invalid value: "yes": must be of type boolean', "schema"),
        NOT_CHECKED,
    ]
    del ray_job["spec"]["shutdownAfterJobFinishes"]
    assert messages(catalog.validate(ray_job, default_namespace="default")) == [
        (
            "spec.managedBy",
            "the managedBy field value must be either "
            "'ray.io/kuberay-operator' or 'kueue.x-k8s.io/multikueue'",
            "cel",
        )
    ]


def test_local_queue_cluster_queue_change_fails_only_against_a_different_old_object(
    catalog: CrdCatalog,
) -> None:
    new = local_queue("cluster-queue-b")
    assert catalog.validate(new) == []
    assert catalog.validate(new, old=local_queue("cluster-queue-b")) == []
    assert catalog.validate(new, old=local_queue("cluster-queue-a")) == [
        SchemaIssue("spec.clusterQueue", "field is immutable", "cel")
    ]


def test_resource_flavor_topology_rules_apply_only_when_the_old_flavor_had_a_topology(
    catalog: CrdCatalog,
) -> None:
    new = resource_flavor(nodeLabels={"pool": "a"}, topologyName="rack-topology")
    assert catalog.validate(new, old=resource_flavor(nodeLabels={"pool": "b"})) == []
    assert messages(
        catalog.validate(new, old=resource_flavor(nodeLabels={"pool": "b"}, topologyName="old"))
    ) == [
        ("spec", "nodeLabels are immutable when topologyName is set", "cel"),
        ("spec", "topologyName is immutable when topologyName is set", "cel"),
    ]


def test_pytorch_job_queue_change_fails_only_against_a_different_old_object(catalog: CrdCatalog) -> None:
    # PyTorchJob spec.runPolicy.schedulingPolicy.queue is immutable (self == oldSelf).
    def job(queue: str) -> dict[str, Any]:
        obj = next(o for n, o in OTHER_SAMPLES if n.startswith("training-operator/simple.yaml"))
        policy = {"schedulingPolicy": {"queue": queue}}
        return {
            **obj,
            "metadata": {**obj["metadata"], "namespace": "ml"},
            "spec": {**obj["spec"], "runPolicy": policy},
        }

    assert catalog.validate(job("a"), old=job("a")) == []
    assert catalog.validate(job("b"), old=job("a")) == [
        SchemaIssue(
            "spec.runPolicy.schedulingPolicy.queue",
            "spec.runPolicy.schedulingPolicy.queue is immutable",
            "cel",
        )
    ]


def test_old_object_of_another_kind_is_refused(catalog: CrdCatalog) -> None:
    with pytest.raises(
        ValueError, match=r"^old object is a ClusterQueue \(kueue.x-k8s.io/v1beta2\), not a LocalQueue$"
    ):
        catalog.validate(local_queue(), old=cluster_queue())


def test_validate_does_not_modify_the_object(catalog: CrdCatalog) -> None:
    obj = cluster_queue()
    before = repr(obj)
    catalog.validate(obj)
    assert repr(obj) == before

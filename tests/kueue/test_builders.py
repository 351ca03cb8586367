"""The builders turn the typed config into exactly the Kueue objects a platform engineer expects."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.kueue import kueue_objects, namespaces
from batchplane.stack import load_stack, load_stack_file
from tests.config.factories import base_config, with_changes
from tests.conftest import template_path

MANAGED = {"app.kubernetes.io/managed-by": "batchplane"}


def objects_of(config: dict[str, Any]) -> list[dict[str, Any]]:
    stack = load_stack(config)
    return namespaces(stack.kueue) + kueue_objects(stack.kueue)


def by_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def test_openshift_ai_template_renders_the_documented_distributed_workloads_setup() -> None:
    stack = load_stack_file(template_path("openshift-ai"))
    objs = namespaces(stack.kueue) + kueue_objects(stack.kueue)
    # target kind openshift: tenant namespaces opt in to the Red Hat build of Kueue's webhooks.
    assert objs == [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "team-a", "labels": {**MANAGED, "kueue.openshift.io/managed": "true"}},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "default-flavor", "labels": MANAGED},
            "spec": {},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "cluster-queue", "labels": MANAGED},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory", "pods", "nvidia.com/gpu"],
                        "flavors": [
                            {
                                "name": "default-flavor",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": "9"},
                                    {"name": "memory", "nominalQuota": "36Gi"},
                                    {"name": "pods", "nominalQuota": "5"},
                                    {"name": "nvidia.com/gpu", "nominalQuota": "5"},
                                ],
                            }
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {
                "name": "team-a-queue",
                "namespace": "team-a",
                "labels": MANAGED,
                "annotations": {"kueue.x-k8s.io/default-queue": "true"},
            },
            "spec": {"clusterQueue": "cluster-queue"},
        },
    ]


def test_gke_dws_template_wires_the_provisioning_admission_check() -> None:
    stack = load_stack_file(template_path("gke-dws"))
    objs = kueue_objects(stack.kueue)
    assert [o["kind"] for o in objs] == [
        "ResourceFlavor",
        "ResourceFlavor",
        "ProvisioningRequestConfig",
        "AdmissionCheck",
        "ClusterQueue",
        "LocalQueue",
    ]
    flavor, prc, check, cq = objs[1], objs[2], objs[3], objs[4]
    # The GPU flavor is derived from target.gpuPools[0] (the queued L4 pool).
    assert flavor["metadata"]["name"] == "gpu-node-pool"
    assert flavor["spec"]["nodeLabels"] == {"cloud.google.com/gke-nodepool": "gpu-node-pool"}
    assert prc["spec"] == {
        "provisioningClassName": "queued-provisioning.gke.io",
        "managedResources": ["nvidia.com/gpu"],
        "podSetMergePolicy": "IdenticalWorkloadSchedulingRequirements",
    }
    assert check["spec"] == {
        "controllerName": "kueue.x-k8s.io/provisioning-request",
        "parameters": {
            "apiGroup": "kueue.x-k8s.io",
            "kind": "ProvisioningRequestConfig",
            "name": "rayjob-gpu-config",
        },
    }
    # The hand-written check already covers the queued flavor: nothing is generated on top.
    assert cq["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "rayjob-gpu", "onFlavors": ["gpu-node-pool"]}]
    }
    gpu = cq["spec"]["resourceGroups"][0]["flavors"][1]["resources"][2]
    assert gpu == {"name": "nvidia.com/gpu", "nominalQuota": "10"}
    # LocalQueue in the built-in `default` namespace: no Namespace object is created for it.
    assert namespaces(stack.kueue) == []


@pytest.mark.parametrize(
    ("api_version", "want_cohort_key"),
    [("kueue.x-k8s.io/v1beta2", "cohortName"), ("kueue.x-k8s.io/v1beta1", "cohort")],
    ids=["v1beta2-cohortName", "v1beta1-cohort"],
)
def test_cluster_queue_cohort_field_follows_the_emitted_api_version(
    api_version: str, want_cohort_key: str
) -> None:
    objs = objects_of(with_changes(kueue__apiVersion=api_version))
    (cq,) = by_kind(objs, "ClusterQueue")
    assert cq["apiVersion"] == api_version
    assert cq["spec"][want_cohort_key] == "co"
    (other_key,) = {"cohort", "cohortName"} - {want_cohort_key}
    assert other_key not in cq["spec"]


def test_omitted_optional_fields_are_left_to_kueue_defaults() -> None:
    (cq,) = by_kind(objects_of(base_config()), "ClusterQueue")
    assert set(cq["spec"]) == {"cohortName", "namespaceSelector", "resourceGroups"}


def test_preemption_and_admission_check_flavors_are_emitted_in_camel_case() -> None:
    cq = "kueue__clusterQueues__0__"
    config = with_changes(
        kueue__admissionChecks=[{"name": "ac", "controllerName": "example.com/check"}],
        **{
            cq + "preemption": {
                "reclaimWithinCohort": "Any",
                "borrowWithinCohort": {"policy": "LowerPriority"},
            },
            cq + "admissionChecks": [{"name": "ac", "onFlavors": ["f1"]}],
            cq + "queueingStrategy": "StrictFIFO",
        },
    )
    (obj,) = by_kind(objects_of(config), "ClusterQueue")
    assert obj["spec"]["preemption"] == {
        "reclaimWithinCohort": "Any",
        "borrowWithinCohort": {"policy": "LowerPriority"},
    }
    assert obj["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "ac", "onFlavors": ["f1"]}]
    }
    assert obj["spec"]["queueingStrategy"] == "StrictFIFO"


def test_named_default_queues_adds_a_local_queue_named_default_for_kueue_defaulting() -> None:
    objs = objects_of(with_changes(kueue__namedDefaultQueues=True))
    lqs = [
        (o["metadata"]["namespace"], o["metadata"]["name"], o["spec"]["clusterQueue"])
        for o in by_kind(objs, "LocalQueue")
    ]
    assert lqs == [("team-a", "lq", "cq"), ("team-a", "default", "cq")]


def test_named_default_queues_does_not_duplicate_an_existing_default_queue() -> None:
    config = with_changes(kueue__namedDefaultQueues=True, kueue__localQueues__0__name="default")
    assert len(by_kind(objects_of(config), "LocalQueue")) == 1


def test_teams_expand_into_cluster_queue_local_queue_and_namespace() -> None:
    config = with_changes(
        teams={
            "cohortName": "research",
            "preemption": {"reclaimWithinCohort": "Any"},
            "members": [
                {
                    "name": "vision",
                    "quotas": {
                        "f1": {"cpu": 8, "memory": "32Gi"},
                        "f2": {"nvidia.com/gpu": {"nominalQuota": 4, "borrowingLimit": 4}},
                    },
                }
            ],
        }
    )
    objs = objects_of(config)
    cq = next(o for o in by_kind(objs, "ClusterQueue") if o["metadata"]["name"] == "vision")
    assert cq["spec"] == {
        "cohortName": "research",
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "vision"}},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory"],
                "flavors": [
                    {
                        "name": "f1",
                        "resources": [
                            {"name": "cpu", "nominalQuota": "8"},
                            {"name": "memory", "nominalQuota": "32Gi"},
                        ],
                    }
                ],
            },
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": "f2",
                        "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "4", "borrowingLimit": "4"}],
                    }
                ],
            },
        ],
        "preemption": {"reclaimWithinCohort": "Any"},
    }
    lq = next(o for o in by_kind(objs, "LocalQueue") if o["metadata"]["namespace"] == "vision")
    assert lq["metadata"]["name"] == "default"
    assert lq["metadata"]["annotations"] == {"kueue.x-k8s.io/default-queue": "true"}
    assert [o["metadata"]["name"] for o in by_kind(objs, "Namespace")] == ["team-a", "vision"]


def test_namespace_settings_add_labels_and_create_false_skips_the_namespace() -> None:
    config = with_changes(
        kueue__namespaces=[
            {"name": "team-a", "labels": {"kueue.openshift.io/managed": "true"}},
            {"name": "shared", "create": False},
        ]
    )
    (ns,) = by_kind(objects_of(config), "Namespace")
    assert ns["metadata"]["labels"] == {**MANAGED, "kueue.openshift.io/managed": "true"}


def test_workload_priority_class_has_top_level_value_and_description() -> None:
    config = with_changes(
        kueue__workloadPriorityClasses=[{"name": "high", "value": 1000, "description": "prod"}]
    )
    (wpc,) = by_kind(objects_of(config), "WorkloadPriorityClass")
    assert wpc == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": "high", "labels": MANAGED},
        "value": 1000,
        "description": "prod",
    }


def test_team_flavors_follow_declaration_order_not_the_quotas_map_order() -> None:
    # The Pulumi CLI passes object config as JSON with sorted keys; the expansion must not care.
    def team_cq(quotas: dict[str, Any]) -> dict[str, Any]:
        config = with_changes(
            kueue__resourceFlavors=[{"name": "zeta"}, {"name": "alpha"}],
            kueue__clusterQueues__0__resourceGroups__0__flavors__0__name="zeta",
            teams={"members": [{"name": "t", "quotas": quotas}]},
        )
        return next(o for o in by_kind(objects_of(config), "ClusterQueue") if o["metadata"]["name"] == "t")

    in_yaml_order = team_cq({"zeta": {"memory": "1Gi", "cpu": 1}, "alpha": {"memory": "2Gi", "cpu": 2}})
    sorted_keys = team_cq({"alpha": {"cpu": 2, "memory": "2Gi"}, "zeta": {"cpu": 1, "memory": "1Gi"}})
    assert in_yaml_order == sorted_keys
    (group,) = in_yaml_order["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory"]
    assert [f["name"] for f in group["flavors"]] == ["zeta", "alpha"]  # declared order: zeta first

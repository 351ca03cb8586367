"""Every Kueue object Batchplane emits passes the real Kueue v0.19.2 CRD schema and CEL rules.

The check is the one in :mod:`tests.support.crdcheck` (OpenAPI via jsonschema Draft 2020-12 after
CRD defaulting, ``x-kubernetes-validations`` via CEL). A deliberately wrong object proves it can fail.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.kueue import kueue_objects
from batchplane.multikueue import with_multikueue
from batchplane.offline import load_stack_file as read_stack_config
from batchplane.stack import load_stack, load_stack_file
from tests.conftest import SHARED, TEMPLATE_NAMES, template_path
from tests.support.crdcheck import CrdCatalog


@pytest.fixture(scope="module")
def kueue_crds() -> CrdCatalog:
    return CrdCatalog.load(SHARED / "crds" / "kueue" / "v0.19.2")


def every_field_config(api_version: str) -> dict[str, Any]:
    """A stack that sets every Kueue field Batchplane supports at least once."""
    gpu = [{"name": "nvidia.com/gpu", "nominalQuota": 8, "borrowingLimit": 8, "lendingLimit": 4}]
    return {
        "batchplane:target": {"kind": "kind"},
        "batchplane:kueue": {
            "apiVersion": api_version,
            "namedDefaultQueues": True,
            "topologies": [
                {
                    "name": "dc",
                    "levels": [
                        {"nodeLabel": "cloud.google.com/gce-topology-block"},
                        {"nodeLabel": "kubernetes.io/hostname"},
                    ],
                }
            ],
            "resourceFlavors": [
                {"name": "cpu-flavor"},
                {
                    "name": "h100",
                    "nodeLabels": {"cloud.google.com/gke-nodepool": "h100"},
                    "nodeTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
                    "tolerations": [
                        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                        {
                            "key": "node.kubernetes.io/unreachable",
                            "operator": "Exists",
                            "effect": "NoExecute",
                            "tolerationSeconds": 30,
                        },
                    ],
                    "topologyName": "dc",
                },
            ],
            "cohorts": [
                {"name": "org"},
                {
                    "name": "research",
                    "parentName": "org",
                    "fairSharing": {"weight": 2},
                    "resourceGroups": [
                        {
                            "coveredResources": ["nvidia.com/gpu"],
                            "flavors": [{"name": "h100", "resources": gpu}],
                        }
                    ],
                },
            ],
            "workloadPriorityClasses": [
                {"name": "high", "value": 1000, "description": "production training"}
            ],
            "provisioningRequestConfigs": [
                {
                    "name": "dws",
                    "provisioningClassName": "queued-provisioning.gke.io",
                    "managedResources": ["nvidia.com/gpu"],
                    "parameters": {"maxRunDurationSeconds": "86400"},
                    "retryStrategy": {
                        "backoffLimitCount": 2,
                        "backoffBaseSeconds": 30,
                        "backoffMaxSeconds": 600,
                    },
                    "podSetMergePolicy": "IdenticalWorkloadSchedulingRequirements",
                    "podSetUpdates": {
                        "nodeSelector": [
                            {
                                "key": "cloud.google.com/gke-nodepool",
                                "valueFromProvisioningClassDetail": "nodepool",
                            }
                        ]
                    },
                }
            ],
            "admissionChecks": [
                {"name": "dws-check", "provisioningRequestConfig": "dws"},
                {"name": "other", "controllerName": "example.com/check"},
            ],
            "clusterQueues": [
                {
                    "name": "vision",
                    "cohortName": "research",
                    "namespaceSelector": {
                        "matchExpressions": [{"key": "team", "operator": "In", "values": ["vision"]}]
                    },
                    "queueingStrategy": "StrictFIFO",
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu", "memory"],
                            "flavors": [
                                {
                                    "name": "cpu-flavor",
                                    "resources": [
                                        {"name": "cpu", "nominalQuota": "32", "borrowingLimit": "8"},
                                        {"name": "memory", "nominalQuota": "128Gi", "lendingLimit": "64Gi"},
                                    ],
                                }
                            ],
                        },
                        {
                            "coveredResources": ["nvidia.com/gpu"],
                            "flavors": [{"name": "h100", "resources": gpu}],
                        },
                    ],
                    "preemption": {
                        "reclaimWithinCohort": "LowerPriority",
                        "withinClusterQueue": "LowerPriority",
                        "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
                    },
                    "flavorFungibility": {
                        "whenCanBorrow": "TryNextFlavor",
                        "whenCanPreempt": "TryNextFlavor",
                        "preference": "BorrowingOverPreemption",
                    },
                    "admissionChecks": [{"name": "dws-check", "onFlavors": ["h100"]}, "other"],
                    "fairSharing": {"weight": "1.5"},
                    "stopPolicy": "None",
                }
            ],
            "namespaces": [{"name": "vision", "labels": {"team": "vision"}}],
            "localQueues": [
                {
                    "name": "training",
                    "namespace": "vision",
                    "clusterQueue": "vision",
                    "default": True,
                    "stopPolicy": "Hold",
                    "fairSharing": {"weight": 3},
                },
            ],
        },
        "batchplane:teams": {
            "cohortName": "research",
            "members": [{"name": "nlp", "quotas": {"cpu-flavor": {"cpu": 8, "memory": "32Gi"}}}],
        },
    }


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_every_template_emits_only_crd_valid_kueue_objects(template: str, kueue_crds: CrdCatalog) -> None:
    stack = load_stack_file(template_path(template))
    objs = kueue_objects(stack.kueue)
    assert objs, f"template {template} declares no Kueue objects"
    for obj in objs:
        assert kueue_crds.validate(obj) == [], f"{template}: {obj['kind']} {obj['metadata']['name']}"


API_VERSIONS = ["kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1"]


def template_objects(template: str, api_version: str) -> list[dict[str, Any]]:
    """Every Kueue object a template declares (the manager's MultiKueue objects and each declared worker's
    objects included) with ``batchplane:kueue.apiVersion`` set to ``api_version``."""
    raw = copy.deepcopy(read_stack_config(template_path(template)))
    raw.setdefault("batchplane:kueue", {})["apiVersion"] = api_version
    stack = load_stack(raw, template)
    out: list[dict[str, Any]] = []
    for s in (stack, *stack.workers.values()):
        out += with_multikueue(kueue_objects(s.kueue), s.config.multi_kueue, s.kueue.api_version)
    return out


#: Templates whose Kueue serves one API version only: OpenShift AI 2.x's embedded Kueue serves v1beta1.
ONE_API_VERSION = {"openshift-ai-2": "kueue.x-k8s.io/v1beta1"}


def renders(template: str, api_version: str) -> bool:
    return ONE_API_VERSION.get(template, api_version) == api_version


@pytest.mark.parametrize("api_version", API_VERSIONS, ids=["v1beta2", "v1beta1"])
@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_every_template_renders_objects_each_api_versions_schema_accepts(
    template: str, api_version: str, kueue_crds: CrdCatalog
) -> None:
    if not renders(template, api_version):  # the stack refuses the version its Kueue does not serve
        with pytest.raises(ConfigValidationError) as caught:
            template_objects(template, api_version)
        assert [i.path for i in caught.value.errors] == ["batchplane:kueue.apiVersion"]
        return
    objs = template_objects(template, api_version)
    assert {o["apiVersion"] for o in objs} == {api_version}
    problems = {f"{o['kind']}/{o['metadata']['name']}": kueue_crds.validate(o) for o in objs}
    assert {k: v for k, v in problems.items() if v} == {}


def test_the_templates_render_multikueue_objects_in_both_api_versions() -> None:
    # The MultiKueueCluster's kubeconfig moved from spec.kubeConfig (v1beta1) to spec.clusterSource (v1beta2).
    for api_version, spec_key in zip(API_VERSIONS, ["clusterSource", "kubeConfig"], strict=True):
        clusters = [
            o
            for t in TEMPLATE_NAMES
            if renders(t, api_version)
            for o in template_objects(t, api_version)
            if o["kind"] == "MultiKueueCluster"
        ]
        assert clusters, "no template declares MultiKueue workers"
        assert all(list(c["spec"]) == [spec_key] for c in clusters)


@pytest.mark.parametrize("api_version", API_VERSIONS, ids=["v1beta2", "v1beta1"])
def test_a_stack_using_every_field_emits_crd_valid_objects(api_version: str, kueue_crds: CrdCatalog) -> None:
    objs = kueue_objects(load_stack(every_field_config(api_version)).kueue)
    assert {o["kind"] for o in objs} == {
        "Topology",
        "ResourceFlavor",
        "Cohort",
        "WorkloadPriorityClass",
        "ProvisioningRequestConfig",
        "AdmissionCheck",
        "ClusterQueue",
        "LocalQueue",
    }
    problems = {f"{o['kind']}/{o['metadata']['name']}": kueue_crds.validate(o) for o in objs}
    assert {k: v for k, v in problems.items() if v} == {}


def test_a_wrong_object_is_rejected_by_the_same_check(kueue_crds: CrdCatalog) -> None:
    stack = load_stack_file(template_path("kind"))
    cq = copy.deepcopy(next(o for o in kueue_objects(stack.kueue) if o["kind"] == "ClusterQueue"))
    cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["borrowingLimit"] = (
        "1"  # no cohort: CEL rule
    )
    cq["spec"]["queueingStrategy"] = "FIFO"  # enum
    issues = kueue_crds.validate(cq)
    assert [(i.path, i.kind) for i in issues][:1] == [("spec.queueingStrategy", "schema")]
    del cq["spec"]["queueingStrategy"]
    assert [i.message for i in kueue_crds.validate(cq)] == ["borrowingLimit must be nil when cohort is empty"]

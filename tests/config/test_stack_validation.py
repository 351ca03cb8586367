"""Every way a stack config can be wrong gives an error naming its key path — all errors at once.

The corpus mirrors what the Kueue v0.19.2 CRDs (OpenAPI + CEL) and Kueue's validating webhooks
reject, plus Batchplane's cross-reference checks. Messages are pinned: they are the user interface.
"""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from tests.config.factories import DELETE, base_config, with_changes

CQ = "kueue__clusterQueues__0__"
RG = CQ + "resourceGroups__0__"
F0 = RG + "flavors__0__"
R0 = F0 + "resources__0__"
LQ = "kueue__localQueues__0__"
RF = "kueue__resourceFlavors__0__"

BAD_CONFIGS = [
    pytest.param(
        {"typo": 1},
        ["batchplane:typo: unknown key"],
        id="unknown-top-level-key",
    ),
    pytest.param(
        {CQ + "cohrt": "x"},
        ["batchplane:kueue.clusterQueues[0].cohrt: unknown key; did you mean `cohortName`?"],
        id="unknown-nested-key",
    ),
    pytest.param(
        {"target": DELETE},
        ["batchplane:target: required key is missing"],
        id="target-missing",
    ),
    pytest.param(
        {"target": {"kind": "eks"}},
        ["batchplane:target: unknown kind 'eks'; expected one of 'kind', 'existing', 'openshift', 'gke'"],
        id="target-unknown-kind",
    ),
    pytest.param(
        {"target": {"kind": "existing"}},
        ["batchplane:target.context: required key is missing"],
        id="existing-target-needs-context",
    ),
    pytest.param(
        {"environment": "prod"},
        ["batchplane:environment: \"prod\" is not allowed; expected 'dev', 'staging' or 'production'"],
        id="bad-environment",
    ),
    pytest.param(
        {R0 + "nominalQuota": "lots"},
        [
            'batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0].nominalQuota: "lots" is not a Kubernetes quantity'
        ],
        id="bad-quantity",
    ),
    pytest.param(
        {R0 + "nominalQuota": "1 Gi"},
        [
            'batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0].nominalQuota: "1 Gi" is not a Kubernetes quantity'
        ],
        id="lenient-quantity-rejected",
    ),
    pytest.param(
        {R0 + "nominalQuota": True},
        [
            "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0].nominalQuota: True is not a Kubernetes quantity"
        ],
        id="bool-is-not-quantity",
    ),
    pytest.param(
        {R0 + "nominalQuota": "-1"},
        [
            'batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0].nominalQuota: "-1" must be greater than or equal to 0'
        ],
        id="negative-quota",
    ),
    pytest.param(
        {CQ + "name": "Team_A"},
        [
            'batchplane:kueue.clusterQueues[0].name: "Team_A" is not a valid name: lower-case letters, digits, "-" and ".", starting and ending with a letter or digit (DNS-1123 subdomain)'
        ],
        id="uppercase-cq-name",
    ),
    pytest.param(
        {LQ + "name": "q" * 64},
        [
            'batchplane:kueue.localQueues[0].name: "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq" is longer than 63 characters (label values are at most 63); jobs name their LocalQueue in the kueue.x-k8s.io/queue-name label'
        ],
        id="long-localqueue-name-not-a-label-value",
    ),
    pytest.param(
        {LQ + "namespace": "team.a"},
        [
            'batchplane:kueue.localQueues[0].namespace: "team.a" is not a valid DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit'
        ],
        id="bad-namespace-name",
    ),
    pytest.param(
        {RG + "coveredResources": ["cpu", "mem ory"], F0 + "resources__1__name": "mem ory"},
        [
            'batchplane:kueue.clusterQueues[0].resourceGroups[0].coveredResources[1]: "mem ory" is not a qualified name: "[prefix/]name" where name is at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit',
            'batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[1].name: "mem ory" is not a qualified name: "[prefix/]name" where name is at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit',
        ],
        id="bad-resource-name",
    ),
    pytest.param(
        {F0 + "resources": [{"name": "memory", "nominalQuota": 1}, {"name": "cpu", "nominalQuota": 1}]},
        [
            'batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0].name: must be "cpu": resources must be listed in the same order as coveredResources (cpu, memory)',
            'batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[1].name: must be "memory": resources must be listed in the same order as coveredResources (cpu, memory)',
        ],
        id="resources-out-of-order",
    ),
    pytest.param(
        {F0 + "resources": [{"name": "cpu", "nominalQuota": 1}]},
        [
            "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources: flavors must have the same number of resources as the coveredResources (1 given, coveredResources has 2: cpu, memory)"
        ],
        id="flavor-resource-count-mismatch",
    ),
    pytest.param(
        {
            CQ + "resourceGroups__1": {
                "coveredResources": ["cpu"],
                "flavors": [{"name": "f2", "resources": [{"name": "cpu", "nominalQuota": 1}]}],
            }
        },
        [
            'batchplane:kueue.clusterQueues[0].resourceGroups[1].coveredResources[0]: resource "cpu" is already covered in resourceGroups[0]; a resource may be in only one resource group'
        ],
        id="resource-in-two-groups",
    ),
    pytest.param(
        {
            CQ + "resourceGroups__1": {
                "coveredResources": ["pods"],
                "flavors": [{"name": "f1", "resources": [{"name": "pods", "nominalQuota": 1}]}],
            }
        },
        [
            'batchplane:kueue.clusterQueues[0].resourceGroups[1].flavors[0].name: flavor "f1" is already used in resourceGroups[0]; a flavor may be in only one resource group'
        ],
        id="flavor-in-two-groups",
    ),
    pytest.param(
        {CQ + "cohortName": DELETE, R0 + "borrowingLimit": 1},
        [
            "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0].borrowingLimit: borrowingLimit must be omitted for a ClusterQueue without cohortName: there is nobody to borrow from or lend to"
        ],
        id="borrowing-limit-without-cohort",
    ),
    pytest.param(
        {CQ + "cohortName": DELETE, R0 + "lendingLimit": 1},
        [
            "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0].lendingLimit: lendingLimit must be omitted for a ClusterQueue without cohortName: there is nobody to borrow from or lend to"
        ],
        id="lending-limit-without-cohort",
    ),
    pytest.param(
        {R0 + "lendingLimit": 5},
        [
            'batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0].lendingLimit: "5" must be less than or equal to nominalQuota "4"'
        ],
        id="lending-above-nominal",
    ),
    pytest.param(
        {F0 + "name": "f9"},
        [
            'batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].name: no ResourceFlavor "f9" in batchplane:kueue.resourceFlavors (defined: f1, f2); the ClusterQueue would stay inactive'
        ],
        id="unknown-flavor",
    ),
    pytest.param(
        {LQ + "clusterQueue": "nope"},
        ['batchplane:kueue.localQueues[0].clusterQueue: no ClusterQueue "nope" in this stack (defined: cq)'],
        id="unknown-cluster-queue",
    ),
    pytest.param(
        {CQ + "admissionChecks": ["nope"]},
        [
            'batchplane:kueue.clusterQueues[0].admissionChecks[0].name: no AdmissionCheck "nope" in batchplane:kueue.admissionChecks (defined: none)'
        ],
        id="unknown-admission-check",
    ),
    pytest.param(
        {
            "kueue__admissionChecks": [{"name": "ac", "controllerName": "example.com/x"}],
            CQ + "admissionChecks": [{"name": "ac", "onFlavors": ["f2"]}],
        },
        [
            'batchplane:kueue.clusterQueues[0].admissionChecks[0].onFlavors[0]: "f2" is not a flavor of ClusterQueue "cq" (its flavors: f1)'
        ],
        id="on-flavors-not-a-queue-flavor",
    ),
    pytest.param(
        {"kueue__admissionChecks": [{"name": "ac"}]},
        [
            "batchplane:kueue.admissionChecks[0]: controllerName is required (or give provisioningRequestConfig)"
        ],
        id="admission-check-needs-controller",
    ),
    pytest.param(
        {"kueue__admissionChecks": [{"name": "ac", "provisioningRequestConfig": "prc"}]},
        [
            'batchplane:kueue.admissionChecks[0].provisioningRequestConfig: no ProvisioningRequestConfig "prc" in batchplane:kueue.provisioningRequestConfigs (defined: none)'
        ],
        id="admission-check-unknown-prc",
    ),
    pytest.param(
        {
            "kueue__admissionChecks": [
                {
                    "name": "ac",
                    "provisioningRequestConfig": "prc",
                    "parameters": {
                        "apiGroup": "kueue.x-k8s.io",
                        "kind": "ProvisioningRequestConfig",
                        "name": "prc",
                    },
                }
            ]
        },
        [
            "batchplane:kueue.admissionChecks[0]: give either provisioningRequestConfig or parameters, not both"
        ],
        id="admission-check-both-ways",
    ),
    pytest.param(
        {CQ + "preemption": {"borrowWithinCohort": {"policy": "LowerPriority"}}},
        [
            "batchplane:kueue.clusterQueues[0].preemption: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never: borrowWithinCohort needs reclaimWithinCohort LowerPriority or Any"
        ],
        id="borrow-within-cohort-without-reclaim",
    ),
    pytest.param(
        {CQ + "flavorFungibility": {"preference": "BorrowingOverPreemption"}},
        [
            "batchplane:kueue.clusterQueues[0].flavorFungibility.preference: preference may only be set when whenCanBorrow and whenCanPreempt are both TryNextFlavor (whenCanBorrow defaults to MayStopSearch)"
        ],
        id="preference-without-try-next",
    ),
    pytest.param(
        {CQ + "queueingStrategy": "FIFO"},
        [
            "batchplane:kueue.clusterQueues[0].queueingStrategy: \"FIFO\" is not allowed; expected 'StrictFIFO' or 'BestEffortFIFO'"
        ],
        id="bad-queueing-strategy",
    ),
    pytest.param(
        {LQ + "stopPolicy": "Pause"},
        [
            "batchplane:kueue.localQueues[0].stopPolicy: \"Pause\" is not allowed; expected 'None', 'Hold' or 'HoldAndDrain'"
        ],
        id="bad-stop-policy",
    ),
    pytest.param(
        {
            "kueue__localQueues__1": {
                "name": "lq2",
                "namespace": "team-a",
                "clusterQueue": "cq",
                "default": True,
            }
        },
        [
            'batchplane:kueue.localQueues[1].default: namespace "team-a" already has a default LocalQueue "lq" (batchplane:kueue.localQueues[0])'
        ],
        id="two-defaults-in-namespace",
    ),
    pytest.param(
        {"kueue__localQueues__1": {"name": "lq", "namespace": "team-a", "clusterQueue": "cq"}},
        [
            'batchplane:kueue.localQueues[1].name: duplicate LocalQueue "lq" in namespace "team-a" (first defined at batchplane:kueue.localQueues[0])'
        ],
        id="duplicate-local-queue",
    ),
    pytest.param(
        {"kueue__resourceFlavors__1__name": "f1"},
        [
            'batchplane:kueue.resourceFlavors[1].name: duplicate ResourceFlavor name "f1" (first defined at batchplane:kueue.resourceFlavors[0])'
        ],
        id="duplicate-flavor-name",
    ),
    pytest.param(
        {CQ + "namespaceSelector": {"matchLabels": {"team": "b"}}},
        [
            'batchplane:kueue.localQueues[0].namespace: namespace "team-a" is not selected by the namespaceSelector of ClusterQueue "cq": its workloads would never be admitted'
        ],
        id="namespace-not-selected",
    ),
    pytest.param(
        {CQ + "namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "In"}]}},
        [
            "batchplane:kueue.clusterQueues[0].namespaceSelector.matchExpressions[0].values: values must be non-empty when operator is In",
            'batchplane:kueue.localQueues[0].namespace: namespace "team-a" is not selected by the namespaceSelector of ClusterQueue "cq": its workloads would never be admitted',
        ],
        id="selector-in-without-values",
    ),
    pytest.param(
        {RF + "tolerations": [{"operator": "Equal", "value": "x"}]},
        [
            "batchplane:kueue.resourceFlavors[0].tolerations[0].operator: operator must be Exists when key is empty, which means 'match all values and all keys'"
        ],
        id="toleration-empty-key-equal",
    ),
    pytest.param(
        {RF + "tolerations": [{"key": "k", "operator": "Exists", "value": "x"}]},
        [
            "batchplane:kueue.resourceFlavors[0].tolerations[0].value: value must be empty when operator is Exists"
        ],
        id="toleration-exists-with-value",
    ),
    pytest.param(
        {
            RF + "tolerations": [
                {"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}
            ]
        },
        [
            "batchplane:kueue.resourceFlavors[0].tolerations[0].tolerationSeconds: effect must be 'NoExecute' when tolerationSeconds is set"
        ],
        id="toleration-seconds-needs-noexecute",
    ),
    pytest.param(
        {
            RF + "nodeTaints": [
                {"key": "k", "effect": "NoSchedule"},
                {"key": "k", "value": "v", "effect": "NoSchedule"},
            ]
        },
        ['batchplane:kueue.resourceFlavors[0].nodeTaints[1]: duplicate taint key "k" with effect NoSchedule'],
        id="duplicate-taint",
    ),
    pytest.param(
        {RF + "nodeTaints": [{"key": "k", "effect": "NoRun"}]},
        [
            "batchplane:kueue.resourceFlavors[0].nodeTaints[0].effect: \"NoRun\" is not allowed; expected 'NoSchedule', 'PreferNoSchedule' or 'NoExecute'"
        ],
        id="bad-taint-effect",
    ),
    pytest.param(
        {RF + "nodeLabels": {f"l{i}": "v" for i in range(9)}},
        ["batchplane:kueue.resourceFlavors[0].nodeLabels: at most 8 entries allowed, 9 given"],
        id="too-many-node-labels",
    ),
    pytest.param(
        {
            "kueue__topologies": [{"name": "t", "levels": [{"nodeLabel": "kubernetes.io/hostname"}]}],
            RF + "topologyName": "t",
        },
        [
            "batchplane:kueue.resourceFlavors[0].nodeLabels: at least one nodeLabel is required when topologyName is set"
        ],
        id="topology-without-labels",
    ),
    pytest.param(
        {
            "kueue__topologies": [
                {"name": "t", "levels": [{"nodeLabel": "kubernetes.io/hostname"}, {"nodeLabel": "rack"}]}
            ]
        },
        [
            "batchplane:kueue.topologies[0].levels[0].nodeLabel: kubernetes.io/hostname may be used only as the last level"
        ],
        id="hostname-level-not-last",
    ),
    pytest.param(
        {"kueue__cohorts": [{"name": "a", "parentName": "b"}, {"name": "b", "parentName": "a"}]},
        ["batchplane:kueue.cohorts[0].parentName: cohort parents form a cycle: a → b → a"],
        id="cohort-cycle",
    ),
    pytest.param(
        {
            "kueue__cohorts": [
                {
                    "name": "a",
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu"],
                            "flavors": [
                                {
                                    "name": "f1",
                                    "resources": [{"name": "cpu", "nominalQuota": 1, "lendingLimit": 1}],
                                }
                            ],
                        }
                    ],
                }
            ]
        },
        [
            "batchplane:kueue.cohorts[0].resourceGroups[0].flavors[0].resources[0].lendingLimit: lendingLimit must be omitted for a Cohort without parentName: there is nobody to borrow from or lend to"
        ],
        id="cohort-limits-without-parent",
    ),
    pytest.param(
        {"kueue__workloadPriorityClasses": [{"name": "p", "value": 2**31}]},
        [
            "batchplane:kueue.workloadPriorityClasses[0].value: 2147483648: Input should be less than or equal to 2147483647"
        ],
        id="priority-class-value-not-int32",
    ),
    pytest.param(
        {
            "kueue__provisioningRequestConfigs": [
                {"name": "prc", "provisioningClassName": "Queued_Provisioning"}
            ]
        },
        [
            'batchplane:kueue.provisioningRequestConfigs[0].provisioningClassName: "Queued_Provisioning" is not a valid name: lower-case letters, digits, "-" and ".", starting and ending with a letter or digit (DNS-1123 subdomain)'
        ],
        id="prc-bad-class-name",
    ),
    pytest.param(
        {
            "kueue__provisioningRequestConfigs": [
                {
                    "name": "prc",
                    "provisioningClassName": "x.io",
                    "podSetUpdates": {
                        "nodeSelector": [
                            {"key": "k", "valueFromProvisioningClassDetail": "a"},
                            {"key": "k", "valueFromProvisioningClassDetail": "b"},
                        ]
                    },
                }
            ]
        },
        [
            'batchplane:kueue.provisioningRequestConfigs[0].podSetUpdates.nodeSelector[1].key: duplicate key "k"'
        ],
        id="prc-duplicate-node-selector-key",
    ),
    pytest.param(
        {
            "kueue__provisioningRequestConfigs": [
                {"name": "prc", "provisioningClassName": "x.io", "podSetMergePolicy": "Merge"}
            ]
        },
        [
            "batchplane:kueue.provisioningRequestConfigs[0].podSetMergePolicy: \"Merge\" is not allowed; expected 'IdenticalPodTemplates' or 'IdenticalWorkloadSchedulingRequirements'"
        ],
        id="prc-bad-merge-policy",
    ),
    pytest.param(
        {CQ + "fairSharing": {"weight": "1n"}},
        [
            'batchplane:kueue.clusterQueues[0].fairSharing.weight: "1n" is too small: use 0 or a weight above 1e-9'
        ],
        id="fair-sharing-weight-tiny",
    ),
    pytest.param(
        {"kueue__apiVersion": "kueue.x-k8s.io/v1alpha1"},
        [
            "batchplane:kueue.apiVersion: \"kueue.x-k8s.io/v1alpha1\" is not allowed; expected 'kueue.x-k8s.io/v1beta2' or 'kueue.x-k8s.io/v1beta1'"
        ],
        id="bad-api-version",
    ),
    pytest.param(
        {
            "teams": {
                "members": [{"name": "t1", "quotas": {"f1": {"cpu": {"nominalQuota": 1, "lendingLimit": 2}}}}]
            }
        },
        [
            'batchplane:teams.members[0] (generated ClusterQueue "t1").resourceGroups[0].flavors[0].resources[0].lendingLimit: "2" must be less than or equal to nominalQuota "1"'
        ],
        id="team-lending-above-nominal",
    ),
    pytest.param(
        {"teams": {"members": [{"name": "t1", "quotas": {"gpu-flavor": {"nvidia.com/gpu": 1}}}]}},
        [
            'batchplane:teams.members[0] (generated ClusterQueue "t1").resourceGroups[0].flavors[0].name: no ResourceFlavor "gpu-flavor" in batchplane:kueue.resourceFlavors (defined: f1, f2); the ClusterQueue would stay inactive'
        ],
        id="team-unknown-flavor",
    ),
    pytest.param(
        {"teams": {"members": [{"name": "t1"}]}},
        ["batchplane:teams.members[0].quotas: required key is missing"],
        id="team-needs-quotas",
    ),
]


def test_base_config_is_valid() -> None:
    stack = load_stack(base_config())
    assert [cq.obj.name for cq in stack.kueue.cluster_queues] == ["cq"]


@pytest.mark.parametrize(("changes", "want_messages"), BAD_CONFIGS)
def test_bad_config_is_rejected_with_pinned_messages(
    changes: dict[str, Any], want_messages: list[str]
) -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(with_changes(**changes))
    assert [str(issue) for issue in caught.value.issues] == want_messages


def test_all_errors_are_reported_at_once_across_sections() -> None:
    changes = {"typo": 1, R0 + "nominalQuota": "lots", LQ + "namespace": "Team"}
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(with_changes(**changes))
    assert sorted(i.path for i in caught.value.issues) == [
        "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0].nominalQuota",
        "batchplane:kueue.localQueues[0].namespace",
        "batchplane:typo",
    ]


def test_semantic_errors_are_all_reported_together() -> None:
    changes = {F0 + "name": "f9", LQ + "clusterQueue": "nope", R0 + "lendingLimit": 5}
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(with_changes(**changes))
    assert len(caught.value.errors) == 3


def test_error_summary_counts_errors_and_lists_each_line() -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(with_changes(typo=1))
    assert str(caught.value) == "1 error(s) in stack config:\nbatchplane:typo: unknown key"

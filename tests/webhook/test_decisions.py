"""Validating and mutating decisions: allow / deny / patch with pinned messages, on the shared samples."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.webhook.decisions import Decider, escape_pointer, label_patch
from tests.webhook.conftest import job, labeled, one_queue, policy_from, sample, stack_policy


@pytest.fixture(scope="module")
def kind() -> Decider:
    return Decider(stack_policy("kind"))


@pytest.fixture(scope="module")
def openshift() -> Decider:
    return Decider(stack_policy("openshift-ai"))


@pytest.fixture(scope="module")
def dws() -> Decider:
    return Decider(stack_policy("gke-dws"))


SAMPLE_VERDICTS = [
    ("kueue/sample-job.yaml", "default", True, "ok", ""),
    (
        "kueue/sample-job.yaml",
        "gpu-queue",
        False,
        "unknown-local-queue",
        'Job "team-a/sample-job-": kueue.x-k8s.io/queue-name: LocalQueue "gpu-queue" does not exist in namespace '
        'team-a (LocalQueues there: "default"); the workload would stay pending forever',
    ),
    (
        "kuberay/ray-job.sandbox.yaml",
        "default",
        False,
        "never-admissible",
        'RayJob "team-a/rayjob-sandbox": can never be admitted by ClusterQueue "cluster-queue" (LocalQueue '
        '"default"): PodSet "worker-group" needs cpu 8 (2 pods × 4), memory 24Gi (2 pods × 12Gi), but flavor '
        '"default-flavor" offers at most cpu 4 (nominal quota, no cohort)',
    ),
    (
        "kuberay/ray-job.sample.yaml",
        "default",
        False,
        "rayjob-shutdown",
        'RayJob "team-a/rayjob-sample": spec.shutdownAfterJobFinishes must be true for a RayJob queued by Kueue '
        "(otherwise its RayCluster keeps the quota after the job ends); set shutdownAfterJobFinishes: true",
    ),
    (
        "training-operator/pytorch_job_mnist_nccl.yaml",
        "default",
        False,
        "never-admissible",
        'PyTorchJob "team-a/pytorch-dist-mnist-nccl": can never be admitted by ClusterQueue "cluster-queue" '
        '(LocalQueue "default"): PodSet "master" requests nvidia.com/gpu 1, which no resource group of the '
        'ClusterQueue covers (covered: cpu, memory); PodSet "worker" requests nvidia.com/gpu 1, which no resource '
        "group of the ClusterQueue covers (covered: cpu, memory)",
    ),
    (
        "kuberay/ray-cluster.autoscaler.yaml",
        "default",
        False,
        "ray-autoscaling-not-elastic",
        'RayCluster "team-a/raycluster-autoscaler": enableInTreeAutoscaling needs the annotation '
        'kueue.x-k8s.io/elastic-job: "true" under Kueue (without it Kueue rejects the job or the cluster hangs '
        "suspended); add the annotation or disable autoscaling",
    ),
    ("kuberay/kueue-ray-job-autoscaling-sample.yaml", "default", True, "ok", ""),
    ("kuberay/ray-job.kueue-toy-sample.yaml", "default", True, "ok", ""),
    ("training-operator/kueue-sample-pytorchjob.yaml", "default", True, "ok", ""),
]


@pytest.mark.parametrize(
    ("path", "queue", "exp_allowed", "exp_reason", "exp_message"),
    SAMPLE_VERDICTS,
    ids=[f"{p.split('/')[1]}-{q}" for p, q, *_ in SAMPLE_VERDICTS],
)
def test_shared_samples_in_the_kind_stack_get_pinned_verdicts(
    kind: Decider, path: str, queue: str, exp_allowed: bool, exp_reason: str, exp_message: str
) -> None:
    decision = kind.validate(labeled(sample(path), queue, "team-a"), "team-a")
    assert (decision.allowed, decision.reason, decision.details) == (exp_allowed, exp_reason, exp_message)


def test_gpu_rayjob_whose_podsets_exceed_pod_quota_together_is_denied(openshift: Decider) -> None:
    decision = openshift.validate(
        labeled(sample("kuberay/ray-job.pytorch-image-classifier.yaml"), "team-a-queue", "team-a"), "team-a"
    )
    assert decision.details == (
        'RayJob "team-a/pytorch-image-classifier-": can never be admitted by ClusterQueue "cluster-queue" '
        '(LocalQueue "team-a-queue"): its PodSets (head, gpu-group, submitter) together need cpu 5500m, memory '
        "39267300Ki, pods 6, nvidia.com/gpu 4, and no split of them over the flavors fits (flavor "
        '"default-flavor" at most cpu 9, memory 36Gi, pods 5, nvidia.com/gpu 5)'
    )


def test_gpu_rayjob_on_the_dws_stack_with_mergeable_gpu_groups_is_allowed(dws: Decider) -> None:
    decision = dws.validate(
        labeled(sample("kuberay/ray-job.pytorch-image-classifier.yaml"), "user-queue", "default"), "default"
    )
    assert (decision.allowed, decision.reason) == (True, "ok")


def _dws_policy(merge: str | None, on_flavors: list[str] | None = None) -> Decider:
    prc: dict[str, Any] = {
        "name": "dws",
        "provisioningClassName": "queued-provisioning.gke.io",
        "managedResources": ["nvidia.com/gpu"],
    }
    if merge is not None:
        prc["podSetMergePolicy"] = merge
    check: dict[str, Any] = {"name": "dws-check"}
    if on_flavors is not None:
        check["onFlavors"] = on_flavors
    return Decider(
        one_queue(
            {"cpu": 100, "memory": "1Ti", "nvidia.com/gpu": 16},
            cq_extra={"admissionChecks": [check]},
            kueue_extra={
                "provisioningRequestConfigs": [prc],
                "admissionChecks": [{"name": "dws-check", "provisioningRequestConfig": "dws"}],
            },
        )
    )


def _two_gpu_groups(second_gpus: str = "1") -> dict[str, Any]:
    obj = sample("kuberay/ray-job.pytorch-image-classifier.yaml")
    worker = obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    other = {**worker, "groupName": "gpu-group-b", "replicas": 1}
    other["template"] = {
        "spec": {
            "containers": [
                {
                    "name": "w",
                    "image": "ray",
                    "resources": {"limits": {"nvidia.com/gpu": second_gpus, "cpu": "1"}},
                }
            ]
        }
    }
    obj["spec"]["rayClusterSpec"]["workerGroupSpecs"].append(other)
    return labeled(obj, "lq", "team-a")


def test_dws_queue_denies_gpu_podsets_the_provisioning_config_cannot_merge() -> None:
    decision = _dws_policy(None).validate(_two_gpu_groups(), "team-a")
    assert (decision.allowed, decision.reason) == (False, "unmergeable-podsets")
    assert decision.details == (
        'RayJob "team-a/pytorch-image-classifier-": ClusterQueue "cq" provisions nodes through AdmissionCheck '
        '"dws-check" (ProvisioningRequestConfig "dws", class queued-provisioning.gke.io), which accepts one PodSet '
        "per ProvisioningRequest, but 2 PodSets requesting nvidia.com/gpu cannot be merged (gpu-group | "
        "gpu-group-b; podSetMergePolicy is not set); give the GPU PodSets identical templates/requests with "
        "podSetMergePolicy IdenticalWorkloadSchedulingRequirements, or keep the GPUs in one PodSet "
        "(ray-project/ray#57839)"
    )


@pytest.mark.parametrize(
    ("merge", "second_gpus", "on_flavors", "exp_reason"),
    [
        ("IdenticalWorkloadSchedulingRequirements", "2", None, "unmergeable-podsets"),
        ("IdenticalPodTemplates", "1", None, "unmergeable-podsets"),
        (None, "1", ["f"], "unmergeable-podsets"),
    ],
    ids=["different-requests", "different-templates", "check-on-the-only-flavor"],
)
def test_dws_merge_policies_that_cannot_merge_different_gpu_groups_deny(
    merge: str | None, second_gpus: str, on_flavors: list[str] | None, exp_reason: str
) -> None:
    decision = _dws_policy(merge, on_flavors).validate(_two_gpu_groups(second_gpus), "team-a")
    assert (decision.allowed, decision.reason) == (False, exp_reason)


def test_dws_queue_allows_a_single_gpu_podset_and_cpu_only_podsets() -> None:
    obj = labeled(sample("kuberay/ray-job.pytorch-image-classifier.yaml"), "lq", "team-a")
    decision = _dws_policy(None).validate(obj, "team-a")
    assert (decision.allowed, decision.reason) == (True, "ok")


def test_more_than_18_podsets_are_denied() -> None:
    obj = sample("kuberay/ray-job.kueue-toy-sample.yaml")
    group = obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    obj["spec"]["rayClusterSpec"]["workerGroupSpecs"] = [{**group, "groupName": f"g{i}"} for i in range(17)]
    decision = Decider(one_queue({"cpu": 1000, "memory": "10Ti"})).validate(
        labeled(obj, "lq", "team-a"), "team-a"
    )
    assert decision.details == (
        'RayJob "team-a/rayjob-sample-": it makes 19 PodSets but a Kueue Workload holds at most 18 (for Ray: the '
        "head plus at most 17 worker groups); merge groups"
    )


def test_podset_names_that_are_not_dns_labels_after_lowercasing_are_denied() -> None:
    obj = sample("kuberay/ray-job.kueue-toy-sample.yaml")
    obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["groupName"] = "Small_Group"
    decision = Decider(one_queue({"cpu": 1000, "memory": "10Ti"})).validate(
        labeled(obj, "lq", "team-a"), "team-a"
    )
    assert decision.details == (
        'RayJob "team-a/rayjob-sample-": PodSet name(s) "small_group" are not DNS labels after lower-casing '
        "(lower-case letters, digits and '-', at most 63 characters), so Kueue cannot create its Workload; rename "
        "the group(s)"
    )


def test_rayjob_with_cluster_selector_is_denied() -> None:
    obj = sample("kuberay/ray-job.kueue-toy-sample.yaml")
    obj["spec"]["clusterSelector"] = {"ray.io/cluster": "shared"}
    decision = Decider(one_queue({"cpu": 1000, "memory": "10Ti"})).validate(
        labeled(obj, "lq", "team-a"), "team-a"
    )
    assert (decision.allowed, decision.reason) == (False, "rayjob-cluster-selector")


def test_job_kind_whose_kueue_integration_is_disabled_is_denied() -> None:
    policy = one_queue({"cpu": 10}, operators={"kuberay": {"enabled": False}})
    obj = labeled(sample("kuberay/ray-job.kueue-toy-sample.yaml"), "lq", "team-a")
    decision = Decider(policy).validate(obj, "team-a")
    assert decision.details.startswith(
        'RayJob "team-a/rayjob-sample-": Kueue\'s ray.io/rayjob integration is not enabled in this stack (enabled: batch/job)'
    )


LIMITS = {"maxGpusPerWorkload": 4, "maxWorkloadRequests": {"cpu": 8}, "allowedPriorityClasses": ["low"]}
LIMIT_CASES = [
    (
        {"nvidia.com/gpu": "3"},
        2,
        {},
        "limit-exceeded",
        'Job "team-a/train": requests 6 GPUs in total (main 6) but namespace team-a allows at most 4 per workload',
    ),
    (
        {"cpu": "5"},
        2,
        {},
        "limit-exceeded",
        'Job "team-a/train": requests cpu 10 in total but namespace team-a allows at most cpu 8 per workload',
    ),
    (
        {"cpu": "1"},
        1,
        {"kueue.x-k8s.io/priority-class": "high"},
        "priority-class-not-allowed",
        'Job "team-a/train": priority class "high" is not allowed in namespace team-a (allowed: low)',
    ),
    ({"cpu": "1", "nvidia.com/gpu": "2"}, 2, {"kueue.x-k8s.io/priority-class": "low"}, "ok", ""),
]


@pytest.mark.parametrize(
    ("requests", "parallelism", "labels", "exp_reason", "exp_message"),
    LIMIT_CASES,
    ids=["too-many-gpus", "too-much-cpu", "priority-not-allowed", "within-limits"],
)
def test_webhook_namespace_limits_are_enforced(
    requests: dict[str, str], parallelism: int, labels: dict[str, str], exp_reason: str, exp_message: str
) -> None:
    policy = one_queue(
        {"cpu": 100, "nvidia.com/gpu": 16}, webhook={"namespaces": [{"name": "team-a", "limits": LIMITS}]}
    )
    decision = Decider(policy).validate(
        job(requests=requests, parallelism=parallelism, labels=labels), "team-a"
    )
    assert (decision.reason, decision.details) == (exp_reason, exp_message)


def test_team_limits_apply_in_the_team_namespace() -> None:
    policy = policy_from(
        {"resourceFlavors": [{"name": "gpu"}]},
        teams={
            "members": [
                {
                    "name": "team-a",
                    "quotas": {"gpu": {"cpu": 64, "nvidia.com/gpu": 8}},
                    "limits": {"maxGpusPerWorkload": 1},
                }
            ]
        },
    )
    decision = Decider(policy).validate(job(queue="default", requests={"nvidia.com/gpu": "2"}), "team-a")
    assert decision.details == (
        'Job "team-a/train": requests 2 GPUs in total (main 2) but namespace team-a allows at most 1 per workload'
    )


@pytest.mark.parametrize(
    ("obj_namespace", "owner", "exp_reason"),
    [("other", False, "not-a-tenant"), ("team-a", True, "owned")],
    ids=["outside-tenant-namespaces", "owned-by-a-controller"],
)
def test_objects_the_webhook_does_not_judge_are_allowed(
    obj_namespace: str, owner: bool, exp_reason: str
) -> None:
    obj = job(namespace=obj_namespace, queue="missing", requests={"cpu": "1000"})
    if owner:
        obj["metadata"]["ownerReferences"] = [
            {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "x", "uid": "1", "controller": True}
        ]
    decision = Decider(one_queue({"cpu": 1})).validate(obj, obj_namespace)
    assert (decision.allowed, decision.reason) == (True, exp_reason)


def test_unlabeled_job_without_default_queue_is_allowed_with_a_warning() -> None:
    decision = Decider(one_queue({"cpu": 1})).validate(job(queue=None), "team-a")
    assert decision.warnings == (
        'Job "team-a/train" has no kueue.x-k8s.io/queue-name label and namespace team-a has no default LocalQueue: '
        "Kueue does not manage it, so it runs outside quota",
    )


def test_object_the_accounting_cannot_read_is_allowed_with_a_warning() -> None:
    obj = {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "r", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
           "spec": {"shutdownAfterJobFinishes": True}}  # fmt: skip
    decision = Decider(one_queue({"cpu": 1})).validate(obj, "team-a")
    assert (decision.allowed, decision.reason) == (True, "not-accounted")
    assert decision.warnings[0].startswith('quota not checked by batchplane: RayJob "r"')


def test_untolerated_flavor_taint_makes_a_job_inadmissible() -> None:
    policy = one_queue(
        {"cpu": 10},
        flavor={"nodeTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
    )
    denied = Decider(policy).validate(job(), "team-a")
    assert denied.details == (
        'Job "team-a/train": can never be admitted by ClusterQueue "cq" (LocalQueue "lq"): PodSet "main" needs cpu 1, '
        'but untolerated taint nvidia.com/gpu=present:NoSchedule of flavor "f"'
    )
    tolerated = job(pod_spec={"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]})
    assert Decider(policy).validate(tolerated, "team-a").allowed


# --- mutating ----------------------------------------------------------------------------------------


MUTATE_CASES = [
    (
        {"labels": {"app": "x"}},
        "defaulted",
        [{"op": "add", "path": "/metadata/labels/kueue.x-k8s.io~1queue-name", "value": "lq"}],
    ),
    (
        {},
        "defaulted",
        [{"op": "add", "path": "/metadata/labels", "value": {"kueue.x-k8s.io/queue-name": "lq"}}],
    ),
    (
        {"labels": None},
        "defaulted",
        [{"op": "add", "path": "/metadata/labels", "value": {"kueue.x-k8s.io/queue-name": "lq"}}],
    ),
    ({"labels": {"kueue.x-k8s.io/queue-name": "other"}}, "labeled", []),
]


@pytest.mark.parametrize(
    ("meta", "exp_reason", "exp_patch"),
    MUTATE_CASES,
    ids=["labels-present", "labels-missing", "labels-null", "already-labeled"],
)
def test_unlabeled_workload_gets_the_default_queue_label_as_jsonpatch(
    meta: dict[str, Any], exp_reason: str, exp_patch: list[dict[str, Any]]
) -> None:
    obj = job(queue=None)
    obj["metadata"] = {"name": "train", **meta}
    decision = Decider(one_queue({"cpu": 1}, default=True)).mutate(obj, "team-a")
    assert (decision.allowed, decision.reason, list(decision.patch)) == (True, exp_reason, exp_patch)


@pytest.mark.parametrize(
    ("queue", "default", "exp_reason"),
    [("default", True, "kueue-defaults"), ("lq", False, "no-default-queue")],
    ids=["kueue-own-defaulting-applies", "no-default-queue"],
)
def test_mutate_leaves_workloads_alone_when_kueue_defaults_or_no_default_exists(
    queue: str, default: bool, exp_reason: str
) -> None:
    decision = Decider(one_queue({"cpu": 1}, queue=queue, default=default)).mutate(job(queue=None), "team-a")
    assert (decision.reason, decision.patch) == (exp_reason, ())


def test_mutate_defaulting_can_be_switched_off() -> None:
    policy = one_queue({"cpu": 1}, default=True, webhook={"defaultQueueLabel": False})
    assert Decider(policy).mutate(job(queue=None), "team-a").reason == "defaulting-off"


@pytest.mark.parametrize(
    ("token", "exp"), [("a/b", "a~1b"), ("a~b", "a~0b"), ("~/", "~0~1")], ids=["slash", "tilde", "both"]
)
def test_json_pointer_tokens_are_escaped(token: str, exp: str) -> None:
    assert escape_pointer(token) == exp


def test_label_patch_adds_metadata_when_missing() -> None:
    assert label_patch({}, "k/x", "v") == [
        {"op": "add", "path": "/metadata", "value": {"labels": {"k/x": "v"}}}
    ]


MALFORMED_OBJECTS = [
    ({"apiVersion": {"a": 1}, "kind": "Job"}, "not-a-workload"),
    ({"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"labels": {"kueue.x-k8s.io/queue-name": {"x": 1}}}}, "no-queue-label"),
    ({"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"labels": {"kueue.x-k8s.io/queue-name": "lq"}},
      "spec": {"headGroupSpec": {"template": {"spec": "oops"}}, "enableInTreeAutoscaling": False}}, "not-accounted"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("obj", "exp_reason"), MALFORMED_OBJECTS, ids=["api-version-map", "label-not-string", "spec-not-map"]
)
def test_malformed_objects_found_by_the_fuzzer_are_allowed_not_crashing(
    obj: dict[str, Any], exp_reason: str
) -> None:
    decision = Decider(one_queue({"cpu": 1})).validate(obj, "team-a")
    assert (decision.allowed, decision.reason) == (True, exp_reason)


# --- Kueue's greedy flavor assigner (issue #25) ---------------------------------------------------------------


def _spot_queue(topology: bool = False) -> Decider:
    tas: dict[str, Any] = (
        {"nodeLabels": {"example.com/pool": "spot"}, "topologyName": "t"} if topology else {}
    )
    return Decider(
        policy_from(
            {
                "topologies": [{"name": "t", "levels": [{"nodeLabel": "kubernetes.io/hostname"}]}]
                if topology
                else [],
                "resourceFlavors": [
                    {"name": "default-flavor"},
                    {
                        "name": "spot",
                        "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
                        **tas,
                    },
                ],
                "clusterQueues": [
                    {
                        "name": "cq",
                        "namespaceSelector": {},
                        "resourceGroups": [
                            {
                                "coveredResources": ["cpu", "memory"],
                                "flavors": [
                                    {
                                        "name": "default-flavor",
                                        "resources": [
                                            {"name": "cpu", "nominalQuota": "5"},
                                            {"name": "memory", "nominalQuota": "64Gi"},
                                        ],
                                    },
                                    {
                                        "name": "spot",
                                        "resources": [
                                            {"name": "cpu", "nominalQuota": "16"},
                                            {"name": "memory", "nominalQuota": "64Gi"},
                                        ],
                                    },
                                ],
                            }
                        ],
                    }
                ],
                "localQueues": [{"name": "lq", "namespace": "team-a", "clusterQueue": "cq"}],
            }
        )
    )


def _spot_rayjob(head_tolerates_spot: bool) -> dict[str, Any]:
    tolerations = [{"key": "spot", "operator": "Exists"}]
    image = "rayproject/ray:2.41.0"
    head: dict[str, Any] = {
        "containers": [
            {"name": "head", "image": image, "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}
        ]
    }
    if head_tolerates_spot:
        head["tolerations"] = tolerations
    worker = {
        "tolerations": tolerations,
        "containers": [
            {"name": "w", "image": image, "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}}
        ],
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "r", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {
            "shutdownAfterJobFinishes": True,
            "entrypoint": "python train.py",
            "rayClusterSpec": {
                "headGroupSpec": {"rayStartParams": {}, "template": {"spec": head}},
                "workerGroupSpecs": [
                    {
                        "groupName": "workers",
                        "replicas": 2,
                        "rayStartParams": {},
                        "template": {"spec": worker},
                    }
                ],
            },
        },
    }


def test_a_rayjob_kueue_places_greedily_into_a_dead_end_is_refused_with_kueues_own_reasons() -> None:
    decision = _spot_queue().validate(_spot_rayjob(head_tolerates_spot=False), "team-a", "CREATE")
    assert not decision.allowed
    assert decision.reason == "never-admissible"
    assert decision.details == (
        'RayJob "team-a/r": can never be admitted by ClusterQueue "cq" (LocalQueue "lq"): a flavor assignment '
        "would fit, but Kueue assigns flavors PodSet by PodSet, each on the first flavor that takes it, and never "
        "finds one that fits: couldn't assign flavors to pod set submitter: insufficient quota for cpu in flavor "
        "default-flavor, previously considered podsets requests (5) + current podset request (500m) > maximum "
        "capacity (5), untolerated taint spot=true:NoSchedule in flavor spot; retried from the last flavor tried "
        "(1 more attempt): couldn't assign flavors to pod set head: untolerated taint spot=true:NoSchedule in "
        "flavor spot"
    )


def test_a_rayjob_kueue_admits_when_it_retries_from_the_last_flavor_tried_is_allowed() -> None:
    decision = _spot_queue().validate(_spot_rayjob(head_tolerates_spot=True), "team-a", "CREATE")
    assert (decision.allowed, decision.reason) == (True, "ok")


def test_a_workload_in_a_tas_pod_set_group_kueues_attempts_may_miss_gets_a_warning_not_a_denial() -> None:
    obj = _spot_rayjob(head_tolerates_spot=False)
    cluster = obj["spec"]["rayClusterSpec"]
    # A group Kueue's own webhook accepts (tas_validation.go L214-302): two PodSets, one of 1 pod, the same level.
    group = {
        "kueue.x-k8s.io/podset-group-name": "g",
        "kueue.x-k8s.io/podset-preferred-topology": "kubernetes.io/hostname",
    }
    for template in (cluster["headGroupSpec"]["template"], cluster["workerGroupSpecs"][0]["template"]):
        template["metadata"] = {"annotations": dict(group)}
    decision = _spot_queue(topology=True).validate(obj, "team-a", "CREATE")
    assert (decision.allowed, decision.reason) == (True, "ok")
    [warning] = decision.warnings
    assert warning.startswith(
        'ClusterQueue "cq" (LocalQueue "lq"): Kueue\'s flavor assigner may never admit it ('
    )
    assert warning.endswith(
        "but with TAS PodSet groups (kueue.x-k8s.io/podset-group-name) its retries are not modelled exactly, "
        "so it is not refused"
    )


@pytest.mark.parametrize(
    "pod_spec",
    [
        {"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}},
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}]}]}}}},
    ],
    ids=["node-selector", "exists"],
)  # fmt: skip
def test_a_cpu_job_selecting_a_label_only_gpu_flavors_carry_is_allowed_as_kueue_0_19_matches_each_flavor_on_its_own_keys(
    pod_spec: dict[str, Any],
) -> None:
    # Kueue v0.19.2 flavorassigner.go line 1227 (kubernetes-sigs/kueue#12449): default-flavor has no node labels,
    # so nothing of the pod's node affinity applies to it and Kueue admits the Job there.
    decider = Decider(stack_policy("gke-prod-dws"))
    obj = job(queue="default", requests={"cpu": "1"}, pod_spec=pod_spec)
    namespace = next(iter(decider.policy.namespaces))
    obj["metadata"]["namespace"] = namespace
    queue = decider.policy.namespaces[namespace].default_queue or next(
        iter(decider.policy.namespaces[namespace].local_queues)
    )
    obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = queue
    decision = decider.validate(obj, namespace, "CREATE")
    assert (decision.allowed, decision.reason) == (True, "ok")

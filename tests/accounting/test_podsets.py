"""PodSets per job kind: names, counts, injected containers and errors (kueue-accounting.md §2)."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest

from batchplane.accounting import AccountingError, is_workload, supported_kinds, workload_requests
from tests.accounting.conftest import Gi, Mi, batch_job, container, cores, pod_template


def shape(obj: dict[str, Any], **kwargs: Any) -> list[tuple[str, int, dict[str, Decimal]]]:
    """``(name, count, per_pod)`` of each PodSet."""
    return [(ps.name, ps.count, ps.per_pod) for ps in workload_requests(obj, **kwargs).pod_sets]


def errors_of(obj: dict[str, Any], **kwargs: Any) -> str:
    with pytest.raises(AccountingError) as excinfo:
        workload_requests(obj, **kwargs)
    return str(excinfo.value)


ONE_CPU = pod_template(container({"cpu": "1"}))


# --- batch/v1 Job ----------------------------------------------------------------------------------

JOB_COUNT_CASES = [
    ("parallelism-defaults-to-one", {}, 1),
    ("completions-lower-than-parallelism", {"parallelism": 3, "completions": 2}, 2),
    ("completions-higher-than-parallelism", {"parallelism": 3, "completions": 10}, 3),
]


@pytest.mark.parametrize(
    ("spec", "exp_count"), [c[1:] for c in JOB_COUNT_CASES], ids=[c[0] for c in JOB_COUNT_CASES]
)
def test_job_count_is_parallelism_capped_by_completions(spec: dict[str, Any], exp_count: int) -> None:
    assert shape(batch_job(ONE_CPU, **spec)) == [("main", exp_count, {"cpu": Decimal(1)})]


def test_job_min_parallelism_annotation_sets_min_count() -> None:
    job = batch_job(ONE_CPU, parallelism=4)
    job["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": "2"}
    (pod_set,) = workload_requests(job).pod_sets
    assert (pod_set.count, pod_set.min_count) == (4, 2)


MIN_PARALLELISM_ERRORS = [
    (
        "not-an-integer",
        "two",
        "Job \"job\": metadata.annotations[kueue.x-k8s.io/job-min-parallelism]: 'two' is not an integer",
    ),
    (
        "not-below-parallelism",
        "4",
        'Job "job": metadata.annotations[kueue.x-k8s.io/job-min-parallelism]: '
        "must be between 0 and parallelism 4 (exclusive)",
    ),
]


@pytest.mark.parametrize(
    ("value", "exp_message"),
    [c[1:] for c in MIN_PARALLELISM_ERRORS],
    ids=[c[0] for c in MIN_PARALLELISM_ERRORS],
)
def test_invalid_min_parallelism_annotation_is_rejected(value: str, exp_message: str) -> None:
    job = batch_job(ONE_CPU, parallelism=4)
    job["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": value}
    assert errors_of(job) == exp_message


def test_job_without_template_names_the_field() -> None:
    job = batch_job(ONE_CPU)
    del job["spec"]["template"]
    assert errors_of(job) == 'Job "job": spec.template: is required'


# --- Ray ---------------------------------------------------------------------------------------------


def ray_cluster(
    *groups: dict[str, Any], annotations: dict[str, str] | None = None, **spec: Any
) -> dict[str, Any]:
    head = pod_template(container({"cpu": "1"}, name="ray-head"))
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "annotations": annotations or {}},
        "spec": {"headGroupSpec": {"template": head}, "workerGroupSpecs": list(groups), **spec},
    }


def group(name: str = "workers", **fields: Any) -> dict[str, Any]:
    return {"groupName": name, "template": ONE_CPU, **fields}


def test_raycluster_autoscaler_adds_500m_to_head_like_kueue_integration_test() -> None:
    # raycluster_controller_test.go:742-833: head 1 cpu + autoscaler 500m + 2 workers × 1 cpu = 3500m.
    cluster = ray_cluster(group(replicas=2), enableInTreeAutoscaling=True)
    workload = workload_requests(cluster)
    assert shape(cluster) == [
        ("head", 1, {"cpu": Decimal("1.5"), "memory": Decimal(512 * Mi)}),
        ("workers", 2, {"cpu": Decimal(1)}),
    ]
    assert workload.total["cpu"] == Decimal("3.5")
    assert workload.pod_sets[0].template["spec"]["containers"][-1]["name"] == "autoscaler"


def test_raycluster_autoscaler_uses_autoscaler_options_resources() -> None:
    options = {"resources": {"requests": {"cpu": "250m"}, "limits": {"cpu": "1", "memory": "1Gi"}}}
    cluster = ray_cluster(enableInTreeAutoscaling=True, autoscalerOptions=options)
    # head 1 + autoscaler 250m (explicit request kept) ; memory from the autoscaler's limit.
    assert shape(cluster)[0] == ("head", 1, {"cpu": Decimal("1.25"), "memory": Decimal(Gi)})


WORKER_COUNT_CASES = [
    ("omitted-replicas-is-crd-default-zero", {}, 0),
    ("replicas-ignore-min-and-max", {"replicas": 3, "minReplicas": 5, "maxReplicas": 4}, 3),
    ("multi-host-multiplies-replicas", {"replicas": 2, "numOfHosts": 4}, 8),
    ("single-host-is-not-a-factor", {"replicas": 2, "numOfHosts": 1}, 2),
]


@pytest.mark.parametrize(
    ("fields", "exp_count"), [c[1:] for c in WORKER_COUNT_CASES], ids=[c[0] for c in WORKER_COUNT_CASES]
)
def test_ray_worker_count_is_replicas_times_hosts(fields: dict[str, Any], exp_count: int) -> None:
    assert shape(ray_cluster(group(**fields)))[1][:2] == ("workers", exp_count)


GCS_CASES = [
    (
        "options-raise-head-requests",
        {"gcsFaultToleranceOptions": {"redisAddress": "redis:6379"}},
        None,
        container({"cpu": "100m", "memory": "1Gi"}, name="ray-head"),
        {"cpu": Decimal("0.2"), "memory": Decimal(Gi)},
    ),
    (
        "annotation-is-case-insensitive",
        {},
        {"ray.io/ft-enabled": "TRUE"},
        container({"cpu": "100m"}, name="ray-head"),
        {"cpu": Decimal("0.2"), "memory": Decimal(256 * Mi)},
    ),
    (
        # Only requests are raised, so a limits-only head keeps 200m/256Mi rather than its limits.
        "limits-only-head-gets-floor-not-limits",
        {"gcsFaultToleranceOptions": {}},
        None,
        container(limits={"cpu": "2", "memory": "4Gi"}, name="ray-head"),
        {"cpu": Decimal("0.2"), "memory": Decimal(256 * Mi)},
    ),
    (
        "no-fault-tolerance-no-floor",
        {},
        {"ray.io/ft-enabled": "false"},
        container({"cpu": "100m"}, name="ray-head"),
        {"cpu": Decimal("0.1")},
    ),
]


@pytest.mark.parametrize(
    ("spec", "annotations", "head", "exp_head"), [c[1:] for c in GCS_CASES], ids=[c[0] for c in GCS_CASES]
)
def test_gcs_fault_tolerance_raises_first_head_container(
    spec: dict[str, Any],
    annotations: dict[str, str] | None,
    head: dict[str, Any],
    exp_head: dict[str, Decimal],
) -> None:
    cluster = ray_cluster(annotations=annotations, **spec)
    cluster["spec"]["headGroupSpec"]["template"] = pod_template(head)
    assert shape(cluster)[0] == ("head", 1, exp_head)


def test_gcs_fault_tolerance_without_head_container_is_an_error() -> None:
    cluster = ray_cluster(gcsFaultToleranceOptions={})
    cluster["spec"]["headGroupSpec"]["template"] = {"spec": {"containers": []}}
    assert errors_of(cluster) == (
        'RayCluster "rc": spec.headGroupSpec.template.spec.containers: cannot account for Redis cleanup '
        "resources: head pod template must include the Ray container"
    )


def test_worker_group_names_are_lower_cased_and_head_is_reserved() -> None:
    assert shape(ray_cluster(group("GPU-Group", replicas=1)))[1][0] == "gpu-group"
    assert errors_of(ray_cluster(group("Head", replicas=1))) == (
        'RayCluster "rc": spec.workerGroupSpecs[0].groupName: "head" is reserved for the head group'
    )


def ray_job(**spec: Any) -> dict[str, Any]:
    cluster = ray_cluster(group(replicas=1))
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "rj"},
        "spec": {"entrypoint": "python x.py", "rayClusterSpec": cluster["spec"], **spec},
    }


SUBMITTER = {"cpu": Decimal("0.5"), "memory": Decimal(200 * Mi)}
RAYJOB_MODE_CASES = [
    (
        "default-is-k8s-job-mode-with-submitter-last",
        {},
        [("head", 1, {"cpu": Decimal(1)}), ("workers", 1, {"cpu": Decimal(1)}), ("submitter", 1, SUBMITTER)],
    ),
    (
        "custom-submitter-template-is-used",
        {"submitterPodTemplate": pod_template(container({"cpu": "100m"}))},
        [
            ("head", 1, {"cpu": Decimal(1)}),
            ("workers", 1, {"cpu": Decimal(1)}),
            ("submitter", 1, {"cpu": Decimal("0.1")}),
        ],
    ),
    (
        "http-mode-adds-nothing",
        {"submissionMode": "HTTPMode"},
        [("head", 1, {"cpu": Decimal(1)}), ("workers", 1, {"cpu": Decimal(1)})],
    ),
    (
        "interactive-mode-adds-nothing",
        {"submissionMode": "InteractiveMode"},
        [("head", 1, {"cpu": Decimal(1)}), ("workers", 1, {"cpu": Decimal(1)})],
    ),
    (
        "sidecar-mode-adds-submitter-to-head",
        {"submissionMode": "SidecarMode", "submitterPodTemplate": pod_template(container({"cpu": "9"}))},
        [
            ("head", 1, {"cpu": Decimal("1.5"), "memory": Decimal(200 * Mi)}),
            ("workers", 1, {"cpu": Decimal(1)}),
        ],
    ),
    (
        "cluster-selector-alone-is-not-accounted",
        {"clusterSelector": {"ray.io/cluster": "shared"}, "rayClusterSpec": None},
        [],
    ),
]


@pytest.mark.parametrize(
    ("spec", "exp_shape"), [c[1:] for c in RAYJOB_MODE_CASES], ids=[c[0] for c in RAYJOB_MODE_CASES]
)
def test_rayjob_submission_mode_decides_submitter(spec: dict[str, Any], exp_shape: list[Any]) -> None:
    job = ray_job(**spec)
    if job["spec"].get("rayClusterSpec") is None:
        del job["spec"]["rayClusterSpec"]
    assert shape(job) == exp_shape


def test_rayjob_annotation_enables_gcs_floor() -> None:
    job = ray_job(submissionMode="HTTPMode")
    job["metadata"]["annotations"] = {"ray.io/ft-enabled": "true"}
    assert shape(job)[0] == ("head", 1, {"cpu": Decimal(1), "memory": Decimal(256 * Mi)})


RAYJOB_ERRORS = [
    (
        "missing-cluster-spec",
        {"rayClusterSpec": None},
        'RayJob "rj": spec.rayClusterSpec: is required (Kueue rejects a RayJob without it)',
    ),
    (
        "selector-and-cluster-spec",
        {"clusterSelector": {"ray.io/cluster": "x"}},
        'RayJob "rj": spec.clusterSelector: cannot be combined with spec.rayClusterSpec '
        "(Kueue rejects the RayJob)",
    ),
    (
        "unknown-submission-mode",
        {"submissionMode": "Batch"},
        'RayJob "rj": spec.submissionMode: must be one of K8sJobMode, HTTPMode, InteractiveMode, '
        "SidecarMode, not 'Batch'",
    ),
]


@pytest.mark.parametrize(
    ("spec", "exp_message"), [c[1:] for c in RAYJOB_ERRORS], ids=[c[0] for c in RAYJOB_ERRORS]
)
def test_rayjob_that_kueue_rejects_raises(spec: dict[str, Any], exp_message: str) -> None:
    job = ray_job(**spec)
    if job["spec"].get("rayClusterSpec") is None:
        del job["spec"]["rayClusterSpec"]
    assert errors_of(job) == exp_message


def test_rayservice_accounts_its_cluster_config() -> None:
    service = {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": "svc"},
        "spec": {"rayClusterConfig": ray_cluster(group(replicas=2))["spec"]},
    }
    assert shape(service) == [("head", 1, {"cpu": Decimal(1)}), ("workers", 2, {"cpu": Decimal(1)})]


# --- PyTorchJob ------------------------------------------------------------------------------------


def pytorch_job(**replica_specs: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "pt"},
        "spec": {"pytorchReplicaSpecs": replica_specs},
    }


def test_pytorchjob_orders_master_before_worker_and_defaults_replicas_to_one() -> None:
    job = pytorch_job(Worker={"replicas": 3, "template": ONE_CPU}, Master={"template": ONE_CPU})
    assert shape(job) == [("master", 1, {"cpu": Decimal(1)}), ("worker", 3, {"cpu": Decimal(1)})]


def test_pytorchjob_without_template_names_the_replica_type() -> None:
    assert (
        errors_of(pytorch_job(Worker={"replicas": 1}))
        == 'PyTorchJob "pt": spec.pytorchReplicaSpecs.Worker.template: is required'
    )


# --- AppWrapper ------------------------------------------------------------------------------------


def app_wrapper(*components: dict[str, Any], name: str = "aw") -> dict[str, Any]:
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": name},
        "spec": {"components": list(components)},
    }


def test_appwrapper_numbers_pod_sets_across_components_like_kueue_unit_test() -> None:
    # appwrapper_controller_test.go:52-168: PyTorchJob (Master 1, Worker 4) + Job parallelism 2.
    wrapped_pytorch = pytorch_job(
        Master={"replicas": 1, "template": ONE_CPU}, Worker={"replicas": 4, "template": ONE_CPU}
    )
    wrapped_job = batch_job(ONE_CPU, parallelism=2)
    workload = workload_requests(app_wrapper({"template": wrapped_pytorch}, {"template": wrapped_job}))
    assert [(ps.name, ps.count) for ps in workload.pod_sets] == [("aw-0", 1), ("aw-1", 4), ("aw-2", 2)]


def test_appwrapper_drops_sidecars_runtime_class_and_pod_level_resources() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "runtimeClassName": "kata",
            "resources": {"requests": {"cpu": "8"}},
            "initContainers": [container({"cpu": "1"}, sidecar=True)],
            "containers": [container({"cpu": "1"})],
        },
    }
    runtime_class = {
        "kind": "RuntimeClass",
        "metadata": {"name": "kata"},
        "overhead": {"podFixed": {"cpu": "5"}},
    }
    # Natively: pod-level 8 + overhead 5 = 13.
    # Wrapped: the sidecar becomes a plain init container → max(1, 1) = 1, no overhead, no pod level.
    assert shape(pod, runtime_classes=[runtime_class]) == [("main", 1, {"cpu": Decimal(13)})]
    assert shape(app_wrapper({"template": pod}), runtime_classes=[runtime_class]) == [
        ("aw-0", 1, {"cpu": Decimal(1)})
    ]


def test_wrapped_raycluster_defaults_replicas_to_one_without_autoscaler() -> None:
    cluster = ray_cluster(group(), enableInTreeAutoscaling=True)
    assert shape(app_wrapper({"template": cluster})) == [
        ("aw-0", 1, {"cpu": Decimal(1)}),
        ("aw-1", 1, {"cpu": Decimal(1)}),
    ]


def test_appwrapper_declared_pod_sets_resolve_paths_with_indexes() -> None:
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "spec": {"replicatedJobs": [{"name": "a", "template": {"spec": {"template": ONE_CPU}}}]},
    }
    declared = [{"path": "template.spec.replicatedJobs[0].template.spec.template", "replicas": 7}]
    assert shape(app_wrapper({"template": jobset, "podSets": declared})) == [("aw-0", 7, {"cpu": Decimal(1)})]


def test_appwrapper_path_to_nothing_is_an_error() -> None:
    component = {"template": batch_job(ONE_CPU), "podSets": [{"path": "template.spec.nothing"}]}
    assert errors_of(app_wrapper(component)) == (
        "AppWrapper \"aw\": spec.components[0].template: path 'template.spec.nothing': "
        "missing field 'nothing' at 'template.spec'"
    )


def test_appwrapper_of_unknown_kind_without_pod_sets_accounts_nothing() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}
    assert shape(app_wrapper({"template": config_map})) == []


# --- JobSet, TrainJob, Workload, Pod ---------------------------------------------------------------


def test_jobset_counts_replicas_times_pods_per_job() -> None:
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": 3,
                    "template": {"spec": {"parallelism": 2, "template": ONE_CPU}},
                },
                {
                    "name": "driver",
                    "template": {"spec": {"parallelism": 4, "completions": 1, "template": ONE_CPU}},
                },
            ]
        },
    }
    assert shape(jobset) == [("workers", 6, {"cpu": Decimal(1)}), ("driver", 1, {"cpu": Decimal(1)})]


TORCH_RUNTIME = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "ClusterTrainingRuntime",
    "metadata": {"name": "torch-distributed"},
    "spec": {
        "mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
        "template": {
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "dataset-initializer",
                        "replicas": 3,
                        "template": {
                            "metadata": {
                                "labels": {
                                    "trainer.kubeflow.org/trainjob-ancestor-step": "dataset-initializer"
                                }
                            },
                            "spec": {
                                "template": pod_template(container({"cpu": "2"}, name="dataset-initializer"))
                            },
                        },
                    },
                    {
                        "name": "node",
                        "template": {
                            "metadata": {
                                "labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
                            },
                            "spec": {"template": pod_template(container({"cpu": "1"}, name="node"))},
                        },
                    },
                ]
            }
        },
    },
}


def train_job(**trainer: Any) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "tj", "namespace": "team-a"},
        "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": trainer},
    }


def test_trainjob_uses_runtime_num_nodes_and_resources_per_node() -> None:
    job = train_job(
        numNodes=4, resourcesPerNode={"limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "8"}}
    )
    assert shape(job, training_runtimes=[TORCH_RUNTIME]) == [
        ("dataset-initializer", 1, {"cpu": Decimal(2)}),
        ("node", 4, {"cpu": Decimal(8), "nvidia.com/gpu": Decimal(1)}),
    ]


def test_trainjob_defaults_to_runtime_ml_policy_nodes() -> None:
    runtime = copy.deepcopy(TORCH_RUNTIME)
    runtime["spec"]["mlPolicy"]["numNodes"] = 2
    assert shape(train_job(), training_runtimes=[runtime])[1] == ("node", 2, {"cpu": Decimal(1)})


def test_trainjob_without_known_runtime_asks_for_it() -> None:
    assert errors_of(train_job()) == (
        'TrainJob "tj": spec.runtimeRef: ClusterTrainingRuntime "torch-distributed" is not known; '
        "Kueue derives TrainJob pod sets from the runtime, so supply it (--with RUNTIME.yaml)"
    )


def test_workload_object_is_read_as_stored() -> None:
    workload = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "wl", "namespace": "team-a"},
        "spec": {
            "queueName": "lq",
            "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"},
            "podSets": [{"count": 3, "minCount": 1, "template": ONE_CPU}],
        },
    }
    result = workload_requests(workload)
    assert (result.queue_name, result.priority_class) == ("lq", "high")
    assert [(ps.name, ps.count, ps.min_count, ps.per_pod) for ps in result.pod_sets] == [
        ("main", 3, 1, {"cpu": Decimal(1)})
    ]


def test_plain_pod_is_one_main_pod_set_with_its_labels() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"containers": [container({"cpu": "250m"})]},
    }
    result = workload_requests(pod)
    assert result.queue_name == "lq"
    assert [(ps.name, ps.count, ps.per_pod) for ps in result.pod_sets] == [
        ("main", 1, {"cpu": cores("250m")})
    ]
    assert result.pod_sets[0].template["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "lq"}


def test_priority_class_comes_from_label_then_pod_template() -> None:
    job = batch_job(pod_template(container({"cpu": "1"}), priorityClassName="pod-high"))
    assert workload_requests(job).priority_class == "pod-high"
    job["metadata"]["labels"] = {"kueue.x-k8s.io/priority-class": "wpc-low"}
    assert workload_requests(job).priority_class == "wpc-low"


def test_unsupported_kind_lists_supported_kinds() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {}}
    assert errors_of(deployment) == (
        'Deployment "web": unsupported kind apps/v1 Deployment (supported: batch/v1 Job, '
        "jobset.x-k8s.io/v1alpha2 JobSet, kubeflow.org/v1 PyTorchJob, kueue.x-k8s.io/v1beta1 Workload, "
        "kueue.x-k8s.io/v1beta2 Workload, leaderworkerset.x-k8s.io/v1 LeaderWorkerSet, ray.io/v1 RayCluster, ray.io/v1 RayJob, ray.io/v1 RayService, "
        "trainer.kubeflow.org/v1alpha1 TrainJob, v1 Pod, workload.codeflare.dev/v1beta2 AppWrapper)"
    )


def test_supported_kinds_are_api_version_and_kind_pairs() -> None:
    assert ("ray.io/v1", "RayJob") in supported_kinds()
    assert ("workload.codeflare.dev/v1beta2", "AppWrapper") in supported_kinds()
    assert ("apps/v1", "Deployment") not in supported_kinds()


def test_more_than_eighteen_pod_sets_is_rejected() -> None:
    cluster = ray_cluster(*(group(f"g{i}", replicas=1) for i in range(18)))
    assert (
        errors_of(cluster) == 'RayCluster "rc": spec: yields 19 pod sets; a Kueue Workload holds at most 18'
    )


@pytest.mark.parametrize(
    ("obj", "want_message"),
    [
        (
            {"apiVersion": ["ray.io/v1"], "kind": "RayJob", "metadata": {"name": "rj"}},
            "RayJob \"rj\": unsupported kind ['ray.io/v1'] RayJob",
        ),
        (
            {
                "apiVersion": "ray.io/v1",
                "kind": "RayCluster",
                "metadata": {"name": "rc"},
                "spec": {"headGroupSpec": {"template": {"spec": "not-a-pod-spec"}}},
            },
            'RayCluster "rc": spec.headGroupSpec.template.spec: must be a mapping',
        ),
    ],
    ids=["api-version-not-a-string", "template-spec-a-string"],
)
def test_malformed_objects_raise_accounting_error_not_a_crash(obj: dict[str, Any], want_message: str) -> None:
    with pytest.raises(AccountingError) as caught:
        workload_requests(obj)
    assert str(caught.value).startswith(want_message)


def test_is_workload_is_false_for_an_unhashable_api_version() -> None:
    assert is_workload({"apiVersion": {"group": "ray.io"}, "kind": "RayJob"}) is False

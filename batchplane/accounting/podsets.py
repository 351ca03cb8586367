"""The PodSets Kueue v0.19.2 builds for each supported job kind.

Each ``*_pod_sets`` function takes a job object as a plain mapping (a parsed manifest), applies the
API-server defaults Kueue would see (e.g. RayCluster worker ``replicas`` → 0, RayJob
``submissionMode`` → ``K8sJobMode``, Job ``parallelism`` → 1) and returns :class:`RawPodSet`\\ s in
Kueue's order with Kueue's names. Sources are cited per function (file and lines at
https://github.com/kubernetes-sigs/kueue/tree/v0.19.2). Problems raise :class:`~batchplane.accounting.model.FieldError`
naming the field.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeGuard

from batchplane.accounting.model import FieldError
from batchplane.accounting.pod_requests import keep_max, parse_resource_list
from batchplane.frameworks import FRAMEWORKS
from batchplane.quantity import format_quantity, round_up_milli

#: ``kueue.DefaultPodSetName`` (``apis/kueue/v1beta2/constants.go:21``).
DEFAULT_POD_SET_NAME = "main"
#: ``jobframework.MaxPodSets`` (``pkg/controller/jobframework/constants.go:21``).
MAX_POD_SETS = 18
#: Annotation read by the batch/job integration for partial admission (``job_controller.go:59``).
JOB_MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"
#: KubeRay's annotation that turns on GCS fault tolerance (``IsGCSFaultToleranceEnabled``).
RAY_FT_ENABLED_ANNOTATION = "ray.io/ft-enabled"

#: Requests KubeRay hard-codes for the Redis-cleanup Job (Kueue ``redisCleanupResourceRequests``).
REDIS_CLEANUP_REQUESTS = {"cpu": Decimal("0.2"), "memory": Decimal(256 * 2**20)}
#: KubeRay v1.7.0 ``BuildAutoscalerContainer`` default resources (requests = limits).
AUTOSCALER_DEFAULT_RESOURCES: dict[str, dict[str, str]] = {
    "requests": {"cpu": "500m", "memory": "512Mi"},
    "limits": {"cpu": "500m", "memory": "512Mi"},
}
#: Kueue ``defaultSubmitterResources`` = KubeRay v1.7.0 ``GetDefaultSubmitterContainer``.
SUBMITTER_DEFAULT_RESOURCES: dict[str, dict[str, str]] = {
    "requests": {"cpu": "500m", "memory": "200Mi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}
#: RayJob ``spec.submissionMode`` values (KubeRay v1.7.0 CRD enum); the CRD default is the first.
RAY_SUBMISSION_MODES = ("K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode")

#: Label on a TrainingRuntime's replicated Job naming its role (Kubeflow Trainer ``LabelTrainJobAncestor``).
TRAINJOB_ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"


@dataclass(slots=True)
class RawPodSet:
    """A PodSet before its per-pod requests are computed (read-only by convention: slotted, not frozen, as it is
    built on every admission review and a frozen dataclass costs four times as much to construct).

    Attributes:
        name: Kueue's PodSet name (lower-cased).
        count: pods in the PodSet.
        min_count: partial-admission minimum, or ``None``.
        template: the pod template Kueue stores for the PodSet: the job object's own template where Kueue
            changes nothing (shared: read it, never mutate it), a private copy where it does (the Ray head with
            an injected container or raised requests).
        path: field path of the template's origin in the job object, for error messages.
    """

    name: str
    count: int
    min_count: int | None
    template: dict[str, Any]
    path: str


@dataclass(frozen=True)
class TrainingRuntimes:
    """Kubeflow Trainer runtimes known to the caller, for TrainJobs.

    Attributes:
        cluster: ClusterTrainingRuntime name → object.
        namespaced: ``(namespace, name)`` → TrainingRuntime object.
    """

    cluster: Mapping[str, Mapping[str, Any]]
    namespaced: Mapping[tuple[str, str], Mapping[str, Any]]


# --- batch/v1 Job, v1 Pod, jobset.x-k8s.io JobSet -------------------------------------------------


def job_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """batch/v1 Job → one PodSet ``main`` (``pkg/controller/jobs/job/job_controller.go:356-375,451-467``).

    ``count = parallelism`` (API default 1), lowered to ``completions`` when that is smaller;
    ``minCount`` comes from annotation ``kueue.x-k8s.io/job-min-parallelism``, which Kueue's Job
    webhook requires to be an integer in ``[1, parallelism)``.
    """
    spec = _mapping(obj, "spec", "spec")
    parallelism = _int(spec.get("parallelism"), "spec.parallelism", default=1)
    completions = _optional_int(spec.get("completions"), "spec.completions")
    count = parallelism if completions is None or completions >= parallelism else completions
    min_count = None
    raw = _annotations(obj).get(JOB_MIN_PARALLELISM_ANNOTATION)
    if raw is not None:
        field = f"metadata.annotations[{JOB_MIN_PARALLELISM_ANNOTATION}]"
        try:
            min_count = int(str(raw), 10)
        except ValueError:
            raise FieldError(field, f"{raw!r} is not an integer") from None
        if not 0 < min_count < parallelism:
            raise FieldError(field, f"must be between 0 and parallelism {parallelism} (exclusive)")
    template = _template(spec, "template", "spec.template")
    return [RawPodSet(DEFAULT_POD_SET_NAME, count, min_count, template, "spec.template")]


def pod_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """v1 Pod (the ``pod`` integration, a single pod) → one PodSet ``main`` of 1 pod."""
    spec = _mapping(obj, "spec", "spec")
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), (dict, Mapping)) else {}
    template: dict[str, Any] = {"metadata": {}, "spec": spec}  # read only: shared with the Pod
    for key in ("labels", "annotations"):
        if isinstance(meta, (dict, Mapping)) and isinstance(meta.get(key), (dict, Mapping)):
            template["metadata"][key] = dict(meta[key])
    return [RawPodSet(DEFAULT_POD_SET_NAME, 1, None, template, "")]


def jobset_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """jobset.x-k8s.io/v1alpha2 JobSet → one PodSet per replicated Job (Kueue ``jobs/jobset``).

    Name = the replicated Job's name; ``count = replicas (default 1) × min(parallelism (default 1),
    completions (default parallelism))`` (``podsCount``/``podsCountPerReplica``).
    """
    spec = _mapping(obj, "spec", "spec")
    return _replicated_jobs_pod_sets(spec, "spec")


def _replicated_jobs_pod_sets(spec: Mapping[str, Any], path: str) -> list[RawPodSet]:
    jobs = _list(spec, "replicatedJobs", f"{path}.replicatedJobs")
    pod_sets = []
    for index, job in enumerate(jobs):
        job_path = f"{path}.replicatedJobs[{index}]"
        if not isinstance(job, (dict, Mapping)):
            raise FieldError(job_path, "must be a mapping")
        name = _str(job.get("name"), f"{job_path}.name")
        replicas = _int(job.get("replicas"), f"{job_path}.replicas", default=1)
        job_template = _mapping(job, "template", f"{job_path}.template")
        job_spec = _mapping(job_template, "spec", f"{job_path}.template.spec")
        parallelism = _int(job_spec.get("parallelism"), f"{job_path}.template.spec.parallelism", default=1)
        completions = _int(job_spec.get("completions"), f"{job_path}.template.spec.completions", parallelism)
        template_path = f"{job_path}.template.spec.template"
        template = _template(job_spec, "template", template_path)
        count = replicas * min(parallelism, completions)
        pod_sets.append(RawPodSet(name.lower(), count, None, template, template_path))
    return pod_sets


# --- kubeflow.org/v1 PyTorchJob --------------------------------------------------------------------


def pytorchjob_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """kubeflow.org/v1 PyTorchJob → ``master`` then ``worker`` (``kubeflowjob_controller.go:112-132``).

    Absent replica types are skipped; ``count = replicas``, 1 when omitted; ``elasticPolicy``,
    ``nprocPerNode`` and other replica types are ignored.
    """
    spec = _mapping(obj, "spec", "spec")
    specs = _mapping(spec, "pytorchReplicaSpecs", "spec.pytorchReplicaSpecs")
    pod_sets = []
    for replica_type in ("Master", "Worker"):
        replica_spec = specs.get(replica_type)
        if replica_spec is None:
            continue
        path = f"spec.pytorchReplicaSpecs.{replica_type}"
        if not isinstance(replica_spec, (dict, Mapping)):
            raise FieldError(path, "must be a mapping")
        count = _int(replica_spec.get("replicas"), f"{path}.replicas", default=1)
        template = _template(replica_spec, "template", f"{path}.template")
        pod_sets.append(RawPodSet(replica_type.lower(), count, None, template, f"{path}.template"))
    return pod_sets


# --- ray.io/v1 RayCluster, RayJob, RayService ------------------------------------------------------


def raycluster_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """ray.io/v1 RayCluster → ``head`` + one PodSet per worker group (``raycluster/common.go:76-128``)."""
    spec = _mapping(obj, "spec", "spec")
    return build_ray_pod_sets(spec, _annotations(obj), "spec")


def rayservice_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """ray.io/v1 RayService → the PodSets of ``spec.rayClusterConfig`` (``rayservice_controller.go:171-183``).

    The RayService's annotations decide ``ray.io/ft-enabled``.
    """
    spec = _mapping(obj, "spec", "spec")
    cluster_spec = _mapping(spec, "rayClusterConfig", "spec.rayClusterConfig")
    return build_ray_pod_sets(cluster_spec, _annotations(obj), "spec.rayClusterConfig")


def rayjob_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """ray.io/v1 RayJob → the cluster's PodSets plus the submitter (``rayjob_controller.go:133-154,252-332``).

    ``submissionMode`` defaults to ``K8sJobMode`` (CRD default), which adds PodSet ``submitter``
    (count 1, last) from ``submitterPodTemplate`` or KubeRay's default submitter pod;
    ``SidecarMode`` appends the default submitter container to ``head`` instead; ``HTTPMode`` and
    ``InteractiveMode`` add nothing. A RayJob that only sets ``clusterSelector`` runs on an existing
    cluster and is not accounted: it yields no PodSets.
    """
    spec = _mapping(obj, "spec", "spec")
    selector = spec.get("clusterSelector")
    cluster_spec = spec.get("rayClusterSpec")
    if selector:
        if cluster_spec is not None:
            raise FieldError(
                "spec.clusterSelector",
                "cannot be combined with spec.rayClusterSpec (Kueue rejects the RayJob)",
            )
        return []
    if cluster_spec is None:
        raise FieldError("spec.rayClusterSpec", "is required (Kueue rejects a RayJob without it)")
    if not isinstance(cluster_spec, (dict, Mapping)):
        raise FieldError("spec.rayClusterSpec", "must be a mapping")
    mode = spec.get("submissionMode")
    if mode is None:
        mode = RAY_SUBMISSION_MODES[0]
    if mode not in RAY_SUBMISSION_MODES:
        raise FieldError(
            "spec.submissionMode", f"must be one of {', '.join(RAY_SUBMISSION_MODES)}, not {mode!r}"
        )
    pod_sets = build_ray_pod_sets(cluster_spec, _annotations(obj), "spec.rayClusterSpec")
    if mode == "K8sJobMode":
        if spec.get("submitterPodTemplate") is not None:
            template = _template(spec, "submitterPodTemplate", "spec.submitterPodTemplate")
            path = "spec.submitterPodTemplate"
        else:
            template = {"spec": {"restartPolicy": "Never", "containers": [_default_submitter_container()]}}
            path = "<default submitter pod>"
        pod_sets.append(RawPodSet("submitter", 1, None, template, path))
    elif mode == "SidecarMode":
        head = pod_sets[0]
        template = _writable(head.template)
        template["spec"].setdefault("containers", []).append(_default_submitter_container())
        pod_sets[0] = RawPodSet(head.name, head.count, head.min_count, template, head.path)
    return pod_sets


def build_ray_pod_sets(
    cluster_spec: Mapping[str, Any], annotations: Mapping[str, str], path: str
) -> list[RawPodSet]:
    """Kueue's ``raycluster.BuildPodSets`` for a RayClusterSpec at ``path`` (v0.19.2 ``common.go:76-185``).

    ``head``: count 1; with GCS fault tolerance (``gcsFaultToleranceOptions`` set or annotation
    ``ray.io/ft-enabled: "true"``) the first head container's requests are raised to at least
    ``cpu 200m, memory 256Mi``; with ``enableInTreeAutoscaling: true`` a container ``autoscaler``
    is appended (``autoscalerOptions.resources``, else 500m/512Mi). Workers: one PodSet per group,
    ``count = replicas (CRD default 0) × numOfHosts`` (when > 1); min/max replicas are ignored.
    """
    head_path = f"{path}.headGroupSpec"
    head_spec = _mapping(cluster_spec, "headGroupSpec", head_path)
    head = _template(head_spec, "template", f"{head_path}.template")
    fault_tolerant = cluster_spec.get("gcsFaultToleranceOptions") is not None or (
        str(annotations.get(RAY_FT_ENABLED_ANNOTATION, "")).lower() == "true"
    )
    autoscaling = cluster_spec.get("enableInTreeAutoscaling") is True
    if fault_tolerant or autoscaling:
        head = _writable(head)
    if fault_tolerant:
        _raise_head_requests(head, f"{head_path}.template")
    if autoscaling:
        head["spec"].setdefault("containers", []).append(
            _autoscaler_container(cluster_spec, f"{path}.autoscalerOptions")
        )
    pod_sets = [RawPodSet("head", 1, None, head, f"{head_path}.template")]
    groups = cluster_spec.get("workerGroupSpecs")
    if groups is None:
        groups = []
    if not isinstance(groups, list):
        raise FieldError(f"{path}.workerGroupSpecs", "must be a list")
    for index, group in enumerate(groups):
        group_path = f"{path}.workerGroupSpecs[{index}]"
        if not isinstance(group, (dict, Mapping)):
            raise FieldError(group_path, "must be a mapping")
        name = _str(group.get("groupName"), f"{group_path}.groupName")
        if name.lower() == "head":
            raise FieldError(f"{group_path}.groupName", '"head" is reserved for the head group')
        count = _int(group.get("replicas"), f"{group_path}.replicas", default=0)
        hosts = _int(group.get("numOfHosts"), f"{group_path}.numOfHosts", default=1)
        if hosts > 1:
            count *= hosts
        template = _template(group, "template", f"{group_path}.template")
        pod_sets.append(RawPodSet(name.lower(), count, None, template, f"{group_path}.template"))
    return pod_sets


def _raise_head_requests(head: dict[str, Any], path: str) -> None:
    containers = (
        head.get("spec", {}).get("containers") if isinstance(head.get("spec"), (dict, Mapping)) else None
    )
    if not isinstance(containers, list) or not containers or not isinstance(containers[0], (dict, Mapping)):
        raise FieldError(
            f"{path}.spec.containers",
            "cannot account for Redis cleanup resources: head pod template must include the Ray container",
        )
    container = containers[0]
    assert isinstance(container, dict)
    resources = container.setdefault("resources", {})
    if not isinstance(resources, dict):
        raise FieldError(f"{path}.spec.containers[0].resources", "must be a mapping")
    requests = parse_resource_list(resources.get("requests"), f"{path}.spec.containers[0].resources.requests")
    raised = keep_max(requests, REDIS_CLEANUP_REQUESTS)
    resources["requests"] = {name: format_quantity(amount, name) for name, amount in raised.items()}


def _autoscaler_container(cluster_spec: Mapping[str, Any], path: str) -> dict[str, Any]:
    options = cluster_spec.get("autoscalerOptions")
    resources: Any = None
    if options is not None:
        if not isinstance(options, (dict, Mapping)):
            raise FieldError(path, "must be a mapping")
        resources = options.get("resources")
    if resources is None:
        resources = AUTOSCALER_DEFAULT_RESOURCES
    elif not isinstance(resources, (dict, Mapping)):
        raise FieldError(f"{path}.resources", "must be a mapping")
    else:
        parse_resource_list(resources.get("requests"), f"{path}.resources.requests")
        parse_resource_list(resources.get("limits"), f"{path}.resources.limits")
    return {"name": "autoscaler", "resources": copy.deepcopy(dict(resources))}


def _default_submitter_container() -> dict[str, Any]:
    # Two levels of str → str: a dict per level is the whole copy (copy.deepcopy cost ~5 µs per RayJob review).
    resources = {key: dict(values) for key, values in SUBMITTER_DEFAULT_RESOURCES.items()}
    return {"name": "ray-job-submitter", "resources": resources}


# --- workload.codeflare.dev/v1beta2 AppWrapper -----------------------------------------------------


def appwrapper_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """AppWrapper → ``<name>-<i>`` PodSets over all components (Kueue ``appwrapper_controller.go:121-164``).

    Each component uses its declared ``podSets`` (``path`` + ``replicas``, default 1) or, when none
    are declared, the PodSets the AppWrapper library infers for Pod, Deployment, StatefulSet,
    Job, JobSet, PyTorchJob, RayCluster and RayJob (appwrapper v1.2.1 ``utils.go:475-583``); other
    kinds contribute nothing. Templates are reduced to the subset the library copies: container
    requests/limits rounded up to milli precision, no ``restartPolicy`` on init containers (so no
    sidecars), no ``runtimeClassName`` and no pod-level ``resources``.
    """
    name = str((obj.get("metadata") or {}).get("name") or "")
    spec = _mapping(obj, "spec", "spec")
    components = _list(spec, "components", "spec.components")
    pod_sets: list[RawPodSet] = []
    for index, component in enumerate(components):
        comp_path = f"spec.components[{index}]"
        if not isinstance(component, (dict, Mapping)):
            raise FieldError(comp_path, "must be a mapping")
        wrapped = _mapping(component, "template", f"{comp_path}.template")
        declared = component.get("podSets")
        if declared:
            if not isinstance(declared, list):
                raise FieldError(f"{comp_path}.podSets", "must be a list")
            entries = []
            for ps_index, entry in enumerate(declared):
                entry_path = f"{comp_path}.podSets[{ps_index}]"
                if not isinstance(entry, (dict, Mapping)):
                    raise FieldError(entry_path, "must be a mapping")
                path = _str(entry.get("path"), f"{entry_path}.path")
                entries.append((path, _int(entry.get("replicas"), f"{entry_path}.replicas", default=1)))
        else:
            entries = _infer_appwrapper_pod_sets(wrapped, f"{comp_path}.template")
        for path, replicas in entries:
            raw = _at_path(wrapped, path, f"{comp_path}.template")
            template = _appwrapper_template(raw, f"{comp_path}.{path}")
            pod_sets.append(
                RawPodSet(f"{name}-{len(pod_sets)}".lower(), replicas, None, template, f"{comp_path}.{path}")
            )
    return pod_sets


def appwrapper_inferred_pod_sets(wrapped: Mapping[str, Any]) -> list[tuple[str, int]]:
    """The ``(path, replicas)`` PodSets the AppWrapper library infers for a wrapped object when its component
    declares none (appwrapper v1.2.1 ``pkg/utils/utils.go:475-583`` ``InferPodSets``): Pod, Deployment,
    StatefulSet, Job, JobSet, PyTorchJob, ``ray.io/v1`` RayCluster and RayJob; ``[]`` for any other kind.

    Raises:
        FieldError: a replica count that is not an integer.
    """
    return _infer_appwrapper_pod_sets(wrapped, "template")


def _infer_appwrapper_pod_sets(wrapped: Mapping[str, Any], path: str) -> list[tuple[str, int]]:
    kind = (wrapped.get("apiVersion"), wrapped.get("kind"))
    spec = wrapped.get("spec") if isinstance(wrapped.get("spec"), (dict, Mapping)) else {}
    assert isinstance(spec, (dict, Mapping))
    if kind == ("v1", "Pod"):
        return [("template", 1)]
    if kind in (("apps/v1", "Deployment"), ("apps/v1", "StatefulSet")):
        return [("template.spec.template", _int(spec.get("replicas"), f"{path}.spec.replicas", default=1))]
    if kind == ("batch/v1", "Job"):
        return [("template.spec.template", _wrapped_job_pods(spec, 1))]
    if kind == ("jobset.x-k8s.io/v1alpha2", "JobSet"):
        entries = []
        jobs = spec.get("replicatedJobs")
        for index, job in enumerate(jobs if isinstance(jobs, list) else []):
            if not isinstance(job, (dict, Mapping)) or not isinstance(job.get("template"), (dict, Mapping)):
                continue
            job_spec = job["template"].get("spec")
            pods = _wrapped_job_pods(job_spec if isinstance(job_spec, (dict, Mapping)) else {}, 1)
            replicas = int(job["replicas"]) if _is_int(job.get("replicas")) else 1
            entries.append((f"template.spec.replicatedJobs[{index}].template.spec.template", replicas * pods))
        return entries
    if kind == ("kubeflow.org/v1", "PyTorchJob"):
        entries = []
        specs = spec.get("pytorchReplicaSpecs")
        for replica_type in ("Master", "Worker"):
            replica = specs.get(replica_type) if isinstance(specs, (dict, Mapping)) else None
            if isinstance(replica, (dict, Mapping)) and "template" in replica:
                prefix = f"template.spec.pytorchReplicaSpecs.{replica_type}"
                replicas = _int(
                    replica.get("replicas"), f"{path}.spec.pytorchReplicaSpecs.{replica_type}.replicas", 1
                )
                entries.append((f"{prefix}.template", replicas))
        return entries
    if kind == ("ray.io/v1", "RayCluster"):
        return _infer_ray(spec, "template.spec.", path)
    if kind == ("ray.io/v1", "RayJob"):
        cluster = spec.get("rayClusterSpec")
        return _infer_ray(
            cluster if isinstance(cluster, (dict, Mapping)) else {}, "template.spec.rayClusterSpec.", path
        )
    return []


def _wrapped_job_pods(job_spec: Mapping[str, Any], default: int) -> int:
    parallelism = job_spec.get("parallelism")
    pods = int(parallelism) if _is_int(parallelism) else default
    completions = job_spec.get("completions")
    if _is_int(completions) and int(completions) < pods:
        pods = int(completions)
    return pods


def _infer_ray(cluster_spec: Mapping[str, Any], prefix: str, path: str) -> list[tuple[str, int]]:
    entries = [(f"{prefix}headGroupSpec.template", 1)]
    groups = cluster_spec.get("workerGroupSpecs")
    for index, group in enumerate(groups if isinstance(groups, list) else []):
        if isinstance(group, (dict, Mapping)) and "template" in group:
            replicas = _int(
                group.get("replicas"), f"{path}.{prefix[9:]}workerGroupSpecs[{index}].replicas", 1
            )
            entries.append((f"{prefix}workerGroupSpecs[{index}].template", replicas))
    return entries


def _at_path(wrapped: Mapping[str, Any], path: str, base: str) -> Any:
    """Follow an AppWrapper ``path`` (``template.spec.x[0].y``) into the wrapped object.

    ``template`` is the wrapped object itself (appwrapper ``getValueAtPath``).
    """
    if not path.startswith("template"):
        raise FieldError(f"{base}: path {path!r}", "first element of the path must be 'template'")
    cursor: Any = wrapped
    rest = path[len("template") :]
    done = "template"
    while rest:
        if rest.startswith("["):
            end = rest.find("]")
            if end < 0 or not rest[1:end].isdigit():
                raise FieldError(f"{base}: path {path!r}", f"invalid index expression at {done!r}")
            index = int(rest[1:end])
            if not isinstance(cursor, list) or index >= len(cursor):
                raise FieldError(f"{base}: path {path!r}", f"no element {index} at {done!r}")
            cursor = cursor[index]
            done += rest[: end + 1]
            rest = rest[end + 1 :]
        elif rest.startswith("."):
            rest = rest[1:]
            cut = min((i for i in (rest.find("."), rest.find("[")) if i > 0), default=len(rest))
            key = rest[:cut]
            if not isinstance(cursor, (dict, Mapping)) or key not in cursor:
                raise FieldError(f"{base}: path {path!r}", f"missing field {key!r} at {done!r}")
            cursor = cursor[key]
            done += "." + key
            rest = rest[cut:]
        else:
            raise FieldError(f"{base}: path {path!r}", f"invalid path element {rest!r}")
    return cursor


def _appwrapper_template(raw: Any, path: str) -> dict[str, Any]:
    """The subset of a pod template that the AppWrapper library copies.

    Mirrors appwrapper v1.2.1 ``GetPodTemplateSpec`` and ``copyContainers``.
    """
    if not isinstance(raw, (dict, Mapping)) or not isinstance(raw.get("spec"), (dict, Mapping)):
        raise FieldError(path, "does not contain a pod spec")
    spec = raw["spec"]
    template: dict[str, Any] = {"metadata": {}, "spec": {}}
    meta = raw.get("metadata")
    for key in ("labels", "annotations"):
        if isinstance(meta, (dict, Mapping)) and isinstance(meta.get(key), (dict, Mapping)):
            template["metadata"][key] = {k: v for k, v in meta[key].items() if isinstance(v, str)}
    for key in ("initContainers", "containers"):
        containers = spec.get(key)
        if containers is None:
            continue
        if not isinstance(containers, list):
            raise FieldError(f"{path}.spec.{key}", "must be a list")
        template["spec"][key] = [
            _appwrapper_container(c, f"{path}.spec.{key}[{i}]") for i, c in enumerate(containers)
        ]
    for key in (
        "restartPolicy", "terminationGracePeriodSeconds", "dnsPolicy", "nodeSelector", "nodeName",
        "securityContext", "affinity", "schedulerName", "tolerations", "priorityClassName",
        "preemptionPolicy", "topologySpreadConstraints",
    ):  # fmt: skip
        if spec.get(key) is not None:
            template["spec"][key] = copy.deepcopy(spec[key])
    if spec.get("overhead") is not None:
        template["spec"]["overhead"] = _round_up_milli(spec["overhead"], f"{path}.spec.overhead")
    return template


def _appwrapper_container(container: Any, path: str) -> dict[str, Any]:
    if not isinstance(container, (dict, Mapping)):
        raise FieldError(path, "must be a mapping")
    copied = {
        k: copy.deepcopy(container[k])
        for k in ("name", "image", "command", "args", "securityContext")
        if k in container
    }
    resources = container.get("resources")
    if resources is not None:
        if not isinstance(resources, (dict, Mapping)):
            raise FieldError(f"{path}.resources", "must be a mapping")
        copied["resources"] = {
            key: _round_up_milli(resources[key], f"{path}.resources.{key}")
            for key in ("requests", "limits")
            if resources.get(key) is not None
        }
    return copied


def _round_up_milli(value: Any, path: str) -> dict[str, str]:
    amounts = parse_resource_list(value, path)
    return {name: format_quantity(round_up_milli(amount), name) for name, amount in amounts.items()}


# --- trainer.kubeflow.org/v1alpha1 TrainJob --------------------------------------------------------


def trainjob_pod_sets(obj: Mapping[str, Any], runtimes: TrainingRuntimes, namespace: str) -> list[RawPodSet]:
    """TrainJob → the PodSets of the JobSet that Kubeflow Trainer builds from its runtime.

    Kueue (``pkg/controller/jobs/trainjob/trainjob_controller.go``) resolves ``spec.runtimeRef``
    (kind default ``ClusterTrainingRuntime``), builds the JobSet with Trainer's builder and uses the
    JobSet PodSets. Modelled here: initializer Jobs get ``replicas: 1``; the Job labelled
    ``trainer.kubeflow.org/trainjob-ancestor-step: trainer`` gets ``replicas: 1`` and
    ``parallelism = completions = spec.trainer.numNodes`` (else ``mlPolicy.numNodes``, else 1 with an
    mlPolicy, else the Job's parallelism); every container named ``node`` takes
    ``spec.trainer.resourcesPerNode``. Not modelled (raises FieldError): MPI ``runLauncherAsNode``
    and user ``runtimePatches`` that patch replicated Job templates.

    Raises:
        FieldError: the runtime is not among ``runtimes`` or the TrainJob uses an unmodelled feature.
    """
    spec = _mapping(obj, "spec", "spec")
    where, runtime = _resolve_runtime(spec, runtimes, namespace)
    _reject_template_patches(spec)
    runtime_spec = _mapping(runtime, "spec", f"{where}: spec")
    ml_policy = runtime_spec.get("mlPolicy")
    if ml_policy is not None and not isinstance(ml_policy, (dict, Mapping)):
        raise FieldError(f"{where}: spec.mlPolicy", "must be a mapping")
    mpi = ml_policy.get("mpi") if ml_policy else None
    if isinstance(mpi, (dict, Mapping)) and mpi.get("runLauncherAsNode") is True:
        raise FieldError(f"{where}: spec.mlPolicy.mpi.runLauncherAsNode", "is not supported")
    template = _mapping(runtime_spec, "template", f"{where}: spec.template")
    jobset_spec = copy.deepcopy(dict(_mapping(template, "spec", f"{where}: spec.template.spec")))
    trainer = spec.get("trainer")
    if trainer is not None and not isinstance(trainer, (dict, Mapping)):
        raise FieldError("spec.trainer", "must be a mapping")
    num_nodes = _optional_int((trainer or {}).get("numNodes"), "spec.trainer.numNodes")
    if ml_policy is not None:
        default_nodes = _int(ml_policy.get("numNodes"), f"{where}: spec.mlPolicy.numNodes", 1)
        num_nodes = default_nodes if num_nodes is None else num_nodes
    resources = _resources_per_node((trainer or {}).get("resourcesPerNode"))
    jobs = jobset_spec.get("replicatedJobs")
    for job in jobs if isinstance(jobs, list) else []:
        if isinstance(job, dict) and isinstance(job.get("template"), dict):
            _apply_trainer_builder(job, num_nodes, resources)
    try:
        return _replicated_jobs_pod_sets(jobset_spec, "spec")
    except FieldError as exc:
        raise FieldError(f"{where}: spec.template.{exc.field}", exc.reason) from exc


def _resolve_runtime(
    spec: Mapping[str, Any], runtimes: TrainingRuntimes, namespace: str
) -> tuple[str, Mapping[str, Any]]:
    ref = _mapping(spec, "runtimeRef", "spec.runtimeRef")
    name = _str(ref.get("name"), "spec.runtimeRef.name")
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    if kind == "ClusterTrainingRuntime":
        runtime = runtimes.cluster.get(name)
    elif kind == "TrainingRuntime":
        runtime = runtimes.namespaced.get((namespace, name))
    else:
        raise FieldError(
            "spec.runtimeRef.kind", f"must be ClusterTrainingRuntime or TrainingRuntime, not {kind!r}"
        )
    if runtime is None:
        raise FieldError(
            "spec.runtimeRef",
            f'{kind} "{name}" is not known; Kueue derives TrainJob pod sets from the runtime, '
            "so supply it (--with RUNTIME.yaml)",
        )
    return f"{kind} {name}", runtime


def _resources_per_node(value: Any) -> dict[str, Any] | None:
    """``spec.trainer.resourcesPerNode`` as the resources to set, or ``None`` when it sets nothing."""
    if value is None:
        return None
    if not isinstance(value, (dict, Mapping)):
        raise FieldError("spec.trainer.resourcesPerNode", "must be a mapping")
    parse_resource_list(value.get("requests"), "spec.trainer.resourcesPerNode.requests")
    parse_resource_list(value.get("limits"), "spec.trainer.resourcesPerNode.limits")
    resources = {k: copy.deepcopy(value[k]) for k in ("requests", "limits") if value.get(k) is not None}
    return resources or None


def _apply_trainer_builder(
    job: dict[str, Any], num_nodes: int | None, resources: dict[str, Any] | None
) -> None:
    """Kubeflow Trainer's JobSet builder (``Initializer``/``Trainer``) on one replicated Job, in place."""
    job_template = job["template"]
    meta = job_template.get("metadata")
    labels = meta.get("labels") if isinstance(meta, (dict, Mapping)) else None
    ancestor = labels.get(TRAINJOB_ANCESTOR_LABEL) if isinstance(labels, (dict, Mapping)) else None
    job_spec = job_template.setdefault("spec", {})
    if not isinstance(job_spec, dict):
        return
    if ancestor in ("dataset-initializer", "model-initializer"):
        job["replicas"] = 1
    elif ancestor == "trainer":
        count = num_nodes
        if count is None:
            parallelism = job_spec.get("parallelism")
            count = int(parallelism) if _is_int(parallelism) else 1
        job["replicas"] = 1
        job_spec["parallelism"] = count
        job_spec["completions"] = count
    pod_template = job_spec.get("template")
    pod_spec = pod_template.get("spec") if isinstance(pod_template, (dict, Mapping)) else None
    containers = pod_spec.get("containers") if isinstance(pod_spec, (dict, Mapping)) else None
    if resources is None or not isinstance(containers, list):
        return
    for container in containers:
        if isinstance(container, dict) and container.get("name") == "node":
            container["resources"] = copy.deepcopy(resources)


def _reject_template_patches(spec: Mapping[str, Any]) -> None:
    patches = spec.get("runtimePatches")
    for index, patch in enumerate(patches if isinstance(patches, list) else []):
        if not isinstance(patch, (dict, Mapping)) or patch.get("manager") == "kueue.x-k8s.io/manager":
            continue
        runtime_spec = patch.get("trainingRuntimeSpec") or {}
        jobs = ((runtime_spec.get("template") or {}).get("spec") or {}).get("replicatedJobs")
        if isinstance(jobs, list) and any(isinstance(j, (dict, Mapping)) and j.get("template") for j in jobs):
            raise FieldError(
                f"spec.runtimePatches[{index}]", "patches of replicated Job templates are not supported"
            )


# --- kueue.x-k8s.io Workload -----------------------------------------------------------------------


def workload_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """kueue.x-k8s.io Workload → its ``spec.podSets`` as stored (name default ``main``, count default 1)."""
    spec = _mapping(obj, "spec", "spec")
    entries = _list(spec, "podSets", "spec.podSets")
    pod_sets = []
    for index, entry in enumerate(entries):
        path = f"spec.podSets[{index}]"
        if not isinstance(entry, (dict, Mapping)):
            raise FieldError(path, "must be a mapping")
        name = entry.get("name")
        name = DEFAULT_POD_SET_NAME if name is None else _str(name, f"{path}.name")
        count = _int(entry.get("count"), f"{path}.count", default=1)
        min_count = _optional_int(entry.get("minCount"), f"{path}.minCount")
        template = _template(entry, "template", f"{path}.template")
        pod_sets.append(RawPodSet(name, count, min_count, template, f"{path}.template"))
    return pod_sets


#: Kueue integration → the PodSets of one of its objects, for the job frameworks whose registry record says
#: ``pod_sets="object"`` (:mod:`batchplane.frameworks`; Kueue's ``PodSets()`` of ``pkg/controller/jobs/<framework>/``).
POD_SETS_OF_FRAMEWORK: dict[str, Callable[[Mapping[str, Any]], list[RawPodSet]]] = {
    "batch/job": job_pod_sets,
    "pod": pod_pod_sets,
    "jobset.x-k8s.io/jobset": jobset_pod_sets,
    "kubeflow.org/pytorchjob": pytorchjob_pod_sets,
    "ray.io/raycluster": raycluster_pod_sets,
    "ray.io/rayjob": rayjob_pod_sets,
    "ray.io/rayservice": rayservice_pod_sets,
    "workload.codeflare.dev/appwrapper": appwrapper_pod_sets,
}
_FROM_OBJECT = [f for f in FRAMEWORKS if f.pod_sets == "object"]
if {f.name for f in _FROM_OBJECT} != set(
    POD_SETS_OF_FRAMEWORK
):  # pragma: no cover - registry/accounting mismatch
    raise ImportError(
        "POD_SETS_OF_FRAMEWORK must cover exactly the frameworks registered with pod_sets='object'"
    )

#: (apiVersion, kind) → extractor, for objects that need nothing but themselves: the registry's frameworks, then
#: Kueue's own Workload (both served versions).
SIMPLE_EXTRACTORS: dict[tuple[str, str], Callable[[Mapping[str, Any]], list[RawPodSet]]] = {
    **{f.gvk: POD_SETS_OF_FRAMEWORK[f.name] for f in _FROM_OBJECT},
    ("kueue.x-k8s.io/v1beta2", "Workload"): workload_pod_sets,
    ("kueue.x-k8s.io/v1beta1", "Workload"): workload_pod_sets,
}
TRAINJOB_KIND: tuple[str, str] = next(f.gvk for f in FRAMEWORKS if f.pod_sets == "training-runtime")
"""(apiVersion, kind) of the one framework whose PodSets need its TrainingRuntime (TrainJob)."""


# --- helpers ---------------------------------------------------------------------------------------


def _mapping(obj: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    value = obj.get(key)
    if value is None:
        raise FieldError(path, "is required")
    if not isinstance(value, (dict, Mapping)):
        raise FieldError(path, "must be a mapping")
    return value


def _list(obj: Mapping[str, Any], key: str, path: str) -> Sequence[Any]:
    value = obj.get(key)
    if value is None:
        raise FieldError(path, "is required")
    if not isinstance(value, list):
        raise FieldError(path, "must be a list")
    return value


def _template(obj: Mapping[str, Any], key: str, path: str) -> dict[str, Any]:
    """The pod template at ``obj[key]``, which must be a mapping with a ``spec`` mapping — the object's own
    (nothing is copied, as this runs on every admission review); a caller that changes it takes a
    :func:`_writable` copy first."""
    template = _mapping(obj, key, path)
    spec = template.get("spec")
    if spec is None:
        raise FieldError(f"{path}.spec", "is required")
    if not isinstance(spec, (dict, Mapping)):
        raise FieldError(f"{path}.spec", "must be a mapping")
    return template if type(template) is dict else dict(template)


def _writable(template: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a pod template (from :func:`_template`) that the accounting may change without touching the job.

    Copies only what Kueue's accounting changes: the template, its ``metadata`` and ``spec``, the
    ``containers``/``initContainers`` lists, each container and its ``resources`` (containers are appended for
    the Ray autoscaler and submitter, the head's requests are raised). Everything else is shared and only read.
    """
    spec = template["spec"]
    copied = dict(template)
    if isinstance(copied.get("metadata"), (dict, Mapping)):
        copied["metadata"] = dict(copied["metadata"])
    spec_copy = dict(spec)
    for list_key in ("containers", "initContainers"):
        items = spec_copy.get(list_key)
        if isinstance(items, list):
            spec_copy[list_key] = [_container_copy(item) for item in items]
    copied["spec"] = spec_copy
    return copied


def _container_copy(container: Any) -> Any:
    if not isinstance(container, (dict, Mapping)):
        return container
    copied = dict(container)
    if isinstance(copied.get("resources"), (dict, Mapping)):
        copied["resources"] = dict(copied["resources"])
    return copied


def _str(value: Any, path: str) -> str:
    if value is None:
        raise FieldError(path, "is required")
    if not isinstance(value, str) or not value:
        raise FieldError(path, f"must be a non-empty string, not {value!r}")
    return value


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(value: Any, path: str, default: int) -> int:
    found = _optional_int(value, path)
    return default if found is None else found


def _optional_int(value: Any, path: str) -> int | None:
    if value is None:
        return None
    if not _is_int(value):
        raise FieldError(path, f"must be an integer, not {value!r}")
    if value < 0:
        raise FieldError(path, f"must be ≥ 0, not {value}")
    return int(value)


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, str]:
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, (dict, Mapping)) else None
    return annotations if isinstance(annotations, (dict, Mapping)) else {}

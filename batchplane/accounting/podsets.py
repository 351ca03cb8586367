"""What every job framework's PodSet extraction is built from: :class:`RawPodSet`, the limits Kueue v0.19.2 puts on
PodSets, the field readers that raise :class:`~batchplane.accounting.model.FieldError` naming the field, the
replicated-Job PodSets that JobSet and TrainJob share, and Kueue's own Workload kind.

Each framework's extraction lives in its own module of :mod:`batchplane.frameworks` (``job_pod_sets`` in
``frameworks/batch_job.py``, ``rayjob_pod_sets`` in ``frameworks/rayjob.py``, …), as Kueue keeps each in
``pkg/controller/jobs/<framework>/``; :mod:`batchplane.accounting.workload` looks them up by kind. Each takes a job
object as a plain mapping (a parsed manifest), applies the API-server defaults Kueue would see and returns
:class:`RawPodSet`\\ s in Kueue's order with Kueue's names, citing its sources (file and lines at
https://github.com/kubernetes-sigs/kueue/tree/v0.19.2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from batchplane.accounting.model import FieldError

#: ``kueue.DefaultPodSetName`` (``apis/kueue/v1beta2/constants.go:21``).
DEFAULT_POD_SET_NAME = "main"
#: ``jobframework.MaxPodSets`` (``pkg/controller/jobframework/constants.go:21``).
MAX_POD_SETS = 18


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


# --- replicated Jobs (JobSet, and the JobSet a TrainJob becomes) ---------------------------------------


def replicated_jobs_pod_sets(spec: Mapping[str, Any], path: str) -> list[RawPodSet]:
    """One PodSet per replicated Job of a JobSet spec at ``path``: name = the replicated Job's name (lower-cased),
    ``count = replicas (default 1) × min(parallelism (default 1), completions (default parallelism))`` (Kueue
    ``jobs/jobset`` ``podsCount``/``podsCountPerReplica``)."""
    jobs = list_at(spec, "replicatedJobs", f"{path}.replicatedJobs")
    pod_sets = []
    for index, job in enumerate(jobs):
        job_path = f"{path}.replicatedJobs[{index}]"
        if not isinstance(job, (dict, Mapping)):
            raise FieldError(job_path, "must be a mapping")
        name = string_at(job.get("name"), f"{job_path}.name")
        replicas = int_at(job.get("replicas"), f"{job_path}.replicas", default=1)
        job_template = mapping_at(job, "template", f"{job_path}.template")
        job_spec = mapping_at(job_template, "spec", f"{job_path}.template.spec")
        parallelism = int_at(job_spec.get("parallelism"), f"{job_path}.template.spec.parallelism", default=1)
        completions = int_at(
            job_spec.get("completions"), f"{job_path}.template.spec.completions", parallelism
        )
        template_path = f"{job_path}.template.spec.template"
        template = template_at(job_spec, "template", template_path)
        count = replicas * min(parallelism, completions)
        pod_sets.append(RawPodSet(name.lower(), count, None, template, template_path))
    return pod_sets


# --- kueue.x-k8s.io Workload -----------------------------------------------------------------------


def workload_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """kueue.x-k8s.io Workload → its ``spec.podSets`` as stored (name default ``main``, count default 1)."""
    spec = mapping_at(obj, "spec", "spec")
    entries = list_at(spec, "podSets", "spec.podSets")
    pod_sets = []
    for index, entry in enumerate(entries):
        path = f"spec.podSets[{index}]"
        if not isinstance(entry, (dict, Mapping)):
            raise FieldError(path, "must be a mapping")
        name = entry.get("name")
        name = DEFAULT_POD_SET_NAME if name is None else string_at(name, f"{path}.name")
        count = int_at(entry.get("count"), f"{path}.count", default=1)
        min_count = optional_int_at(entry.get("minCount"), f"{path}.minCount")
        template = template_at(entry, "template", f"{path}.template")
        pod_sets.append(RawPodSet(name, count, min_count, template, f"{path}.template"))
    return pod_sets


# --- helpers ---------------------------------------------------------------------------------------


def mapping_at(obj: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    value = obj.get(key)
    if value is None:
        raise FieldError(path, "is required")
    if not isinstance(value, (dict, Mapping)):
        raise FieldError(path, "must be a mapping")
    return value


def list_at(obj: Mapping[str, Any], key: str, path: str) -> Sequence[Any]:
    value = obj.get(key)
    if value is None:
        raise FieldError(path, "is required")
    if not isinstance(value, list):
        raise FieldError(path, "must be a list")
    return value


def template_at(obj: Mapping[str, Any], key: str, path: str) -> dict[str, Any]:
    """The pod template at ``obj[key]``, which must be a mapping with a ``spec`` mapping — the object's own
    (nothing is copied, as this runs on every admission review); a caller that changes it takes a
    :func:`writable` copy first."""
    template = mapping_at(obj, key, path)
    spec = template.get("spec")
    if spec is None:
        raise FieldError(f"{path}.spec", "is required")
    if not isinstance(spec, (dict, Mapping)):
        raise FieldError(f"{path}.spec", "must be a mapping")
    return template if type(template) is dict else dict(template)


def writable(template: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a pod template (from :func:`template_at`) that the accounting may change without touching the job.

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


def string_at(value: Any, path: str) -> str:
    if value is None:
        raise FieldError(path, "is required")
    if not isinstance(value, str) or not value:
        raise FieldError(path, f"must be a non-empty string, not {value!r}")
    return value


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def int_at(value: Any, path: str, default: int) -> int:
    found = optional_int_at(value, path)
    return default if found is None else found


def optional_int_at(value: Any, path: str) -> int | None:
    if value is None:
        return None
    if not is_int(value):
        raise FieldError(path, f"must be an integer, not {value!r}")
    if value < 0:
        raise FieldError(path, f"must be ≥ 0, not {value}")
    return int(value)


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, (dict, Mapping)) else None
    return annotations if isinstance(annotations, (dict, Mapping)) else {}

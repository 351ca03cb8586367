"""CodeFlare AppWrapper: Kueue's ``workload.codeflare.dev/appwrapper`` integration.

Registered in ``pkg/controller/jobs/appwrapper/appwrapper_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from batchplane.accounting.model import FieldError
from batchplane.accounting.pod_requests import parse_resource_list
from batchplane.accounting.podsets import (
    RawPodSet,
    int_at,
    is_int,
    list_at,
    mapping_at,
    string_at,
)
from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules
from batchplane.quantity import format_quantity, round_up_milli


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
    spec = mapping_at(obj, "spec", "spec")
    components = list_at(spec, "components", "spec.components")
    pod_sets: list[RawPodSet] = []
    for index, component in enumerate(components):
        comp_path = f"spec.components[{index}]"
        if not isinstance(component, (dict, Mapping)):
            raise FieldError(comp_path, "must be a mapping")
        wrapped = mapping_at(component, "template", f"{comp_path}.template")
        declared = component.get("podSets")
        if declared:
            if not isinstance(declared, list):
                raise FieldError(f"{comp_path}.podSets", "must be a list")
            entries = []
            for ps_index, entry in enumerate(declared):
                entry_path = f"{comp_path}.podSets[{ps_index}]"
                if not isinstance(entry, (dict, Mapping)):
                    raise FieldError(entry_path, "must be a mapping")
                path = string_at(entry.get("path"), f"{entry_path}.path")
                entries.append((path, int_at(entry.get("replicas"), f"{entry_path}.replicas", default=1)))
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
        return [("template.spec.template", int_at(spec.get("replicas"), f"{path}.spec.replicas", default=1))]
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
            replicas = int(job["replicas"]) if is_int(job.get("replicas")) else 1
            entries.append((f"template.spec.replicatedJobs[{index}].template.spec.template", replicas * pods))
        return entries
    if kind == ("kubeflow.org/v1", "PyTorchJob"):
        entries = []
        specs = spec.get("pytorchReplicaSpecs")
        for replica_type in ("Master", "Worker"):
            replica = specs.get(replica_type) if isinstance(specs, (dict, Mapping)) else None
            if isinstance(replica, (dict, Mapping)) and "template" in replica:
                prefix = f"template.spec.pytorchReplicaSpecs.{replica_type}"
                replicas = int_at(
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
    pods = int(parallelism) if is_int(parallelism) else default
    completions = job_spec.get("completions")
    if is_int(completions) and int(completions) < pods:
        pods = int(completions)
    return pods


def _infer_ray(cluster_spec: Mapping[str, Any], prefix: str, path: str) -> list[tuple[str, int]]:
    entries = [(f"{prefix}headGroupSpec.template", 1)]
    groups = cluster_spec.get("workerGroupSpecs")
    for index, group in enumerate(groups if isinstance(groups, list) else []):
        if isinstance(group, (dict, Mapping)) and "template" in group:
            replicas = int_at(
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


FRAMEWORK: JobFramework = JobFramework(
    name="workload.codeflare.dev/appwrapper",
    group="workload.codeflare.dev",
    version="v1beta2",
    kind="AppWrapper",
    plural="appwrappers",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/appwrapper/appwrapper_controller.go",
    rhbok_name="AppWrapper",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("workload.codeflare.dev", "appwrappers"),
    pod_sets=appwrapper_pod_sets,
    admission_review=True,
    # UPDATE: only the queue label matters: the AppWrapper webhook keeps spec.components immutable
    # (https://github.com/project-codeflare/appwrapper/blob/main/internal/webhook/appwrapper_webhook.go,
    # validateAppWrapperUpdate) and Kueue's ValidateJobOnUpdate lets the label change while suspended.
    update_review=True,
    operator="appwrapper",
)

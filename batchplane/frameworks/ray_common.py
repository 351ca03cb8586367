"""What KubeRay's three Kueue integrations share (RayCluster, RayJob, RayService): the PodSets Kueue builds for a
RayClusterSpec (``pkg/controller/jobs/raycluster/common.go`` at Kueue v0.19.2) and the autoscaling rule.

Not a framework of its own: :mod:`batchplane.frameworks.raycluster`, ``rayjob`` and ``rayservice`` use it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from batchplane.accounting.model import FieldError
from batchplane.accounting.pod_requests import keep_max, parse_resource_list
from batchplane.accounting.podsets import (
    RawPodSet,
    int_at,
    mapping_at,
    string_at,
    template_at,
    writable,
)
from batchplane.frameworks.framework import ReviewProblem
from batchplane.quantity import format_quantity

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
    head_spec = mapping_at(cluster_spec, "headGroupSpec", head_path)
    head = template_at(head_spec, "template", f"{head_path}.template")
    fault_tolerant = cluster_spec.get("gcsFaultToleranceOptions") is not None or (
        str(annotations.get(RAY_FT_ENABLED_ANNOTATION, "")).lower() == "true"
    )
    autoscaling = cluster_spec.get("enableInTreeAutoscaling") is True
    if fault_tolerant or autoscaling:
        head = writable(head)
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
        name = string_at(group.get("groupName"), f"{group_path}.groupName")
        if name.lower() == "head":
            raise FieldError(f"{group_path}.groupName", '"head" is reserved for the head group')
        count = int_at(group.get("replicas"), f"{group_path}.replicas", default=0)
        hosts = int_at(group.get("numOfHosts"), f"{group_path}.numOfHosts", default=1)
        if hosts > 1:
            count *= hosts
        template = template_at(group, "template", f"{group_path}.template")
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


def default_submitter_container() -> dict[str, Any]:
    # Two levels of str → str: a dict per level is the whole copy (copy.deepcopy cost ~5 µs per RayJob review).
    resources = {key: dict(values) for key, values in SUBMITTER_DEFAULT_RESOURCES.items()}
    return {"name": "ray-job-submitter", "resources": resources}


ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
"""Marks an elastic job; Kueue only allows Ray in-tree autoscaling with it."""


def autoscaling_problems(cluster_spec: Any, annotations: Mapping[str, str]) -> list[ReviewProblem]:
    """``enableInTreeAutoscaling: true`` on a RayClusterSpec needs ``kueue.x-k8s.io/elastic-job: "true"`` on the
    object (without it Kueue rejects the job or the cluster hangs suspended)."""
    if (
        not isinstance(cluster_spec, (dict, Mapping))
        or cluster_spec.get("enableInTreeAutoscaling") is not True
    ):
        return []
    if str(annotations.get(ELASTIC_JOB_ANNOTATION, "")).lower() == "true":
        return []
    return [
        ReviewProblem(
            "ray-autoscaling-not-elastic",
            "enableInTreeAutoscaling needs the annotation "
            f'{ELASTIC_JOB_ANNOTATION}: "true" under Kueue (without it Kueue rejects the job or '
            "the cluster hangs suspended); add the annotation or disable autoscaling",
        )
    ]

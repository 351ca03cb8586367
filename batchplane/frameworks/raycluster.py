"""KubeRay RayCluster: Kueue's ``ray.io/raycluster`` integration.

Registered in ``pkg/controller/jobs/raycluster/raycluster_controller.go`` at Kueue v0.19.2.

The script also grants ``update`` and ``patch`` on ``rayclusters``: MultiKueue updates the remote RayCluster
(elastic RayClusters scale on the worker).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.accounting.podsets import (
    RawPodSet,
    annotations_of,
    mapping_at,
)
from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, ReviewProblem, dispatched_rules
from batchplane.frameworks.ray_common import (
    autoscaling_problems,
    build_ray_pod_sets,
)


def raycluster_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """ray.io/v1 RayCluster → ``head`` + one PodSet per worker group (``raycluster/common.go:76-128``)."""
    spec = mapping_at(obj, "spec", "spec")
    return build_ray_pod_sets(spec, annotations_of(obj), "spec")


def raycluster_review(obj: Mapping[str, Any]) -> list[ReviewProblem]:
    """A RayCluster with in-tree autoscaling but without Kueue's elastic-job annotation."""
    return autoscaling_problems(obj.get("spec"), annotations_of(obj))


FRAMEWORK: JobFramework = JobFramework(
    name="ray.io/raycluster",
    group="ray.io",
    version="v1",
    kind="RayCluster",
    topology_checks=frozenset({"request", "grouping"}),
    plural="rayclusters",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/raycluster/raycluster_controller.go",
    rhbok_name="RayCluster",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("ray.io", "rayclusters", extra_verbs=("update", "patch")),
    pod_sets=raycluster_pod_sets,
    review=raycluster_review,
    admission_review=True,
    # UPDATE: worker replicas change (autoscaling, edits) and the queue label while suspended
    # (https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/raycluster/raycluster_webhook.go#L260-L275).
    update_review=True,
    operator="kuberay",
)

"""KubeRay RayService: Kueue's ``ray.io/rayservice`` integration.

Registered in ``pkg/controller/jobs/rayservice/rayservice_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.accounting.podsets import (
    RawPodSet,
    annotations_of,
    mapping_at,
)
from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules
from batchplane.frameworks.ray_common import (
    build_ray_pod_sets,
)


def rayservice_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """ray.io/v1 RayService → the PodSets of ``spec.rayClusterConfig`` (``rayservice_controller.go:171-183``).

    The RayService's annotations decide ``ray.io/ft-enabled``.
    """
    spec = mapping_at(obj, "spec", "spec")
    cluster_spec = mapping_at(spec, "rayClusterConfig", "spec.rayClusterConfig")
    return build_ray_pod_sets(cluster_spec, annotations_of(obj), "spec.rayClusterConfig")


FRAMEWORK: JobFramework = JobFramework(
    name="ray.io/rayservice",
    group="ray.io",
    version="v1",
    kind="RayService",
    plural="rayservices",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/rayservice/rayservice_controller.go",
    rhbok_name="RayService",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("ray.io", "rayservices"),
    pod_sets=rayservice_pod_sets,
    admission_review=True,
    # UPDATE: the cluster spec and, while suspended, the queue label change
    # (https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/rayservice/rayservice_webhook.go#L167-L182).
    update_review=True,
    operator="kuberay",
)

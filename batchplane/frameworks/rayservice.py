"""KubeRay RayService: Kueue's ``ray.io/rayservice`` integration.

Registered in ``pkg/controller/jobs/rayservice/rayservice_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK = JobFramework(
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
    pod_sets="object",
    admission_review=True,
    operator="kuberay",
)

"""KubeRay RayJob: Kueue's ``ray.io/rayjob`` integration.

Registered in ``pkg/controller/jobs/rayjob/rayjob_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK = JobFramework(
    name="ray.io/rayjob",
    group="ray.io",
    version="v1",
    kind="RayJob",
    plural="rayjobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/rayjob/rayjob_controller.go",
    rhbok_name="RayJob",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("ray.io", "rayjobs"),
    pod_sets="object",
    admission_review=True,
    operator="kuberay",
)

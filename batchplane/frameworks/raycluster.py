"""KubeRay RayCluster: Kueue's ``ray.io/raycluster`` integration.

Registered in ``pkg/controller/jobs/raycluster/raycluster_controller.go`` at Kueue v0.19.2.

The script also grants ``update`` and ``patch`` on ``rayclusters``: MultiKueue updates the remote RayCluster
(elastic RayClusters scale on the worker).
"""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK = JobFramework(
    name="ray.io/raycluster",
    group="ray.io",
    version="v1",
    kind="RayCluster",
    plural="rayclusters",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/raycluster/raycluster_controller.go",
    rhbok_name="RayCluster",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("ray.io", "rayclusters", extra_verbs=("update", "patch")),
    pod_sets="object",
    admission_review=True,
    operator="kuberay",
)

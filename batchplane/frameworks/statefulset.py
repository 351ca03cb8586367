"""apps/v1 StatefulSet: Kueue's ``statefulset`` integration.

Registered in ``pkg/controller/jobs/statefulset/statefulset_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK: JobFramework = JobFramework(
    name="statefulset",
    group="apps",
    version="v1",
    kind="StatefulSet",
    plural="statefulsets",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/statefulset/statefulset_controller.go",
    rhbok_name="StatefulSet",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("apps", "statefulsets"),
)

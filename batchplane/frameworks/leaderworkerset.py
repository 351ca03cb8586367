"""LeaderWorkerSet: Kueue's ``leaderworkerset.x-k8s.io/leaderworkerset`` integration.

Registered in ``pkg/controller/jobs/leaderworkerset/leaderworkerset_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK: JobFramework = JobFramework(
    name="leaderworkerset.x-k8s.io/leaderworkerset",
    group="leaderworkerset.x-k8s.io",
    version="v1",
    kind="LeaderWorkerSet",
    plural="leaderworkersets",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/leaderworkerset/leaderworkerset_controller.go",
    rhbok_name="LeaderWorkerSet",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("leaderworkerset.x-k8s.io", "leaderworkersets"),
)

"""batch/v1 Job: Kueue's ``batch/job`` integration.

Registered in ``pkg/controller/jobs/job/job_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK = JobFramework(
    name="batch/job",
    group="batch",
    version="v1",
    kind="Job",
    plural="jobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/job/job_controller.go",
    rhbok_name="BatchJob",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("batch", "jobs"),
    pod_sets="object",
    admission_review=True,
)

"""JobSet: Kueue's ``jobset.x-k8s.io/jobset`` integration.

Registered in ``pkg/controller/jobs/jobset/jobset_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK = JobFramework(
    name="jobset.x-k8s.io/jobset",
    group="jobset.x-k8s.io",
    version="v1alpha2",
    kind="JobSet",
    plural="jobsets",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/jobset/jobset_controller.go",
    rhbok_name="JobSet",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("jobset.x-k8s.io", "jobsets"),
    pod_sets="object",
    admission_review=True,
    operator="trainer-v2",
)

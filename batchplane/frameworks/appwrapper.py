"""CodeFlare AppWrapper: Kueue's ``workload.codeflare.dev/appwrapper`` integration.

Registered in ``pkg/controller/jobs/appwrapper/appwrapper_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK = JobFramework(
    name="workload.codeflare.dev/appwrapper",
    group="workload.codeflare.dev",
    version="v1beta2",
    kind="AppWrapper",
    plural="appwrappers",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/appwrapper/appwrapper_controller.go",
    rhbok_name="AppWrapper",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("workload.codeflare.dev", "appwrappers"),
    pod_sets="object",
    admission_review=True,
    operator="appwrapper",
)

"""plain Pods: Kueue's ``pod`` integration.

Registered in ``pkg/controller/jobs/pod/pod_controller.go`` at Kueue v0.19.2.

The script grants no ``pods/status`` rule. The quota webhook does not review Pods (every Pod of the cluster
would pass through it); the accounting reads them for ``batchplane requests``.
"""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK = JobFramework(
    name="pod",
    group="",
    version="v1",
    kind="Pod",
    plural="pods",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/pod/pod_controller.go",
    rhbok_name="Pod",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("", "pods", status=False),
    pod_sets="object",
)

"""apps/v1 Deployment: Kueue's ``deployment`` integration.

Registered in ``pkg/controller/jobs/deployment/deployment_controller.go`` at Kueue v0.19.2.

Kueue registers no MultiKueue adapter of its own: a Deployment's Pods are dispatched through the Pod adapter
(site docs ``tasks/run/multikueue/deployment.md``), so the worker needs the script's ``pods`` rule.
"""

from __future__ import annotations

from batchplane.frameworks import pod
from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework

FRAMEWORK: JobFramework = JobFramework(
    name="deployment",
    group="apps",
    version="v1",
    kind="Deployment",
    plural="deployments",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/deployment/deployment_controller.go",
    rhbok_name="Deployment",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=pod.FRAMEWORK.worker_rules,
)

"""Kubeflow PaddleJob (Training Operator v1): Kueue's ``kubeflow.org/paddlejob`` integration.

Registered in ``pkg/controller/jobs/kubeflow/jobs/paddlejob/paddlejob_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK: JobFramework = JobFramework(
    name="kubeflow.org/paddlejob",
    group="kubeflow.org",
    version="v1",
    kind="PaddleJob",
    topology_checks=frozenset({"request", "slice-bound"}),
    plural="paddlejobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/kubeflow/jobs/paddlejob/paddlejob_controller.go",
    rhbok_name="PaddleJob",
    kueue_chart_default=False,
    multikueue=True,
    worker_rules=dispatched_rules("kubeflow.org", "paddlejobs"),
)

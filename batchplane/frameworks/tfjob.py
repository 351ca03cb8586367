"""Kubeflow TFJob (Training Operator v1): Kueue's ``kubeflow.org/tfjob`` integration.

Registered in ``pkg/controller/jobs/kubeflow/jobs/tfjob/tfjob_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK: JobFramework = JobFramework(
    name="kubeflow.org/tfjob",
    group="kubeflow.org",
    version="v1",
    kind="TFJob",
    topology_checks=frozenset({"request", "slice-bound"}),
    plural="tfjobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/kubeflow/jobs/tfjob/tfjob_controller.go",
    rhbok_name="TFJob",
    kueue_chart_default=False,
    multikueue=True,
    worker_rules=dispatched_rules("kubeflow.org", "tfjobs"),
)

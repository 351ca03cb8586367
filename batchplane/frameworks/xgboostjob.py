"""Kubeflow XGBoostJob (Training Operator v1): Kueue's ``kubeflow.org/xgboostjob`` integration.

Registered in ``pkg/controller/jobs/kubeflow/jobs/xgboostjob/xgboostjob_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK: JobFramework = JobFramework(
    name="kubeflow.org/xgboostjob",
    group="kubeflow.org",
    version="v1",
    kind="XGBoostJob",
    topology_checks=frozenset({"request", "slice-bound"}),
    plural="xgboostjobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/kubeflow/jobs/xgboostjob/xgboostjob_controller.go",
    rhbok_name="XGBoostJob",
    kueue_chart_default=False,
    multikueue=True,
    worker_rules=dispatched_rules("kubeflow.org", "xgboostjobs"),
)

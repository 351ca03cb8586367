"""Kubeflow PyTorchJob (Training Operator v1): Kueue's ``kubeflow.org/pytorchjob`` integration.

Registered in ``pkg/controller/jobs/kubeflow/jobs/pytorchjob/pytorchjob_controller.go`` at Kueue v0.19.2.

Off in the Kueue chart's default Configuration since Kueue 0.19, so Batchplane lists it when it installs the
v1 Training Operator.
"""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK = JobFramework(
    name="kubeflow.org/pytorchjob",
    group="kubeflow.org",
    version="v1",
    kind="PyTorchJob",
    plural="pytorchjobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/kubeflow/jobs/pytorchjob/pytorchjob_controller.go",
    rhbok_name="PyTorchJob",
    kueue_chart_default=False,
    multikueue=True,
    worker_rules=dispatched_rules("kubeflow.org", "pytorchjobs"),
    pod_sets="object",
    admission_review=True,
    operator="training-operator-v1",
)

"""Kubeflow Trainer v2 TrainJob: Kueue's ``trainer.kubeflow.org/trainjob`` integration.

Registered in ``pkg/controller/jobs/trainjob/trainjob_controller.go`` at Kueue v0.19.2.

Kueue registers a MultiKueue adapter for it (``trainjob_multikueue_adapter.go``; site docs
``tasks/run/multikueue/trainjob.md``) but its script grants nothing on ``trainjobs``; Batchplane grants what the
script grants every other dispatched kind. Its PodSets come from the TrainingRuntime it references.
"""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK = JobFramework(
    name="trainer.kubeflow.org/trainjob",
    group="trainer.kubeflow.org",
    version="v1alpha1",
    kind="TrainJob",
    plural="trainjobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/trainjob/trainjob_controller.go",
    rhbok_name="TrainJob",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("trainer.kubeflow.org", "trainjobs"),
    worker_rules_beyond_script=True,
    pod_sets="training-runtime",
    admission_review=True,
    operator="trainer-v2",
)

"""Kubeflow JAXJob (Training Operator v1): Kueue's ``kubeflow.org/jaxjob`` integration.

Registered in ``pkg/controller/jobs/kubeflow/jobs/jaxjob/jaxjob_controller.go`` at Kueue v0.19.2.

Kueue registers a MultiKueue adapter for it (``kubeflowjob.NewMKAdapter``) but its script grants nothing on
``jaxjobs``; Batchplane grants what the script grants every other Training Operator kind.
"""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK: JobFramework = JobFramework(
    name="kubeflow.org/jaxjob",
    group="kubeflow.org",
    version="v1",
    kind="JAXJob",
    topology_checks=frozenset({"request", "slice-bound"}),
    plural="jaxjobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/kubeflow/jobs/jaxjob/jaxjob_controller.go",
    rhbok_name="JaxJob",
    kueue_chart_default=False,
    multikueue=True,
    worker_rules=dispatched_rules("kubeflow.org", "jaxjobs"),
    worker_rules_beyond_script=True,
)

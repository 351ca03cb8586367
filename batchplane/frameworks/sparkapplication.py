"""Kubeflow Spark Operator SparkApplication: Kueue's ``sparkoperator.k8s.io/sparkapplication`` integration.

Registered in ``pkg/controller/jobs/sparkapplication/sparkapplication_controller.go`` at Kueue v0.19.2.

Kueue registers no MultiKueue adapter for it: it never leaves the manager.
"""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework

FRAMEWORK: JobFramework = JobFramework(
    name="sparkoperator.k8s.io/sparkapplication",
    group="sparkoperator.k8s.io",
    version="v1beta2",
    kind="SparkApplication",
    topology_checks=frozenset({"request"}),
    plural="sparkapplications",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/sparkapplication/sparkapplication_controller.go",
    rhbok_name="SparkApplication",
    kueue_chart_default=False,
    multikueue=False,
)

"""Kubeflow MPIJob (mpi-operator v2beta1): Kueue's ``kubeflow.org/mpijob`` integration.

Registered in ``pkg/controller/jobs/mpijob/mpijob_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

FRAMEWORK: JobFramework = JobFramework(
    name="kubeflow.org/mpijob",
    group="kubeflow.org",
    version="v2beta1",
    kind="MPIJob",
    topology_checks=frozenset({"request", "slice-bound", "grouping"}),
    plural="mpijobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/mpijob/mpijob_controller.go",
    rhbok_name="MPIJob",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("kubeflow.org", "mpijobs"),
)

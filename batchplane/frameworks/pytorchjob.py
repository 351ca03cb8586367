"""Kubeflow PyTorchJob (Training Operator v1): Kueue's ``kubeflow.org/pytorchjob`` integration.

Registered in ``pkg/controller/jobs/kubeflow/jobs/pytorchjob/pytorchjob_controller.go`` at Kueue v0.19.2.

Off in the Kueue chart's default Configuration since Kueue 0.19, so Batchplane lists it when it installs the
v1 Training Operator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.accounting.model import FieldError
from batchplane.accounting.podsets import (
    RawPodSet,
    int_at,
    mapping_at,
    template_at,
)
from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules


def pytorchjob_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """kubeflow.org/v1 PyTorchJob → ``master`` then ``worker`` (``kubeflowjob_controller.go:112-132``).

    Absent replica types are skipped; ``count = replicas``, 1 when omitted; ``elasticPolicy``,
    ``nprocPerNode`` and other replica types are ignored.
    """
    spec = mapping_at(obj, "spec", "spec")
    specs = mapping_at(spec, "pytorchReplicaSpecs", "spec.pytorchReplicaSpecs")
    pod_sets = []
    for replica_type in ("Master", "Worker"):
        replica_spec = specs.get(replica_type)
        if replica_spec is None:
            continue
        path = f"spec.pytorchReplicaSpecs.{replica_type}"
        if not isinstance(replica_spec, (dict, Mapping)):
            raise FieldError(path, "must be a mapping")
        count = int_at(replica_spec.get("replicas"), f"{path}.replicas", default=1)
        template = template_at(replica_spec, "template", f"{path}.template")
        pod_sets.append(RawPodSet(replica_type.lower(), count, None, template, f"{path}.template"))
    return pod_sets


def pytorchjob_priority_class(obj: Mapping[str, Any]) -> str | None:
    """``spec.runPolicy.schedulingPolicy.priorityClass``, which Kueue's ``ExtractPriority`` reads for kubeflow jobs
    before the pod templates' ``priorityClassName`` (``pkg/controller/jobs/kubeflow/kubeflowjob``)."""
    spec = obj.get("spec")
    run_policy = spec.get("runPolicy") if isinstance(spec, (dict, Mapping)) else None
    scheduling = run_policy.get("schedulingPolicy") if isinstance(run_policy, (dict, Mapping)) else None
    if isinstance(scheduling, (dict, Mapping)) and scheduling.get("priorityClass"):
        return str(scheduling["priorityClass"])
    return None


FRAMEWORK: JobFramework = JobFramework(
    name="kubeflow.org/pytorchjob",
    group="kubeflow.org",
    version="v1",
    kind="PyTorchJob",
    topology_checks=frozenset({"request", "slice-bound"}),
    plural="pytorchjobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/kubeflow/jobs/pytorchjob/pytorchjob_controller.go",
    rhbok_name="PyTorchJob",
    kueue_chart_default=False,
    multikueue=True,
    worker_rules=dispatched_rules("kubeflow.org", "pytorchjobs"),
    pod_sets=pytorchjob_pod_sets,
    priority_class=pytorchjob_priority_class,
    admission_review=True,
    # UPDATE: replicas and, while suspended, the queue label change (the shared Kubeflow webhook:
    # https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobframework/base_webhook.go#L100-L115).
    update_review=True,
    operator="training-operator-v1",
)

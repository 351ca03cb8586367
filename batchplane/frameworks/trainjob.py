"""Kubeflow Trainer v2 TrainJob: Kueue's ``trainer.kubeflow.org/trainjob`` integration.

Registered in ``pkg/controller/jobs/trainjob/trainjob_controller.go`` at Kueue v0.19.2.

Kueue registers a MultiKueue adapter for it (``trainjob_multikueue_adapter.go``; site docs
``tasks/run/multikueue/trainjob.md``) but its script grants nothing on ``trainjobs``; Batchplane grants what the
script grants every other dispatched kind. Its PodSets come from the TrainingRuntime it references.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from batchplane.accounting.model import FieldError
from batchplane.accounting.pod_requests import parse_resource_list
from batchplane.accounting.podsets import (
    RawPodSet,
    TrainingRuntimes,
    int_at,
    is_int,
    mapping_at,
    optional_int_at,
    replicated_jobs_pod_sets,
    string_at,
)
from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

#: Label on a TrainingRuntime's replicated Job naming its role (Kubeflow Trainer ``LabelTrainJobAncestor``).
TRAINJOB_ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"


def trainjob_pod_sets(obj: Mapping[str, Any], runtimes: TrainingRuntimes, namespace: str) -> list[RawPodSet]:
    """TrainJob → the PodSets of the JobSet that Kubeflow Trainer builds from its runtime.

    Kueue (``pkg/controller/jobs/trainjob/trainjob_controller.go``) resolves ``spec.runtimeRef``
    (kind default ``ClusterTrainingRuntime``), builds the JobSet with Trainer's builder and uses the
    JobSet PodSets. Modelled here: initializer Jobs get ``replicas: 1``; the Job labelled
    ``trainer.kubeflow.org/trainjob-ancestor-step: trainer`` gets ``replicas: 1`` and
    ``parallelism = completions = spec.trainer.numNodes`` (else ``mlPolicy.numNodes``, else 1 with an
    mlPolicy, else the Job's parallelism); every container named ``node`` takes
    ``spec.trainer.resourcesPerNode``. Not modelled (raises FieldError): MPI ``runLauncherAsNode``
    and user ``runtimePatches`` that patch replicated Job templates.

    Raises:
        FieldError: the runtime is not among ``runtimes`` or the TrainJob uses an unmodelled feature.
    """
    spec = mapping_at(obj, "spec", "spec")
    where, runtime = _resolve_runtime(spec, runtimes, namespace)
    _reject_template_patches(spec)
    runtime_spec = mapping_at(runtime, "spec", f"{where}: spec")
    ml_policy = runtime_spec.get("mlPolicy")
    if ml_policy is not None and not isinstance(ml_policy, (dict, Mapping)):
        raise FieldError(f"{where}: spec.mlPolicy", "must be a mapping")
    mpi = ml_policy.get("mpi") if ml_policy else None
    if isinstance(mpi, (dict, Mapping)) and mpi.get("runLauncherAsNode") is True:
        raise FieldError(f"{where}: spec.mlPolicy.mpi.runLauncherAsNode", "is not supported")
    template = mapping_at(runtime_spec, "template", f"{where}: spec.template")
    jobset_spec = copy.deepcopy(dict(mapping_at(template, "spec", f"{where}: spec.template.spec")))
    trainer = spec.get("trainer")
    if trainer is not None and not isinstance(trainer, (dict, Mapping)):
        raise FieldError("spec.trainer", "must be a mapping")
    num_nodes = optional_int_at((trainer or {}).get("numNodes"), "spec.trainer.numNodes")
    if ml_policy is not None:
        default_nodes = int_at(ml_policy.get("numNodes"), f"{where}: spec.mlPolicy.numNodes", 1)
        num_nodes = default_nodes if num_nodes is None else num_nodes
    resources = _resources_per_node((trainer or {}).get("resourcesPerNode"))
    jobs = jobset_spec.get("replicatedJobs")
    for job in jobs if isinstance(jobs, list) else []:
        if isinstance(job, dict) and isinstance(job.get("template"), dict):
            _apply_trainer_builder(job, num_nodes, resources)
    try:
        return replicated_jobs_pod_sets(jobset_spec, "spec")
    except FieldError as exc:
        raise FieldError(f"{where}: spec.template.{exc.field}", exc.reason) from exc


def _resolve_runtime(
    spec: Mapping[str, Any], runtimes: TrainingRuntimes, namespace: str
) -> tuple[str, Mapping[str, Any]]:
    ref = mapping_at(spec, "runtimeRef", "spec.runtimeRef")
    name = string_at(ref.get("name"), "spec.runtimeRef.name")
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    if kind == "ClusterTrainingRuntime":
        runtime = runtimes.cluster.get(name)
    elif kind == "TrainingRuntime":
        runtime = runtimes.namespaced.get((namespace, name))
    else:
        raise FieldError(
            "spec.runtimeRef.kind", f"must be ClusterTrainingRuntime or TrainingRuntime, not {kind!r}"
        )
    if runtime is None:
        raise FieldError(
            "spec.runtimeRef",
            f'{kind} "{name}" is not known; Kueue derives TrainJob pod sets from the runtime, '
            "so supply it (--with RUNTIME.yaml)",
        )
    return f"{kind} {name}", runtime


def _resources_per_node(value: Any) -> dict[str, Any] | None:
    """``spec.trainer.resourcesPerNode`` as the resources to set, or ``None`` when it sets nothing."""
    if value is None:
        return None
    if not isinstance(value, (dict, Mapping)):
        raise FieldError("spec.trainer.resourcesPerNode", "must be a mapping")
    parse_resource_list(value.get("requests"), "spec.trainer.resourcesPerNode.requests")
    parse_resource_list(value.get("limits"), "spec.trainer.resourcesPerNode.limits")
    resources = {k: copy.deepcopy(value[k]) for k in ("requests", "limits") if value.get(k) is not None}
    return resources or None


def _apply_trainer_builder(
    job: dict[str, Any], num_nodes: int | None, resources: dict[str, Any] | None
) -> None:
    """Kubeflow Trainer's JobSet builder (``Initializer``/``Trainer``) on one replicated Job, in place."""
    job_template = job["template"]
    meta = job_template.get("metadata")
    labels = meta.get("labels") if isinstance(meta, (dict, Mapping)) else None
    ancestor = labels.get(TRAINJOB_ANCESTOR_LABEL) if isinstance(labels, (dict, Mapping)) else None
    job_spec = job_template.setdefault("spec", {})
    if not isinstance(job_spec, dict):
        return
    if ancestor in ("dataset-initializer", "model-initializer"):
        job["replicas"] = 1
    elif ancestor == "trainer":
        count = num_nodes
        if count is None:
            parallelism = job_spec.get("parallelism")
            count = int(parallelism) if is_int(parallelism) else 1
        job["replicas"] = 1
        job_spec["parallelism"] = count
        job_spec["completions"] = count
    pod_template = job_spec.get("template")
    pod_spec = pod_template.get("spec") if isinstance(pod_template, (dict, Mapping)) else None
    containers = pod_spec.get("containers") if isinstance(pod_spec, (dict, Mapping)) else None
    if resources is None or not isinstance(containers, list):
        return
    for container in containers:
        if isinstance(container, dict) and container.get("name") == "node":
            container["resources"] = copy.deepcopy(resources)


def _reject_template_patches(spec: Mapping[str, Any]) -> None:
    patches = spec.get("runtimePatches")
    for index, patch in enumerate(patches if isinstance(patches, list) else []):
        if not isinstance(patch, (dict, Mapping)) or patch.get("manager") == "kueue.x-k8s.io/manager":
            continue
        runtime_spec = patch.get("trainingRuntimeSpec") or {}
        jobs = ((runtime_spec.get("template") or {}).get("spec") or {}).get("replicatedJobs")
        if isinstance(jobs, list) and any(isinstance(j, (dict, Mapping)) and j.get("template") for j in jobs):
            raise FieldError(
                f"spec.runtimePatches[{index}]", "patches of replicated Job templates are not supported"
            )


FRAMEWORK: JobFramework = JobFramework(
    name="trainer.kubeflow.org/trainjob",
    group="trainer.kubeflow.org",
    version="v1alpha1",
    kind="TrainJob",
    topology_checks=frozenset({"request"}),
    plural="trainjobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/trainjob/trainjob_controller.go",
    rhbok_name="TrainJob",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("trainer.kubeflow.org", "trainjobs"),
    worker_rules_beyond_script=True,
    runtime_pod_sets=trainjob_pod_sets,
    admission_review=True,
    # UPDATE: the queue label changes while suspended (https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/trainjob/trainjob_webhook.go#L123-L144);
    # its PodSets need the runtime, so a changed TrainJob is judged like a new one (allowed with a warning).
    update_review=True,
    operator="trainer-v2",
)

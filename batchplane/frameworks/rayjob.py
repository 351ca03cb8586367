"""KubeRay RayJob: Kueue's ``ray.io/rayjob`` integration.

Registered in ``pkg/controller/jobs/rayjob/rayjob_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.accounting.model import FieldError
from batchplane.accounting.podsets import (
    RawPodSet,
    annotations_of,
    mapping_at,
    template_at,
    writable,
)
from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, ReviewProblem, dispatched_rules
from batchplane.frameworks.ray_common import (
    autoscaling_problems,
    build_ray_pod_sets,
    default_submitter_container,
)

#: RayJob ``spec.submissionMode`` values (KubeRay v1.7.0 CRD enum); the CRD default is the first.
RAY_SUBMISSION_MODES = ("K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode")


def rayjob_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """ray.io/v1 RayJob → the cluster's PodSets plus the submitter (``rayjob_controller.go:133-154,252-332``).

    ``submissionMode`` defaults to ``K8sJobMode`` (CRD default), which adds PodSet ``submitter``
    (count 1, last) from ``submitterPodTemplate`` or KubeRay's default submitter pod;
    ``SidecarMode`` appends the default submitter container to ``head`` instead; ``HTTPMode`` and
    ``InteractiveMode`` add nothing. A RayJob that only sets ``clusterSelector`` runs on an existing
    cluster and is not accounted: it yields no PodSets.
    """
    spec = mapping_at(obj, "spec", "spec")
    selector = spec.get("clusterSelector")
    cluster_spec = spec.get("rayClusterSpec")
    if selector:
        if cluster_spec is not None:
            raise FieldError(
                "spec.clusterSelector",
                "cannot be combined with spec.rayClusterSpec (Kueue rejects the RayJob)",
            )
        return []
    if cluster_spec is None:
        raise FieldError("spec.rayClusterSpec", "is required (Kueue rejects a RayJob without it)")
    if not isinstance(cluster_spec, (dict, Mapping)):
        raise FieldError("spec.rayClusterSpec", "must be a mapping")
    mode = spec.get("submissionMode")
    if mode is None:
        mode = RAY_SUBMISSION_MODES[0]
    if mode not in RAY_SUBMISSION_MODES:
        raise FieldError(
            "spec.submissionMode", f"must be one of {', '.join(RAY_SUBMISSION_MODES)}, not {mode!r}"
        )
    pod_sets = build_ray_pod_sets(cluster_spec, annotations_of(obj), "spec.rayClusterSpec")
    if mode == "K8sJobMode":
        if spec.get("submitterPodTemplate") is not None:
            template = template_at(spec, "submitterPodTemplate", "spec.submitterPodTemplate")
            path = "spec.submitterPodTemplate"
        else:
            template = {"spec": {"restartPolicy": "Never", "containers": [default_submitter_container()]}}
            path = "<default submitter pod>"
        pod_sets.append(RawPodSet("submitter", 1, None, template, path))
    elif mode == "SidecarMode":
        head = pod_sets[0]
        template = writable(head.template)
        template["spec"].setdefault("containers", []).append(default_submitter_container())
        pod_sets[0] = RawPodSet(head.name, head.count, head.min_count, template, head.path)
    return pod_sets


def rayjob_review(obj: Mapping[str, Any]) -> list[ReviewProblem]:
    """A RayJob Kueue would refuse or that would hold its quota: ``spec.clusterSelector`` (an existing RayCluster,
    not queued for the RayJob), ``shutdownAfterJobFinishes`` not true (its RayCluster keeps the quota after the job
    ends), in-tree autoscaling without Kueue's elastic-job annotation."""
    spec = obj.get("spec")
    if not isinstance(spec, (dict, Mapping)):
        return []
    problems = []
    if spec.get("clusterSelector"):
        problems.append(
            ReviewProblem(
                "rayjob-cluster-selector",
                "spec.clusterSelector runs the job on an existing RayCluster, which Kueue does not queue "
                "for the RayJob (with rayClusterSpec it is rejected); drop clusterSelector and give a "
                "rayClusterSpec, or submit to the existing cluster without the queue label",
            )
        )
    elif spec.get("shutdownAfterJobFinishes") is not True:
        problems.append(
            ReviewProblem(
                "rayjob-shutdown",
                "spec.shutdownAfterJobFinishes must be true for a RayJob queued by Kueue (otherwise its "
                "RayCluster keeps the quota after the job ends); set shutdownAfterJobFinishes: true",
            )
        )
    problems.extend(autoscaling_problems(spec.get("rayClusterSpec"), annotations_of(obj)))
    return problems


FRAMEWORK: JobFramework = JobFramework(
    name="ray.io/rayjob",
    group="ray.io",
    version="v1",
    kind="RayJob",
    topology_checks=frozenset({"request", "grouping"}),
    plural="rayjobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/rayjob/rayjob_controller.go",
    rhbok_name="RayJob",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("ray.io", "rayjobs"),
    pod_sets=rayjob_pod_sets,
    review=rayjob_review,
    admission_review=True,
    # UPDATE: Kueue validates it as on CREATE and lets the queue label change while suspended
    # (https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/rayjob/rayjob_webhook.go#L166-L181).
    update_review=True,
    operator="kuberay",
)

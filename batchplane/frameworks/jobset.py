"""JobSet: Kueue's ``jobset.x-k8s.io/jobset`` integration.

Registered in ``pkg/controller/jobs/jobset/jobset_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.accounting.podsets import (
    RawPodSet,
    mapping_at,
    replicated_jobs_pod_sets,
)
from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules


def jobset_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """jobset.x-k8s.io/v1alpha2 JobSet → one PodSet per replicated Job (Kueue ``jobs/jobset``).

    Name = the replicated Job's name; ``count = replicas (default 1) × min(parallelism (default 1),
    completions (default parallelism))`` (``podsCount``/``podsCountPerReplica``).
    """
    spec = mapping_at(obj, "spec", "spec")
    return replicated_jobs_pod_sets(spec, "spec")


FRAMEWORK: JobFramework = JobFramework(
    name="jobset.x-k8s.io/jobset",
    group="jobset.x-k8s.io",
    version="v1alpha2",
    kind="JobSet",
    topology_checks=frozenset({"request", "slice-bound", "grouping"}),
    plural="jobsets",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/jobset/jobset_controller.go",
    rhbok_name="JobSet",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("jobset.x-k8s.io", "jobsets"),
    pod_sets=jobset_pod_sets,
    admission_review=True,
    # UPDATE: replicated jobs and, while suspended, the queue label change
    # (https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/jobset/jobset_webhook.go#L110-L131).
    update_review=True,
    operator="trainer-v2",
)

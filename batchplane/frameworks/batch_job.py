"""batch/v1 Job: Kueue's ``batch/job`` integration.

Registered in ``pkg/controller/jobs/job/job_controller.go`` at Kueue v0.19.2."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.accounting.model import FieldError
from batchplane.accounting.podsets import (
    DEFAULT_POD_SET_NAME,
    RawPodSet,
    annotations_of,
    int_at,
    mapping_at,
    optional_int_at,
    template_at,
)
from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

#: Annotation read by the batch/job integration for partial admission (``job_controller.go:59``).
JOB_MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"


def job_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """batch/v1 Job → one PodSet ``main`` (``pkg/controller/jobs/job/job_controller.go:356-375,451-467``).

    ``count = parallelism`` (API default 1), lowered to ``completions`` when that is smaller;
    ``minCount`` comes from annotation ``kueue.x-k8s.io/job-min-parallelism``, which Kueue's Job
    webhook requires to be an integer in ``[1, parallelism)``.
    """
    spec = mapping_at(obj, "spec", "spec")
    parallelism = int_at(spec.get("parallelism"), "spec.parallelism", default=1)
    completions = optional_int_at(spec.get("completions"), "spec.completions")
    count = parallelism if completions is None or completions >= parallelism else completions
    min_count = None
    raw = annotations_of(obj).get(JOB_MIN_PARALLELISM_ANNOTATION)
    if raw is not None:
        field = f"metadata.annotations[{JOB_MIN_PARALLELISM_ANNOTATION}]"
        try:
            min_count = int(str(raw), 10)
        except ValueError:
            raise FieldError(field, f"{raw!r} is not an integer") from None
        if not 0 < min_count < parallelism:
            raise FieldError(field, f"must be between 0 and parallelism {parallelism} (exclusive)")
    template = template_at(spec, "template", "spec.template")
    return [RawPodSet(DEFAULT_POD_SET_NAME, count, min_count, template, "spec.template")]


FRAMEWORK: JobFramework = JobFramework(
    name="batch/job",
    group="batch",
    version="v1",
    kind="Job",
    topology_checks=frozenset({"request", "slice-bound"}),
    plural="jobs",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/job/job_controller.go",
    rhbok_name="BatchJob",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("batch", "jobs"),
    pod_sets=job_pod_sets,
    admission_review=True,
    # UPDATE: spec.parallelism stays mutable and the queue label may change while suspended; Kueue re-checks the
    # update (https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/job/job_webhook.go#L195-L224) and replaces a pending Workload whose PodSets differ.
    update_review=True,
)

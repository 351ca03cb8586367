"""plain Pods: Kueue's ``pod`` integration.

Registered in ``pkg/controller/jobs/pod/pod_controller.go`` at Kueue v0.19.2.

The script grants no ``pods/status`` rule. The quota webhook does not review Pods (every Pod of the cluster
would pass through it); the accounting reads them for ``batchplane requests``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.accounting.podsets import (
    DEFAULT_POD_SET_NAME,
    RawPodSet,
    mapping_at,
)
from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules


def pod_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """v1 Pod (the ``pod`` integration, a single pod) → one PodSet ``main`` of 1 pod."""
    spec = mapping_at(obj, "spec", "spec")
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), (dict, Mapping)) else {}
    template: dict[str, Any] = {"metadata": {}, "spec": spec}  # read only: shared with the Pod
    for key in ("labels", "annotations"):
        if isinstance(meta, (dict, Mapping)) and isinstance(meta.get(key), (dict, Mapping)):
            template["metadata"][key] = dict(meta[key])
    return [RawPodSet(DEFAULT_POD_SET_NAME, 1, None, template, "")]


FRAMEWORK: JobFramework = JobFramework(
    name="pod",
    group="",
    version="v1",
    kind="Pod",
    plural="pods",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/pod/pod_controller.go",
    rhbok_name="Pod",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("", "pods", status=False),
    pod_sets=pod_pod_sets,
)

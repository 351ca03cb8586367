"""JSON report of a workload's requests, quantities formatted as Kubernetes quantities."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from batchplane.accounting.model import WorkloadRequests
from batchplane.quantity import format_quantity


def report_json(workload: WorkloadRequests) -> dict[str, Any]:
    """A JSON-ready report of ``workload``.

    Shape::

        {"podSets": [{"name": "head", "count": 1, "perPod": {"cpu": "1", "memory": "2Gi"},
                      "requests": {...}}, ...],           # "minCount" too when set
         "total": {"cpu": "3500m", ...}}

    Quantities use :func:`batchplane.quantity.format_quantity` (CPU in millicores when not whole,
    memory in the largest exact binary suffix); resources are sorted by name.
    """
    pod_sets = []
    for pod_set in workload.pod_sets:
        entry: dict[str, Any] = {"name": pod_set.name, "count": pod_set.count}
        if pod_set.min_count is not None:
            entry["minCount"] = pod_set.min_count
        entry["perPod"] = _quantities(pod_set.per_pod)
        entry["requests"] = _quantities(pod_set.requests)
        pod_sets.append(entry)
    return {"podSets": pod_sets, "total": _quantities(workload.total)}


def _quantities(amounts: Mapping[str, Decimal]) -> dict[str, str]:
    return {name: format_quantity(amount, name) for name, amount in sorted(amounts.items())}

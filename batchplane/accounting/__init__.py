"""Kueue-exact resource accounting: what a job object asks of Kueue's quota.

Pure Python (no Pulumi, no cluster). Mirrors Kueue v0.19.2 step by step — PodSet extraction per
integration, RuntimeClass overhead, LimitRange defaults, limits as missing requests,
``PodRequests`` (init containers, sidecars, pod-level resources, overhead), the Configuration's
``excludeResourcePrefixes``/``transformations`` and Kueue's integer rounding. Each module cites the
Kueue v0.19.2 files (https://github.com/kubernetes-sigs/kueue/tree/v0.19.2) it transcribes.

Example::

    from batchplane.accounting import workload_requests, report_json
    report_json(workload_requests(yaml.safe_load(open("rayjob.yaml"))))
"""

import importlib
from typing import TYPE_CHECKING, Any

from batchplane.accounting.model import (
    AccountingError,
    PodSetRequests,
    ResourceOptions,
    ResourceTransformation,
    WorkloadRequests,
)
from batchplane.accounting.options import resource_options_from_mapping

if TYPE_CHECKING:
    from batchplane.accounting.report import report_json
    from batchplane.accounting.workload import (
        is_known_non_workload,
        is_workload,
        supported_kinds,
        workload_requests,
    )

#: Names resolved on first use: the workload entry point imports the job-framework registry, whose framework
#: modules import this package's PodSet primitives (``accounting.podsets``) — eager imports here would be a cycle.
_LAZY = {
    "report_json": "batchplane.accounting.report",
    "is_known_non_workload": "batchplane.accounting.workload",
    "is_workload": "batchplane.accounting.workload",
    "supported_kinds": "batchplane.accounting.workload",
    "workload_requests": "batchplane.accounting.workload",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'batchplane.accounting' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AccountingError",
    "PodSetRequests",
    "ResourceOptions",
    "ResourceTransformation",
    "WorkloadRequests",
    "is_known_non_workload",
    "is_workload",
    "report_json",
    "resource_options_from_mapping",
    "supported_kinds",
    "workload_requests",
]

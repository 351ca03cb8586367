"""Rules across a MultiKueue manager and the workers this program declares (pure; the stack layer runs them).

From Kueue's docs: a dispatched workload is created on the worker in the same namespace and LocalQueue, so each
worker must mirror the manager's LocalQueues ("Setup a MultiKueue environment"); the manager's quota should equal
the total of the workers' — much lower leaves workers idle, much higher dispatches workloads no worker admits
("MultiKueue" concept, Manager Cluster).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from batchplane.config.kueue import ClusterQueue
from batchplane.config.rules import ExpandedKueue
from batchplane.errors import ConfigIssue
from batchplane.multikueue.config import MultiKueueSection
from batchplane.quantity import format_quantity, parse_quantity

_PATH = "batchplane:multiKueue"


def _dispatching(section: MultiKueueSection, k: ExpandedKueue) -> dict[str, ClusterQueue]:
    return {
        loc.obj.name: loc.obj
        for loc in k.cluster_queues
        if any(ref.name == section.name for ref in loc.obj.admission_checks)
    }


def _local_queues(k: ExpandedKueue) -> dict[tuple[str, str], str]:
    """(namespace, LocalQueue) → its ClusterQueue."""
    return {(lq.obj.namespace, lq.obj.name): lq.obj.cluster_queue for lq in k.local_queues}


def _nominal(queue: ClusterQueue) -> dict[tuple[str, str], Decimal]:
    return {
        (flavor.name, quota.name): parse_quantity(quota.nominal_quota)
        for group in queue.resource_groups
        for flavor in group.flavors
        for quota in flavor.resources
    }


def missing_local_queues(
    section: MultiKueueSection, manager: ExpandedKueue, workers: Mapping[str, ExpandedKueue]
) -> list[ConfigIssue]:
    """Errors for each LocalQueue of a dispatching ClusterQueue that a declared worker does not have."""
    dispatching = _dispatching(section, manager)
    wanted = [key for key, cq in _local_queues(manager).items() if cq in dispatching]
    issues = []
    for index, worker in enumerate(section.workers):
        if worker.name not in workers:
            continue
        have = _local_queues(workers[worker.name])
        for namespace, name in wanted:
            if (namespace, name) not in have:
                issues.append(
                    ConfigIssue(
                        f"{_PATH}.workers[{index}]",
                        f'worker "{worker.name}" has no LocalQueue {namespace}/{name}: MultiKueue creates a '
                        "dispatched workload in the same namespace and LocalQueue on the worker, so it would never "
                        "be admitted there (add it to the worker's kueue or teams)",
                    )
                )
    return issues


def quota_balance(
    section: MultiKueueSection, manager: ExpandedKueue, workers: Mapping[str, ExpandedKueue]
) -> list[ConfigIssue]:
    """Warnings where a dispatching ClusterQueue's nominal quota (per flavor and resource) is larger than the
    declared workers' combined quota for its LocalQueues' ClusterQueues, or smaller than the largest worker's.
    Skipped when any worker is an existing cluster (its quota is not known here)."""
    if len(workers) != len(section.workers):
        return []
    dispatching = _dispatching(section, manager)
    lqs_of: dict[str, list[tuple[str, str]]] = {}
    for key, cq in _local_queues(manager).items():
        lqs_of.setdefault(cq, []).append(key)
    # Each worker once: its LocalQueues and its ClusterQueues' nominal quotas (linear in workers × queues).
    worker_lqs = {name: _local_queues(worker) for name, worker in workers.items()}
    worker_quotas = {
        name: {loc.obj.name: _nominal(loc.obj) for loc in worker.cluster_queues}
        for name, worker in workers.items()
    }
    issues: list[ConfigIssue] = []
    for cq_name, queue in dispatching.items():
        lqs = lqs_of.get(cq_name, [])
        if not lqs:
            continue
        per_worker: dict[str, dict[tuple[str, str], Decimal]] = {}
        for name in workers:
            target = next((worker_lqs[name][key] for key in lqs if key in worker_lqs[name]), None)
            per_worker[name] = worker_quotas[name].get(target or "", {})
        for (flavor, resource), amount in _nominal(queue).items():
            amounts = {
                name: quotas.get((flavor, resource), Decimal(0)) for name, quotas in per_worker.items()
            }
            total, largest = sum(amounts.values(), Decimal(0)), max(amounts.values(), default=Decimal(0))
            where = f'ClusterQueue "{cq_name}" {resource} on flavor "{flavor}"'
            shown = "; ".join(f"{name} {format_quantity(value, resource)}" for name, value in amounts.items())
            if amount > total:
                issues.append(
                    ConfigIssue(
                        _PATH,
                        f"{where}: the manager's nominal quota {format_quantity(amount, resource)} is more than "
                        f"the workers' combined ({shown}): the manager may dispatch workloads no worker can admit",
                        severity="warning",
                    )
                )
            elif amount < largest:
                issues.append(
                    ConfigIssue(
                        _PATH,
                        f"{where}: the manager's nominal quota {format_quantity(amount, resource)} is less than "
                        f"the largest worker's ({shown}): that worker's quota can never be used in full",
                        severity="warning",
                    )
                )
    return issues

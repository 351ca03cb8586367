"""MultiKueue policies: what a PR can break between a manager cluster and the worker clusters it dispatches to.

A program with MultiKueue declares one ``BatchCluster`` per cluster; the manager's holds the MultiKueueClusters, and
a declared worker's ``BatchCluster`` carries the worker's name. Facts (Kueue docs): a dispatched workload is created
on the worker in the same namespace and LocalQueue ("Setup a MultiKueue environment"); the manager only dispatches
kinds its Kueue manages and the worker must manage them too; the manager's quota should equal the workers' total
("MultiKueue" concept, Manager Cluster). Workers reached through a kubeconfig Secret (not declared) are unknown
here and never reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pulumi_policy import EnforcementLevel, StackValidationArgs, StackValidationPolicy

from batchplane.frameworks import FRAMEWORKS
from batchplane.wellknown import MULTIKUEUE_CONTROLLER
from batchplane_policies._support import (
    BATCH_CLUSTER,
    ReportViolation,
    ResourceView,
    cluster_of,
    get,
    items,
    object_name,
    of_kueue_kind,
    quantity,
    quota_entries,
    show_quantity,
    text,
)
from batchplane_policies.installs import _helm_charts, kueue_frameworks

DISPATCHED = tuple(f.name for f in FRAMEWORKS if f.multikueue)
"""Kueue integrations MultiKueue dispatches (its MultiKueue adapters); the others never leave the manager."""


class _Cluster:
    """One BatchCluster's resources, as the MultiKueue policies read them."""

    def __init__(self, resources: list[ResourceView]) -> None:
        self.resources = resources
        self.name = next((r.name for r in resources if r.resource_type == BATCH_CLUSTER), "")
        self.urn = next((r.urn for r in resources if r.resource_type == BATCH_CLUSTER), None)

    def local_queues(self) -> dict[tuple[str, str], str]:
        """(namespace, name) → ClusterQueue."""
        out = {}
        for lq in of_kueue_kind(self.resources, "LocalQueue"):
            ns, name = text(get(lq.props, "metadata", "namespace")), object_name(lq.props)
            cq = text(get(lq.props, "spec", "clusterQueue"))
            if ns and name and cq:
                out[(ns, name)] = cq
        return out

    def dispatching_queues(self) -> dict[str, ResourceView]:
        """ClusterQueues carrying a ``kueue.x-k8s.io/multikueue`` AdmissionCheck, by name."""
        checks = {
            object_name(ac.props)
            for ac in of_kueue_kind(self.resources, "AdmissionCheck")
            if text(get(ac.props, "spec", "controllerName")) == MULTIKUEUE_CONTROLLER
        }
        out = {}
        for cq in of_kueue_kind(self.resources, "ClusterQueue"):
            uses = items(get(cq.props, "spec", "admissionChecksStrategy", "admissionChecks"))
            if any(text(get(u, "name")) in checks for u in uses) and (name := object_name(cq.props)):
                out[name] = cq
        return out

    def frameworks(self) -> list[str] | None:
        """The Kueue release's ``integrations.frameworks`` (``None`` when this cluster installs no Kueue)."""
        for release in _helm_charts(self.resources).get("kueue", []):
            found = kueue_frameworks(release)
            return None if isinstance(found, str) else found
        return None

    def nominal(self, cq_name: str) -> dict[tuple[str, str], Decimal]:
        for cq in of_kueue_kind(self.resources, "ClusterQueue"):
            if object_name(cq.props) == cq_name:
                return {
                    (flavor, resource): amount
                    for flavor, resource, entry in quota_entries(cq.props)
                    if (amount := quantity(get(entry, "nominalQuota"))) is not None
                }
        return {}


def _managers_and_workers(resources: list[ResourceView]) -> list[tuple[_Cluster, dict[str, _Cluster], bool]]:
    """Each manager cluster, its declared workers by name, and whether every worker it lists is declared."""
    groups: dict[str, list[ResourceView]] = {}
    for r in resources:
        groups.setdefault(cluster_of(r), []).append(r)
    clusters = [_Cluster(group) for group in groups.values()]
    by_name = {c.name: c for c in clusters if c.name}
    out = []
    for cluster in clusters:
        listed = [object_name(r.props) for r in of_kueue_kind(cluster.resources, "MultiKueueCluster")]
        if listed:
            workers = {n: by_name[n] for n in listed if n and n in by_name and by_name[n] is not cluster}
            out.append((cluster, workers, len(workers) == len(listed)))
    return out


def _mirror(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for manager, workers, _ in _managers_and_workers(list(args.resources)):
        dispatching = manager.dispatching_queues()
        wanted = sorted(key for key, cq in manager.local_queues().items() if cq in dispatching)
        for name, worker in workers.items():
            have = worker.local_queues()
            missing = [f"{ns}/{lq}" for ns, lq in wanted if (ns, lq) not in have]
            if missing:
                report_violation(
                    f'MultiKueue worker "{name}" lacks LocalQueue(s) {", ".join(missing)} of the manager\'s '
                    "dispatching ClusterQueues: workloads dispatched there are never admitted",
                    worker.urn,
                )


def _integrations(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for manager, workers, _ in _managers_and_workers(list(args.resources)):
        mine = manager.frameworks()
        if mine is None:
            continue
        for name, worker in workers.items():
            theirs = worker.frameworks()
            absent = [f for f in mine if f in DISPATCHED and (theirs is None or f not in theirs)]
            if absent:
                report_violation(
                    f"the manager's Kueue manages {', '.join(absent)} but MultiKueue worker \"{name}\"'s does not: "
                    "such workloads are dispatched to a worker that never admits them",
                    worker.urn,
                )


def _balance(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for manager, workers, complete in _managers_and_workers(list(args.resources)):
        if not complete or not workers:
            continue  # an existing worker's quota is unknown
        lqs = manager.local_queues()
        for cq_name, cq in sorted(manager.dispatching_queues().items()):
            keys = [key for key, target in lqs.items() if target == cq_name]
            per_worker: dict[str, Mapping[tuple[str, str], Decimal]] = {}
            for name, worker in workers.items():
                theirs = worker.local_queues()
                target = next((theirs[k] for k in keys if k in theirs), None)
                per_worker[name] = worker.nominal(target) if target else {}
            for (flavor, resource), amount in sorted(manager.nominal(cq_name).items()):
                got = {n: q.get((flavor, resource), Decimal(0)) for n, q in per_worker.items()}
                total, largest = sum(got.values(), Decimal(0)), max(got.values())
                if amount > total or amount < largest:
                    shown = "; ".join(f"{n} {show_quantity(v)}" for n, v in got.items())
                    what = (
                        "more than the workers' combined"
                        if amount > total
                        else "less than the largest worker's"
                    )
                    report_violation(
                        f'ClusterQueue "{cq_name}" {resource} on flavor "{flavor}": the manager\'s nominal quota '
                        f"{show_quantity(amount)} is {what} ({shown})",
                        cq.urn,
                    )


multikueue_workers_mirror_local_queues = StackValidationPolicy(
    name="multikueue-workers-mirror-local-queues",
    description="Every declared MultiKueue worker has the LocalQueues of the manager's dispatching ClusterQueues.",
    validate=_mirror,
    enforcement_level=EnforcementLevel.MANDATORY,
    remediation_steps="Give the worker the same namespaces and LocalQueues (its kueue/teams in batchplane:multiKueue).",
)

multikueue_workers_run_the_managers_integrations = StackValidationPolicy(
    name="multikueue-workers-run-the-managers-integrations",
    description="A declared worker's Kueue manages every dispatched job kind the manager's Kueue manages.",
    validate=_integrations,
    enforcement_level=EnforcementLevel.MANDATORY,
    remediation_steps="Install the same job operators and Kueue integrations on the worker.",
)

multikueue_quota_balance = StackValidationPolicy(
    name="multikueue-quota-balance",
    description=(
        "A dispatching ClusterQueue's quota on the manager is neither more than all declared workers' together nor "
        "less than the largest worker's."
    ),
    validate=_balance,
    enforcement_level=EnforcementLevel.ADVISORY,
    remediation_steps="Size the manager's quota to the sum of the workers' (Kueue's MultiKueue guidance).",
)

POLICIES: list[Any] = [
    multikueue_workers_mirror_local_queues,
    multikueue_workers_run_the_managers_integrations,
    multikueue_quota_balance,
]

"""The one sentence generator: why a workload runs, waits or never runs, in the unit its author asked in.

The webhook's denial messages (:mod:`batchplane.webhook.decisions`), ``batchplane diff``'s decision rows and
``batchplane explain`` lead with these sentences; the exact numbers and Kueue's own reasons follow them. Part of the
webhook process: it imports the webhook's quota model, accounting and quantities only (an import-linter contract).

**Which resource a sentence leads with** (:func:`lead_resource`). A sentence quotes one flavor and one resource:

* the *flavor* is, among the flavors of the PodSet's resource group whose taints and node labels accept the PodSet,
  the one that would take the most of its pods (``quota ÷ request per pod``, the least over the resources it asks
  for), then the one with the most of the first GPU resource it asks for, then the one holding the largest share of
  one pod; the ClusterQueue's flavor order breaks ties (Kueue tries flavors in that order);
* the *resource* is, among the resources whose request does not fit that flavor (the *binding* ones), the first GPU
  resource the PodSet asks for (``webhook.gpuResources``: the unit the user asked in — "GPUs", never the CPU that
  happens to be short as well); without one, the binding resource that lets the fewest pods in, the queue's resource
  order breaking ties.

Other flavors are quoted after it (``l4: at most 8 GPUs``) by the same rule. Amounts use the user's unit: ``GPUs``
for GPU resources, ``CPUs`` (``500m CPU``) for ``cpu``, ``16Gi of memory`` for ``memory``, ``<resource> <quantity>``
otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from batchplane.accounting.model import from_stored
from batchplane.frameworks import FRAMEWORKS
from batchplane.quantity import format_quantity
from batchplane.webhook.capacity import Shortfall
from batchplane.webhook.flavors import Flavor, flavor_mismatch
from batchplane.webhook.queues import PODS, Demand, QueueModel
from batchplane.wellknown import DEFAULT_GPU_RESOURCES

SUBMITTING_JOBS_DOC = "docs/submitting-jobs.md"
"""The guide every denial message links to (Batchplane's repository)."""


@dataclass(frozen=True)
class Lead:
    """A plain sentence and the quota it quotes.

    Attributes:
        text: the sentence (``never runs: team-a can get at most 16 GPUs on h100 …``), no final period.
        flavor: the ResourceFlavor whose quota the sentence quotes, or ``None``.
        resource: the resource it quotes, or ``None``.
    """

    text: str
    flavor: str | None = None
    resource: str | None = None


def amount(resource: str, stored: int, gpu_resources: Sequence[str] = DEFAULT_GPU_RESOURCES) -> str:
    """``16 GPUs`` / ``1 GPU`` / ``64 CPUs`` / ``500m CPU`` / ``16Gi of memory`` / ``8 pods`` / ``example.com/x 2``.

    Args:
        resource: the resource name.
        stored: Kueue's stored integer (millicores for CPU, units otherwise).
        gpu_resources: resources shown as GPUs.
    """
    value = from_stored(resource, stored)
    text = format_quantity(value, resource)
    if resource in gpu_resources:
        return f"{text} GPU" + ("" if stored == 1 else "s")
    if resource == "cpu":
        return f"{text} CPU" + ("" if stored == 1000 or not text.isdigit() else "s")
    if resource == "memory":
        return f"{text} of memory"
    if resource == PODS:
        return f"{text} pod" + ("" if stored == 1 else "s")
    return f"{resource} {text}"


#: The kinds KubeRay serves (RayJob, RayCluster, RayService), whose PodSets are a Ray head and worker groups.
RAY_KINDS = frozenset(f.kind for f in FRAMEWORKS if f.operator == "kuberay")


def number(resource: str, stored: int) -> str:
    """Just the quantity of :func:`amount` (``16``, ``500m``, ``16Gi``), for ``8 of its own`` after a unit was named."""
    return format_quantity(from_stored(resource, stored), resource)


def noun(pod_set: str, count: int, kind: str = "") -> str:
    """What to call a PodSet's pods: ``workers`` for a worker group (any Ray PodSet but the head and the submitter;
    a PodSet named ``…worker…`` of any kind), ``head pod`` for a Ray head, ``pods`` otherwise; singular when
    ``count`` is 1."""
    name = pod_set.lower()
    if "worker" in name or (kind in RAY_KINDS and name not in ("head", "submitter")):
        word = "worker"
    elif name == "head":
        word = "head pod"
    elif name in ("launcher", "master", "submitter", "driver"):
        word = f"{name} pod"
    else:
        word = "pod"
    return word if count == 1 else word + "s"


def _per_pod(demand: Demand, resource: str) -> int:
    total = demand.requests.get(resource, 0)
    count = max(demand.count, 1)
    return -(-total // count)


def pods_that_fit(demand: Demand, resources: Sequence[str], maxima: Mapping[str, int]) -> int:
    """How many of the PodSet's pods a flavor's ``maxima`` hold (the least over ``resources`` it asks for)."""
    fit: int | None = None
    for r in resources:
        per = _per_pod(demand, r)
        if per <= 0:
            continue
        n = maxima.get(r, 0) // per
        fit = n if fit is None else min(fit, n)
    return demand.count if fit is None else fit


def lead_resource(
    binding: Sequence[str],
    demand: Demand,
    maxima: Mapping[str, int],
    gpu_resources: Sequence[str] = DEFAULT_GPU_RESOURCES,
) -> str:
    """The resource a sentence leads with (module docstring): the first GPU resource in ``binding``, else the one
    that lets the fewest pods in (``binding`` order breaking ties).

    Raises:
        ValueError: ``binding`` is empty.
    """
    if not binding:
        raise ValueError("no binding resource")
    for r in binding:
        if r in gpu_resources:
            return r
    best = binding[0]
    best_fit = maxima.get(best, 0) // max(_per_pod(demand, best), 1)
    for r in binding[1:]:
        fit = maxima.get(r, 0) // max(_per_pod(demand, r), 1)
        if fit < best_fit:
            best, best_fit = r, fit
    return best


def _own_and_borrowed(queue: QueueModel, flavor: str, resource: str, gpus: Sequence[str]) -> str:
    cap = queue.capacity[(flavor, resource)]
    own = number(resource, cap.nominal)
    if cap.cohort is None:
        return f"{own} of its own, no cohort to borrow from"
    extra = cap.maximum - cap.nominal
    if extra <= 0:
        return f"{own} of its own, nothing to borrow in cohort {cap.cohort}"
    return f"{own} of its own + {number(resource, extra)} borrowed from cohort {cap.cohort}"


def _asks(kind: str, demand: Demand, resource: str, gpus: Sequence[str]) -> str:
    total = demand.requests.get(resource, 0)
    per = _per_pod(demand, resource)
    if demand.count > 1:
        return (
            f"this {kind} asks for {amount(resource, total, gpus)} "
            f"({demand.count} {noun(demand.name, demand.count, kind)} × {number(resource, per)})"
        )
    return f"this {kind} asks for {amount(resource, total, gpus)}"


def podset_never_runs(
    kind: str,
    demand: Demand,
    group_index: int,
    queue: QueueModel,
    flavors: Mapping[str, Flavor],
    gpu_resources: Sequence[str] = DEFAULT_GPU_RESOURCES,
) -> Lead:
    """One PodSet no flavor of its resource group can ever hold: what the queue can get, what was asked, and what to
    ask for instead (``never runs: team-a can get at most 16 GPUs on h100 (8 of its own + 8 borrowed from cohort
    ml); this RayJob asks for 40 GPUs (5 workers × 8) — ask for at most 2 workers of 8 GPUs``)."""
    group = queue.groups[group_index]
    asked = [r for r in group.resources if demand.requests.get(r, 0) > 0]
    usable: list[str] = []
    refusals: list[str] = []
    for name in group.flavors:
        mismatch = flavor_mismatch(demand.pod_spec, flavors.get(name) or Flavor(name), group.match_keys)
        if mismatch is None:
            usable.append(name)
        else:
            refusals.append(mismatch)
    who = queue.name
    if not usable:
        return Lead(
            f"never runs: none of {who}'s flavors for {', '.join(asked)} ({', '.join(group.flavors)}) accepts this "
            f"{kind}'s {demand.name} pods ({'; '.join(refusals)}) — drop the nodeSelector/affinity or add the "
            "toleration that flavor needs, or use a queue whose flavors match"
        )
    maxima = {f: {r: queue.capacity[(f, r)].maximum for r in group.resources} for f in usable}
    fits = {f: pods_that_fit(demand, asked, maxima[f]) for f in usable}
    gpu = next((r for r in asked if r in gpu_resources), None)

    def rank(f: str) -> tuple[int, int, float]:
        share = min((maxima[f][r] / max(_per_pod(demand, r), 1) for r in asked), default=0.0)
        return fits[f], maxima[f][gpu] if gpu is not None else 0, share

    best = usable[0]
    for f in usable[1:]:
        if rank(f) > rank(best):
            best = f
    binding = [r for r in asked if demand.requests[r] > maxima[best][r]] or asked
    lead = lead_resource(binding, demand, maxima[best], gpu_resources)
    gpus = gpu_resources
    text = (
        f"never runs: {who} can get at most {amount(lead, maxima[best][lead], gpus)} on {best} "
        f"({_own_and_borrowed(queue, best, lead, gpus)})"
    )
    others: list[str] = []
    for f in usable:
        if f == best:
            continue
        other_binding = [r for r in asked if demand.requests[r] > maxima[f][r]] or asked
        r = lead_resource(other_binding, demand, maxima[f], gpus)
        others.append(f"{amount(r, maxima[f][r], gpus)} on {f}" if maxima[f][r] > 0 else f"none on {f}")
    if others:
        text += ", " + (others[0] if len(others) == 1 else f"{', '.join(others[:-1])} and {others[-1]}")
    text += f"; {_asks(kind, demand, lead, gpus)}"
    text += _suggestion(kind, demand, lead, fits[best], maxima[best][lead], flavors.get(best), gpus)
    return Lead(text, best, lead)


def _suggestion(
    kind: str, demand: Demand, lead: str, n: int, most: int, flavor: Flavor | None, gpus: Sequence[str]
) -> str:
    """`` — ask for at most …``: ``n`` pods fit the quoted flavor's ``most`` of ``lead``; a pod must also fit a node."""
    per = _per_pod(demand, lead)
    node = largest_node(flavor, lead)
    one = noun(demand.name, 1, kind)
    if n >= 1 and demand.count > 1 and (node is None or per <= node[1]):
        return f" — ask for at most {n} {noun(demand.name, n, kind)} of {amount(lead, per, gpus)}"
    if node is not None and min(most, per) > node[1]:
        text = (
            f" — give each {one} at most {amount(lead, node[1], gpus)} (one {node[0]} node has "
            f"{number(lead, node[1])})"
        )
        if demand.count > 1 or most > node[1]:
            text += f" and ask for at most {amount(lead, most, gpus)} in all"
        return text
    if n >= 1:
        return f" — ask for at most {amount(lead, most, gpus)}"
    text = f" — give each {one} at most {amount(lead, most, gpus)}"
    if demand.count > 1:
        text += f" (one {one} asks for {amount(lead, per, gpus)})"
    return text


def largest_node(flavor: Flavor | None, resource: str) -> tuple[str, int] | None:
    """The machine type and amount of ``resource`` of the largest node backing ``flavor``; None when a node of it
    is unknown or does not say."""
    if flavor is None or not flavor.nodes:
        return None
    best: tuple[str, int] | None = None
    for n in flavor.nodes:
        have = n.capacity.get(resource)
        if have is None:
            return None
        if best is None or have > best[1]:
            best = (n.machine_type or n.pool, have)
    return best


def workload_never_runs(
    kind: str,
    pod_sets: Sequence[Demand],
    group_index: int,
    queue: QueueModel,
    gpu_resources: Sequence[str] = DEFAULT_GPU_RESOURCES,
) -> Lead:
    """PodSets that each fit a flavor but never all together (``never runs: this RayJob asks for 24 GPUs in all
    (head 0, workers 3 × 8) and team-a can get at most 16 GPUs on h100, 8 GPUs on l4 — …``)."""
    group = queue.groups[group_index]
    totals = {r: sum(d.requests.get(r, 0) for d in pod_sets) for r in group.resources}
    asked = [r for r in group.resources if totals[r] > 0 and r != PODS] or [
        r for r in group.resources if totals[r]
    ]
    lead = next((r for r in asked if r in gpu_resources), asked[0] if asked else group.resources[0])
    offers = ", ".join(
        f"{amount(lead, queue.capacity[(f, lead)].maximum, gpu_resources)} on {f}" for f in group.flavors
    )
    parts = ", ".join(f"{d.name} {number(lead, d.requests.get(lead, 0))}" for d in pod_sets)
    most = max((queue.capacity[(f, lead)].maximum for f in group.flavors), default=0)
    return Lead(
        f"never runs: this {kind} asks for {amount(lead, totals[lead], gpu_resources)} in all ({parts}) and "
        f"{queue.name} can get at most {offers}, and no way of splitting its PodSets over those flavors fits — ask "
        f"for at most {amount(lead, most, gpu_resources)} in all, or fewer pods",
        group.flavors[0] if len(group.flavors) == 1 else None,
        lead,
    )


def undeclared_never_runs(kind: str, resource: str, queue: QueueModel) -> Lead:
    """A resource no resource group of the ClusterQueue covers (Kueue's ``BlockUndeclared``)."""
    return Lead(
        f"never runs: {queue.name} has no quota at all for {resource}, which this {kind} asks for — drop that "
        "request, or ask the platform team for quota on it",
        None,
        resource,
    )


def assigner_never_runs(kind: str, queue: QueueModel) -> Lead:
    """Fits some placement, but Kueue's flavor assigner (PodSet by PodSet, first flavor that takes each) never
    finds it."""
    return Lead(
        f"never runs: {queue.name} has the quota, but Kueue places this {kind}'s PodSets one at a time, each on the "
        "first flavor that takes it, and never reaches a placement that fits — make the PodSets that can only run "
        "on a later flavor ask for less, or select that flavor with a nodeSelector"
    )


def node_never_runs(
    kind: str,
    demand: Demand,
    resource: str,
    flavor: str,
    largest: int,
    machines: Sequence[str],
    gpu_resources: Sequence[str] = DEFAULT_GPU_RESOURCES,
) -> Lead:
    """A pod larger than every node that backs its flavor (``never runs: one pod asks for 24 GPUs, but the largest
    node of flavor h100 (a3-highgpu-8g) has 8 GPUs — …``)."""
    one = noun(demand.name, 1, kind)
    per = _per_pod(demand, resource)
    what = ", ".join(machines)
    return Lead(
        f"never runs: one {one} asks for {amount(resource, per, gpu_resources)}, but the largest node flavor "
        f"{flavor} runs on ({what}) has {amount(resource, largest, gpu_resources)} — ask for at most "
        f"{amount(resource, largest, gpu_resources)} per {one} and use more {noun(demand.name, 2, kind)}",
        flavor,
        resource,
    )


def shortfall_lead(
    kind: str,
    shortfalls: Sequence[Shortfall],
    workload_demands: Sequence[Demand],
    queue: QueueModel,
    flavors: Mapping[str, Flavor],
    gpu_resources: Sequence[str] = DEFAULT_GPU_RESOURCES,
) -> Lead:
    """The sentence for the first denying shortfall of :func:`batchplane.webhook.capacity.check_workload_ever_fits`."""
    first = next(s for s in shortfalls if s.kind != "unmodelled")
    by_name = {d.name: d for d in workload_demands}
    if first.kind == "undeclared":
        demand = by_name.get(first.pod_set)
        covered = queue.covered
        resource = (
            next((r for r in sorted(demand.requests) if r not in covered), "?") if demand is not None else "?"
        )
        return undeclared_never_runs(kind, resource, queue)
    if first.kind == "podset":
        return podset_never_runs(
            kind, by_name[first.pod_set], max(first.group, 0), queue, flavors, gpu_resources
        )
    if first.kind == "workload":
        index = max(first.group, 0)
        group = queue.groups[index]
        members = [d for d in workload_demands if any(d.requests.get(r, 0) for r in group.resources)]
        return workload_never_runs(kind, members, index, queue, gpu_resources)
    return assigner_never_runs(kind, queue)

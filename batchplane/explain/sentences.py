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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from batchplane.accounting.model import from_stored
from batchplane.frameworks import FRAMEWORKS
from batchplane.quantity import format_quantity
from batchplane.webhook.capacity import Shortfall
from batchplane.webhook.flavors import Flavor, flavor_mismatch
from batchplane.webhook.queues import PODS, Demand, QueueModel
from batchplane.wellknown import DEFAULT_GPU_RESOURCES

SUBMITTING_JOBS_DOC = "docs/submitting-jobs.md"
"""The guide every denial message links to (Batchplane's repository)."""


Fits = Callable[[Sequence[Demand]], bool]
"""Whether a workload of these PodSets could ever be admitted: the webhook's own judgement of size (quota of every
flavor, node sizes), applied to a changed workload to re-judge advice before it is given."""

FIXED_POD_SETS = frozenset({"head", "launcher", "master", "submitter", "driver", "leader"})
"""PodSet names of one-of-a-kind pods (a Ray head and submitter, a PyTorchJob master, an MPIJob launcher, a Spark
driver, a LeaderWorkerSet leader): their count is not what a user scales; the other PodSets are the scalable ones."""


@dataclass(frozen=True)
class Change:
    """One PodSet changed by advice.

    Attributes:
        pod_set: the PodSet to change.
        count: its new pod count (``None``: unchanged).
        per_pod: per-pod requests to lower, resource → Kueue's stored integer (millicores for CPU, bytes for
            memory, units otherwise); empty when only the count changes.
    """

    pod_set: str
    count: int | None = None
    per_pod: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Advice:
    """What to change in a workload so that it fits, re-judged by the decision code before it is given.

    Attributes:
        changes: the PodSets to change, all together (empty: nothing found that fits; ``text`` then says why).
        text: the advice as the sentence gives it, starting with `` — ``.
    """

    changes: tuple[Change, ...]
    text: str


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
    advice: Advice | None = None
    """What the sentence tells the user to change, when it advises (:func:`advise`); re-judged to fit."""


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
    elif name in ("launcher", "master", "submitter", "driver", "leader"):
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
    pod_sets: Sequence[Demand] = (),
    fits_all: Fits | None = None,
) -> Lead:
    """One PodSet no flavor of its resource group can ever hold: what the queue can get, what was asked, and what to
    ask for instead (``never runs: team-a can get at most 16 GPUs on h100 (8 of its own + 8 borrowed from cohort
    ml); this RayJob asks for 40 GPUs (5 workers × 8) — ask for at most 2 workers of 8 GPUs``).

    With ``fits_all`` (the decision's own judgement) the advice is :func:`advise`'s over ``pod_sets``, the whole
    workload; without it, a count or per-pod amount for this PodSet alone."""
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
    if fits_all is None:
        text += _suggestion(kind, demand, lead, fits[best], maxima[best][lead], flavors.get(best), gpus)
        return Lead(text, best, lead)
    advice = advise(kind, pod_sets or (demand,), queue, fits_all, gpus, lead)
    return Lead(text + (advice.text if advice is not None else ""), best, lead, advice)


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
    fits_all: Fits | None = None,
    whole: Sequence[Demand] = (),
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
    text = (
        f"never runs: this {kind} asks for {amount(lead, totals[lead], gpu_resources)} in all ({parts}) and "
        f"{queue.name} can get at most {offers}"
    )
    flavor = group.flavors[0] if len(group.flavors) == 1 else None
    if fits_all is None:
        text += (
            f", and no way of splitting its PodSets over those flavors fits — ask for at most "
            f"{amount(lead, most, gpu_resources)} in all, or fewer pods"
        )
        return Lead(text, flavor, lead)
    if len(group.flavors) > 1:
        text += ", and no way of splitting its PodSets over those flavors fits"
    advice = advise(kind, whole or pod_sets, queue, fits_all, gpu_resources, lead)
    return Lead(text + (advice.text if advice is not None else ""), flavor, lead, advice)


def undeclared_never_runs(kind: str, resource: str, queue: QueueModel) -> Lead:
    """A resource no resource group of the ClusterQueue covers (Kueue's ``BlockUndeclared``)."""
    return Lead(
        f"never runs: {queue.name} has no quota at all for {resource}, which this {kind} asks for — drop that "
        "request, or ask the platform team for quota on it",
        None,
        resource,
    )


def drop_undeclared(
    kind: str,
    pod_sets: Sequence[Demand],
    queue: QueueModel,
    fits: Fits,
    gpu_resources: Sequence[str] = DEFAULT_GPU_RESOURCES,
) -> Advice | None:
    """Every request of a resource ``queue`` does not cover dropped (per-pod 0), re-judged with ``fits``; when the
    rest still does not fit, :func:`advise`'s change of the rest is added (its sentence after ``then``). None when
    nothing found fits."""
    covered = queue.covered
    changes: list[Change] = []
    rest: list[Demand] = []
    for d in pod_sets:
        drop = {r: 0 for r in d.requests if r != PODS and r not in covered and d.requests[r] > 0}
        if drop:
            changes.append(Change(d.name, per_pod=drop))
            d = _scaled(d, per_pod=drop)
        rest.append(d)
    if not changes:
        return None
    if fits(rest):
        return Advice(tuple(changes), "")
    more = advise(kind, rest, queue, fits, gpu_resources)
    if more is None or not more.changes:
        return None
    merged = {c.pod_set: c for c in changes}
    for c in more.changes:
        was = merged.get(c.pod_set)
        merged[c.pod_set] = c if was is None else Change(c.pod_set, c.count, {**was.per_pod, **c.per_pod})
    return Advice(tuple(merged.values()), "; then" + more.text.removeprefix(" —"))


def node_advice(
    kind: str, pod_sets: Sequence[Demand], index: int, resource: str, fits: Fits, gpus: Sequence[str]
) -> Advice | None:
    """For a PodSet whose pod is larger than every node: the largest per-pod requests that fit (the other PodSets
    as asked), re-judged with ``fits``; a scalable PodSet (not in :data:`FIXED_POD_SETS`) also gets the pods that
    keep its total of ``resource`` when those fit too. Empty ``text``: the sentence says it. None when nothing
    found fits."""
    demand = pod_sets[index]
    most = _per_pod_advice(pod_sets, index, fits, gpus)
    if most is None:
        return None
    if demand.name.lower() not in FIXED_POD_SETS and most.get(resource, 0) > 0:
        more = -(-demand.requests.get(resource, 0) // most[resource])
        if more > demand.count and fits(_with(pod_sets, index, _scaled(demand, count=more, per_pod=most))):
            return Advice((Change(demand.name, count=more, per_pod=most),), "")
    return Advice((Change(demand.name, per_pod=most),), "")


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
    allocatable: bool = False,
) -> Lead:
    """A pod larger than every node that backs its flavor (``never runs: one pod asks for 24 GPUs, but the largest
    node of flavor h100 (a3-highgpu-8g) has 8 GPUs — …``). Only a scalable PodSet is told to use more pods; a fixed
    one (:data:`FIXED_POD_SETS`: one head, master, leader …) is told to ask for less. With ``allocatable`` (``largest``
    is the node's allocatable, :mod:`batchplane.node_allocatable`) the sentence says so and names the margin it does
    not count: the requests of the DaemonSets on every node."""
    one = noun(demand.name, 1, kind)
    per = _per_pod(demand, resource)
    what = ", ".join(machines)
    more = "" if demand.name.lower() in FIXED_POD_SETS else f" and use more {noun(demand.name, 2, kind)}"
    has = (
        f"{amount(resource, largest, gpu_resources)} allocatable, less what its DaemonSets request"
        if allocatable and resource not in gpu_resources
        else amount(resource, largest, gpu_resources)
    )
    return Lead(
        f"never runs: one {one} asks for {amount(resource, per, gpu_resources)}, but the largest node flavor "
        f"{flavor} runs on ({what}) has {has} — ask for at most "
        f"{amount(resource, largest, gpu_resources)} per {one}{more}",
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
    fits_all: Fits | None = None,
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
        lead = undeclared_never_runs(kind, resource, queue)
        if fits_all is None:
            return lead
        advice = drop_undeclared(kind, workload_demands, queue, fits_all, gpu_resources)
        if advice is None:
            return lead
        return Lead(lead.text + advice.text, lead.flavor, lead.resource, advice)
    if first.kind == "podset":
        return podset_never_runs(
            kind,
            by_name[first.pod_set],
            max(first.group, 0),
            queue,
            flavors,
            gpu_resources,
            workload_demands,
            fits_all,
        )
    if first.kind == "workload":
        index = max(first.group, 0)
        group = queue.groups[index]
        members = [d for d in workload_demands if any(d.requests.get(r, 0) for r in group.resources)]
        return workload_never_runs(kind, members, index, queue, gpu_resources, fits_all, workload_demands)
    return assigner_never_runs(kind, queue)


def _scaled(demand: Demand, count: int | None = None, per_pod: Mapping[str, int] | None = None) -> Demand:
    """``demand`` with ``count`` pods and/or these per-pod requests (stored integers; ``pods`` follows the count)."""
    n = demand.count if count is None else count
    per = {r: _per_pod(demand, r) for r in demand.requests if r != PODS}
    if per_pod:
        per.update(per_pod)
    requests = {r: v * n for r, v in per.items() if v * n > 0}
    if PODS in demand.requests and n > 0:
        requests[PODS] = n
    return Demand(demand.name, n, requests, demand.pod_spec, demand.partial, demand.template)


def _with(pod_sets: Sequence[Demand], index: int, changed: Demand) -> list[Demand]:
    return [changed if i == index else d for i, d in enumerate(pod_sets)]


def _largest_fitting(low: int, high: int, fits_at: Callable[[int], bool]) -> int | None:
    """The largest ``n`` in ``[low, high]`` with ``fits_at(n)`` (monotone: fits at ``n`` → fits below), else None.
    ``high`` is tried first (a request that fits as asked costs one judgement), then ``low``, then a binary search."""
    if high < low:
        return None
    if fits_at(high):
        return high
    if high == low or not fits_at(low):
        return None
    high -= 1
    while low < high:
        middle = (low + high + 1) // 2
        if fits_at(middle):
            low = middle
        else:
            high = middle - 1
    return low


#: Memory-like advice is searched and shown in whole Mi (a byte-exact amount reads as ``17179869183 of memory``).
_MI = 2**20


def _memory_like(resource: str) -> bool:
    return resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-")


def _largest_shown(resource: str, asked: int, fits_at: Callable[[int], bool]) -> int | None:
    """The largest per-pod amount up to ``asked`` (stored integer) with ``fits_at``: ``asked`` itself when it fits,
    else for memory-like resources the largest whole Mi (a binary search over Mi, not bytes: about 16 judgements
    for 64Gi instead of 36), for others the largest stored unit (millicores for CPU); None when nothing fits."""
    if fits_at(asked):
        return asked
    if _memory_like(resource) and asked >= _MI:
        most = _largest_fitting(0, (asked - 1) // _MI, lambda mi: fits_at(mi * _MI))
        return None if most is None else most * _MI
    return _largest_fitting(0, asked - 1, fits_at)


def _shown(resource: str, stored: int) -> int:
    """``stored`` rounded down to the unit advice is shown in (whole Mi for memory-like resources of 1Mi or more)."""
    return stored - stored % _MI if _memory_like(resource) and stored >= _MI else stored


def _weight(demand: Demand, gpus: Sequence[str]) -> tuple[int, int]:
    return sum(demand.requests.get(r, 0) for r in gpus), demand.count


def _lead_of(demand: Demand, gpus: Sequence[str]) -> str | None:
    asked = [r for r in demand.requests if r != PODS and demand.requests[r] > 0]
    return next((r for r in asked if r in gpus), asked[0] if asked else None)


def _amounts(per_pod: Mapping[str, int], gpus: Sequence[str]) -> str:
    parts = [amount(r, v, gpus) for r, v in sorted(per_pod.items(), key=lambda i: i[0] not in gpus)]
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _per_pod_advice(
    pod_sets: Sequence[Demand], index: int, fits: Fits, gpus: Sequence[str]
) -> dict[str, int] | None:
    """The largest per-pod requests of PodSet ``index`` (the others unchanged) that fit: for each resource it asks
    for, the most one pod may ask alone; when those do not fit together, all lowered in proportion. Only resources
    that must shrink are returned; None when none fits."""
    demand = pod_sets[index]
    asked = {r: _per_pod(demand, r) for r in demand.requests if r != PODS and demand.requests[r] > 0}
    most: dict[str, int] = {}
    for resource, per in asked.items():
        alone = {r: (0 if r != resource else per) for r in asked}

        def fits_at(value: int, resource: str = resource, alone: dict[str, int] = alone) -> bool:
            probe = dict(alone)
            probe[resource] = value
            return fits(_with(pod_sets, index, _scaled(demand, per_pod=probe)))

        found = _largest_shown(resource, per, fits_at)
        if found is None:
            return None
        if found < per:
            most[resource] = found
    if not most:
        return None
    if fits(_with(pod_sets, index, _scaled(demand, per_pod=most))):
        return most

    def lowered(permille: int) -> dict[str, int]:
        return {r: min(v, _shown(r, asked[r] * permille // 1000)) for r, v in most.items()}

    share = _largest_fitting(
        0, 1000, lambda permille: fits(_with(pod_sets, index, _scaled(demand, per_pod=lowered(permille))))
    )
    if share is None:
        return None
    return lowered(share)


def _count_advice(
    kind: str, pod_sets: Sequence[Demand], scalable: Sequence[int], fits: Fits, gpus: Sequence[str]
) -> tuple[int, int] | None:
    """``(index, count)``: the most pods of the largest scalable PodSet that fit beside the others, else None."""
    for i in scalable:
        demand = pod_sets[i]
        if demand.count <= 1:
            continue

        def count_fits(n: int, i: int = i, demand: Demand = demand) -> bool:
            return fits(_with(pod_sets, i, _scaled(demand, count=n)))

        n = _largest_fitting(1, demand.count - 1, count_fits)
        if n is not None:
            return i, n
    return None


def _counts_together(
    pod_sets: Sequence[Demand], scalable: Sequence[int], fits: Fits
) -> list[tuple[int, int]] | None:
    """Fewer pods in several scalable PodSets at once, when no one alone fits: each (largest first) gets the most
    that fit beside one pod of those after it; ``[(index, count)]`` of those that shrink, else None."""
    many = [i for i in scalable if pod_sets[i].count > 1]
    if len(many) < 2:
        return None
    base = list(pod_sets)
    for i in many:
        base[i] = _scaled(base[i], count=1)
    if not fits(base):
        return None
    out: list[tuple[int, int]] = []
    for i in many:
        demand = pod_sets[i]

        def count_fits(n: int, i: int = i, demand: Demand = demand) -> bool:
            return fits(_with(base, i, _scaled(demand, count=n)))

        n = _largest_fitting(1, demand.count, count_fits) or 1
        base[i] = _scaled(demand, count=n)
        if n < demand.count:
            out.append((i, n))
    return out or None


def _count_text(
    kind: str,
    pod_sets: Sequence[Demand],
    i: int,
    n: int,
    fixed: Sequence[int],
    gpus: Sequence[str],
    quoted: str | None,
) -> str:
    demand = pod_sets[i]
    lead = quoted if quoted is not None and demand.requests.get(quoted, 0) > 0 else _lead_of(demand, gpus)
    where = _where(pod_sets, demand, kind)
    text = f"ask for at most {n} {noun(demand.name, n, kind)}"
    if lead is None or lead == PODS:
        return text + where
    per = _per_pod(demand, lead)
    text += f" of {amount(lead, per, gpus)}{where}"
    beside = [pod_sets[j] for j in fixed if pod_sets[j].requests.get(lead, 0) > 0]
    if beside:
        more = sum(d.requests[lead] for d in beside)
        names = " and ".join(f"the {noun(d.name, d.count, kind)}" for d in beside)
        verb = "take" if len(beside) > 1 or beside[0].count > 1 else "takes"
        text += f" ({names} {verb} {amount(lead, more, gpus)} more: "
        text += f"{amount(lead, n * per + more, gpus)} in all)"
    return text


def _where(pod_sets: Sequence[Demand], demand: Demand, kind: str) -> str:
    """`` in PodSet "x"`` when the noun alone does not tell which PodSet (pods or workers of several PodSets)."""
    word = noun(demand.name, 1, kind)
    same = sum(1 for d in pod_sets if d.count > 0 and d.requests and noun(d.name, 1, kind) == word)
    return f' in PodSet "{demand.name}"' if same > 1 else ""


def _per_pod_text(
    kind: str, demand: Demand, most: Mapping[str, int], gpus: Sequence[str], pod_sets: Sequence[Demand] = ()
) -> str:
    one = noun(demand.name, 1, kind) + _where(pod_sets, demand, kind)
    kept = {r: v for r, v in most.items() if v > 0}
    dropped = sorted(r for r, v in most.items() if v <= 0)
    text = f"give each {one} at most {_amounts(kept, gpus)}" if kept else f"drop each {one}'s"
    if dropped:
        text += (" and no " if kept else " ") + " or ".join(dropped) + " request"
    if demand.count > 1:
        text += f" ({demand.count} {noun(demand.name, demand.count, kind)})"
    return text


def _shrink_each(
    kind: str, pod_sets: list[Demand], targets: Sequence[int], fits: Fits, gpus: Sequence[str]
) -> tuple[list[Change], list[str]] | None:
    """Lower the per-pod requests of ``targets`` in turn (``pod_sets`` changed in place) until the workload fits."""
    changes: list[Change] = []
    texts: list[str] = []
    for i in targets:
        most = _per_pod_advice(pod_sets, i, fits, gpus)
        if most is None:
            continue
        changes.append(Change(pod_sets[i].name, per_pod=most))
        texts.append(_per_pod_text(kind, pod_sets[i], most, gpus, pod_sets))
        pod_sets[i] = _scaled(pod_sets[i], per_pod=most)
        if fits(pod_sets):
            return changes, texts
    return None


def advise(
    kind: str,
    pod_sets: Sequence[Demand],
    queue: QueueModel,
    fits: Fits,
    gpu_resources: Sequence[str] = DEFAULT_GPU_RESOURCES,
    lead: str | None = None,
) -> Advice | None:
    """What to change so that the whole workload fits, judged over all its PodSets together (the fixed ones of
    :data:`FIXED_POD_SETS` included) and re-judged with ``fits`` before it is given; None when it already fits or
    nothing is found.

    In order: fewer pods of the largest scalable PodSet (the most that fit beside the others); when no count of it
    fits because the fixed PodSets alone exceed, it says so and lowers their per-pod requests until they fit alone,
    then fits the scalable PodSets beside them (fewer pods, else smaller ones); else lower the per-pod requests of
    the largest PodSets in turn. Per-pod advice covers every resource that exceeds (CPU, memory, GPUs). A count is
    quoted in ``lead`` (the resource the sentence quotes) when the PodSet asks for it.
    """
    if fits(pod_sets):
        return None
    gpus = gpu_resources
    live = [i for i, d in enumerate(pod_sets) if d.count > 0 and d.requests]
    scalable = [i for i in live if pod_sets[i].name.lower() not in FIXED_POD_SETS]
    fixed = [i for i in live if i not in scalable]
    scalable.sort(key=lambda i: _weight(pod_sets[i], gpus), reverse=True)
    fixed.sort(key=lambda i: _weight(pod_sets[i], gpus), reverse=True)
    counted = _count_advice(kind, pod_sets, scalable, fits, gpus)
    if counted is not None:
        i, n = counted
        return Advice(
            (Change(pod_sets[i].name, count=n),), " — " + _count_text(kind, pod_sets, i, n, fixed, gpus, lead)
        )
    together = _counts_together(pod_sets, scalable, fits)
    if together is not None:
        return Advice(
            tuple(Change(pod_sets[i].name, count=n) for i, n in together),
            " — " + ", and ".join(_count_text(kind, pod_sets, i, n, (), gpus, lead) for i, n in together),
        )
    if fixed and scalable:
        alone = [_scaled(d, count=0) if i in scalable else d for i, d in enumerate(pod_sets)]
        if not fits(alone):
            names = " and ".join(f"the {noun(pod_sets[j].name, pod_sets[j].count, kind)}" for j in fixed)
            verb = "fits" if len(fixed) == 1 else "fit"
            text = f" — no number of {noun(pod_sets[scalable[0]].name, 2, kind)} fits: {names} alone never {verb} {queue.name}"
            # the fixed pods made smaller beside every scalable pod as asked (one change), else beside one pod of
            # each scalable PodSet, else alone; a per-pod request lowered to nothing is tried last
            shrunk = None
            for base in (
                list(pod_sets),
                [_scaled(d, count=1) if i in scalable else d for i, d in enumerate(pod_sets)],
                alone,
            ):
                shrunk = _shrink_each(kind, base, fixed, fits, gpus)
                if shrunk is not None and (
                    base is alone or all(v > 0 for c in shrunk[0] for v in c.per_pod.values())
                ):
                    alone = base
                    break
            if shrunk is None:
                return Advice((), text)
            changes, texts = shrunk
            rest = [alone[i] if i in fixed else d for i, d in enumerate(pod_sets)]
            if not fits(rest):
                counted = _count_advice(kind, rest, scalable, fits, gpus)
                if counted is not None:
                    i, n = counted
                    changes.append(Change(rest[i].name, count=n))
                    texts.append(_count_text(kind, rest, i, n, fixed, gpus, lead))
                else:
                    more = _shrink_each(kind, rest, scalable, fits, gpus)
                    if more is None:
                        return Advice((), text)
                    changes += more[0]
                    texts += more[1]
            return Advice(tuple(changes), text + "; " + ", and ".join(texts))
    shrunk = _shrink_each(kind, list(pod_sets), scalable + fixed, fits, gpus) or _shrink_all(
        kind, pod_sets, scalable + fixed, fits, gpus
    )
    if shrunk is None:
        return None
    return Advice(tuple(shrunk[0]), " — " + ", and ".join(shrunk[1]))


def _shrink_all(
    kind: str, pod_sets: Sequence[Demand], targets: Sequence[int], fits: Fits, gpus: Sequence[str]
) -> tuple[list[Change], list[str]] | None:
    """Every pod of ``targets`` made smaller in the same proportion (when no one PodSet made smaller fits beside
    the others as asked); a resource that fits as asked is left as it is."""
    asked = {i: {r: _per_pod(pod_sets[i], r) for r in pod_sets[i].requests if r != PODS} for i in targets}
    resources = sorted({r for per in asked.values() for r in per})

    def lowered(permille: int, keep: frozenset[str]) -> list[Demand]:
        out = list(pod_sets)
        for i, per in asked.items():
            out[i] = _scaled(
                out[i], per_pod={r: v if r in keep else v * permille // 1000 for r, v in per.items()}
            )
        return out

    keep: frozenset[str] = frozenset()
    share = _largest_fitting(0, 1000, lambda permille: fits(lowered(permille, keep)))
    if share is None or share == 0:
        return None
    for r in resources:  # leave alone what need not shrink
        if fits(lowered(share, keep | {r})):
            keep = keep | {r}
    changes: list[Change] = []
    texts: list[str] = []
    for i, per in asked.items():
        most = {r: v * share // 1000 for r, v in per.items() if r not in keep and v * share // 1000 < v}
        if most:
            changes.append(Change(pod_sets[i].name, per_pod=most))
            texts.append(_per_pod_text(kind, pod_sets[i], most, gpus, pod_sets))
    return (changes, texts) if changes else None


@dataclass(frozen=True)
class Borrowing:
    """What a workload borrows on an empty cluster, on the flavor and resource a sentence quotes.

    Attributes:
        flavor: the ResourceFlavor.
        resource: the resource (a GPU resource when one is borrowed).
        used: what the workload puts on it (stored integer).
        nominal: the ClusterQueue's own quota of it.
        cohort: the cohort it borrows from.
        lenders: the other ClusterQueues of the cohort with quota of it to lend (``[]``: only the cohort's own).
        reclaimers: those of ``lenders`` whose ``preemption.reclaimWithinCohort`` is not ``Never``.
    """

    flavor: str
    resource: str
    used: int
    nominal: int
    cohort: str
    lenders: tuple[str, ...] = ()
    reclaimers: tuple[str, ...] = ()


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def borrowing_sentence(borrowing: Borrowing, gpu_resources: Sequence[str] = DEFAULT_GPU_RESOURCES) -> str:
    """``runs now by borrowing 8 GPUs from cohort ml — it can be preempted when team-a reclaims them``: a workload
    admitted on an empty cluster only by borrowing (Kueue admits it while the lenders do not use their quota; a
    lender whose ``reclaimWithinCohort`` is ``LowerPriority`` or ``Any`` preempts it to take its quota back,
    https://kueue.sigs.k8s.io/docs/concepts/preemption/)."""
    b = borrowing
    gpus = gpu_resources
    text = (
        f"runs now by borrowing {amount(b.resource, b.used - b.nominal, gpus)} from cohort {b.cohort} "
        f"(it needs {number(b.resource, b.used)} on {b.flavor}, its queue has {number(b.resource, b.nominal)} "
        "of its own)"
    )
    if b.reclaimers:
        return (
            text
            + f" — it can be preempted when {_names(b.reclaimers)} reclaim{'s' if len(b.reclaimers) == 1 else ''} them"
        )
    if b.lenders:
        return text + (
            f" — {_names(b.lenders)} never preempt{'s' if len(b.lenders) == 1 else ''} to reclaim them "
            "(reclaimWithinCohort: Never), but while they use their quota a job like it waits"
        )
    return text + " — while the cohort's quota is in use a job like it waits"

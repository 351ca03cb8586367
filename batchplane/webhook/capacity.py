"""Can a workload *ever* be admitted by its ClusterQueue? The webhook's verdict over the quota model
(:mod:`batchplane.webhook.queues`), flavor eligibility (:mod:`batchplane.webhook.flavors`) and Kueue's flavor
assigner (:mod:`batchplane.webhook.assign`).

A workload is reported as never admissible when no assignment of flavors to (PodSet, resource group) pairs fits
(an exhaustive search, counting PodSets with ``minCount`` at their minimum), or when one fits but Kueue's own
flavor assigner never finds it (:func:`batchplane.webhook.assign.kueue_attempts`, in an otherwise empty cohort).
Where those retries are not modelled exactly (partial admission, TAS PodSet groups, a long sequence) the result
is a warning, never a denial.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from batchplane.webhook.assign import ATTEMPT_BUDGET, attempt_message, kueue_attempts
from batchplane.webhook.flavors import Flavor, flavor_mismatch, unconstrained_flavor
from batchplane.webhook.queues import (
    POD_SET_GROUP_NAME,
    PODS,
    Demand,
    Group,
    QueueModel,
    show,
)

#: Nodes the exhaustive search may visit per resource group before it gives up (it only chooses the message).
SEARCH_BUDGET = 20_000


# --- the search ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shortfall:
    """Why a workload can never be admitted.

    Attributes:
        kind: ``"undeclared"`` (a resource no group covers), ``"podset"`` (one PodSet fits no
            flavor on its own), ``"workload"`` (the PodSets fit one by one, not together), ``"assigner"``
            (they fit together, but no attempt of Kueue's flavor assigner finds how) or ``"unmodelled"``
            (Kueue's attempts fail as far as they are modelled, but not exactly: a warning, not a denial).
        pod_set: the PodSet (``""`` for ``"workload"``).
        detail: the human part of the message (names the numbers).
        group: the ClusterQueue's resource group it is about (index), -1 when none (``"undeclared"``,
            ``"assigner"``, ``"unmodelled"``).
    """

    kind: str
    pod_set: str
    detail: str
    group: int = -1


def _pod_breakdown(demand: Demand, resource: str) -> str:
    total = demand.requests[resource]
    if demand.count > 1 and resource != PODS and total % demand.count == 0:
        return f"{show(resource, total)} ({demand.count} pods × {show(resource, total // demand.count)})"
    return show(resource, total)


def check_workload_ever_fits(
    workload_demands: Sequence[Demand],
    queue: QueueModel,
    flavors: Mapping[str, Flavor],
    *,
    block_undeclared: bool = True,
    budget: int = SEARCH_BUDGET,
) -> list[Shortfall]:
    """Submit time (the admission webhook): every reason the workload can never fit ``queue``'s quota on any
    flavor, even in an empty cluster; empty when it could be admitted. Not the plan-time rule that a ClusterQueue's
    nominal quota fits its pools (:func:`batchplane.backed_pools.check_quota_against_pool_capacity`).

    Args:
        workload_demands: from :func:`demands`.
        queue: the ClusterQueue model.
        flavors: ResourceFlavors by name (a flavor missing here has no constraints).
        block_undeclared: Kueue's ``quotaCheckStrategy: BlockUndeclared`` (the default).
        budget: nodes per resource group the exhaustive search may visit; when it runs out, Kueue's own
            attempts (:func:`kueue_attempts`) decide.

    Returns:
        Shortfalls, undeclared resources first, then per-PodSet, then whole-workload ones; else at most one
        ``"assigner"`` or ``"unmodelled"`` shortfall from Kueue's sequence of attempts (:func:`kueue_attempts`).
        Only an ``"unmodelled"`` one is not a reason to deny.
    """
    out = _undeclared(workload_demands, queue) if block_undeclared else []
    if out:
        return out
    first_fits = True  # Kueue's first attempt (each PodSet on the first flavor that takes it) admits
    split_found = True  # the exhaustive search found an assignment in every group (not: its budget ran out)
    for index, group in enumerate(queue.groups):
        items: list[tuple[Demand, tuple[int, ...], list[str]]] = []
        all_eligible = True
        for d in workload_demands:
            requests = d.requests
            vector = tuple([requests.get(r, 0) for r in group.resources])
            if not any(vector):
                continue
            eligible = _eligible(d, vector, index, queue, flavors)
            if not eligible:
                all_eligible = False
                reasons = _ineligible_reasons(d, vector, index, queue, flavors)
                asked = ", ".join(
                    f"{r} {_pod_breakdown(d, r)}" for r, v in zip(group.resources, vector, strict=True) if v
                )
                out.append(
                    Shortfall(
                        "podset", d.name, f'PodSet "{d.name}" needs {asked}, but ' + "; ".join(reasons), index
                    )
                )
            items.append((d, vector, eligible))
        if len(items) < 2 or not all_eligible:
            continue
        caps = dict(zip(group.flavors, queue.maxima[index], strict=True))
        if _first_fit(items, caps):
            continue
        first_fits = False
        together = _fits_together(items, caps, group, budget)
        if together is False:
            out.append(_workload_shortfall(items, group, queue, index))
        elif together is None:
            split_found = False
    if out or (first_fits and not queue.try_next_when_borrowing):
        return out
    return _assigner_shortfalls(workload_demands, queue, flavors, split_found)


def _assigner_shortfalls(
    workload_demands: Sequence[Demand], queue: QueueModel, flavors: Mapping[str, Flavor], split_found: bool
) -> list[Shortfall]:
    """Some assignment fits every PodSet; does Kueue's own sequence of attempts find one? Empty when it does.

    A workload Kueue never admits gets a ``"assigner"`` shortfall with Kueue's messages; one whose sequence is not
    modelled exactly (partial admission, TAS PodSet groups, more than :data:`ATTEMPT_BUDGET` attempts) gets an
    ``"unmodelled"`` one — a warning, never a denial.
    """
    attempts, complete = kueue_attempts(workload_demands, queue, flavors)
    last = attempts[-1]
    if last.failed < 0:
        return []
    failed = workload_demands[last.failed].name
    messages: list[str] = []
    for attempt in attempts:
        text = attempt_message(workload_demands, attempt)
        if text not in messages:
            messages.append(text)
    steps = (
        messages[0]
        if len(attempts) == 1
        else f"{messages[0]}; retried from the last flavor tried ({len(attempts) - 1} more attempt"
        f"{'s' if len(attempts) > 2 else ''}): " + "; ".join(messages[1:] or messages[:1])
    )
    if not complete or any(d.partial or d.grouped() for d in workload_demands):
        why = (
            f"more than {ATTEMPT_BUDGET} attempts"
            if not complete
            else "partial admission (minCount)"
            if any(d.partial for d in workload_demands)
            else f"TAS PodSet groups ({POD_SET_GROUP_NAME})"
        )
        return [
            Shortfall(
                "unmodelled",
                failed,
                f"Kueue's flavor assigner may never admit it ({steps}), but with {why} its retries are not "
                "modelled exactly, so it is not refused",
            )
        ]
    return [
        Shortfall(
            "assigner",
            failed,
            ("a flavor assignment would fit, but " if split_found else "")
            + "Kueue assigns flavors PodSet by PodSet, each on the first flavor that takes it, and never finds "
            f"one that fits: {steps}",
        )
    ]


def _undeclared(workload_demands: Sequence[Demand], queue: QueueModel) -> list[Shortfall]:
    """``BlockUndeclared``: every requested resource no resource group covers."""
    out: list[Shortfall] = []
    covered = queue.covered
    for d in workload_demands:
        if covered.issuperset(d.requests):
            continue
        for resource in sorted(set(d.requests) - covered):
            out.append(
                Shortfall(
                    "undeclared",
                    d.name,
                    f'PodSet "{d.name}" requests {resource} {_pod_breakdown(d, resource)}, '
                    f"which no resource group of the ClusterQueue covers (covered: {', '.join(sorted(covered)) or 'none'})",
                )
            )
    return out


def _workload_shortfall(
    items: list[tuple[Demand, tuple[int, ...], list[str]]], group: Group, queue: QueueModel, index: int
) -> Shortfall:
    totals = [sum(v[i] for _, v, _ in items) for i in range(len(group.resources))]
    asked = ", ".join(f"{r} {show(r, t)}" for r, t in zip(group.resources, totals, strict=True) if t)
    offers = "; ".join(
        f'flavor "{f}" at most '
        + ", ".join(
            f"{r} {show(r, queue.capacity[(f, r)].maximum)}"
            for r, t in zip(group.resources, totals, strict=True)
            if t
        )
        for f in group.flavors
    )
    return Shortfall(
        "workload",
        "",
        f"its PodSets ({', '.join(d.name for d, _, _ in items)}) together need {asked}, and no split of "
        f"them over the flavors fits ({offers})",
        index,
    )


def _eligible(
    demand: Demand, vector: tuple[int, ...], index: int, queue: QueueModel, flavors: Mapping[str, Flavor]
) -> list[str]:
    """The flavors of group ``index`` one PodSet could use on its own (computed once per PodSet and group: the
    capacity check and the provisioning check both ask). Capacity is compared first — integers compiled into
    ``queue.maxima`` — and a flavor that is too small needs no taint or selector check."""
    cache = demand.eligible
    if cache is None:
        cache = demand.eligible = {}
    else:
        cached = cache.get(index)
        if cached is not None:
            return cached
    eligible: list[str] = []
    spec = demand.pod_spec
    group = queue.groups[index]
    keys = group.match_keys
    for flavor_name, maxima in zip(group.flavors, queue.maxima[index], strict=True):
        for amount, maximum in zip(vector, maxima):  # noqa: B905 - same length
            if amount > maximum:
                break
        else:
            if (
                flavor_mismatch(spec, flavors.get(flavor_name) or unconstrained_flavor(flavor_name), keys)
                is None
            ):
                eligible.append(flavor_name)
    cache[index] = eligible
    return eligible


def _ineligible_reasons(
    demand: Demand, vector: tuple[int, ...], index: int, queue: QueueModel, flavors: Mapping[str, Flavor]
) -> list[str]:
    """Why each flavor of group ``index`` cannot take the PodSet (asked only when none can: a denial). Kueue
    reports a taint or selector mismatch before capacity; so does the message."""
    group = queue.groups[index]
    reasons: list[str] = []
    for flavor_name in group.flavors:
        mismatch = flavor_mismatch(
            demand.pod_spec, flavors.get(flavor_name) or unconstrained_flavor(flavor_name), group.match_keys
        )
        if mismatch is not None:
            reasons.append(mismatch)
            continue
        too_small = next(
            r
            for r, amount in zip(group.resources, vector, strict=True)
            if amount > queue.capacity[(flavor_name, r)].maximum
        )
        reasons.append(
            f'flavor "{flavor_name}" offers at most {queue.capacity[(flavor_name, too_small)].describe()}'
        )
    return reasons


def eligible_flavors(
    demand: Demand, index: int, queue: QueueModel, flavors: Mapping[str, Flavor]
) -> list[str]:
    """The flavors of resource group ``index`` the PodSet could use on its own (quota, taints, node labels); empty
    when it requests nothing of that group."""
    requests = demand.requests
    vector = tuple([requests.get(r, 0) for r in queue.groups[index].resources])
    if not any(vector):
        return []
    return _eligible(demand, vector, index, queue, flavors)


def node_misfit(
    demand: Demand, per_pod: Mapping[str, int], queue: QueueModel, flavors: Mapping[str, Flavor]
) -> tuple[int, list[str]] | None:
    """A resource group in which every flavor the PodSet could get is backed only by nodes none of which holds one
    of its pods: ``(group index, those flavors)``; None when there is none (or a flavor's nodes are unknown).

    Sound because a flavor's node labels select exactly its pools' nodes: a pod admitted on that flavor is bound to
    them. Capacity is the machine's, an upper bound of what the kubelet allocates, so it refuses fewer pods.
    """
    if demand.count <= 0:
        return None
    for index in range(len(queue.groups)):
        eligible = eligible_flavors(demand, index, queue, flavors)
        if not eligible:
            continue
        for name in eligible:
            flavor = flavors.get(name)
            if flavor is None or not flavor.nodes or any(n.holds(per_pod) for n in flavor.nodes):
                break
        else:
            return index, eligible
    return None


def possible_flavors(demand: Demand, queue: QueueModel, flavors: Mapping[str, Flavor]) -> set[str]:
    """Every flavor ``demand`` could be assigned in some resource group it requests (empty: none / no requests)."""
    out: set[str] = set()
    requests = demand.requests
    for index, group in enumerate(queue.groups):
        vector = tuple([requests.get(r, 0) for r in group.resources])
        if any(vector):
            out.update(_eligible(demand, vector, index, queue, flavors))
    return out


def _search_order(item: tuple[Demand, tuple[int, ...], list[str]]) -> tuple[int, int]:
    """PodSets with the fewest eligible flavors first, then the largest."""
    return (len(item[2]), -sum(item[1]))


def _first_fit(
    items: list[tuple[Demand, tuple[int, ...], list[str]]], caps: dict[str, tuple[int, ...]]
) -> bool:
    """Each PodSet, in the workload's order, on its first eligible flavor with room left. True proves that the
    PodSets fit together; False proves nothing (the exhaustive search decides)."""
    left: dict[str, list[int]] = {}
    for _, vector, eligible in items:
        for flavor in eligible:
            room = left.get(flavor)
            if room is None:
                room = left[flavor] = list(caps[flavor])
            for amount, free in zip(vector, room):  # noqa: B905 - same length
                if amount > free:
                    break
            else:
                for j, amount in enumerate(vector):
                    room[j] -= amount
                break
        else:
            return False
    return True


def _fits_together(
    items: list[tuple[Demand, tuple[int, ...], list[str]]],
    caps: dict[str, tuple[int, ...]],
    group: Group,
    budget: int,
) -> bool | None:
    """Depth-first search for a flavor per PodSet that fits every flavor's maximum (``caps``); None = budget
    spent. Asked only after :func:`_first_fit` failed.

    Iterative (an explicit stack of choice indexes), so a review leaves no reference cycle behind: a
    recursive nested closure refers to itself and is only freed by the cycle collector.
    """
    order = sorted(items, key=_search_order)  # not empty: an empty list fits at the first try
    used = {f: [0] * len(group.resources) for f in group.flavors}
    steps = 0
    chosen: list[int] = [-1]  # chosen[i]: index into order[i]'s eligible flavors; -1 = not tried yet
    while chosen:
        i = len(chosen) - 1
        _, vector, eligible = order[i]
        previous = chosen[i]
        if previous >= 0:  # back from a dead end below: take the previous choice back
            flavor = eligible[previous]
            for j, v in enumerate(vector):
                used[flavor][j] -= v
        placed = False
        for k in range(previous + 1, len(eligible)):
            steps += 1
            if steps > budget:
                return None
            flavor = eligible[k]
            if all(u + v <= c for u, v, c in zip(used[flavor], vector, caps[flavor], strict=True)):
                for j, v in enumerate(vector):
                    used[flavor][j] += v
                chosen[i] = k
                placed = True
                break
        if not placed:
            chosen.pop()
            continue
        if len(chosen) == len(order):
            return True
        chosen.append(-1)
    return False

"""Kueue's own flavor assigner and its retry sequence: PodSets in order, each on the first flavor that takes it,
retried from the last flavor tried (:func:`kueue_attempts`, which follows Kueue v0.19.2's ``flavorassigner.go`` and
scheduler line by line, in an otherwise empty cohort; https://github.com/kubernetes-sigs/kueue/tree/v0.19.2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from batchplane.webhook.flavors import Flavor, flavor_mismatch, tolerates, unconstrained_flavor
from batchplane.webhook.queues import Demand, FlavorResource, Group, QueueModel, show

#: Attempts of Kueue's retry sequence the model follows before it stops (and allows, with a warning).
ATTEMPT_BUDGET = 64


# --- Kueue's flavor assigner and its retry sequence ---------------------------------------------
#
# Kueue v0.19.2 assigns flavors greedily (https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/
# pkg/scheduler/flavorassigner/flavorassigner.go): PodSets in the workload's order (``assignFlavors``, lines
# 707-858), per PodSet each resource group once (lines 802-832), the group's flavors in the ClusterQueue's order
# from the flavor after the last one tried (``findFlavorForPodSets``, lines 1061-1206), a flavor first checked
# for untolerated taints and node affinity (``checkFlavorForPodSets``, lines 1208-1257), then for quota: the
# PodSet's request plus what earlier PodSets put on that flavor against the potential available quota
# (``fitsResourceQuota``, lines 1330-1380). The first PodSet no flavor takes ends the attempt.
#
# An attempt that fails leaves ``LastTriedFlavorIdx`` behind (``Assignment.append``, lines 1013-1037; the index
# of the last flavor tried per PodSet and resource, -1 after the last flavor, nothing for the failed PodSet and
# the ones after it). When an index other than -1 is left, the workload is requeued at once
# (``requeueIfNotPresent``, pkg/cache/queue/cluster_queue.go lines 678-685) and the next attempt starts each
# PodSet's search at that index + 1 (``NextFlavorToTryForPodSetResource``, pkg/workload/workload.go lines
# 226-238). With every index -1 (or none) the workload waits as inadmissible; when something requeues it, the
# scan starts from the first flavor again — the same sequence. So in an otherwise empty cohort a workload is
# admitted exactly when some attempt of that sequence admits it.

#: A ``LastTriedFlavorIdx`` entry for a group the PodSet got no flavor in (the search starts at flavor 0).
_UNTRIED = -2

#: ``LastTriedFlavorIdx``: per PodSet (the ones an attempt reached), per resource group, the index of the
#: last flavor tried (-1: the last flavor, :data:`_UNTRIED`: none).
TriedState = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Attempt:
    """One attempt of Kueue's flavor assigner on an empty cohort.

    Attributes:
        failed: index of the PodSet no flavor took (-1: every PodSet got its flavors: admitted).
        reasons: for a failure, Kueue's reasons for that PodSet (``Status.reasons``, unsorted).
        state: the ``LastTriedFlavorIdx`` it leaves behind.
        flavors: per PodSet reached, per resource group, the flavor assigned (``""``: none).
    """

    failed: int
    reasons: tuple[str, ...]
    state: TriedState
    flavors: tuple[tuple[str, ...], ...]

    def pending(self) -> bool:
        """``PendingFlavors`` (pkg/workload/workload.go lines 209-224): an index other than -1 is left."""
        return any(idx != -1 and idx != _UNTRIED for row in self.state for idx in row)


def kueue_mismatch(
    pod_spec: Mapping[str, Any], flavor: Flavor, keys: frozenset[str] | None = None
) -> str | None:
    """Kueue's own reason a PodSet cannot use ``flavor`` (``checkFlavorForPodSets``), or None.

    ``untolerated taint gpu=true:NoSchedule in flavor spot`` / ``flavor h100 doesn't match node affinity``.
    With ``keys`` None node affinity is matched on the label keys of this flavor only: a flavor without node labels
    matches every pod (``flavorLabelKeys := sets.KeySet(flavor.Spec.NodeLabels)``, flavorassigner.go line 1227
    @v0.19.2). With the resource group's ``keys`` (Kueue v0.18.1 and older: ``flavorSelector(&ps.Template.Spec,
    resourceGroup.LabelKeys)``, line 834 @v0.18.1, the same messages at lines 984 and 993) a flavor lacking one of
    them that the pod names does not match.
    """
    if flavor_mismatch(pod_spec, flavor, keys) is None:
        return None
    raw = pod_spec.get("tolerations")
    tolerations = [t for t in (raw or []) if isinstance(t, (dict, Mapping))]
    for taint in flavor.hard_taints:
        if not any(tolerates(t, taint) for t in tolerations):
            value = f"={taint['value']}" if taint.get("value") else ""
            return (
                f"untolerated taint {taint.get('key')}{value}:{taint.get('effect')} in flavor {flavor.name}"
            )
    return f"flavor {flavor.name} doesn't match node affinity"


def kueue_attempt(
    workload_demands: Sequence[Demand],
    queue: QueueModel,
    flavors: Mapping[str, Flavor],
    last: TriedState = (),
) -> Attempt:
    """One attempt of Kueue's flavor assigner on an empty cohort, resuming from ``last`` (``LastTriedFlavorIdx``).

    Resources no group covers are not looked at (:func:`batchplane.webhook.capacity.check_workload_ever_fits` reports them first). Kueue walks a
    PodSet's resources in Go map order (``requests.Iter()``), so when a PodSet fits in no flavor of two groups it
    reports either group; this reports the first in the queue's order. Which PodSet fails, and the state left
    behind, do not depend on that order.
    """
    used: dict[FlavorResource, int] = {}
    state: list[tuple[int, ...]] = []
    assigned: list[tuple[str, ...]] = []
    groups = queue.groups
    for p, d in enumerate(workload_demands):
        previous = last[p] if p < len(last) else None
        requests = d.requests
        row = [_UNTRIED] * len(groups)
        chosen = [""] * len(groups)
        for g, group in enumerate(groups):
            vector = [requests.get(r, 0) for r in group.resources]
            if not any(vector):
                continue
            start = 0 if previous is None or previous[g] < 0 else previous[g] + 1
            best, attempted, reasons = _find_flavor(d, group, vector, start, used, queue, flavors)
            if best < 0:
                state.append((_UNTRIED,) * len(groups))
                assigned.append(("",) * len(groups))
                return Attempt(p, tuple(reasons), tuple(state), tuple(assigned))
            row[g] = -1 if attempted == len(group.flavors) - 1 else attempted
            flavor = chosen[g] = group.flavors[best]
            for r, amount in zip(group.resources, vector, strict=True):
                if amount:
                    used[(flavor, r)] = used.get((flavor, r), 0) + amount
        state.append(tuple(row))
        assigned.append(tuple(chosen))
    return Attempt(-1, (), tuple(state), tuple(assigned))


def _find_flavor(
    demand: Demand,
    group: Group,
    vector: list[int],
    start: int,
    used: Mapping[FlavorResource, int],
    queue: QueueModel,
    flavors: Mapping[str, Flavor],
) -> tuple[int, int, list[str]]:
    """``findFlavorForPodSets`` for one PodSet and resource group in an empty cohort: (the index of the flavor
    chosen or -1, the index of the last flavor tried, Kueue's reasons for the flavors that did not fit)."""
    try_next = queue.try_next_when_borrowing
    reasons: list[str] = []
    best = -1
    best_level = 0
    attempted = -1
    for k in range(start, len(group.flavors)):
        attempted = k
        name = group.flavors[k]
        mismatch = kueue_mismatch(
            demand.pod_spec, flavors.get(name) or unconstrained_flavor(name), group.match_keys
        )
        if mismatch is not None:
            reasons.append(mismatch)
            continue
        fits = True
        level = 0
        for r, amount in zip(group.resources, vector, strict=True):
            if not amount:
                continue
            before = used.get((name, r), 0)
            maximum = queue.capacity[(name, r)].maximum
            if before + amount > maximum:
                fits = False
                reasons.append(
                    f"insufficient quota for {r} in flavor {name}, previously considered podsets requests "
                    f"({show(r, before)}) + current podset request ({show(r, amount)}) > maximum capacity "
                    f"({show(r, maximum)})"
                )
            elif try_next:
                path = queue.borrow_paths.get((name, r))
                if path is not None:
                    level = max(level, path.level(before + amount))
        if not fits:
            continue
        if not try_next or level == 0:  # shouldTryNextFlavor is false: this flavor ends the search
            return k, k, reasons
        if best < 0 or level < best_level:  # isPreferred: a lower borrowing level
            best, best_level = k, level
    return best, attempted, reasons


def kueue_attempts(
    workload_demands: Sequence[Demand],
    queue: QueueModel,
    flavors: Mapping[str, Flavor],
    budget: int = ATTEMPT_BUDGET,
) -> tuple[list[Attempt], bool]:
    """The attempts Kueue makes in an otherwise empty cohort: from the first flavor, then resuming from each
    failed attempt's ``LastTriedFlavorIdx`` while it leaves one to resume from.

    Returns:
        (attempts, complete): the attempts up to the first that admits, or up to the one that leaves nothing
        to resume from (or repeats an earlier state: Kueue would loop); ``complete`` is False when ``budget``
        attempts were made without reaching either end.
    """
    attempts: list[Attempt] = []
    seen: set[TriedState] = {()}
    last: TriedState = ()
    for _ in range(budget):
        attempt = kueue_attempt(workload_demands, queue, flavors, last)
        attempts.append(attempt)
        if (
            attempt.failed < 0
            or not queue.flavor_fungibility
            or not attempt.pending()
            or attempt.state in seen
        ):
            return attempts, True
        seen.add(attempt.state)
        last = attempt.state
    return attempts, False


def attempt_message(workload_demands: Sequence[Demand], attempt: Attempt) -> str:
    """Kueue's ``Assignment.Message`` of a failed attempt: ``couldn't assign flavors to pod set NAME: REASONS``
    (reasons sorted and joined by ``", "``, ``Status.Message``, flavorassigner.go lines 228-246, 353-362)."""
    name = workload_demands[attempt.failed].name
    return f"couldn't assign flavors to pod set {name}: " + ", ".join(sorted(attempt.reasons))

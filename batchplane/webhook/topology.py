"""Kueue's topology-aware scheduling (TAS) rules for a job's PodSets, as the webhook judges them (pure, no I/O).

A PodSet asks for a topology with annotations on its pod template (``kubernetes-sigs/kueue`` v0.19.2
``apis/kueue/v1beta2/topology_types.go`` L28-98): ``kueue.x-k8s.io/podset-required-topology``,
``-preferred-topology``, ``-unconstrained-topology``, ``-slice-required-topology`` with ``-slice-size``, and
``podset-group-name``. :func:`tas_problems` returns:

* what Kueue's own job webhooks refuse, transcribed from ``pkg/controller/jobframework/tas_validation.go`` at
  v0.19.2: ``ValidateTASPodSetRequest`` (L34-116, with L118-168), ``ValidateSliceSizeAnnotationUpperBound``
  (L170-194) and ``ValidatePodSetGroupingTopology`` (L214-302), reason ``invalid-topology-request``;
* a level no Topology of the ClusterQueue's flavors has, reason ``unknown-topology-level``: Kueue accepts the job
  but its scheduler finds "no requested topology level" in every flavor (``pkg/cache/scheduler/tas_flavor_snapshot.go``
  L934-944, ``resolveLevelIdx`` L1204-1210), so the workload stays pending forever.

Not judged: ``podset-slice-required-topology-constraints`` (behind the off-by-default ``TASMultiLayerTopology``
gate), and whether a PodSet fits one domain of the level it requires.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from batchplane.accounting import PodSetRequests
from batchplane.config.names import qualified_name_problem
from batchplane.frameworks import FRAMEWORKS
from batchplane.webhook.policy import PolicyDocument

REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_REQUIRED = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
GROUP_NAME = "kueue.x-k8s.io/podset-group-name"

INVALID = "invalid-topology-request"
"""Reason of a request Kueue's webhook refuses."""
UNKNOWN_LEVEL = "unknown-topology-level"
"""Reason of a level no Topology of the queue's flavors has."""

_BOOLS = ("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False")
"""What Go's ``strconv.ParseBool`` accepts."""

REQUEST_KINDS = frozenset(f.kind for f in FRAMEWORKS if "request" in f.topology_checks)
"""Kinds whose Kueue webhook calls ``ValidateTASPodSetRequest`` (v0.19.2: ``pkg/controller/jobs/job/job_webhook.go``
L240, ``jobset/jobset_webhook.go`` L153, ``kubeflow/kubeflowjob/kubeflowjob_controller.go`` L206,
``leaderworkerset/leaderworkerset_webhook.go`` L287/L296, ``mpijob/mpijob_webhook.go`` L186, ``pod/pod_webhook.go``
L308, ``raycluster/common.go`` L345/L355, ``raycluster/raycluster_webhook.go`` L236/L246,
``sparkapplication/sparkapplication_webhook.go`` L156/L160, ``trainjob/trainjob_webhook.go`` L165)."""
SLICE_BOUND_KINDS = frozenset(f.kind for f in FRAMEWORKS if "slice-bound" in f.topology_checks)
"""Kinds whose webhook also calls ``ValidateSliceSizeAnnotationUpperBound`` (``job_webhook.go`` L267,
``jobset_webhook.go`` L154, ``kubeflowjob_controller.go`` L216, ``leaderworkerset_webhook.go`` L291/L300,
``mpijob_webhook.go`` L187)."""
GROUPING_KINDS = frozenset(f.kind for f in FRAMEWORKS if "grouping" in f.topology_checks)
"""Kinds whose webhook calls ``ValidatePodSetGroupingTopology`` (``jobset_webhook.go`` L156,
``leaderworkerset_webhook.go`` L302, ``mpijob_webhook.go`` L189, ``raycluster/common.go`` L350,
``raycluster_webhook.go`` L238)."""

Problem = tuple[str, str, str]
"""``(reason, details, lead)``: the reason, the problem with Kueue's message, the plain sentence it leads with."""


def _annotations(pod_set: PodSetRequests) -> Mapping[str, object]:
    meta = pod_set.template.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    return annotations if isinstance(annotations, Mapping) else {}


def _int32(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 32)``: an optional sign and decimal digits within int32, else None."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if -(2**31) <= value < 2**31 else None


def _is_uint(text: str) -> bool:
    """Go's ``strconv.ParseUint(text, 10, 64)`` succeeds."""
    return bool(text) and text.isascii() and text.isdigit() and int(text) < 2**64


def _invalid(pod_set: str, key: str, message: str, lead: str) -> Problem:
    return (INVALID, f'PodSet "{pod_set}": {key}: {message}', f"refused by Kueue: PodSet {pod_set} {lead}")


def _group_name_problems(name: str, ann: Mapping[str, object]) -> list[Problem]:
    """``tas_validation.go`` L72-93 (with ``validatePodSetGroupNameAnnotation``, L158-168)."""
    out: list[Problem] = []
    if GROUP_NAME not in ann:
        return out
    if _is_uint(str(ann[GROUP_NAME])):
        out.append(
            _invalid(name, GROUP_NAME, "must not be a number", f"has a numeric {GROUP_NAME}; use a name")
        )
    for other in (SLICE_SIZE, SLICE_REQUIRED):
        if other in ann:
            message = f"may not be set when '{other}' is specified"
            out.append(_invalid(name, GROUP_NAME, message, f"sets both {GROUP_NAME} and {other}; drop one"))
    if PREFERRED not in ann and REQUIRED not in ann:
        message = f"may not be set when neither '{PREFERRED}' nor '{REQUIRED}' is specified"
        lead = f"sets {GROUP_NAME} without a required or preferred topology; add one"
        out.append(_invalid(name, GROUP_NAME, message, lead))
    return out


def _slice_problems(pod_set: PodSetRequests, ann: Mapping[str, object], upper_bound: bool) -> list[Problem]:
    """``tas_validation.go`` L98-110 and L131-156, then the upper bound L178-194."""
    name = pod_set.name
    out: list[Problem] = []
    if SLICE_SIZE in ann:
        size = _int32(str(ann[SLICE_SIZE]))
        if size is None:
            out.append(
                _invalid(
                    name, SLICE_SIZE, "must be a numeric value", f"has a {SLICE_SIZE} that is not a number"
                )
            )
        elif size < 1:
            out.append(
                _invalid(
                    name, SLICE_SIZE, "must be greater than or equal to 1", f"has a {SLICE_SIZE} below 1"
                )
            )
        elif upper_bound and size > pod_set.count:
            out.append(
                _invalid(
                    name,
                    SLICE_SIZE,
                    f"must not be greater than pod set count {pod_set.count}",
                    f"asks for slices of {size} pods but has {pod_set.count}; use a {SLICE_SIZE} that divides {pod_set.count}",
                )
            )
    if SLICE_REQUIRED in ann and SLICE_SIZE not in ann:  # L102-104
        out.append(
            _invalid(
                name,
                SLICE_SIZE,
                f"must be set when '{SLICE_REQUIRED}' is specified",
                f"sets {SLICE_REQUIRED} without {SLICE_SIZE}; add the slice size",
            )
        )
    if SLICE_SIZE in ann and SLICE_REQUIRED not in ann:  # L105-110
        out.append(
            _invalid(
                name,
                SLICE_SIZE,
                f"may not be set when '{SLICE_REQUIRED}' is not specified",
                f"sets {SLICE_SIZE} without {SLICE_REQUIRED}; add the slice's level",
            )
        )
    return out


def pod_set_request_problems(pod_set: PodSetRequests, upper_bound: bool = True) -> list[Problem]:
    """Kueue's ``ValidateTASPodSetRequest`` on one PodSet (``tas_validation.go`` L34-116 at v0.19.2), and with
    ``upper_bound`` ``ValidateSliceSizeAnnotationUpperBound`` (L170-194); each refusal with a plain sentence."""
    name = pod_set.name
    ann = _annotations(pod_set)
    out: list[Problem] = []
    found = [key for key in (REQUIRED, PREFERRED, UNCONSTRAINED) if key in ann]
    if len(found) > 1:  # L49-58
        out.append(
            _invalid(
                name,
                "annotations",
                f'must not contain more than one topology annotation: ["{REQUIRED}", "{PREFERRED}", "{UNCONSTRAINED}"]',
                f"asks for {' and '.join(found)}; keep one of them",
            )
        )
    for key in (REQUIRED, PREFERRED, SLICE_REQUIRED):  # L61-69: metavalidation.ValidateLabelName
        value = ann.get(key)
        if key in ann and (why := qualified_name_problem(str(value), 317)) is not None:
            out.append(
                _invalid(name, key, why, f"names a topology level that is not a node label key: {value!r}")
            )
    out += _group_name_problems(name, ann)
    if UNCONSTRAINED in ann and str(ann[UNCONSTRAINED]) not in _BOOLS:  # L118-129
        out.append(
            _invalid(
                name,
                UNCONSTRAINED,
                "must be a boolean value",
                f'sets {UNCONSTRAINED} to "{ann[UNCONSTRAINED]}"; use "true"',
            )
        )
    out += _slice_problems(pod_set, ann, upper_bound)
    return out


def group_problems(pod_sets: Sequence[PodSetRequests]) -> list[Problem]:
    """Kueue's ``ValidatePodSetGroupingTopology`` (``tas_validation.go`` L214-302 at v0.19.2): PodSets sharing a
    ``podset-group-name`` come in pairs, one of them has one pod, and both ask for the same required or preferred
    level."""
    groups: dict[str, list[PodSetRequests]] = {}
    for ps in pod_sets:
        ann = _annotations(ps)
        if GROUP_NAME in ann:
            groups.setdefault(str(ann[GROUP_NAME]), []).append(ps)
    out: list[Problem] = []
    for group, members in groups.items():
        if len(members) != 2:  # L227-239
            for ps in members:
                out.append(
                    _invalid(
                        ps.name,
                        GROUP_NAME,
                        f"can only define groups of exactly 2 pod sets, got: {len(members)} pod set(s)",
                        f'is one of {len(members)} PodSets in group "{group}"; a group is exactly two PodSets',
                    )
                )
            continue
        first, second = members
        if first.count != 1 and second.count != 1:  # L246-264
            message = (
                "can only define groups where at least one pod set has only 1 replica, got: "
                f"{first.count} replica(s) and {second.count} replica(s) in the group"
            )
            lead = (
                f'is in group "{group}" where neither PodSet has 1 pod; one of the two must be a single pod'
            )
            out += [_invalid(ps.name, GROUP_NAME, message, lead) for ps in members]
        a, b = _annotations(first), _annotations(second)
        same = (REQUIRED in a or PREFERRED in a) and (REQUIRED in b or PREFERRED in b)  # L292-302
        same = same and a.get(REQUIRED) == b.get(REQUIRED) and a.get(PREFERRED) == b.get(PREFERRED)
        if not same:  # L266-286
            for ps, peer in ((first, second), (second, first)):
                out.append(
                    _invalid(
                        ps.name,
                        "annotations",
                        f"must specify '{REQUIRED}' or '{PREFERRED}' topology consistent with PodSet "
                        f"\"{peer.name}\" in group '{group}'",
                        f'and PodSet {peer.name} of group "{group}" ask for different topologies; give both the '
                        "same required or preferred level",
                    )
                )
    return out


def level_problems(pod_sets: Sequence[PodSetRequests], levels: Sequence[Sequence[str]]) -> list[Problem]:
    """PodSets asking for a level no Topology of the queue's flavors has (Kueue's scheduler: "no requested
    topology level", ``pkg/cache/scheduler/tas_flavor_snapshot.go`` L934-944 at v0.19.2).

    Args:
        pod_sets: the workload's PodSets.
        levels: the levels of each TAS flavor's Topology the ClusterQueue can assign; empty when it has none.
    """
    have: list[str] = []
    for topology in levels:
        have += [level for level in topology if level not in have]
    out: list[Problem] = []
    for ps in pod_sets:
        ann = _annotations(ps)
        for key in (REQUIRED, PREFERRED, SLICE_REQUIRED):
            if key not in ann or qualified_name_problem(str(ann[key]), 317) is not None:
                continue
            level = str(ann[key])
            if level in have:
                continue
            if have:
                existing = ", ".join(have)
                details = (
                    f'PodSet "{ps.name}": {key}: no requested topology level: {level} (levels: {existing})'
                )
                lead = f"never runs: no Topology of this queue has the level {level}; use one of {existing}"
            else:
                details = f'PodSet "{ps.name}": {key}: {level}, but no flavor of the queue has a Topology'
                lead = f"never runs: PodSet {ps.name} asks for topology {level} but this queue has no topology-aware flavor; remove {key}"
            out.append((UNKNOWN_LEVEL, details, lead))
    return out


def tas_problems(
    kind: str, pod_sets: Sequence[PodSetRequests], levels: Sequence[Sequence[str]]
) -> list[Problem]:
    """Every topology refusal of a workload of ``kind``: the rules Kueue's webhook for that kind applies
    (:data:`REQUEST_KINDS`, :data:`SLICE_BOUND_KINDS`, :data:`GROUPING_KINDS`), then unknown levels (only for
    requests Kueue's webhook accepts; every kind)."""
    out: list[Problem] = []
    if kind in REQUEST_KINDS:
        for ps in pod_sets:
            out += pod_set_request_problems(ps, upper_bound=kind in SLICE_BOUND_KINDS)
    if kind in GROUPING_KINDS:
        out += group_problems(pod_sets)
    return out or level_problems(pod_sets, levels)


def queue_levels(policy: PolicyDocument, cq_name: str) -> list[list[str]]:
    """The Topology levels of every TAS flavor of the ClusterQueue's resource groups (empty without any)."""
    queue = policy.cluster_queues.get(cq_name)
    if queue is None:
        return []
    out: list[list[str]] = []
    for group in queue.resource_groups:
        for fq in group.flavors:
            flavor = policy.resource_flavors.get(fq.name)
            if flavor is not None and flavor.topology_levels:
                out.append(list(flavor.topology_levels))
    return out

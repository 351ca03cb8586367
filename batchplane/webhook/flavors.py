"""ResourceFlavors as the webhook sees them, and which flavors a PodSet may land on.

Within one PodSet every resource of a resource group gets the same flavor; different PodSets may get
different flavors. A flavor is only eligible when the PodSet tolerates its ``NoSchedule``/``NoExecute``
taints (the flavor's own tolerations count) and its nodeSelector / required node affinity match the
flavor's node labels on the label keys the policy's ``kueue.nodeAffinityKeys`` names: the flavor's own (Kueue v0.19.2,
v0.18.2+, v0.17.6+) or every key of its resource group (older Kueue; :data:`batchplane.webhook.policy.NodeAffinityKeys`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from batchplane.accounting.model import INT64_MAX, to_stored
from batchplane.quantity import parse_quantity
from batchplane.webhook.policy import PolicyDocument
from batchplane.webhook.queues import Demand, QueueModel


@dataclass(frozen=True)
class Flavor:
    """A ResourceFlavor's scheduling constraints (node labels, taints, tolerations), as plain dicts.

    Compiled once per policy: ``hard_taints`` are the ``NoSchedule``/``NoExecute`` taints the flavor's own
    tolerations leave untolerated (in order; only a pod toleration can still tolerate them), and ``plain`` is
    :func:`flavor_mismatch` of a pod spec with no tolerations, nodeSelector or affinity (most PodSets).
    """

    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, Any], ...] = ()
    tolerations: tuple[Mapping[str, Any], ...] = ()
    #: The nodes of the pools that back the flavor: (pool, machine type, one node's capacity in stored units);
    #: empty = unknown (no pod is refused for its size).
    nodes: tuple[NodeShape, ...] = ()
    hard_taints: tuple[Mapping[str, Any], ...] = field(init=False, repr=False, compare=False)
    plain: str | None = field(init=False, repr=False, compare=False)
    unconstrained: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        hard = tuple(
            t
            for t in self.taints
            if t.get("effect") in ("NoSchedule", "NoExecute")
            and not any(tolerates(o, t) for o in self.tolerations)
        )
        object.__setattr__(self, "hard_taints", hard)
        object.__setattr__(self, "plain", _taint_message(hard[0], self.name) if hard else None)
        # No taint left to tolerate and no node label to mismatch: every pod spec matches.
        object.__setattr__(self, "unconstrained", not hard and not self.node_labels)


@dataclass(frozen=True)
class NodeShape:
    """One node of a pool that backs a flavor.

    Attributes:
        pool: the pool.
        machine_type: its machine type (``""`` when unknown).
        capacity: resource → what one pod can get on one node, in Kueue's stored units (millicores for CPU): the
            node's allocatable when the policy knows it, else its capacity; only known resources.
        key: the stack config key of the pool's machine type.
        allocatable: whether ``capacity`` is the node's allocatable (the policy's ``allocatable``).
    """

    pool: str
    machine_type: str
    capacity: Mapping[str, int]
    key: str = ""
    allocatable: bool = False

    def holds(self, per_pod: Mapping[str, int]) -> bool:
        """Whether one pod requesting ``per_pod`` (stored units) fits this node in every resource it knows."""
        return all(per_pod.get(resource, 0) <= have for resource, have in self.capacity.items())


def compile_flavors(policy: PolicyDocument) -> dict[str, Flavor]:
    """The policy's ResourceFlavors as :class:`Flavor` (taints and tolerations as camelCase dicts)."""
    return {
        name: Flavor(
            name=name,
            node_labels=dict(rf.node_labels),
            taints=tuple(t.model_dump(by_alias=True, exclude_none=True) for t in rf.node_taints),
            tolerations=tuple(t.model_dump(by_alias=True, exclude_none=True) for t in rf.tolerations),
            nodes=tuple(
                NodeShape(
                    n.pool,
                    n.machine_type,
                    {r: to_stored(r, parse_quantity(q)) for r, q in (n.allocatable or n.capacity).items()},
                    n.key,
                    bool(n.allocatable),
                )
                for n in rf.nodes
            ),
        )
        for name, rf in policy.resource_flavors.items()
    }


# --- flavor eligibility: taints and node labels -------------------------------------------------


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if not key:
        return operator == "Exists"
    if key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


#: Go's ``strconv.ParseInt(s, 10, 64)`` range.
_INT64_MIN = -(2**63)


def _parse_int64(text: Any) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: an optional sign and decimal digits within int64, else None."""
    if not isinstance(text, str):
        return None
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= INT64_MAX else None


def match_expression(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """One ``matchExpressions`` requirement against a flavor's node labels, as Kubernetes' ``labels.Requirement``
    matches it (``nodeSelectorRequirementsAsSelector``, k8s.io/component-helpers ``nodeaffinity``). A requirement
    Kubernetes refuses to build (``Gt``/``Lt`` without exactly one integer value, an unknown operator) makes Kueue
    fail with an error, not a mismatch: it counts as a match here, never the reason to deny."""
    key = str(expr.get("key"))
    operator = expr.get("operator")
    values = expr.get("values") or []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    if operator in ("Gt", "Lt"):
        bound = _parse_int64(values[0]) if isinstance(values, list) and len(values) == 1 else None
        if bound is None:
            return True
        value = _parse_int64(labels[key]) if key in labels else None
        if value is None:
            return False
        return value > bound if operator == "Gt" else value < bound
    return True


def flavor_mismatch(
    pod_spec: Mapping[str, Any], flavor: Flavor, keys: frozenset[str] | None = None
) -> str | None:
    """Why a PodSet can never use ``flavor`` (an untolerated taint, a nodeSelector/affinity mismatch), or None.

    Mirrors ``flavorassigner.go`` (``FindMatchingUntoleratedTaint`` over the pod's plus the flavor's
    tolerations for ``NoSchedule``/``NoExecute`` taints; ``flavorSelector``: the nodeSelector and the required node
    affinity restricted to ``keys`` — a term left with no expression makes the whole affinity match — then matched
    against the flavor's node labels). Anything it cannot decide counts as a match.

    Args:
        pod_spec: the PodSet's pod spec.
        flavor: the flavor.
        keys: the label keys to match on: ``None`` = the flavor's own (Kueue v0.19.2, line 1227), else its resource
            group's (:attr:`Group.match_keys`, Kueue v0.18.1 and older, line 834 @v0.18.1), where a flavor lacking a
            key the pod names does not match.
    """
    if flavor.unconstrained and not keys:
        return None
    pod_tolerations = pod_spec.get("tolerations")
    selector = pod_spec.get("nodeSelector")
    affinity = pod_spec.get("affinity")
    if not pod_tolerations and not selector and not affinity:
        return flavor.plain
    tolerations = [t for t in (pod_tolerations or []) if isinstance(t, (dict, Mapping))]
    for taint in flavor.hard_taints:  # the flavor's own tolerations are already applied
        if not any(tolerates(t, taint) for t in tolerations):
            return _taint_message(taint, flavor.name)
    labels = flavor.node_labels
    allowed: Mapping[str, str] | frozenset[str] = labels if keys is None else keys
    if isinstance(selector, (dict, Mapping)):
        for key, value in selector.items():
            if key in labels:
                if labels[key] != value:
                    return f'nodeSelector {key}={value} does not match flavor "{flavor.name}" ({key}={labels[key]})'
            elif key in allowed:
                return (
                    f"flavor {flavor.name} doesn't match node affinity: nodeSelector {key}={value}, and the flavor "
                    f"has no {key} label (a label key of its resource group)"
                )
    if not _affinity_matches(affinity, labels, allowed):
        if keys is None:
            return f'required node affinity does not match the node labels of flavor "{flavor.name}"'
        return (
            f"flavor {flavor.name} doesn't match node affinity: its node labels do not satisfy the required node "
            f"affinity on the label keys of its resource group ({', '.join(sorted(keys))})"
        )
    return None


def _required_terms(affinity: Any) -> list[Any] | None:
    """``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms``, or None."""
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, (dict, Mapping)) else None
    required = (
        node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node_affinity, (dict, Mapping))
        else None
    )
    terms = required.get("nodeSelectorTerms") if isinstance(required, (dict, Mapping)) else None
    return terms if isinstance(terms, list) and terms else None


def _affinity_matches(
    affinity: Any, labels: Mapping[str, str], allowed: Mapping[str, str] | frozenset[str]
) -> bool:
    """Whether the required node affinity, each term restricted to the ``allowed`` keys, matches ``labels``
    (``flavorSelector``: terms are ORed; a term left with no expression, or that is not an object, matches)."""
    terms = _required_terms(affinity)
    if terms is None:
        return True
    for term in terms:
        if not isinstance(term, (dict, Mapping)):
            return True
        matched = True
        for e in term.get("matchExpressions") or []:
            if isinstance(e, (dict, Mapping)) and e.get("key") in allowed and not match_expression(e, labels):
                matched = False
                break
        if matched:
            return True
    return False


def _selects(pod_spec: Mapping[str, Any], labels: Mapping[str, str], allowed: frozenset[str]) -> bool:
    """Whether node labels ``labels`` satisfy the pod's nodeSelector and required node affinity on the ``allowed``
    keys (``flavorSelector`` then ``Match``; taints not considered)."""
    selector = pod_spec.get("nodeSelector")
    if isinstance(selector, (dict, Mapping)):
        for key, value in selector.items():
            if key in allowed and labels.get(key) != value:
                return False
    return _affinity_matches(pod_spec.get("affinity"), labels, allowed)


def _named_keys(pod_spec: Mapping[str, Any]) -> frozenset[str]:
    """The label keys the pod's nodeSelector and required node affinity name."""
    named: set[str] = set()
    selector = pod_spec.get("nodeSelector")
    if isinstance(selector, (dict, Mapping)):
        named.update(str(k) for k in selector)
    for term in _required_terms(pod_spec.get("affinity")) or []:
        if isinstance(term, (dict, Mapping)):
            for e in term.get("matchExpressions") or []:
                if isinstance(e, (dict, Mapping)):
                    named.add(str(e.get("key")))
    return frozenset(named)


def affinity_warnings(
    workload_demands: Sequence[Demand], queue: QueueModel, flavors: Mapping[str, Flavor]
) -> list[str]:
    """PodSets Kueue admits but whose pods are likely never scheduled: under per-flavor keys (``match_keys`` None),
    a PodSet whose nodeSelector / required node affinity names label keys some flavor of a resource group it
    requests declares, with values no flavor of the group carries (``nodeSelector: {gke-accelerator: a100}`` on a
    queue whose flavors are labelled ``h100`` and ``l4``). Kueue v0.19 still admits it to a flavor without those
    keys (each flavor is matched on its own), but no node of the queue's flavors is known to carry such labels.

    Returns:
        One warning per PodSet and resource group (empty for the resource-group keys, whose mismatch is a denial,
        and for PodSets without a nodeSelector or node affinity).
    """
    out: list[str] = []
    for d in workload_demands:
        spec = d.pod_spec
        if not spec.get("nodeSelector") and not spec.get("affinity"):
            continue
        for group in queue.groups:
            keys = group.label_keys
            if (
                group.match_keys is not None
                or not keys
                or not any(d.requests.get(r) for r in group.resources)
            ):
                continue
            described = [flavors.get(f) or unconstrained_flavor(f) for f in group.flavors]
            if any(_selects(spec, f.node_labels, keys) for f in described):
                continue
            admits = [f.name for f in described if _selects(spec, f.node_labels, frozenset(f.node_labels))]
            if not admits:
                continue  # no flavor matches even on its own keys: check_workload_ever_fits refuses it
            named = _named_keys(spec) & keys
            labelled = "; ".join(
                f"{f.name}: " + ", ".join(f"{k}={v}" for k, v in sorted(f.node_labels.items()) if k in named)
                for f in described
                if not named.isdisjoint(f.node_labels)
            )
            out.append(
                f'PodSet "{d.name}": its nodeSelector / required node affinity names label keys the flavors of '
                f"resource group ({', '.join(group.resources)}) declare, with values none of them declares "
                f"({labelled}); Kueue matches each flavor on its own label keys and may admit it to "
                f"{', '.join(admits)}, whose declared node labels do not satisfy it: unless those nodes carry the labels "
                "anyway, its pods are never scheduled"
            )
    return out


def _taint_message(taint: Mapping[str, Any], flavor: str) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f'untolerated taint {taint.get("key")}{value}:{taint.get("effect")} of flavor "{flavor}"'


@functools.lru_cache(maxsize=256)
def unconstrained_flavor(name: str) -> Flavor:
    """A flavor the policy does not describe: no taints, no node labels."""
    return Flavor(name)

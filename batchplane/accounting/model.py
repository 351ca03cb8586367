"""Result types, options and errors of Kueue-exact resource accounting.

Amounts are :class:`~decimal.Decimal` in base units: CPU in cores (``Decimal("0.5")`` is 500m),
memory and ephemeral storage in bytes, everything else (GPUs, TPUs, extended resources) in whole
units. Every per-pod amount is already rounded the way Kueue v0.19.2 stores it
(``pkg/resources/requests.go:146-151``, ``ResourceValue``): CPU up to the next millicore, every
other resource up to the next integer, both clamped to the int64 range and floored at zero.
"""

from __future__ import annotations

import decimal
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from typing import Any

from batchplane.errors import BatchplaneError

#: Largest value Kueue can store for one resource (int64; CPU is stored in millicores).
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

#: Decimal context of the accounting's Decimal arithmetic: exact for any quantity the parser accepts (at most 64
#: characters, magnitude within 1e±30) and any factor, summed over a pod. Every function that does Decimal
#: arithmetic enters it itself, so no caller's context (or its absence) changes a result.
ACCOUNTING_CONTEXT = decimal.Context(prec=80)

#: Kueue's ``Configuration.resources.transformations[].strategy`` values.
RETAIN = "Retain"
REPLACE = "Replace"


class AccountingError(BatchplaneError):
    """Raised when an object cannot be turned into Kueue resource requests.

    The message names the object and the field: ``RayJob "demo": spec.rayClusterSpec: is required``.

    Attributes:
        kind: the object's kind (``RayJob``, ``LimitRange`` ...), or ``""`` when unknown.
        name: ``metadata.name`` (or ``metadata.generateName``), or ``"<unnamed>"``.
        field: the field path inside the object (``spec.template.spec.containers[0]...``), or ``""``.
        reason: what is wrong with that field.
    """

    def __init__(self, kind: str, name: str, field: str, reason: str) -> None:
        self.kind = kind
        self.name = name
        self.field = field
        self.reason = reason
        where = f"{kind} {_quote(name)}" if kind else _quote(name)
        super().__init__(f"{where}: {field}: {reason}" if field else f"{where}: {reason}")


class FieldError(Exception):
    """Internal: a problem at ``field`` of the object being accounted; wrapped into AccountingError."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class ResourceTransformation:
    """One entry of Kueue's ``Configuration.resources.transformations`` (config v1beta2).

    Mirrors ``apis/config/v1beta2/configuration_types.go:589-605`` and is applied as in
    ``pkg/workload/workload.go`` ``applyResourceTransformations``.

    Attributes:
        input: the resource name the transformation reads, e.g. ``nvidia.com/gpu``.
        outputs: output resource name → factor (a Decimal in base units). Each output receives
            ``factor × ceil(input quantity)``; outputs generated from several inputs are summed.
        strategy: ``"Retain"`` (the default: the input resource is kept) or ``"Replace"``
            (the input resource is dropped).
        multiply_by: optional resource name; when the pod requests it, the input quantity is first
            multiplied by ``ceil(quantity of multiply_by)``. Defaults to ``None`` (no multiplication).
    """

    input: str
    outputs: Mapping[str, Decimal] = field(default_factory=dict)
    strategy: str = RETAIN
    multiply_by: str | None = None


@dataclass(frozen=True)
class ResourceOptions:
    """The accounting part of Kueue's ``Configuration.resources``.

    Attributes:
        exclude_resource_prefixes: resources whose name starts with any of these prefixes are not
            counted (``excludeResourcePrefixes``). Defaults to none.
        transformations: applied after the exclusions (``transformations``). Defaults to none.
    """

    exclude_resource_prefixes: tuple[str, ...] = ()
    transformations: tuple[ResourceTransformation, ...] = ()


@dataclass(slots=True)
class PodSetRequests:
    """One Kueue PodSet with the requests of one of its pods.

    Read-only by convention (slotted rather than frozen: one is built per PodSet of every admission review,
    and a frozen dataclass costs four times as much to construct).

    Attributes:
        name: the PodSet name exactly as Kueue writes it into ``Workload.spec.podSets[].name``
            (lower-cased: ``main``, ``head``, ``small-group``, ``submitter``, ``aw-0`` ...).
        count: number of pods (``podSets[].count``).
        min_count: ``podSets[].minCount`` for partial admission, or ``None``.
        stored: requests of one pod after every adjustment, as Kueue stores them
            (``pkg/resources/requests.go`` ``ResourceValue``): int64 millicores for CPU, units (bytes,
            devices) for everything else, rounded up and floored at zero; sorted by resource name
            (resources with zero requests are kept: Kueue skips zero undeclared requests).
        template: the PodSet's pod template as Kueue stores it (e.g. a Ray head with the injected
            ``autoscaler`` container), before RuntimeClass/LimitRange adjustments.
    """

    name: str
    count: int
    min_count: int | None
    stored: dict[str, int]
    template: dict[str, Any]

    @property
    def per_pod(self) -> dict[str, Decimal]:
        """``stored`` in base units as Decimals: CPU cores (``0.5`` for 500m), bytes, device counts."""
        return {res: from_stored(res, value) for res, value in self.stored.items()}

    @property
    def requests(self) -> dict[str, Decimal]:
        """``per_pod × count`` per resource (saturating at Kueue's int64 limit, ``Requests.Mul``)."""
        count = self.count
        return {res: from_stored(res, min(value * count, INT64_MAX)) for res, value in self.stored.items()}


@dataclass(slots=True)
class WorkloadRequests:
    """The Kueue Workload a job object turns into, with its resource requests (read-only by convention, like
    :class:`PodSetRequests`).

    Attributes:
        kind: the job object's kind (``RayJob``, ``Job`` ...).
        name: ``metadata.name`` (or ``metadata.generateName`` when the name is generated).
        namespace: ``metadata.namespace``, or ``None`` when the manifest leaves it out.
        queue_name: label ``kueue.x-k8s.io/queue-name`` (``spec.queueName`` for a Workload), or ``None``.
        priority_class: label ``kueue.x-k8s.io/priority-class`` (a WorkloadPriorityClass), else the
            job's own pod priority class (first PodSet template with ``priorityClassName``), or ``None``.
        pod_sets: the PodSets in Kueue's order. Empty for objects Kueue does not account
            (a RayJob that only selects an existing cluster via ``clusterSelector``).
    """

    kind: str
    name: str
    namespace: str | None
    queue_name: str | None
    priority_class: str | None
    pod_sets: tuple[PodSetRequests, ...]

    @property
    def total(self) -> dict[str, Decimal]:
        """Sum of every PodSet's ``requests`` (Kueue ``SumTotalRequests``), saturating at int64."""
        totals: dict[str, int] = {}
        for pod_set in self.pod_sets:
            count = pod_set.count
            for res, value in pod_set.stored.items():
                totals[res] = min(totals.get(res, 0) + min(value * count, INT64_MAX), INT64_MAX)
        return {res: from_stored(res, value) for res, value in sorted(totals.items())}


def to_stored(resource: str, amount: Decimal) -> int:
    """Kueue's stored int64 for ``amount`` of ``resource``: CPU in millicores, others in units.

    Rounds up (``Quantity.MilliValue``/``Quantity.Value``) and clamps to the int64 range
    (``pkg/resources/requests.go:146-151``, ``pkg/util/math/math.go:55-83``).
    """
    scaled = ACCOUNTING_CONTEXT.multiply(amount, 1000) if resource == "cpu" else amount
    value = int(scaled.to_integral_value(rounding=ROUND_CEILING))
    return max(INT64_MIN, min(value, INT64_MAX))


def from_stored(resource: str, value: int) -> Decimal:
    """Inverse of :func:`to_stored`: millicores back to cores for CPU, units otherwise."""
    return ACCOUNTING_CONTEXT.divide(Decimal(value), 1000) if resource == "cpu" else Decimal(value)


def scale(resource: str, amount: Decimal, count: int) -> Decimal:
    """``amount × count`` on Kueue's stored integers, saturating at int64 max (``Requests.Mul``)."""
    return from_stored(resource, min(to_stored(resource, amount) * count, INT64_MAX))


def _quote(name: str) -> str:
    return f'"{name}"'

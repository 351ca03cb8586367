"""Requests of one pod of a PodSet, computed exactly as Kueue v0.19.2 does.

The steps, in Kueue's order (https://github.com/kubernetes-sigs/kueue/tree/v0.19.2, files cited per step):

1. RuntimeClass overhead (``pkg/workload/resources.go:57-73``): when the template names a
   ``runtimeClassName`` and has no ``overhead``, the RuntimeClass's ``overhead.podFixed`` is used.
2. LimitRange defaults (``resources.go:75-114``): ``default``/``defaultRequest`` of the namespace's
   ``Container`` items fill missing limits/requests of every init container and container; ``Pod``
   items fill pod-level ``spec.resources`` only when the template has it.
3. Limits become missing requests (``resources.go:116-138``), for containers and pod-level resources.
4. ``k8s.io/component-helpers/resource.PodRequests`` with zero options (v0.36.2 ``helpers.go:151-291``):
   containers summed; restartable init containers (sidecars) added; the max over init-time uses;
   pod-level ``cpu``/``memory``/``hugepages-*`` requests replace the aggregate; overhead added.
5. ``excludeResourcePrefixes`` then ``transformations`` (``pkg/workload/workload.go:463-606``).
6. Rounding to Kueue's stored integers (CPU millicores, other resources units), floored at zero.
"""

from __future__ import annotations

import decimal
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from typing import Any

from batchplane.accounting.model import (
    ACCOUNTING_CONTEXT,
    INT64_MAX,
    REPLACE,
    AccountingError,
    FieldError,
    ResourceOptions,
    from_stored,
    to_stored,
)
from batchplane.quantity import EXACT_CONTEXT, QuantityError, parse_quantity

ResourceList = dict[str, Decimal]

#: Pod-level requests that replace the container aggregate (component-helpers
#: ``IsSupportedPodLevelResource``): ``cpu``, ``memory`` and every ``hugepages-*``.
_POD_LEVEL_RESOURCES = ("cpu", "memory")


@dataclass(frozen=True)
class LimitRangeDefaults:
    """Kueue's ``limitrange.Summarize`` of a namespace's LimitRanges (``default``/``defaultRequest`` only).

    Attributes:
        container_default: ``Container`` items' ``default`` (limits), first value per resource wins.
        container_default_request: ``Container`` items' ``defaultRequest``, first value wins.
        pod_default: ``Pod`` items' ``default``, first value wins.
        pod_default_request: ``Pod`` items' ``defaultRequest``, first value wins.
    """

    container_default: ResourceList = field(default_factory=dict)
    container_default_request: ResourceList = field(default_factory=dict)
    pod_default: ResourceList = field(default_factory=dict)
    pod_default_request: ResourceList = field(default_factory=dict)


@dataclass(frozen=True)
class PodContext:
    """Cluster facts and configuration that the per-pod computation needs.

    Attributes:
        limit_range_defaults: the summary of the workload namespace's LimitRanges. Defaults to none.
        runtime_class_overheads: RuntimeClass name → ``overhead.podFixed``. Defaults to none
            (a RuntimeClass that does not exist contributes nothing, as in Kueue).
        options: ``Configuration.resources`` exclusions and transformations. Defaults to none.
    """

    limit_range_defaults: LimitRangeDefaults = field(default_factory=LimitRangeDefaults)
    runtime_class_overheads: Mapping[str, ResourceList] = field(default_factory=dict)
    options: ResourceOptions = field(default_factory=ResourceOptions)
    integer_path: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Derived once: no LimitRange defaults, RuntimeClass overheads or transformations, so the per-pod
        # requests can be computed on integers (:func:`stored_pod_requests`).
        d = self.limit_range_defaults
        defaults = (
            d.container_default or d.container_default_request or d.pod_default or d.pod_default_request
        )
        plain = not (defaults or self.runtime_class_overheads or self.options.transformations)
        object.__setattr__(self, "integer_path", plain)


def parse_resource_list(value: object, path: str) -> ResourceList:
    """Parse a ``ResourceList`` (resource name → quantity) into Decimals in base units.

    ``None`` is an empty list. Raises :class:`FieldError` naming ``path[resource]`` on a bad quantity.
    """
    if value is None:
        return {}
    if not isinstance(value, (dict, Mapping)):
        raise FieldError(path, "must be a mapping of resource name to quantity")
    result: ResourceList = {}
    for name, quantity in value.items():
        if not isinstance(name, str) or not name:
            raise FieldError(path, f"resource name {name!r} must be a non-empty string")
        try:
            result[name] = parse_quantity(quantity)
        except QuantityError as exc:
            raise FieldError(f"{path}[{name}]", str(exc)) from exc
    return result


def limit_range_defaults(limit_ranges: Sequence[Mapping[str, Any]]) -> LimitRangeDefaults:
    """Summarise LimitRanges as Kueue does (``pkg/util/limitrange/limitrange.go:38-57``).

    The LimitRanges are taken in API list order (by name). Each ``Container`` item is first given
    the API server's defaults (``SetDefaults_LimitRangeItem``: ``default`` ← ``max``,
    ``defaultRequest`` ← ``default``, then ``defaultRequest`` ← ``min``), because Kueue reads
    LimitRanges that the API server has already defaulted.

    Raises:
        AccountingError: a LimitRange is malformed (naming the LimitRange and the field).
    """
    summary = LimitRangeDefaults()
    for limit_range in sorted(limit_ranges, key=lambda lr: str(_meta(lr).get("name", ""))):
        name = str(_meta(limit_range).get("name") or "<unnamed>")
        try:
            _summarize_one(limit_range, summary)
        except FieldError as exc:
            raise AccountingError("LimitRange", name, exc.field, exc.reason) from exc
    return summary


def _summarize_one(limit_range: Mapping[str, Any], summary: LimitRangeDefaults) -> None:
    spec = limit_range.get("spec")
    if not isinstance(spec, (dict, Mapping)):
        raise FieldError("spec", "is required")
    items = spec.get("limits")
    if not isinstance(items, list):
        raise FieldError("spec.limits", "must be a list")
    for index, item in enumerate(items):
        path = f"spec.limits[{index}]"
        if not isinstance(item, (dict, Mapping)):
            raise FieldError(path, "must be a mapping")
        kind = item.get("type")
        if kind not in ("Container", "Pod"):
            continue
        default = parse_resource_list(item.get("default"), f"{path}.default")
        default_request = parse_resource_list(item.get("defaultRequest"), f"{path}.defaultRequest")
        if kind == "Container":
            default = keep_first(default, parse_resource_list(item.get("max"), f"{path}.max"))
            default_request = keep_first(default_request, default)
            default_request = keep_first(default_request, parse_resource_list(item.get("min"), f"{path}.min"))
            _fill(summary.container_default, default)
            _fill(summary.container_default_request, default_request)
        else:
            _fill(summary.pod_default, default)
            _fill(summary.pod_default_request, default_request)


def runtime_class_overheads(runtime_classes: Sequence[Mapping[str, Any]]) -> dict[str, ResourceList]:
    """Map each ``node.k8s.io/v1`` RuntimeClass name to its ``overhead.podFixed``.

    RuntimeClasses without ``overhead.podFixed`` are left out (they add nothing).

    Raises:
        AccountingError: a RuntimeClass has no name or a bad ``overhead.podFixed`` quantity.
    """
    result: dict[str, ResourceList] = {}
    for runtime_class in runtime_classes:
        name = _meta(runtime_class).get("name")
        if not isinstance(name, str) or not name:
            raise AccountingError("RuntimeClass", "<unnamed>", "metadata.name", "is required")
        overhead = runtime_class.get("overhead")
        if overhead is None:
            continue
        if not isinstance(overhead, (dict, Mapping)):
            raise AccountingError("RuntimeClass", name, "overhead", "must be a mapping")
        if overhead.get("podFixed") is None:
            continue
        try:
            result[name] = parse_resource_list(overhead["podFixed"], "overhead.podFixed")
        except FieldError as exc:
            raise AccountingError("RuntimeClass", name, exc.field, exc.reason) from exc
    return result


@dataclass
class _Container:
    requests: ResourceList
    limits: ResourceList
    sidecar: bool


def pod_requests(template: Mapping[str, Any], path: str, context: PodContext) -> ResourceList:
    """Requests of one pod of a PodSet with pod template ``template``, rounded as Kueue stores them.

    Args:
        template: a pod template (``{"metadata": ..., "spec": ...}``); only ``spec`` is read.
        path: the template's field path in the job object, used in error messages.
        context: LimitRange defaults, RuntimeClass overheads and ``Configuration.resources``.

    Returns:
        resource name → amount in base units (CPU cores rounded up to millicores; other resources
        rounded up to integers), sorted by resource name.

    Raises:
        FieldError: a container, resource list or quantity in the template is malformed.
    """
    with decimal.localcontext(ACCOUNTING_CONTEXT):
        return _pod_requests(template, path, context)


def _pod_requests(template: Mapping[str, Any], path: str, context: PodContext) -> ResourceList:
    spec = template.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, (dict, Mapping)):
        raise FieldError(f"{path}.spec", "must be a mapping")
    spec_path = f"{path}.spec"
    containers = _containers(spec, "containers", spec_path)
    init_containers = _containers(spec, "initContainers", spec_path)

    # 1.1 RuntimeClass overhead.
    overhead = parse_resource_list(spec.get("overhead"), f"{spec_path}.overhead")
    runtime_class = spec.get("runtimeClassName")
    if runtime_class and not overhead:
        overhead = dict(context.runtime_class_overheads.get(str(runtime_class), {}))

    # Pod-level resources (KEP-2837); present even when empty, like a non-nil pointer in Go.
    pod_resources = spec.get("resources")
    has_pod_resources = pod_resources is not None
    pod_requests_list: ResourceList = {}
    pod_limits: ResourceList = {}
    if has_pod_resources:
        if not isinstance(pod_resources, (dict, Mapping)):
            raise FieldError(f"{spec_path}.resources", "must be a mapping")
        pod_requests_list = parse_resource_list(
            pod_resources.get("requests"), f"{spec_path}.resources.requests"
        )
        pod_limits = parse_resource_list(pod_resources.get("limits"), f"{spec_path}.resources.limits")

    # 1.2 LimitRange defaults, then 1.3 limits as missing requests.
    defaults = context.limit_range_defaults
    for container in (*init_containers, *containers):
        container.limits = keep_first(container.limits, defaults.container_default)
        container.requests = keep_first(container.requests, defaults.container_default_request)
        container.requests = keep_first(container.requests, container.limits)
    if has_pod_resources:
        pod_limits = keep_first(pod_limits, defaults.pod_default)
        pod_requests_list = keep_first(pod_requests_list, defaults.pod_default_request)
        pod_requests_list = keep_first(pod_requests_list, pod_limits)

    # 1.4 PodRequests.
    totals = aggregate_requests(
        [c.requests for c in containers], [(c.requests, c.sidecar) for c in init_containers]
    )
    for name, amount in pod_requests_list.items():
        if name in _POD_LEVEL_RESOURCES or name.startswith("hugepages-"):
            totals[name] = amount
    for name, amount in overhead.items():
        totals[name] = totals.get(name, Decimal(0)) + amount

    # 1.5 Configuration.resources, then 1.6 rounding to stored integers.
    totals = drop_excluded(totals, context.options.exclude_resource_prefixes)
    totals = apply_transformations(totals, context.options)
    return {
        name: from_stored(name, max(to_stored(name, amount), 0)) for name, amount in sorted(totals.items())
    }


def stored_pod_requests(template: Mapping[str, Any], path: str, context: PodContext) -> dict[str, int]:
    """:func:`pod_requests` as Kueue's stored integers: CPU millicores, every other resource in units.

    Equal to ``{name: to_stored(name, amount) for name, amount in pod_requests(...).items()}`` for every
    input, errors included. The common case — no LimitRange defaults, RuntimeClass overheads or
    ``transformations`` in ``context``, a template of plain dicts and lists, every quantity a string or an
    integer that is a whole number of nano-units — is computed on Python integers in nano-units (exact, like
    the Decimal path, and several times faster); anything else goes through :func:`pod_requests`.

    Raises:
        FieldError: as :func:`pod_requests`.
    """
    if context.integer_path:
        fast = _stored_plain(template, context.options.exclude_resource_prefixes)
        if fast is not None:
            return fast
    return {name: to_stored(name, amount) for name, amount in pod_requests(template, path, context).items()}


#: Nano-units per base unit, and per stored unit of CPU (a millicore).
_NANO = 10**9
_NANO_PER_MILLI = 10**6
_NANO_DECIMAL = Decimal(_NANO)


@functools.lru_cache(maxsize=4096)
def _text_nanos(text: str) -> int | None:
    """A quantity text in nano-units, or None when it is not a quantity or not a whole number of nano-units
    (``"1e-12"``): the caller then takes the Decimal path, which reports the error or computes it exactly.
    Cached and bounded like :func:`batchplane.quantity.parse_quantity`."""
    try:
        amount = parse_quantity(text)
    except QuantityError:
        return None
    return _decimal_nanos(amount)


def _decimal_nanos(amount: Decimal) -> int | None:
    nanos = EXACT_CONTEXT.multiply(amount, _NANO_DECIMAL)
    if nanos != nanos.to_integral_value():
        return None
    return int(nanos)


def _number_nanos(value: object) -> int | None:
    """A quantity given as a JSON integer, in nano-units (None: not a quantity, or floats and anything else, which
    take the Decimal path)."""
    if type(value) is int:
        try:
            return _decimal_nanos(parse_quantity(value))
        except QuantityError:
            return None
    return None


def _nanos_list(value: object) -> dict[str, int] | None:
    """A ResourceList in nano-units; None for anything :func:`parse_resource_list` would refuse or the integer
    path does not take."""
    if value is None:
        return {}
    if type(value) is not dict:
        return None
    out: dict[str, int] = {}
    for name, quantity in value.items():
        if type(name) is not str or not name:
            return None
        nanos = _text_nanos(quantity) if type(quantity) is str else _number_nanos(quantity)
        if nanos is None:
            return None
        out[name] = nanos
    return out


def _container_nanos(container: object) -> dict[str, int] | None:
    """A container's requests with its limits as missing requests (step 3), in nano-units; None: Decimal path."""
    if type(container) is not dict:
        return None
    resources = container.get("resources")
    if resources is None:
        return {}
    if type(resources) is not dict:
        return None
    return _requests_or_limits(resources)


def _requests_or_limits(resources: dict[str, Any]) -> dict[str, int] | None:
    """``requests`` with ``limits`` as the missing requests (step 3), in nano-units; None: the Decimal path."""
    requests = _nanos_list(resources.get("requests"))
    limits = _nanos_list(resources.get("limits"))
    if requests is None or limits is None:
        return None
    if len(limits) > len(requests) or not limits.keys() <= requests.keys():
        for name, amount in limits.items():
            requests.setdefault(name, amount)
    return requests


def _stored_plain(template: object, exclude: Sequence[str]) -> dict[str, int] | None:
    """Steps 3-6 of :func:`pod_requests` on integers, for a context without defaults, overheads or
    transformations; None whenever the template holds anything this path does not take."""
    if type(template) is not dict:
        return None
    spec = template.get("spec")
    if spec is None:
        spec = {}
    elif type(spec) is not dict:
        return None
    totals = _regular_nanos(spec.get("containers"))
    if totals is None:
        return None
    init_containers = spec.get("initContainers")
    if init_containers is not None and not _add_init_nanos(totals, init_containers):
        return None
    raw_overhead = spec.get("overhead")
    overhead = None if raw_overhead is None else _nanos_list(raw_overhead)
    if raw_overhead is not None and overhead is None:
        return None
    pod_resources = spec.get("resources")
    if pod_resources is not None and not _replace_pod_level_nanos(totals, pod_resources):
        return None
    if overhead:
        for name, amount in overhead.items():
            totals[name] = totals.get(name, 0) + amount
    stored: dict[str, int] = {}
    for name in sorted(totals):
        if exclude and name.startswith(tuple(exclude)):
            continue
        # Round up, as Quantity.MilliValue (CPU) / Quantity.Value (everything else).
        value = -(-totals[name] // (_NANO_PER_MILLI if name == "cpu" else _NANO))
        stored[name] = 0 if value < 0 else value if value < INT64_MAX else INT64_MAX
    return stored


def _regular_nanos(containers: object) -> dict[str, int] | None:
    """The sum over regular containers (step 4), in nano-units."""
    totals: dict[str, int] = {}
    if containers is None:
        return totals
    if type(containers) is not list:
        return None
    for container in containers:
        requests = _container_nanos(container)
        if requests is None:
            return None
        for name, amount in requests.items():
            totals[name] = totals.get(name, 0) + amount
    return totals


def _add_init_nanos(totals: dict[str, int], init_containers: object) -> bool:
    """Sidecars added to ``totals``, then the max over init-time uses (as :func:`aggregate_requests`)."""
    if type(init_containers) is not list:
        return False
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for container in init_containers:
        requests = _container_nanos(container)
        if requests is None:
            return False
        if container.get("restartPolicy") == "Always":  # a dict: _container_nanos checked it
            for name, amount in requests.items():
                totals[name] = totals.get(name, 0) + amount
                sidecars[name] = sidecars.get(name, 0) + amount
            use = dict(sidecars)
        else:
            use = requests
            for name, amount in sidecars.items():
                use[name] = use.get(name, 0) + amount
        _max_into(init_max, use)
    _max_into(totals, init_max)
    return True


def _replace_pod_level_nanos(totals: dict[str, int], pod_resources: object) -> bool:
    """Pod-level ``cpu``/``memory``/``hugepages-*`` requests (limits as missing ones) replace the aggregate."""
    if type(pod_resources) is not dict:
        return False
    requests = _requests_or_limits(pod_resources)
    if requests is None:
        return False
    for name, amount in requests.items():
        if name in _POD_LEVEL_RESOURCES or name.startswith("hugepages-"):
            totals[name] = amount
    return True


def _max_into(target: dict[str, int], values: dict[str, int]) -> None:
    for name, amount in values.items():
        if name not in target or amount > target[name]:
            target[name] = amount


def aggregate_requests(
    containers: Sequence[Mapping[str, Decimal]], init_containers: Sequence[tuple[Mapping[str, Decimal], bool]]
) -> ResourceList:
    """Container-level part of ``PodRequests`` (component-helpers v0.36.2 ``helpers.go:207-279``).

    Args:
        containers: requests of each regular container.
        init_containers: ``(requests, is_sidecar)`` of each init container, in declaration order;
            a sidecar is an init container with ``restartPolicy: Always``.

    Returns:
        ``max(sum(containers) + sum(sidecars), max over init containers of their init-time use)``,
        where a regular init container's use is its requests plus the sidecars declared before it
        and a sidecar's use is the sum of the sidecars up to and including itself.
    """
    totals: ResourceList = {}
    for requests in containers:
        _add(totals, requests)
    sidecars: ResourceList = {}
    init_max: ResourceList = {}
    for requests, sidecar in init_containers:
        if sidecar:
            _add(totals, requests)
            _add(sidecars, requests)
            use = dict(sidecars)
        else:
            use = dict(requests)
            _add(use, sidecars)
        _max(init_max, use)
    _max(totals, init_max)
    return totals


def drop_excluded(requests: Mapping[str, Decimal], prefixes: Sequence[str]) -> ResourceList:
    """Drop resources whose name starts with any of ``prefixes`` (Kueue ``dropExcludedResources``)."""
    if not prefixes:
        return requests if isinstance(requests, dict) else dict(requests)  # callers do not mutate it
    return {
        name: amount for name, amount in requests.items() if not any(name.startswith(p) for p in prefixes)
    }


def apply_transformations(requests: Mapping[str, Decimal], options: ResourceOptions) -> ResourceList:
    """Apply ``Configuration.resources.transformations`` (Kueue ``applyResourceTransformations``).

    For each requested input with a transformation: the quantity is multiplied by the integer value
    (rounded up) of ``multiply_by`` when the pod requests that resource; every output gets
    ``factor × ceil(quantity)``, summed across inputs; ``Retain`` keeps the (multiplied) input,
    ``Replace`` drops it. Untransformed resources pass through. Generated outputs are added to an
    untransformed resource of the same name (upstream leaves that case to map iteration order).
    """
    if not options.transformations:
        return requests if isinstance(requests, dict) else dict(requests)  # callers do not mutate it
    by_input = {t.input: t for t in options.transformations}
    if not any(name in by_input for name in requests):
        return dict(requests)
    output: ResourceList = {}
    for name, amount in requests.items():
        transformation = by_input.get(name)
        if transformation is None:
            output[name] = output.get(name, Decimal(0)) + amount
            continue
        if transformation.multiply_by is not None and transformation.multiply_by in requests:
            amount = amount * _ceil(requests[transformation.multiply_by])
        for out_name, factor in transformation.outputs.items():
            output[out_name] = output.get(out_name, Decimal(0)) + factor * _ceil(amount)
        if transformation.strategy != REPLACE:
            output[name] = output.get(name, Decimal(0)) + amount
    return output


def keep_first(base: Mapping[str, Decimal], extra: Mapping[str, Decimal]) -> ResourceList:
    """``base`` plus every resource of ``extra`` that ``base`` lacks (``MergeResourceListKeepFirst``)."""
    if not extra:
        return (
            dict(base) if not isinstance(base, dict) else base
        )  # nothing to merge: no copy (callers never mutate)
    merged = dict(base)
    for name, amount in extra.items():
        merged.setdefault(name, amount)
    return merged


def keep_max(base: Mapping[str, Decimal], extra: Mapping[str, Decimal]) -> ResourceList:
    """Per resource, the larger of ``base`` and ``extra`` (``MergeResourceListKeepMax``)."""
    merged = dict(base)
    _max(merged, extra)
    return merged


def _containers(spec: Mapping[str, Any], key: str, spec_path: str) -> list[_Container]:
    raw = spec.get(key)
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise FieldError(f"{spec_path}.{key}", "must be a list")
    result = []
    for index, container in enumerate(raw):
        path = f"{spec_path}.{key}[{index}]"
        if not isinstance(container, (dict, Mapping)):
            raise FieldError(path, "must be a mapping")
        resources = container.get("resources")
        if resources is None:
            resources = {}
        if not isinstance(resources, (dict, Mapping)):
            raise FieldError(f"{path}.resources", "must be a mapping")
        result.append(
            _Container(
                requests=parse_resource_list(resources.get("requests"), f"{path}.resources.requests"),
                limits=parse_resource_list(resources.get("limits"), f"{path}.resources.limits"),
                sidecar=key == "initContainers" and container.get("restartPolicy") == "Always",
            )
        )
    return result


def _fill(target: ResourceList, values: Mapping[str, Decimal]) -> None:
    for name, amount in values.items():
        target.setdefault(name, amount)


_ZERO = Decimal(0)


def _add(target: ResourceList, values: Mapping[str, Decimal]) -> None:
    for name, amount in values.items():
        target[name] = target.get(name, _ZERO) + amount


def _max(target: ResourceList, values: Mapping[str, Decimal]) -> None:
    for name, amount in values.items():
        if name not in target or amount > target[name]:
            target[name] = amount


def _ceil(amount: Decimal) -> Decimal:
    return amount.to_integral_value(rounding=ROUND_CEILING)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, (dict, Mapping)) else {}

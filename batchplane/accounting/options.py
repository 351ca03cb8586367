"""Read Kueue's ``Configuration.resources`` section into :class:`ResourceOptions`.

The section looks like (config v1beta2, ``apis/config/v1beta2/configuration_types.go:589-605``)::

    excludeResourcePrefixes: ["example.com/"]
    transformations:
    - input: nvidia.com/gpu
      strategy: Retain            # or Replace; default Retain
      multiplyBy: nvidia.com/vgpu # optional
      outputs: {example.com/credits: "100"}
    quotaCheckStrategy: BlockUndeclared   # read by the quota check, not by accounting
    deviceClassMappings: []               # DRA, not modelled
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.accounting.model import (
    REPLACE,
    RETAIN,
    AccountingError,
    FieldError,
    ResourceOptions,
    ResourceTransformation,
)
from batchplane.accounting.pod_requests import parse_resource_list

#: Keys of ``Configuration.resources`` that exist upstream but do not change a workload's requests.
_IGNORED_KEYS = frozenset({"quotaCheckStrategy", "deviceClassMappings"})


def resource_options_from_mapping(section: Mapping[str, Any] | None) -> ResourceOptions:
    """Build :class:`ResourceOptions` from a Kueue ``Configuration.resources`` mapping (camelCase keys).

    ``None`` or ``{}`` gives the defaults (nothing excluded, no transformations). The stack config
    wiring calls this with the ``resources`` section it renders into the Kueue Configuration.

    Raises:
        AccountingError: an unknown key, a wrong type, an unknown strategy, a bad output quantity or
            two transformations of the same input (Kueue rejects duplicate inputs); the message
            names the field, e.g. ``Configuration "resources": transformations[0].strategy: ...``.
    """
    try:
        return _parse(section)
    except FieldError as exc:
        raise AccountingError("Configuration", "resources", exc.field, exc.reason) from exc


def _parse(section: Mapping[str, Any] | None) -> ResourceOptions:
    if section is None:
        return ResourceOptions()
    if not isinstance(section, (dict, Mapping)):
        raise FieldError("resources", "must be a mapping")
    unknown = sorted(set(section) - {"excludeResourcePrefixes", "transformations"} - _IGNORED_KEYS)
    if unknown:
        raise FieldError(str(unknown[0]), "unknown field")
    prefixes = section.get("excludeResourcePrefixes") or []
    if not isinstance(prefixes, list) or not all(isinstance(p, str) for p in prefixes):
        raise FieldError("excludeResourcePrefixes", "must be a list of strings")
    raw = section.get("transformations") or []
    if not isinstance(raw, list):
        raise FieldError("transformations", "must be a list")
    transformations: list[ResourceTransformation] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw):
        path = f"transformations[{index}]"
        if not isinstance(entry, (dict, Mapping)):
            raise FieldError(path, "must be a mapping")
        extra = sorted(set(entry) - {"input", "strategy", "outputs", "multiplyBy"})
        if extra:
            raise FieldError(f"{path}.{extra[0]}", "unknown field")
        source = entry.get("input")
        if not isinstance(source, str) or not source:
            raise FieldError(f"{path}.input", "is required")
        if source in seen:
            raise FieldError(f"{path}.input", f'"{source}" is transformed twice')
        seen.add(source)
        strategy = entry.get("strategy") or RETAIN
        if strategy not in (RETAIN, REPLACE):
            raise FieldError(f"{path}.strategy", f"must be Retain or Replace, not {strategy!r}")
        multiply_by = entry.get("multiplyBy")
        if multiply_by is not None and (not isinstance(multiply_by, str) or not multiply_by):
            raise FieldError(f"{path}.multiplyBy", "must be a resource name")
        outputs = parse_resource_list(entry.get("outputs"), f"{path}.outputs")
        transformations.append(ResourceTransformation(source, outputs, strategy, multiply_by or None))
    return ResourceOptions(tuple(prefixes), tuple(transformations))

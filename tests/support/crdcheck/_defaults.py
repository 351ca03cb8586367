"""Structural defaulting of custom resources, as the API server does it before validation.

Mirrors ``structuraldefaulting.Default`` and ``PruneNonNullableNullsWithoutDefaults`` in
``k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting/algorithm.go``:

* a property with a ``default`` is set (to a deep copy) when it is absent from a *present* object, or when it
  is ``null`` and the property is not ``nullable``;
* a ``null`` in a non-nullable property without a default is dropped (the server accepts and prunes it);
* then every property, map value (``additionalProperties``) and list item is defaulted recursively, including
  values that were just defaulted, so a defaulted object gets its own nested defaults.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def apply_defaults_in_place(value: Any, schema: Mapping[str, Any]) -> None:
    """Default ``value`` (a decoded JSON object, list or scalar) against ``schema`` in place.

    Args:
        value: the value at this schema node; dicts and lists are modified in place, scalars are left alone.
        schema: the structural schema node (an ``openAPIV3Schema`` node).
    """
    if isinstance(value, dict):
        props: Mapping[str, Any] = schema.get("properties") or {}
        for name, prop in props.items():
            if "default" not in prop:
                continue
            if name not in value or (value[name] is None and not prop.get("nullable")):
                value[name] = copy.deepcopy(prop["default"])
        extra = schema.get("additionalProperties")
        for name in [k for k, v in value.items() if v is None]:
            sub = props.get(name, extra if isinstance(extra, Mapping) else None)
            if sub is not None and not sub.get("nullable") and "default" not in sub:
                del value[name]
        for name, sub_value in value.items():
            if name in props:
                apply_defaults_in_place(sub_value, props[name])
            elif isinstance(extra, Mapping):
                apply_defaults_in_place(sub_value, extra)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for item in value:
                apply_defaults_in_place(item, items)

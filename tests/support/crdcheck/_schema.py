"""OpenAPI v3 (structural CRD schema) → JSON Schema Draft 2020-12, and jsonschema errors → issues.

The translation mirrors how apiextensions-apiserver reads a structural schema
(``k8s.io/apiextensions-apiserver/pkg/apiserver/schema``):

* ``nullable: true`` adds ``"null"`` to ``type`` (and ``None`` to ``enum``);
* ``x-kubernetes-int-or-string: true`` becomes ``type: [integer, string]`` (its ``anyOf`` is dropped);
* ``exclusiveMinimum/exclusiveMaximum: true`` (OpenAPI 3.0 booleans) become the Draft 2020-12 numbers;
* ``x-kubernetes-embedded-resource: true`` allows ``apiVersion``, ``kind`` and ``metadata``;
* an object with ``properties``, no ``additionalProperties`` and no ``x-kubernetes-preserve-unknown-fields``
  gets ``additionalProperties: false``. The API server prunes such fields silently; here they are reported
  as ``unknown field`` because an unknown field in a rendered object is a bug.

``format: int32/int64`` are range-checked, ``date-time`` is checked as RFC 3339 and ``byte`` as base64 (the
formats kube-openapi's ``strfmt`` registry validates that occur in the shared CRDs); others are ignored.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from jsonschema import Draft202012Validator, FormatChecker, ValidationError

from tests.support.crdcheck.issues import SchemaIssue

#: Keys of a structural schema that carry no JSON Schema meaning (or that we handle elsewhere).
_DROPPED: Final[frozenset[str]] = frozenset(
    {"description", "default", "example", "externalDocs", "nullable", "title"}
)
_INT_RANGES: Final[dict[str, tuple[int, int]]] = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
#: RFC 3339 date-time, as kube-openapi's strfmt ``datetime`` accepts it (fractional seconds optional).
_DATE_TIME_RE: Final[re.Pattern[str]] = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)
_LEADING_FLAGS_RE: Final[re.Pattern[str]] = re.compile(r"^\^\(\?([ims]+)\)")
#: jsonschema validators whose failure Kubernetes reports as NotSupported, Required, TooLong, TooMany or
#: TypeInvalid: with any of them present the API server skips the CEL rules (``hasBlockingErr`` in
#: apiextensions-apiserver ``pkg/registry/customresource/strategy.go``).
BLOCKING_VALIDATORS: Final[frozenset[str]] = frozenset(
    {"enum", "required", "maxLength", "maxItems", "maxProperties", "type"}
)


def _in_int32(value: object) -> bool:
    return _in_range(value, "int32")


def _in_int64(value: object) -> bool:
    return _in_range(value, "int64")


def _in_range(value: object, fmt: str) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return True
    low, high = _INT_RANGES[fmt]
    return low <= value <= high


def _is_date_time(value: object) -> bool:
    return not isinstance(value, str) or bool(_DATE_TIME_RE.match(value))


def _is_base64(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _format_checker() -> FormatChecker:
    checker = FormatChecker(formats=())
    for fmt, check in (("int32", _in_int32), ("int64", _in_int64), ("date-time", _is_date_time)):
        checker.checks(fmt)(check)
    checker.checks("byte")(_is_base64)
    return checker


FORMAT_CHECKER: Final[FormatChecker] = _format_checker()


def python_pattern(pattern: str) -> str:
    """Adapt an RE2 (Go) pattern to Python's :mod:`re`: ``^(?i)x`` → ``(?i)^x`` (Python wants flags first)."""
    return _LEADING_FLAGS_RE.sub(r"(?\1)^", pattern)


def to_json_schema(node: Mapping[str, Any], *, root: bool = False) -> dict[str, Any]:
    """Translate one structural-schema node (recursively) to JSON Schema Draft 2020-12.

    Args:
        node: an ``openAPIV3Schema`` node of a CRD version.
        root: ``True`` for the top node: ``apiVersion``, ``kind`` and ``metadata`` are always allowed there.

    Returns:
        A new JSON Schema dict; ``node`` is not modified. A pattern rewritten by :func:`python_pattern` keeps
        the CRD's original under the (ignored) keyword ``x-crd-pattern`` for messages.
    """
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED or key.startswith("x-kubernetes-"):
            continue
        if key == "properties":
            out[key] = {name: to_json_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, Mapping):
            out[key] = to_json_schema(value)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [to_json_schema(sub) for sub in value]
        elif key == "pattern" and python_pattern(str(value)) != value:
            out[key], out["x-crd-pattern"] = python_pattern(str(value)), value
        else:
            out[key] = value
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
        out.pop("anyOf", None)
    _exclusive_bounds(out)
    if root or node.get("x-kubernetes-embedded-resource"):
        props = out.setdefault("properties", {})
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        props.setdefault("metadata", {"type": "object"})
    if (
        "properties" in out
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    if node.get("nullable"):
        _make_nullable(out)
    return out


def _exclusive_bounds(out: dict[str, Any]) -> None:
    """OpenAPI 3.0 ``exclusiveMinimum: true`` + ``minimum: m`` → Draft 2020-12 ``exclusiveMinimum: m``."""
    for bound in ("Minimum", "Maximum"):
        if out.get(f"exclusive{bound}") is True:
            out[f"exclusive{bound}"] = out.pop(bound.lower())
        elif out.get(f"exclusive{bound}") is False:
            del out[f"exclusive{bound}"]


def _make_nullable(out: dict[str, Any]) -> None:
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]


def make_validator(openapi_schema: Mapping[str, Any]) -> Draft202012Validator:
    """Build the (reusable) jsonschema validator of one CRD version's ``openAPIV3Schema``."""
    return Draft202012Validator(to_json_schema(openapi_schema, root=True), format_checker=FORMAT_CHECKER)


def render_path(parts: Iterable[str | int], schema: Mapping[str, Any] | None) -> str:
    """Render a JSON path as a Kubernetes field path, using the structural schema to tell fields from keys.

    ``["spec", "nodeLabels", "zone"]`` → ``spec.nodeLabels[zone]``; ``["spec", "flavors", 0]`` →
    ``spec.flavors[0]``.
    """
    text = ""
    node: Mapping[str, Any] | None = schema
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
            node = _child(node, "items")
            continue
        props = node.get("properties") if node else None
        if props is not None and part in props:
            text += f".{part}" if text else part
            node = props[part]
        elif node is not None and isinstance(node.get("additionalProperties"), Mapping):
            text += f"[{part}]"
            node = node["additionalProperties"]
        else:
            text += f".{part}" if text else part
            node = None
    return text


def _child(node: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    if node is None:
        return None
    sub = node.get(key)
    return sub if isinstance(sub, Mapping) else None


def show(value: object) -> str:
    """Render a value for a message the way Kubernetes quotes it: strings in quotes, others as JSON."""
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return json.dumps(value, ensure_ascii=False)


def _quoted_list(values: Sequence[object]) -> str:
    return ", ".join(show(v) for v in values)


def _type_name(kind: object) -> str:
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    return str(kind)


def issues_from_error(
    error: ValidationError, schema: Mapping[str, Any], path_parts: Sequence[str | int]
) -> list[SchemaIssue]:
    """Turn one jsonschema error into Kubernetes-worded :class:`SchemaIssue` s (kind ``schema``).

    Args:
        error: the jsonschema error.
        schema: the CRD version's raw ``openAPIV3Schema`` (for path rendering).
        path_parts: ``error.absolute_path`` as a sequence.

    Returns:
        One issue, or one per missing/unknown property for ``required``/``additionalProperties``.
    """
    validator = str(error.validator)
    value = error.validator_value
    instance = error.instance
    here = render_path(path_parts, schema)

    def at(message: str, parts: Sequence[str | int] | None = None) -> SchemaIssue:
        return SchemaIssue(here if parts is None else render_path(parts, schema), message, "schema")

    if validator == "required" and isinstance(instance, Mapping):
        return [at("Required value", [*path_parts, name]) for name in value if name not in instance]
    if validator == "additionalProperties" and isinstance(instance, Mapping):
        known = error.schema.get("properties", {})
        return [at(f'unknown field "{name}"', [*path_parts, name]) for name in instance if name not in known]
    if validator in ("maxItems", "maxProperties"):
        return [at(f"Too many: {_size(instance)}: must have at most {value} items")]
    if validator == "minItems":
        return [at(f"Invalid value: {_size(instance)}: should have at least {value} items")]
    if validator == "minProperties":
        return [at(f"Invalid value: {_size(instance)}: should have at least {value} properties")]
    return [at(_message(error, validator, value, instance))]


def _message(error: ValidationError, validator: str, value: Any, instance: object) -> str:
    shown = show(instance)
    if validator == "enum":
        return f"Unsupported value: {shown}: supported values: {_quoted_list(value)}"
    if validator == "pattern":
        pattern = error.schema.get("x-crd-pattern", value) if isinstance(error.schema, Mapping) else value
        return f"Invalid value: {shown}: should match '{pattern}'"
    if validator == "format":
        return _format_message(instance, str(value))
    templates = {
        "type": "Invalid value: {shown}: must be of type {kind}",
        "maxLength": "Too long: may not be more than {value} characters",
        "minLength": "Invalid value: {shown}: should be at least {value} chars long",
        "minimum": "Invalid value: {shown}: should be greater than or equal to {value}",
        "maximum": "Invalid value: {shown}: should be less than or equal to {value}",
        "exclusiveMinimum": "Invalid value: {shown}: should be greater than {value}",
        "exclusiveMaximum": "Invalid value: {shown}: should be less than {value}",
        "multipleOf": "Invalid value: {shown}: should be a multiple of {value}",
        "uniqueItems": "Duplicate value: items must be unique",
    }
    template = templates.get(validator)
    if template is None:
        return f"Invalid value: {shown}: {error.message}"
    return template.format(shown=shown, value=value, kind=_type_name(value))


def _format_message(instance: object, fmt: str) -> str:
    if fmt in _INT_RANGES:
        return f"Invalid value: {show(instance)}: out of range for format {fmt}"
    return f"Invalid value: {show(instance)}: must be of format {fmt}"


def _size(instance: object) -> int:
    return len(instance) if isinstance(instance, Mapping | list | str) else 0

"""The structural walk: ``x-kubernetes-list-type`` checks and ``x-kubernetes-validations`` (CEL) rules.

Mirrors two API-server passes that jsonschema does not do:

* ``structurallisttype.ValidateListSetsAndMaps`` (apiextensions-apiserver
  ``pkg/apiserver/schema/listtype/validation.go``): items of a ``set`` list are unique, items of a ``map``
  list are unique by their ``x-kubernetes-list-map-keys``;
* the CEL validator (``pkg/apiserver/schema/cel/validation.go``): every rule is evaluated at its schema
  node with ``self`` bound to the value there; a rule that mentions ``oldSelf`` (a transition rule) is
  evaluated only when an old value exists at the same place. Old values are found through object fields,
  map keys and the keys of ``map`` lists (items of ``set`` and ``atomic`` lists have no old counterpart).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import cel

from tests.support.crdcheck._schema import show
from tests.support.crdcheck.issues import SchemaIssue
from tests.support.crdcheck.k8s_cel import FORMAT_LIBRARY, RULE_FUNCTIONS, is_known_function


class _EvaluationErrors:
    """Collects the ``ValueError`` s Kubernetes extension functions raise during one evaluation.

    The ``cel`` library turns any Python exception in a function into a generic ``RuntimeError``; a
    ``ValueError`` from :mod:`tests.support.crdcheck.k8s_cel` is a genuine evaluation error (Kubernetes reports
    it too, e.g. a malformed ``quantity("lots")``), not a gap of the library, so it is recorded here to tell
    the two apart.
    """

    def __init__(self) -> None:
        self.errors: list[str] = []

    def wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def recording(*args: Any) -> Any:
            try:
                return function(*args)
            except ValueError as exc:
                self.errors.append(str(exc))
                raise

        return recording


_EVALUATION_ERRORS: Final = _EvaluationErrors()
_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    name: _EVALUATION_ERRORS.wrap(function) for name, function in RULE_FUNCTIONS.items()
}


class _Absent:
    """Marks "no old value here" (distinct from an old ``null``)."""


ABSENT: Final = _Absent()


@dataclass(frozen=True)
class CompiledRule:
    """One ``x-kubernetes-validations`` rule, compiled once and shared by every location that uses it.

    Attributes:
        rule: the CEL source.
        message: the rule's ``message``, or ``failed rule: <rule>`` when it has none (as Kubernetes reports).
        field_path: the rule's ``fieldPath`` (relative, leading dot stripped), or ``""``.
        program: the compiled program, or ``None`` when compiling failed.
        error: why the rule cannot be evaluated (compile error or unknown function), or ``""``.
        transition: the rule refers to ``oldSelf``.
        needs_functions: the rule calls a registered (non-native) function.
    """

    rule: str
    message: str
    field_path: str
    program: Any
    error: str
    transition: bool
    needs_functions: bool


@lru_cache(maxsize=4096)
def compile_rule(rule: str, message: str, field_path: str) -> CompiledRule:
    """Compile a rule (cached by its text, message and fieldPath); never raises.

    Returns:
        A :class:`CompiledRule` whose ``error`` says why the rule cannot be evaluated, if it cannot.
    """
    shown = message or f"failed rule: {rule.strip()}"
    try:
        program = cel.compile(rule)
    except Exception as exc:  # the library raises ValueError; be defensive about the extension module
        return CompiledRule(rule, shown, field_path, None, f"cannot compile: {exc}", False, False)
    refs = program.references()
    unknown = sorted(f for f in refs["functions"] if not is_known_function(f))
    error = f"no implementation of {', '.join(unknown)}" if unknown else ""
    needs = any(f in RULE_FUNCTIONS for f in refs["functions"])
    return CompiledRule(rule, shown, field_path, program, error, "oldSelf" in refs["variables"], needs)


def rule_of(spec: Mapping[str, Any]) -> CompiledRule:
    """Compile one entry of ``x-kubernetes-validations`` (``rule``, optional ``message``/``fieldPath``)."""
    return compile_rule(
        str(spec["rule"]), str(spec.get("message") or ""), str(spec.get("fieldPath") or "").lstrip(".")
    )


def _join(path: str, part: str) -> str:
    return f"{path}.{part}" if path else part


@dataclass
class Walker:
    """Walks a (defaulted) object against its structural schema and collects list and CEL issues.

    Attributes:
        run_cel: evaluate CEL rules (``False`` after a blocking schema error, as the API server does).
        issues: the issues found so far, in document order.
    """

    run_cel: bool
    issues: list[SchemaIssue]

    def walk(self, value: Any, schema: Mapping[str, Any], old: Any, path: str) -> None:
        """Check ``value`` (with old value ``old`` or :data:`ABSENT`) at ``path`` against ``schema``."""
        if value is None:
            return
        if self.run_cel:
            for spec in schema.get("x-kubernetes-validations") or ():
                self._evaluate(rule_of(spec), value, old, path)
        if isinstance(value, Mapping):
            self._walk_object(value, schema, old, path)
        elif isinstance(value, list):
            self._walk_list(value, schema, old, path)

    def _walk_object(self, value: Mapping[str, Any], schema: Mapping[str, Any], old: Any, path: str) -> None:
        props: Mapping[str, Any] = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        old_map = old if isinstance(old, Mapping) else {}
        for name, sub_value in value.items():
            if name in props:
                self.walk(sub_value, props[name], old_map.get(name, ABSENT), _join(path, name))
            elif isinstance(extra, Mapping):
                self.walk(sub_value, extra, old_map.get(name, ABSENT), f"{path}[{name}]")

    def _walk_list(self, value: list[Any], schema: Mapping[str, Any], old: Any, path: str) -> None:
        items = schema.get("items")
        list_type = schema.get("x-kubernetes-list-type")
        keys: list[str] = list(schema.get("x-kubernetes-list-map-keys") or ())
        if list_type == "set":
            self._check_set(value, path)
        old_by_key: dict[str, Any] = {}
        if list_type == "map" and keys:
            self._check_map(value, keys, path)
            if isinstance(old, list):
                old_by_key = {_key_of(item, keys): item for item in old if isinstance(item, Mapping)}
        if not isinstance(items, Mapping):
            return
        for index, item in enumerate(value):
            old_item = ABSENT
            if old_by_key and isinstance(item, Mapping):
                old_item = old_by_key.get(_key_of(item, keys), ABSENT)
            self.walk(item, items, old_item, f"{path}[{index}]")

    def _check_set(self, value: list[Any], path: str) -> None:
        seen: set[str] = set()
        for index, item in enumerate(value):
            key = json.dumps(item, sort_keys=True)
            if key in seen:
                self.issues.append(SchemaIssue(f"{path}[{index}]", f"Duplicate value: {show(item)}", "list"))
            seen.add(key)

    def _check_map(self, value: list[Any], keys: list[str], path: str) -> None:
        seen: set[str] = set()
        for index, item in enumerate(value):
            if not isinstance(item, Mapping):
                continue
            key = _key_of(item, keys)
            if key in seen:
                self.issues.append(SchemaIssue(f"{path}[{index}]", f"Duplicate value: {key}", "list"))
            seen.add(key)

    def _evaluate(self, rule: CompiledRule, value: Any, old: Any, path: str) -> None:
        if rule.transition and (old is ABSENT or old is None):
            return
        where = _join(path, rule.field_path) if rule.field_path else path
        if rule.error:
            self.issues.append(SchemaIssue(where, f"{rule.error} in rule: {rule.rule}", "cel-unsupported"))
            return
        variables: dict[str, Any] = {"self": value}
        if rule.transition:
            variables["oldSelf"] = old
        if rule.needs_functions:
            variables["format"] = FORMAT_LIBRARY
        context: Any = (
            cel.Context(variables=variables, functions=_FUNCTIONS) if rule.needs_functions else variables
        )
        _EVALUATION_ERRORS.errors.clear()
        try:
            result = rule.program.execute(context)
        except KeyError as exc:
            message = f"no such key: {exc.args[0] if exc.args else exc} evaluating rule: {rule.message}"
            self.issues.append(SchemaIssue(where, message, "cel"))
            return
        except (ZeroDivisionError, OverflowError, IndexError) as exc:
            self.issues.append(SchemaIssue(where, f"{exc} evaluating rule: {rule.message}", "cel"))
            return
        except Exception as exc:  # the library reports no-such-overload etc. as TypeError/RuntimeError
            if _EVALUATION_ERRORS.errors:
                message = f"{_EVALUATION_ERRORS.errors[-1]} evaluating rule: {rule.message}"
                self.issues.append(SchemaIssue(where, message, "cel"))
                return
            message = f"the cel library could not evaluate rule {rule.rule!r}: {exc}"
            self.issues.append(SchemaIssue(where, message, "cel-unsupported"))
            return
        if result is True:
            return
        if result is False:
            self.issues.append(SchemaIssue(where, rule.message, "cel"))
        else:
            message = f"rule {rule.rule!r} returned {result!r}, not a bool"
            self.issues.append(SchemaIssue(where, message, "cel-unsupported"))


def _key_of(item: Mapping[str, Any], keys: list[str]) -> str:
    return json.dumps({k: item.get(k) for k in keys}, sort_keys=True, separators=(",", ":"))

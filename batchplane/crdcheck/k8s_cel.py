"""Kubernetes CEL extension functions for the ``cel`` library (PyPI ``common-expression-language``).

The ``cel`` library implements the CEL core (macros ``has``/``all``/``exists``/``exists_one``/``map``/
``filter``, ``size``, ``matches``, ``contains``/``startsWith``/``endsWith``, conversions, timestamps) and
ships cel-go's ``strings``/``sets``/``lists`` extension libraries in :mod:`cel.stdlib`. Kubernetes adds its
own libraries on top (``k8s.io/apiserver/pkg/cel/library``); this module registers the ones a CRD rule is
likely to use:

* quantity library (``library/quantity.go``, Kubernetes ≥ 1.29): ``isQuantity``, ``quantity``, ``sign``,
  ``isInteger``, ``asInteger``, ``asApproximateFloat``, ``add``, ``sub``, ``compareTo``, ``isGreaterThan``,
  ``isLessThan``;
* list library (``library/lists.go``): ``isSorted``, ``indexOf``/``lastIndexOf`` on lists (``sum``/``min``/
  ``max`` come from :mod:`cel.stdlib`, which follows Kubernetes' spelling);
* regex library (``library/regex.go``): ``find``, ``findAll``.

A Kubernetes ``Quantity`` has no counterpart among the ``cel`` library's value types, so a quantity is
carried as the map ``{"@quantity": "<canonical decimal>"}`` (value in base units: cores, bytes, counts). Two
quantities of equal value are therefore ``==`` as in Kubernetes (``quantity("1") == quantity("1000m")``).

None of the Kueue v0.19.2, KubeRay v1.7.0, Training Operator v1.9.4, AppWrapper v1.2.1 or cert-manager v1.21.1
rules call these functions; they are registered so that a rule that does is evaluated rather than reported as
``cel-unsupported``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final

from cel.stdlib import EXTENSIONS

from batchplane.quantity import QuantityError, is_quantity, parse_quantity

_QUANTITY_KEY: Final = "@quantity"
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def _as_decimal(value: object) -> Decimal:
    if isinstance(value, Mapping) and _QUANTITY_KEY in value:
        return Decimal(str(value[_QUANTITY_KEY]))
    if isinstance(value, int) and not isinstance(value, bool):
        return Decimal(value)
    raise TypeError(f"no such overload: expected a quantity, got {type(value).__name__}")


def _make(amount: Decimal) -> dict[str, str]:
    text = format(amount.normalize(), "f") if amount else "0"
    return {_QUANTITY_KEY: text}


def is_quantity_fn(text: object) -> bool:
    """``isQuantity(string) -> bool``: whether the string parses as a ``resource.Quantity``.

    Semantics: Kubernetes ``library/quantity.go`` (``isQuantity``); parsing uses
    :func:`batchplane.quantity.is_quantity` (the apimachinery quantity grammar).
    """
    return isinstance(text, str) and is_quantity(text)


def quantity_fn(text: object) -> dict[str, str]:
    """``quantity(string) -> Quantity``: parse a quantity; a malformed string is an evaluation error.

    Semantics: Kubernetes ``library/quantity.go`` (``quantity``).

    Raises:
        ValueError: the string is not a Kubernetes quantity.
    """
    if not isinstance(text, str):
        raise TypeError("no such overload: quantity() takes a string")
    try:
        return _make(parse_quantity(text))
    except QuantityError as exc:
        raise ValueError(f"quantities must match the regular expression: {text!r} is invalid") from exc


def sign_fn(q: object) -> int:
    """``<Quantity>.sign() -> int``: -1, 0 or 1. Semantics: Kubernetes ``library/quantity.go`` (``sign``)."""
    amount = _as_decimal(q)
    return (amount > 0) - (amount < 0)


def is_integer_fn(q: object) -> bool:
    """``<Quantity>.isInteger() -> bool``: whether ``asInteger`` would succeed (whole and within int64).

    Semantics: Kubernetes ``library/quantity.go`` (``isInteger``, i.e. ``Quantity.AsInt64`` succeeds).
    """
    amount = _as_decimal(q)
    return amount == amount.to_integral_value() and _INT64_MIN <= amount <= _INT64_MAX


def as_integer_fn(q: object) -> int:
    """``<Quantity>.asInteger() -> int``: the value as int64; an error when not whole or out of range.

    Semantics: Kubernetes ``library/quantity.go`` (``asInteger``).

    Raises:
        ValueError: the quantity is not a whole number within int64.
    """
    if not is_integer_fn(q):
        raise ValueError("cannot convert value to integer")
    return int(_as_decimal(q))


def as_approximate_float_fn(q: object) -> float:
    """``<Quantity>.asApproximateFloat() -> double``. Semantics: Kubernetes ``library/quantity.go``."""
    return float(_as_decimal(q))


def add_fn(q: object, other: object) -> dict[str, str]:
    """``<Quantity>.add(<Quantity|int>) -> Quantity``. Semantics: Kubernetes ``library/quantity.go``."""
    return _make(_as_decimal(q) + _as_decimal(other))


def sub_fn(q: object, other: object) -> dict[str, str]:
    """``<Quantity>.sub(<Quantity|int>) -> Quantity``. Semantics: Kubernetes ``library/quantity.go``."""
    return _make(_as_decimal(q) - _as_decimal(other))


def compare_to_fn(q: object, other: object) -> int:
    """``<Quantity>.compareTo(<Quantity>) -> int`` (-1/0/1). Semantics: Kubernetes ``library/quantity.go``."""
    a, b = _as_decimal(q), _as_decimal(other)
    return (a > b) - (a < b)


def is_greater_than_fn(q: object, other: object) -> bool:
    """``<Quantity>.isGreaterThan(<Quantity>) -> bool``. Semantics: Kubernetes ``library/quantity.go``."""
    return compare_to_fn(q, other) > 0


def is_less_than_fn(q: object, other: object) -> bool:
    """``<Quantity>.isLessThan(<Quantity>) -> bool``. Semantics: Kubernetes ``library/quantity.go``."""
    return compare_to_fn(q, other) < 0


def is_sorted_fn(items: object) -> bool:
    """``<list>.isSorted() -> bool``: ascending order. Semantics: Kubernetes ``library/lists.go``."""
    if not isinstance(items, list):
        raise TypeError("no such overload: isSorted() takes a list")
    return all(a <= b for a, b in itertools.pairwise(items))


_STRING_INDEX_OF: Final[Callable[..., Any]] = EXTENSIONS["strings"]["indexOf"]
_STRING_LAST_INDEX_OF: Final[Callable[..., Any]] = EXTENSIONS["strings"]["lastIndexOf"]


def index_of_fn(target: object, needle: object, *rest: object) -> int:
    """``<list>.indexOf(T) -> int`` (first index or -1); strings keep cel-go's ``strings`` semantics.

    Semantics: Kubernetes ``library/lists.go`` (``indexOf``) and cel-go ``ext/strings.go`` (``indexOf``).
    """
    if isinstance(target, list):
        return next((i for i, item in enumerate(target) if item == needle), -1)
    return int(_STRING_INDEX_OF(target, needle, *rest))


def last_index_of_fn(target: object, needle: object, *rest: object) -> int:
    """``<list>.lastIndexOf(T) -> int`` (last index or -1); strings keep cel-go's ``strings`` semantics.

    Semantics: Kubernetes ``library/lists.go`` (``lastIndexOf``) and cel-go ``ext/strings.go``.
    """
    if isinstance(target, list):
        return next((i for i in range(len(target) - 1, -1, -1) if target[i] == needle), -1)
    return int(_STRING_LAST_INDEX_OF(target, needle, *rest))


def find_fn(text: object, pattern: object) -> str:
    """``<string>.find(regex) -> string``: first match or ``""``. Semantics: Kubernetes ``library/regex.go``.

    Python's :mod:`re` stands in for RE2; the two agree on the syntax CRD rules use.
    """
    match = re.search(str(pattern), str(text))
    return match.group(0) if match else ""


def find_all_fn(text: object, pattern: object, limit: object = -1) -> list[str]:
    """``<string>.findAll(regex[, limit]) -> list(string)``. Semantics: Kubernetes ``library/regex.go``.

    A negative ``limit`` means all matches; ``0`` means none.
    """
    found = [m.group(0) for m in re.finditer(str(pattern), str(text))]
    count = int(limit) if isinstance(limit, int) else -1
    return found if count < 0 else found[:count]


#: Every Kubernetes extension function this module provides, by CEL name.
KUBERNETES_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "isQuantity": is_quantity_fn,
    "quantity": quantity_fn,
    "sign": sign_fn,
    "isInteger": is_integer_fn,
    "asInteger": as_integer_fn,
    "asApproximateFloat": as_approximate_float_fn,
    "add": add_fn,
    "sub": sub_fn,
    "compareTo": compare_to_fn,
    "isGreaterThan": is_greater_than_fn,
    "isLessThan": is_less_than_fn,
    "isSorted": is_sorted_fn,
    "indexOf": index_of_fn,
    "lastIndexOf": last_index_of_fn,
    "find": find_fn,
    "findAll": find_all_fn,
}

#: What a CRD rule may call besides the native functions: cel-go's strings/sets/lists extensions (enabled by
#: Kubernetes) and the ``bool()`` conversion from :mod:`cel.stdlib`, overlaid with
#: :data:`KUBERNETES_FUNCTIONS`.
RULE_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    **EXTENSIONS["strings"],
    **EXTENSIONS["sets"],
    **EXTENSIONS["lists"],
    "bool": EXTENSIONS["core"]["bool"],  # cel-go's standard bool(string) conversion, missing natively
    "sum": EXTENSIONS["core"]["sum"],
    "min": EXTENSIONS["core"]["min"],
    "max": EXTENSIONS["core"]["max"],
    **KUBERNETES_FUNCTIONS,
}

#: Functions the ``cel`` library evaluates natively (core spec), as ``Program.functions()`` names them.
NATIVE_FUNCTIONS: Final[frozenset[str]] = frozenset(
    {
        "size", "matches", "contains", "startsWith", "endsWith",
        "int", "uint", "double", "string", "bytes", "timestamp", "duration", "dyn", "type",
        "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",
        "getMilliseconds", "getMinutes", "getMonth", "getSeconds",
    }
)  # fmt: skip


def is_known_function(name: str) -> bool:
    """True when a rule may call ``name``: an operator, a native function or a registered one."""
    return name.startswith(("_", "@", "!", "-")) or name in NATIVE_FUNCTIONS or name in RULE_FUNCTIONS

"""Kubernetes quantities: a strict syntax check plus exact parsing.

``kubernetes.utils.parse_quantity`` parses correctly but is lenient (it accepts ``"1K"``,
``"1 Gi"``, ``"1_000"``), so every value is first matched against the exact pattern the Kueue
v0.19.2 CRDs use for quota fields (``x-kubernetes-int-or-string`` with this ``pattern``), then
parsed to a :class:`~decimal.Decimal` in base units (CPU cores, memory bytes, device counts).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import ROUND_CEILING, Decimal
from typing import cast

from kubernetes.utils import parse_quantity as _untyped_parse_quantity

#: The quantity pattern of the Kueue v0.19.2 CRDs (and of ``resource.Quantity`` in apimachinery).
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_QUANTITY_RE = re.compile(QUANTITY_PATTERN)
_k8s_parse_quantity = cast(Callable[[str], Decimal], _untyped_parse_quantity)  # the client has no type hints


class QuantityError(ValueError):
    """Raised when a value is not a Kubernetes quantity."""


def quantity_text(value: object) -> str:
    """Return a YAML scalar (int, float or str) as quantity text; ``True``/``None`` are rejected.

    Raises:
        QuantityError: the value is not a string or number, or does not match the quantity pattern.
    """
    if isinstance(value, bool) or value is None:
        raise QuantityError(f"{_show(value)} is not a Kubernetes quantity")
    if isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        text = format(Decimal(repr(value)).normalize(), "f")
    elif isinstance(value, str):
        text = value
    else:
        raise QuantityError(f"{_show(value)} is not a Kubernetes quantity")
    if not _QUANTITY_RE.match(text):
        raise QuantityError(f"{_show(value)} is not a Kubernetes quantity")
    return text


def parse_quantity(value: object) -> Decimal:
    """Parse a Kubernetes quantity strictly into a Decimal in base units.

    ``"500m"`` → ``Decimal("0.5")`` (cores); ``"1Gi"`` → ``Decimal(1073741824)`` (bytes).

    Raises:
        QuantityError: the value does not match :data:`QUANTITY_PATTERN`.
    """
    text = quantity_text(value)
    try:
        return Decimal(_k8s_parse_quantity(text))
    except ValueError as exc:  # pragma: no cover - pattern already excludes these
        raise QuantityError(f"{_show(value)} is not a Kubernetes quantity") from exc


def is_quantity(value: object) -> bool:
    """True when ``value`` is a valid Kubernetes quantity (see :func:`parse_quantity`)."""
    try:
        parse_quantity(value)
    except QuantityError:
        return False
    return True


def format_quantity(amount: Decimal, resource: str = "") -> str:
    """Format a Decimal amount of ``resource`` as a canonical Kubernetes quantity string.

    CPU is rendered in millicores when not whole (``0.5`` → ``"500m"``); memory-like resources
    (``memory``, ``ephemeral-storage``, ``hugepages-*``) use the largest exact binary suffix
    (``1073741824`` → ``"1Gi"``); everything else is a plain decimal integer or decimal.
    """
    if amount == amount.to_integral_value():
        whole = int(amount)
        if resource == "memory" or resource == "ephemeral-storage" or resource.startswith("hugepages-"):
            return _shortest_exact(whole)
        return str(whole)
    milli = amount * 1000
    if milli == milli.to_integral_value():
        return f"{int(milli)}m"
    return format(amount.normalize(), "f")


_SUFFIXES = (
    ("Ei", 2**60),
    ("Pi", 2**50),
    ("Ti", 2**40),
    ("Gi", 2**30),
    ("Mi", 2**20),
    ("Ki", 2**10),
    ("E", 10**18),
    ("P", 10**15),
    ("T", 10**12),
    ("G", 10**9),
    ("M", 10**6),
    ("k", 10**3),
)


def _shortest_exact(whole: int) -> str:
    """The shortest exact rendering of a byte count: ``8000000000`` → ``8G``, ``1073741824`` → ``1Gi``."""
    best = str(whole)
    for suffix, factor in _SUFFIXES:
        if whole and whole % factor == 0:
            candidate = f"{whole // factor}{suffix}"
            if len(candidate) < len(best):
                best = candidate
    return best


def round_up_milli(amount: Decimal) -> Decimal:
    """Round up to a whole millicore/milliunit (Kueue stores requests as int64 milli-values)."""
    return (amount * 1000).to_integral_value(rounding=ROUND_CEILING) / 1000


def _show(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)

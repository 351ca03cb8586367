"""Kubernetes quantities: a strict syntax check plus exact parsing.

Every value is first matched against the exact pattern the Kueue v0.19.2 CRDs use for quota fields
(``x-kubernetes-int-or-string`` with this ``pattern``), checked against size and magnitude bounds on its
text, then parsed exactly to a :class:`~decimal.Decimal` in base units (CPU cores, memory bytes, device
counts). The parser is our own, not the kubernetes client's ``parse_quantity``: that one is lenient
(``"1K"``, ``"1 Gi"``), rounds to 28 digits, and importing the client costs the webhook process tens of
thousands of heap objects.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Context, Decimal, localcontext
from functools import lru_cache

#: The quantity pattern of the Kueue v0.19.2 CRDs (and of ``resource.Quantity`` in apimachinery).
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_QUANTITY_RE = re.compile(QUANTITY_PATTERN)


#: Longest quantity text accepted (Kubernetes quantities in manifests are a handful of characters).
MAX_QUANTITY_CHARS = 64
#: Largest magnitude accepted, as a power of ten: a quantity must be below ``10**MAX_EXPONENT`` base units and,
#: when not zero, at least ``10**-MAX_EXPONENT``. Far beyond any real amount (Kueue keeps quotas as int64
#: milli-units, below 10**16 units), and small enough that parsing never builds a huge number.
MAX_EXPONENT = 30

_LIMIT = Decimal(10) ** MAX_EXPONENT
_SUFFIX_EXPONENT = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_BINARY_EXPONENT = {"Ki": 4, "Mi": 7, "Gi": 10, "Ti": 13, "Pi": 16, "Ei": 19}  # ceil(log10(2**(10n)))
_PARTS_RE = re.compile(
    r"^[+-]?(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9.]+)?$"
)


class QuantityError(ValueError):
    """Raised when a value is not a Kubernetes quantity, or is one of absurd size or magnitude."""


def quantity_text(value: object) -> str:
    """Return a YAML scalar (int, float or str) as quantity text; ``True``/``None`` are rejected.

    Raises:
        QuantityError: the value is not a string or number, or does not match the quantity pattern.
    """
    if isinstance(value, bool) or value is None:
        raise QuantityError(f"{_show(value)} is not a Kubernetes quantity")
    if isinstance(value, int):
        if value.bit_length() > 4 * MAX_QUANTITY_CHARS:
            raise QuantityError(
                f"an integer of {value.bit_length()} bits is not a Kubernetes quantity: too many digits"
            )
        text = str(value)
    elif isinstance(value, float):
        text = format(Decimal(repr(value)).normalize(), "f")
    elif isinstance(value, str):
        text = value
    else:
        raise QuantityError(f"{_show(value)} is not a Kubernetes quantity")
    if len(text) > MAX_QUANTITY_CHARS:
        raise QuantityError(
            f"{_show(text[:20])}... is not a Kubernetes quantity: longer than {MAX_QUANTITY_CHARS} characters"
        )
    if not _QUANTITY_RE.match(text):
        raise QuantityError(f"{_show(value)} is not a Kubernetes quantity")
    _check_magnitude(text, value)
    return text


def _check_magnitude(text: str, value: object) -> None:
    """Refuse a quantity outside ``[10**-MAX_EXPONENT, 10**MAX_EXPONENT)`` from its digits alone (no arithmetic)."""
    parts = _PARTS_RE.match(text)
    if parts is None:  # pragma: no cover - QUANTITY_PATTERN matched
        raise QuantityError(f"{_show(value)} is not a Kubernetes quantity")
    whole, frac, suffix = parts["int"].lstrip("0"), parts["frac"] or "", parts["suffix"] or ""
    if len(suffix) > 1 and suffix[0] in "eE" and suffix not in _BINARY_EXPONENT:
        exponent_text = suffix[1:]
        if not re.fullmatch(r"[+-]?[0-9]+", exponent_text):
            raise QuantityError(
                f"{_show(value)} is not a Kubernetes quantity: the exponent must be an integer"
            )
        if len(exponent_text.lstrip("+-").lstrip("0")) > 6:
            exponent_text = exponent_text[:1] + "9" * 7 if exponent_text[:1] == "-" else "9" * 7
        scale = int(exponent_text)
    else:
        scale = _BINARY_EXPONENT.get(suffix, _SUFFIX_EXPONENT.get(suffix, 0))
    if whole:
        magnitude = len(whole) - 1 + scale  # the power of ten of the leading digit
    else:
        significant = frac.lstrip("0")
        if not significant:
            return  # zero
        magnitude = -(len(frac) - len(significant) + 1) + scale
    if magnitude >= MAX_EXPONENT or magnitude < -MAX_EXPONENT:
        raise QuantityError(_range_message(value))


def _range_message(value: object) -> str:
    return (
        f"{_show(value)} is out of range: quantities must be below 1e{MAX_EXPONENT} and, unless zero, "
        f"at least 1e-{MAX_EXPONENT}"
    )


def parse_quantity(value: object) -> Decimal:
    """Parse a Kubernetes quantity strictly into a Decimal in base units.

    ``"500m"`` → ``Decimal("0.5")`` (cores); ``"1Gi"`` → ``Decimal(1073741824)`` (bytes).

    Raises:
        QuantityError: the value does not match :data:`QUANTITY_PATTERN`, is longer than
            :data:`MAX_QUANTITY_CHARS`, has a fractional exponent, or its magnitude is outside
            ``[1e-30, 1e30)`` (checked on the text, before any arithmetic).
    """
    if type(value) is str:
        return _parse_text(value)
    return _parse(value)


@lru_cache(maxsize=4096)
def _parse_text(text: str) -> Decimal:
    """:func:`_parse` of a string, cached: reviews and configs repeat the same few quantities (``"1"``,
    ``"8Gi"``); Decimals are immutable, so sharing them is safe. Bounded: 4,096 entries of ≤ 64 characters."""
    return _parse(text)


def _parse(value: object) -> Decimal:
    text = quantity_text(value)
    amount = _exact(text)
    if not amount:
        return Decimal(0)  # "0e999999" is zero, with no exponent to carry around
    if abs(amount) >= _LIMIT:  # pragma: no cover - the text bounds already exclude it
        raise QuantityError(_range_message(value))
    return amount


#: Enough digits for any quantity that passes the bounds (64 characters, magnitude within 1e±30) to be exact.
EXACT_CONTEXT = Context(prec=128, Emax=999, Emin=-999)


def _exact(text: str) -> Decimal:
    """The value of a quantity text that matched :data:`QUANTITY_PATTERN` and the bounds, in base units.

    Semantics of apimachinery ``resource.ParseQuantity``: binary suffixes are powers of 1024, decimal ones
    (``n u m k M G T P E``) and ``e``/``E`` exponents powers of ten. Computed exactly (no rounding).
    """
    parts = _PARTS_RE.match(text)
    if parts is None:  # pragma: no cover - callers matched QUANTITY_PATTERN
        raise ValueError(text)
    sign = "-" if text.startswith("-") else ""
    frac = parts["frac"]
    number = Decimal(f"{sign}{parts['int'] or '0'}" + (f".{frac}" if frac else ""))
    suffix = parts["suffix"] or ""
    if not number:
        return Decimal(0)  # "0e2255": zero whatever the exponent (which may be beyond any context)
    with localcontext(EXACT_CONTEXT):
        if suffix in _BINARY_EXPONENT:
            return number * (Decimal(1024) ** (_BINARY_SUFFIXES.index(suffix) + 1))
        exponent = int(suffix[1:]) if len(suffix) > 1 and suffix[0] in "eE" else _SUFFIX_EXPONENT[suffix]
        return number * (Decimal(10) ** exponent)


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
    milli = EXACT_CONTEXT.multiply(amount, 1000)  # exact whatever the caller's decimal context
    if milli == milli.to_integral_value():
        return f"{int(milli)}m"
    return format(amount.normalize(EXACT_CONTEXT), "f")


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
    return EXACT_CONTEXT.divide(
        EXACT_CONTEXT.multiply(amount, 1000).to_integral_value(rounding=ROUND_CEILING), 1000
    )


def _show(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)

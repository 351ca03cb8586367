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
* regex library (``library/regex.go``): ``find``, ``findAll``;
* format library (``library/format.go``, Kubernetes ≥ 1.31): ``format.<name>()`` for ``dns1123Label``,
  ``dns1123Subdomain``, ``dns1035Label``, ``qualifiedName``, ``labelValue``, ``uuid``, ``byte`` and
  ``format.named(string)``, then ``.validate(string)`` (an optional list of error strings);
* URL library (``library/urls.go``): ``isURL`` (Go's ``url.ParseRequestURI`` transcribed), which Google Cloud
  Managed Service for Prometheus v0.17.2's ``PodMonitoring``/``ClusterPodMonitoring`` rules call
  (``isURL(self) && !self.matches('@')`` on ``proxyUrl``); the ``url()`` accessors are not registered (no
  shared CRD calls them).

A Kubernetes ``Quantity`` has no counterpart among the ``cel`` library's value types, so a quantity is
carried as the map ``{"@quantity": "<canonical decimal>"}`` (value in base units: cores, bytes, counts). Two
quantities of equal value are therefore ``==`` as in Kubernetes (``quantity("1") == quantity("1000m")``).

Optionals are the ``cel`` library's own :class:`cel.OptionalValue` (so ``hasValue()``/``value()`` are native); a
format is carried as the map ``{"@format": <name>}`` and the rule's ``format`` variable is bound to the library
(see :data:`FORMAT_LIBRARY`).

None of the Kueue v0.19.2, KubeRay v1.7.0, Training Operator v1.9.4, AppWrapper v1.2.1 or cert-manager v1.21.1
rules call these functions; the Red Hat build of Kueue's ``Kueue`` CRD calls the format library. The others are
registered so that a rule that does is evaluated rather than reported as ``cel-unsupported``.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final

import cel
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


_FORMAT_KEY: Final = "@format"
#: The value bound to the ``format`` variable of a rule (Kubernetes ``library/format.go``).
FORMAT_LIBRARY: Final[dict[str, bool]] = {"@format-library": True}

_DNS1123_LABEL: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME_PART: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_UUID: Final = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


def _regex_check(pattern: str, limit: int, description: str, example: str) -> Callable[[str], list[str]]:
    compiled = re.compile(f"^(?:{pattern})$")

    def check(value: str) -> list[str]:
        errors = []
        if len(value) > limit:
            errors.append(f"must be no more than {limit} characters")
        if not compiled.match(value):
            errors.append(f"{description} (e.g. {example!r}, regex used for validation is {pattern!r})")
        return errors

    return check


def _check_qualified_name(value: str) -> list[str]:
    prefix, slash, name = value.rpartition("/")
    errors = []
    if slash and not prefix:
        errors.append("prefix part must be non-empty")
    elif slash:
        errors.extend(f"prefix part {e}" for e in _FORMAT_CHECKS["dns1123Subdomain"](prefix))
    name_check = _regex_check(
        _QUALIFIED_NAME_PART,
        63,
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character",
        "MyName",
    )
    errors.extend(name_check(name) if name else ["name part must be non-empty"])
    return errors


def _check_label_value(value: str) -> list[str]:
    return (
        _regex_check(
            _QUALIFIED_NAME_PART,
            63,
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character",
            "MyValue",
        )(value)
        if value
        else []
    )


def _check_byte(value: str) -> list[str]:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return ["invalid base64"]
    return []


_FORMAT_CHECKS: Final[dict[str, Callable[[str], list[str]]]] = {
    "dns1123Label": _regex_check(
        _DNS1123_LABEL, 63, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
        "'-', and must start and end with an alphanumeric character", "my-name"
    ),
    "dns1123Subdomain": _regex_check(
        rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*", 253, "a lowercase RFC 1123 subdomain must consist of lower "
        "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        "example.com",
    ),
    "dns1035Label": _regex_check(
        _DNS1035_LABEL, 63, "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
        "with an alphabetic character, and end with an alphanumeric character", "my-name"
    ),
    "qualifiedName": _check_qualified_name,
    "labelValue": _check_label_value,
    "uuid": _regex_check(_UUID, 36, "does not match the UUID format", "123e4567-e89b-12d3-a456-426614174000"),
    "byte": _check_byte,
}  # fmt: skip


def _format_fn(name: str) -> Callable[[object], dict[str, str]]:
    def make(library: object) -> dict[str, str]:
        if library != FORMAT_LIBRARY:
            raise TypeError(f"no such overload: {name}() is called on the format library")
        return {_FORMAT_KEY: name}

    make.__doc__ = f"``format.{name}() -> Format``. Semantics: Kubernetes ``library/format.go``."
    return make


def named_fn(library: object, name: object) -> cel.OptionalValue:
    """``format.named(string) -> optional<Format>``: the named format, or none (Kubernetes ``library/format.go``)."""
    if library != FORMAT_LIBRARY or not isinstance(name, str):
        raise TypeError("no such overload: format.named(string)")
    return cel.OptionalValue.of({_FORMAT_KEY: name}) if name in _FORMAT_CHECKS else cel.OptionalValue.none()


def validate_fn(fmt: object, value: object) -> cel.OptionalValue:
    """``<Format>.validate(string) -> optional<list<string>>``: empty when valid, else the error strings.

    Semantics: Kubernetes ``library/format.go`` (messages follow apimachinery ``pkg/util/validation``).
    """
    if not (isinstance(fmt, Mapping) and fmt.get(_FORMAT_KEY) in _FORMAT_CHECKS and isinstance(value, str)):
        raise TypeError("no such overload: validate() takes a format and a string")
    errors = _FORMAT_CHECKS[fmt[_FORMAT_KEY]](value)
    return cel.OptionalValue.of(errors) if errors else cel.OptionalValue.none()


# --- URL library (library/urls.go): isURL ---------------------------------------------------------------------
#
# Kubernetes' ``isURL(string) -> bool`` is ``url.ParseRequestURI(s) == nil`` (Go's net/url), from
# https://github.com/kubernetes/kubernetes/blob/6732d913237bd282d81fe99df860938c5d60480a/staging/src/k8s.io/apiserver/pkg/cel/library/urls.go
# (``isURL``; ``url()`` runs the same check before converting). What follows transcribes the checks of Go's
# ``parse(rawURL, viaRequest=true)`` and its helpers (``getScheme``, ``parseAuthority``, ``parseHost``,
# ``validOptionalPort``, ``validUserinfo``, ``unescape``, ``shouldEscape``, ``stringContainsCTLByte``) from
# https://github.com/golang/go/blob/011829989365218ba4532e86ab0b6702971daab3/src/net/url/url.go — on bytes, as Go
# does. Not transcribed: the stricter bracketed-host checks later Go releases added (an IP-literal must parse as
# an IPv6 address); a bracketed host is accepted here when its brackets, port and escapes are well formed.

_HOST_SUB_DELIMS: Final = frozenset(b"!$&'()*+,;=:[]<>\"")
_UNRESERVED_MARKS: Final = frozenset(b"-_.~")
_USERINFO_PUNCTUATION: Final = frozenset("-._:~!$&'()*+,;=%@")


def _go_should_escape_host(c: int) -> bool:
    """Go ``shouldEscape(c, encodeHost)`` (= ``encodeZone``): only alphanumerics, the host sub-delims and the
    unreserved marks may appear unescaped in a host."""
    if 0x30 <= c <= 0x39 or 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A:
        return False
    return not (c in _HOST_SUB_DELIMS or c in _UNRESERVED_MARKS)


def _go_unescape_ok(s: bytes, mode: str) -> bool:
    """Whether Go ``unescape(s, mode)`` succeeds (``mode``: ``host``, ``zone`` or another, which checks only
    the ``%XX`` escapes)."""
    hexdigits = b"0123456789abcdefABCDEF"
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:  # '%'
            if i + 2 >= len(s) or s[i + 1] not in hexdigits or s[i + 2] not in hexdigits:
                return False
            if mode == "host" and int(chr(s[i + 1]), 16) < 8 and s[i : i + 3] != b"%25":
                return False
            if mode == "zone":
                value = int(s[i + 1 : i + 3], 16)
                if s[i : i + 3] != b"%25" and value != 0x20 and _go_should_escape_host(value):
                    return False
            i += 3
            continue
        if mode in ("host", "zone") and c < 0x80 and _go_should_escape_host(c):
            return False
        i += 1
    return True


def _go_valid_optional_port(port: bytes) -> bool:
    """Go ``validOptionalPort``: empty, or ``:`` followed by digits only."""
    return port == b"" or (port[:1] == b":" and all(0x30 <= b <= 0x39 for b in port[1:]))


def _go_parse_host_ok(host: bytes) -> bool:
    """Go ``parseHost``: ``host[:port]``, an IP literal in brackets with an optional ``%25`` zone."""
    if host.startswith(b"["):
        end = host.rfind(b"]")
        if end < 0 or not _go_valid_optional_port(host[end + 1 :]):
            return False
        zone = host[:end].find(b"%25")
        if zone >= 0:
            return (
                _go_unescape_ok(host[:zone], "host")
                and _go_unescape_ok(host[zone:end], "zone")
                and _go_unescape_ok(host[end:], "host")
            )
    else:
        colon = host.rfind(b":")
        if colon != -1 and not _go_valid_optional_port(host[colon:]):
            return False
    return _go_unescape_ok(host, "host")


def _go_parse_authority_ok(authority: bytes) -> bool:
    """Go ``parseAuthority``: ``[userinfo@]host``; userinfo per RFC 3986 §3.2.1 with valid escapes."""
    at = authority.rfind(b"@")
    if not _go_parse_host_ok(authority[at + 1 :] if at >= 0 else authority):
        return False
    if at < 0:
        return True
    userinfo = authority[:at].decode("utf-8", errors="replace")
    if not all(ch.isascii() and (ch.isalnum() or ch in _USERINFO_PUNCTUATION) for ch in userinfo):
        return False
    return all(_go_unescape_ok(part.encode(), "userinfo") for part in userinfo.split(":", 1))


def go_parse_request_uri_ok(raw: str) -> bool:
    """Whether Go's ``url.ParseRequestURI(raw)`` returns no error: an absolute URI or an absolute path.

    Transcribes ``parse(rawURL, viaRequest=true)`` (see the comment above for the source): no ASCII control
    byte; not empty; ``*`` alone is accepted; a scheme (``[a-zA-Z][a-zA-Z0-9+.-]*:``) followed by anything not
    starting with ``/`` is an opaque URI; without a scheme the rest must start with ``/``; ``scheme://`` is
    followed by a valid authority; the path's ``%`` escapes must be well formed.
    """
    data = raw.encode("utf-8", errors="surrogatepass")
    if any(b < 0x20 or b == 0x7F for b in data):
        return False
    if data == b"":
        return False
    if data == b"*":
        return True
    scheme, rest = b"", data
    for i, c in enumerate(data):
        if 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A:
            continue
        if 0x30 <= c <= 0x39 or c in b"+-.":
            if i == 0:
                break
            continue
        if c == 0x3A:  # ':'
            if i == 0:
                return False  # "missing protocol scheme"
            scheme, rest = data[:i], data[i + 1 :]
        break
    rest = rest[:-1] if rest.endswith(b"?") and rest.count(b"?") == 1 else rest.split(b"?", 1)[0]
    if not rest.startswith(b"/"):
        return scheme != b""  # rootless: opaque with a scheme, "invalid URI for request" without
    if scheme and rest.startswith(b"//"):
        after = rest[2:]
        slash = after.find(b"/")
        authority, rest = (after, b"") if slash < 0 else (after[:slash], after[slash:])
        if not _go_parse_authority_ok(authority):
            return False
    return _go_unescape_ok(rest, "path")


def is_url_fn(text: object) -> bool:
    """``isURL(string) -> bool``: whether the string is an absolute URI or an absolute path.

    Semantics: Kubernetes ``library/urls.go`` (``isURL``: ``url.ParseRequestURI(s) == nil``), Go's net/url
    transcribed in :func:`go_parse_request_uri_ok`.
    """
    if not isinstance(text, str):
        raise TypeError("no such overload: isURL() takes a string")
    return go_parse_request_uri_ok(text)


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
    **{name: _format_fn(name) for name in _FORMAT_CHECKS},
    "named": named_fn,
    "validate": validate_fn,
    "isURL": is_url_fn,
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
        "hasValue", "value", "orValue", "or",  # optional types
    }
)  # fmt: skip


def is_known_function(name: str) -> bool:
    """True when a rule may call ``name``: an operator, a native function or a registered one."""
    return name.startswith(("_", "@", "!", "-")) or name in NATIVE_FUNCTIONS or name in RULE_FUNCTIONS

"""Quantities are checked against the exact CRD pattern, parsed exactly, and printed canonically."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchplane.quantity import QuantityError, format_quantity, parse_quantity, quantity_text, round_up_milli


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("500m", Decimal("0.5")),
        ("1Gi", Decimal(2**30)),
        ("8G", Decimal(8 * 10**9)),
        (9, Decimal(9)),
        (0.5, Decimal("0.5")),
        ("1e3", Decimal(1000)),
        ("+2", Decimal(2)),
        (".5", Decimal("0.5")),
    ],
    ids=[
        "millicores",
        "gibibytes",
        "gigabytes",
        "yaml-int",
        "yaml-float",
        "exponent",
        "plus-sign",
        "leading-dot",
    ],
)
def test_valid_quantities_parse_to_base_units(value: object, want: Decimal) -> None:
    assert parse_quantity(value) == want


@pytest.mark.parametrize(
    ("value", "want_message"),
    [
        ("lots", '"lots" is not a Kubernetes quantity'),
        ("1K", '"1K" is not a Kubernetes quantity'),
        ("1 Gi", '"1 Gi" is not a Kubernetes quantity'),
        ("1_000", '"1_000" is not a Kubernetes quantity'),
        (" 1", '" 1" is not a Kubernetes quantity'),
        (True, "True is not a Kubernetes quantity"),
        (None, "None is not a Kubernetes quantity"),
        ([1], "[1] is not a Kubernetes quantity"),
    ],
    ids=["word", "upper-k", "space", "underscore", "leading-space", "bool", "none", "list"],
)
def test_values_the_lenient_parser_would_accept_are_rejected(value: object, want_message: str) -> None:
    with pytest.raises(QuantityError) as caught:
        parse_quantity(value)
    assert str(caught.value) == want_message


@pytest.mark.parametrize(
    ("amount", "resource", "want"),
    [
        (Decimal("0.5"), "cpu", "500m"),
        (Decimal(4), "cpu", "4"),
        (Decimal(8 * 10**9), "memory", "8G"),
        (Decimal(36 * 2**30), "memory", "36Gi"),
        (Decimal(1536), "memory", "1536"),
        (Decimal(3), "nvidia.com/gpu", "3"),
        (Decimal("0.0005"), "cpu", "0.0005"),
    ],
    ids=["half-core", "whole-cores", "decimal-memory", "binary-memory", "odd-bytes", "gpus", "sub-milli"],
)
def test_format_quantity_prints_the_shortest_exact_form(amount: Decimal, resource: str, want: str) -> None:
    assert format_quantity(amount, resource) == want
    assert parse_quantity(want) == amount


def test_yaml_floats_keep_their_decimal_text() -> None:
    assert quantity_text(0.1) == "0.1"


def test_round_up_milli_rounds_up_to_whole_millicores() -> None:
    assert round_up_milli(Decimal("0.0001")) == Decimal("0.001")
    assert round_up_milli(Decimal("0.5")) == Decimal("0.5")


MAGNITUDES = [
    pytest.param("1e500000", '"1e500000" is out of range: quantities must be below 1e30 and, unless zero, at least 1e-30', id="huge-exponent"),
    pytest.param("1e-31", '"1e-31" is out of range: quantities must be below 1e30 and, unless zero, at least 1e-30', id="tiny"),
    pytest.param("1000000000000000000000000000000", '"1000000000000000000000000000000" is out of range: quantities must be below 1e30 and, unless zero, at least 1e-30', id="31-digits"),
    pytest.param("1" * 65, '"11111111111111111111"... is not a Kubernetes quantity: longer than 64 characters', id="long-text"),
    pytest.param(10**5000, "an integer of 16610 bits is not a Kubernetes quantity: too many digits", id="5000-digit-int"),
    pytest.param("1e1.5", '"1e1.5" is not a Kubernetes quantity: the exponent must be an integer', id="fractional-exponent"),
]  # fmt: skip


@pytest.mark.parametrize(("value", "message"), MAGNITUDES)
def test_absurd_sizes_and_magnitudes_are_rejected_from_the_text(value: object, message: str) -> None:
    with pytest.raises(QuantityError) as caught:
        parse_quantity(value)
    assert str(caught.value) == message


def test_zero_with_any_exponent_is_plain_zero() -> None:
    assert parse_quantity("0e99999999999999").as_tuple().exponent == 0


@settings(max_examples=300, deadline=None)
@given(
    sign=st.sampled_from(["", "+", "-"]),
    whole=st.text("0123456789", max_size=40),
    frac=st.none() | st.text("0123456789", max_size=40),
    suffix=st.sampled_from(["", "m", "k", "M", "G", "E", "Ki", "Gi", "Ei", "n"])
    | st.builds(lambda e, n: f"{e}{n}", st.sampled_from(["e", "E", "e+", "e-"]), st.integers(0, 10**12)),
)
def test_any_quantity_text_parses_inside_the_bounds_or_is_a_quantity_error(
    sign: str, whole: str, frac: str | None, suffix: str
) -> None:
    text = sign + whole + ("" if frac is None else "." + frac) + suffix
    try:
        amount = parse_quantity(text)
    except QuantityError:
        return
    assert amount == 0 or Decimal("1e-30") <= abs(amount) < Decimal("1e30")

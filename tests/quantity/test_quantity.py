"""Quantities are checked against the exact CRD pattern, parsed exactly, and printed canonically."""

from __future__ import annotations

from decimal import Decimal

import pytest

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

"""The integer path of the per-pod accounting (issue #14) equals the Decimal path on every input.

``stored_pod_requests`` computes Kueue's stored integers on Python integers in nano-units when it can and
through ``pod_requests`` (Decimal, the reference) otherwise. These properties generate pod templates —
containers, init containers and sidecars, pod-level resources, overhead, quantities in every notation
including sub-nano, negative, integer, float and malformed ones, malformed fields — and require the same
answer, or the same error, from both.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchplane.accounting.model import FieldError, ResourceOptions, ResourceTransformation, to_stored
from batchplane.accounting.pod_requests import (
    PodContext,
    _stored_plain,
    limit_range_defaults,
    pod_requests,
    stored_pod_requests,
)
from tests.accounting.conftest import container, pod_template

RESOURCES = ["cpu", "memory", "nvidia.com/gpu", "hugepages-2Mi", "ephemeral-storage", "example.com/foo"]

# Quantities as users write them, plus the edges: sub-nano, negative, huge, int/float JSON numbers, junk.
_plain_quantities = st.one_of(
    st.integers(min_value=0, max_value=10**6).map(str),
    st.integers(min_value=0, max_value=10**6).map(lambda n: f"{n}m"),
    st.integers(min_value=0, max_value=4096).map(lambda n: f"{n}Mi"),
    st.integers(min_value=0, max_value=512).map(lambda n: f"{n}Gi"),
    st.integers(min_value=0, max_value=64).map(lambda n: f"{n}G"),
    st.decimals(min_value=0, max_value=1000, places=3, allow_nan=False).map(str),
)
_edge_quantities = st.one_of(
    st.sampled_from(
        ["1n", "1u", "1e-9", "1e-12", "0.0000000001", "-1", "-500m", "1e29", "9Ei", "0e99", ".5"]
    ),
    st.integers(min_value=-5, max_value=10**12),
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
    st.sampled_from([True, None, "1 Gi", "1K", "", "x", [], {}]),
)
quantities = st.one_of(_plain_quantities, _plain_quantities, _edge_quantities)
resource_lists = st.one_of(
    st.dictionaries(st.sampled_from(RESOURCES), quantities, max_size=4),
    st.dictionaries(st.sampled_from(RESOURCES), _plain_quantities, max_size=4),
    st.sampled_from([None, [], "cpu"]),
)
containers = st.builds(
    lambda requests, limits, sidecar: container(requests, limits, sidecar=sidecar),
    resource_lists,
    resource_lists,
    st.booleans(),
)
templates = st.builds(
    lambda cs, inits, extra: pod_template(*cs, init=tuple(inits), **extra),
    st.lists(containers, max_size=4),
    st.lists(containers, max_size=3),
    st.fixed_dictionaries(
        {},
        optional={
            "overhead": resource_lists,
            "resources": st.one_of(
                st.fixed_dictionaries({}, optional={"requests": resource_lists, "limits": resource_lists}),
                st.sampled_from([None, "x"]),
            ),
            "runtimeClassName": st.sampled_from(["kata", ""]),
        },
    ),
)
options = st.sampled_from(
    [
        ResourceOptions(),
        ResourceOptions(exclude_resource_prefixes=("example.com/",)),
        ResourceOptions(exclude_resource_prefixes=("nvidia.com/", "hugepages-")),
    ]
)


def _reference(template: dict[str, Any], context: PodContext) -> dict[str, int] | FieldError:
    try:
        return {
            name: to_stored(name, amount) for name, amount in pod_requests(template, "t", context).items()
        }
    except FieldError as exc:
        return exc


def _answer(template: dict[str, Any], context: PodContext) -> dict[str, int] | FieldError:
    try:
        return stored_pod_requests(template, "t", context)
    except FieldError as exc:
        return exc


def _same(left: dict[str, int] | FieldError, right: dict[str, int] | FieldError) -> bool:
    if isinstance(left, FieldError) or isinstance(right, FieldError):
        return isinstance(left, FieldError) and isinstance(right, FieldError) and str(left) == str(right)
    return left == right and list(left) == list(right)


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(templates, options)
def test_the_integer_path_gives_the_decimal_paths_stored_requests_or_its_error(
    template: dict[str, Any], resource_options: ResourceOptions
) -> None:
    context = PodContext(options=resource_options)
    assert _same(_answer(template, context), _reference(template, context))


@settings(max_examples=300)
@given(templates)
def test_contexts_the_integer_path_does_not_take_give_the_decimal_answer(template: dict[str, Any]) -> None:
    defaults = limit_range_defaults(
        [{"metadata": {"name": "lr"}, "spec": {"limits": [{"type": "Container", "default": {"cpu": "1"}}]}}]
    )
    transformed = ResourceOptions(
        transformations=(ResourceTransformation(input="nvidia.com/gpu", outputs={"example.com/credits": 2}),)
    )
    for context in (
        PodContext(limit_range_defaults=defaults),
        PodContext(runtime_class_overheads={"kata": {"cpu": Decimal("0.25")}}),
        PodContext(options=transformed),
    ):
        assert _same(_answer(template, context), _reference(template, context))


_plain_lists = st.dictionaries(st.sampled_from(RESOURCES), _plain_quantities)


@given(st.lists(st.builds(container, _plain_lists, _plain_lists), min_size=1, max_size=4))
def test_plain_templates_take_the_integer_path(cs: list[dict[str, Any]]) -> None:
    """The common shapes really are computed on integers (else the equivalence above would prove nothing)."""
    assert _stored_plain(pod_template(*cs), ()) is not None


@pytest.mark.parametrize(
    ("quantity", "stored"),
    [("1n", 1), ("999999n", 1), ("1000001n", 2), ("0.0005", 1), ("-1", 0), ("1e29", 2**63 - 1)],
    ids=[
        "one-nano-rounds-up",
        "just-under-a-milli",
        "just-over-a-milli",
        "half-a-milli",
        "negative",
        "saturates",
    ],
)
def test_cpu_rounds_up_to_millicores_and_saturates_like_kueue(quantity: str, stored: int) -> None:
    assert stored_pod_requests(pod_template(container({"cpu": quantity})), "t", PodContext()) == {
        "cpu": stored
    }

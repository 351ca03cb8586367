"""A section that fails to parse is parsed again without the keys pydantic refused, so its rules still run."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from batchplane.stack.repair import MAX_ROUNDS, outside_removed, raw_path, repair_section


class Pool(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Annotated[str, Field(pattern=r"^[a-z]+$")]
    max_run: Annotated[int, Field(le=100)] | None = None
    count: int = 1


class Gke(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["gke"]
    pools: list[Pool] = []
    version: Annotated[str, Field(pattern=r"^1\.\d+$")] | None = None


class Kind(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["kind"]


Target = Annotated[Gke | Kind, Field(discriminator="kind")]
ADAPTER: TypeAdapter[Gke | Kind] = TypeAdapter(Target)


def errors_of(value: Any) -> list[ErrorDetails]:
    try:
        ADAPTER.validate_python(value)
    except ValidationError as exc:
        return exc.errors(include_url=False)
    return []


def test_an_optional_bad_key_is_removed_and_the_rest_parses() -> None:
    raw = {"kind": "gke", "version": "latest", "pools": [{"name": "a", "max_run": 500, "count": 3}]}
    repair = repair_section(raw, errors_of)
    assert repair is not None
    assert sorted(repair.removed) == ["pools[0].max_run", "version"]
    assert repair.value == {"kind": "gke", "pools": [{"name": "a", "count": 3}]}
    assert raw["version"] == "latest"  # the input is not changed
    assert ADAPTER.validate_python(repair.value).pools[0].count == 3  # type: ignore[union-attr]


def test_an_unknown_key_is_removed() -> None:
    repair = repair_section({"kind": "kind", "extra": 1}, errors_of)
    assert repair is not None and repair.removed == ("extra",)


def test_a_bad_required_key_cannot_be_repaired() -> None:
    assert repair_section({"kind": "gke", "pools": [{"name": "A1"}]}, errors_of) is None


def test_a_bad_list_item_is_never_removed() -> None:
    assert repair_section({"kind": "gke", "pools": ["not-a-pool"]}, errors_of) is None


def test_a_value_that_parses_needs_no_removal() -> None:
    repair = repair_section({"kind": "kind"}, errors_of)
    assert repair is not None and repair.removed == ()


def test_repair_gives_up_after_its_rounds() -> None:
    calls: list[int] = []

    def always_one_more(value: Any) -> list[ErrorDetails]:
        calls.append(1)
        return [{"type": "value_error", "loc": (f"k{len(calls)}",), "msg": "", "input": None}]  # type: ignore[typeddict-item]

    raw = {f"k{i}": i for i in range(1, 20)}
    assert repair_section(raw, always_one_more) is None
    assert len(calls) == MAX_ROUNDS + 1


def test_raw_path_skips_the_union_tag_and_key_markers() -> None:
    raw = {"pools": [{"name": "a", "labels": {"x": 1}}]}
    assert raw_path(raw, ("gke", "pools", 0, "labels", "x", "[key]")) == ["pools", 0, "labels", "x"]
    assert raw_path(raw, ("pools", 3, "name")) is None


def test_issues_at_or_below_a_removed_key_are_dropped_and_others_kept() -> None:
    removed = ("gpuPools[0].maxRunDurationSeconds", "webhook")
    base = "batchplane:target"
    assert not outside_removed(f"{base}.gpuPools[0].maxRunDurationSeconds", base, removed)
    assert not outside_removed(f"{base}.webhook.build", base, removed)
    assert not outside_removed(f"{base}.webhook[0]", base, removed)
    assert outside_removed(f"{base}.gpuPools[0].accelerator", base, removed)
    assert outside_removed(f"{base}.webhooks", base, removed)
    assert outside_removed(f"{base}.gpuPools[0]", base, removed)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(
        st.sampled_from(["version", "pools", "extra", "kind"]),
        st.one_of(
            st.integers(),
            st.text(max_size=5),
            st.lists(
                st.dictionaries(
                    st.sampled_from(["name", "max_run", "count", "x"]),
                    st.one_of(st.integers(-5, 500), st.text(max_size=3)),
                    max_size=3,
                ),
                max_size=3,
            ),
        ),
        max_size=4,
    )
)
def test_a_repaired_value_always_parses_and_only_lost_keys(raw: dict[str, Any]) -> None:
    repair = repair_section(raw, errors_of)
    if repair is None:
        return
    assert errors_of(repair.value) == []
    for key in repair.removed:  # every removed key existed in the input
        steps = key.replace("[", ".").replace("]", "").split(".")
        node: Any = raw
        for step in steps:
            node = node[int(step)] if isinstance(node, list) else node[step]

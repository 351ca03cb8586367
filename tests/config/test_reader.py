"""The one YAML reader (batchplane.yamlfile): Pulumi's semantics, bounds, and one answer for every command."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.errors import ConfigLoadError
from batchplane.yamlfile import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_NODES,
    deep_merge,
    read_yaml_file,
    read_yaml_text,
)
from tests.conftest import template_path

REJECTED = [
    pytest.param("a: 1\nb: 2\na: 3\n", "s: duplicate key 'a' at line 3, column 1 (first at line 1, column 1)", id="dup-key"),
    pytest.param("m: {x: 1, x: 2}\n", "s: duplicate key 'x' at line 1, column 11 (first at line 1, column 5)", id="dup-nested"),
    pytest.param("1: x\n", "s: the key '1' at line 1, column 1 is not a string; quote it", id="int-key"),
    pytest.param("labels: {true: x}\n", "s: the key 'true' at line 1, column 10 is not a string; quote it", id="bool-key"),
    pytest.param("? [a]\n: x\n", "s: the key 'tag:yaml.org,2002:seq' at line 1, column 3 is not a string; quote it", id="list-key"),
    pytest.param("a: !!timestamp 2024-01-01\n", "s: the tag 'tag:yaml.org,2002:timestamp' at line 1, column 4 is not allowed; stack config values are JSON types (string, number, boolean, null, map, list)", id="timestamp"),
    pytest.param("a: !!binary aGk=\n", "s: the tag 'tag:yaml.org,2002:binary' at line 1, column 4 is not allowed; stack config values are JSON types (string, number, boolean, null, map, list)", id="binary"),
    pytest.param("a: !!set {x: null}\n", "s: the tag 'tag:yaml.org,2002:set' at line 1, column 4 is not allowed; stack config values are JSON types (string, number, boolean, null, map, list)", id="set"),
    pytest.param("a: !local x\n", "s: the tag '!local' at line 1, column 4 is not allowed; stack config values are JSON types (string, number, boolean, null, map, list)", id="local-tag"),
    pytest.param("a: .inf\n", "s: '.inf' at line 1, column 4 is not a JSON number", id="inf"),
    pytest.param("a: .NaN\n", "s: '.NaN' at line 1, column 4 is not a JSON number", id="nan"),
    pytest.param("q: " + "9" * 5000 + "\n", "s: the number at line 1, column 4 has more than 100 characters", id="5000-digit-int"),
    pytest.param("a: &x [*x]\n", "s: an alias refers to its own anchor at line 1, column 4", id="recursive-alias"),
    pytest.param("a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "s: nested deeper than 64 levels at line 1, column 67", id="deep-text"),
    pytest.param(b"a: caf\xe9\n", "s is not UTF-8 text (byte 6: invalid continuation byte)", id="latin-1"),
    pytest.param("a: [\n", "s is not valid YAML (line 2, column 1): expected the node content, but found '<stream end>'", id="not-yaml"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), REJECTED)
def test_texts_that_pulumi_would_refuse_or_that_json_cannot_carry_are_errors_with_a_position(
    text: str | bytes, message: str
) -> None:
    with pytest.raises(ConfigLoadError) as caught:
        read_yaml_text(text, "s")
    assert str(caught.value) == message


def test_yaml_1_2_scalars_and_merge_keys_read_as_pulumi_reads_them() -> None:
    text = "a: yes\nb: 2024-01-01\nc: true\nd: 0x10\ne: ~\nbase: &b {x: 1, y: 2}\nm: {<<: *b, y: 3}\nf: !!str 5\n"
    assert read_yaml_text(text, "s") == {
        "a": "yes",
        "b": "2024-01-01",
        "c": True,
        "d": 16,
        "e": None,
        "base": {"x": 1, "y": 2},
        "m": {"x": 1, "y": 3},
        "f": "5",
    }


def alias_bomb(levels: int, fanout: int) -> str:
    lines = ["l0: &l0 [" + ", ".join(["x"] * fanout) + "]"]
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * fanout) + "]")
    return "\n".join(lines) + "\n"


def expanded_nodes(levels: int, fanout: int) -> int:
    """Nodes of the document once every alias is expanded: the root map, keys, and each level's lists."""
    per_level = [1 + fanout]  # l0: a list of `fanout` scalars
    for _ in range(levels):
        per_level.append(1 + fanout * per_level[-1])
    return 1 + len(per_level) + sum(per_level)


@settings(max_examples=60, deadline=None)
@given(levels=st.integers(0, 12), fanout=st.integers(1, 12))
def test_alias_expansion_is_bounded_before_anything_is_built(levels: int, fanout: int) -> None:
    text = alias_bomb(levels, fanout)
    if expanded_nodes(levels, fanout) <= MAX_NODES:
        value = read_yaml_text(text, "s")
        assert len(value) == levels + 1
    else:
        with pytest.raises(
            ConfigLoadError, match=r"^s: aliases expand to more than 200000 values \(at line \d+"
        ):
            read_yaml_text(text, "s")


@settings(max_examples=40, deadline=None)
@given(depth=st.integers(1, 3 * MAX_DEPTH), flow=st.booleans())
def test_nesting_is_bounded_in_text_and_through_aliases(depth: int, flow: bool) -> None:
    text = (
        "a: " + "[" * depth + "]" * depth
        if flow
        else "".join(f"{'  ' * i}k:\n" for i in range(depth)) + "  " * depth + "v"
    )
    # Block style: the root map is level 1 and each `k:` but the last opens another.
    levels = depth + 1 if flow else depth
    if levels <= MAX_DEPTH:
        read_yaml_text(text, "s")
    else:
        with pytest.raises(ConfigLoadError, match=r"nested deeper than 64 levels"):
            read_yaml_text(text, "s")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats(allow_nan=False, allow_infinity=False) | st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=10), inner, max_size=4),
    max_leaves=30,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    value=st.dictionaries(
        st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=10),
        JSON_VALUES,
        max_size=5,
    )
)
def test_every_json_value_written_as_yaml_reads_back_unchanged(value: dict[str, Any]) -> None:
    for text in (yaml.safe_dump(value, allow_unicode=True), yaml.safe_dump(value, default_flow_style=True)):
        read = read_yaml_text(text, "s")
        assert read == value or _same_with_nan_free_floats(read, value)


def _same_with_nan_free_floats(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_with_nan_free_floats(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_with_nan_free_floats(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_a_file_over_the_size_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.big.yaml"
    path.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    with pytest.raises(
        ConfigLoadError, match=rf"is larger than {MAX_FILE_BYTES} bytes \({MAX_FILE_BYTES + 1} bytes\)$"
    ):
        read_yaml_file(path)


# --- every command gives the same answer for the same file ---------------------------------------------------


def kind_stack_with(extra: str) -> str:
    return (template_path("kind")).read_text(encoding="utf-8") + extra


DISAGREEMENTS = [
    pytest.param("  batchplane:note: !!timestamp 2024-01-01\n", 2, "is not allowed", id="timestamp-tag"),
    pytest.param("  batchplane:kueue: {}\n", 2, "duplicate key 'batchplane:kueue'", id="duplicate-top-level-key"),
    pytest.param("  batchplane:webhook:\n    namespaceLimits: {1: {}}\n", 2, "is not a string; quote it", id="int-key"),
    pytest.param("  app:settings: {token: {secure: AAAB}, more: [{secure: AAAC}]}\n", 0, "", id="nested-secure-values"),
]  # fmt: skip


@pytest.mark.parametrize(("extra", "exit_code", "message"), DISAGREEMENTS)
@pytest.mark.parametrize("command", ["validate", "preview", "render", "graph"])
def test_validate_preview_render_and_graph_agree_on_one_file(
    tmp_path: Path, command: str, extra: str, exit_code: int, message: str
) -> None:
    path = tmp_path / "Pulumi.kind.yaml"
    path.write_text(kind_stack_with(extra), encoding="utf-8")
    args = [command, "--config", str(path)]
    if command == "graph":
        args += ["--format", "mermaid"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == exit_code, result.output
    assert message in result.stderr


def test_deep_merge_replaces_lists_and_scalars_and_merges_mappings() -> None:
    assert deep_merge({"a": {"b": 1, "c": [1]}, "d": 1}, {"a": {"c": [2]}, "d": {"e": 1}}) == {
        "a": {"b": 1, "c": [2]},
        "d": {"e": 1},
    }
    base = {"a": {"b": 1}}
    deep_merge(base, {"a": {"b": 2}})
    assert base == {"a": {"b": 1}}  # neither argument changes

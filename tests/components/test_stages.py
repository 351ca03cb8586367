"""The bring-up stages are listed once (:data:`batchplane.components.stages.BRING_UP_STAGES`, issue #40): BatchCluster
declares them in that order, each method's docstring gives its stage numbers, and docs/architecture.md prints the list
``make docs`` generates from it."""

from __future__ import annotations

import ast
import re

from batchplane.components.stages import BRING_UP_STAGES, stages_markdown
from tests.conftest import REPO_ROOT

BATCH_CLUSTER = REPO_ROOT / "batchplane" / "components" / "batch_cluster.py"


def batch_cluster_class() -> ast.ClassDef:
    tree = ast.parse(BATCH_CLUSTER.read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "BatchCluster"]
    return cls


def methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}


def test_batch_cluster_declares_the_stages_in_the_listed_order() -> None:
    init = methods(batch_cluster_class())["__init__"]
    called = [
        node.func.attr
        for node in ast.walk(init)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
        and node.func.attr.startswith("_declare_")
    ]
    # ast.walk is breadth-first; __init__ calls each stage as a statement of its own body, so sort by line
    lines = {
        node.func.attr: node.lineno
        for node in ast.walk(init)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    }
    assert sorted(called, key=lines.__getitem__) == [s.method for s in BRING_UP_STAGES]


def test_each_stage_method_names_its_stage_numbers() -> None:
    found = methods(batch_cluster_class())
    wrong = []
    for stage in BRING_UP_STAGES:
        doc = ast.get_docstring(found[stage.method]) or ""
        match = re.match(r"Stages? (\d+)(?:–(\d+))?:", doc)
        numbers = tuple(int(g) for g in match.groups() if g) if match else ()
        if numbers != (stage.numbers[0], stage.numbers[-1])[: len(stage.numbers)]:
            wrong.append(f"{stage.method}: {doc[:20]!r} (listed as {stage.numbers})")
    assert wrong == []


def test_the_stages_are_numbered_one_to_n_without_gaps() -> None:
    numbers = [n for s in BRING_UP_STAGES for n in s.numbers]
    assert numbers == list(range(1, len(numbers) + 1))


def test_architecture_md_prints_the_generated_stage_table() -> None:
    page = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert f"<!-- generated: bring-up-stages -->{stages_markdown()}<!-- /generated -->" in page
    # the dashboards are the last stage in code and on the page (the page once stopped at observability, stage 6)
    assert BRING_UP_STAGES[-1].method == "_declare_dashboards"
    assert "| 8 | **the dashboards**" in page


def test_no_other_page_or_docstring_numbers_the_stages() -> None:
    """A stage number written by hand elsewhere drifts (docs once said observability was stage 6, the code 8)."""
    hand_written = re.compile(r"\bstages? [1-9]\b(?! of a)", re.I)
    pages = [*(REPO_ROOT / "docs").glob("*.md"), BATCH_CLUSTER]
    hits = []
    for path in pages:
        text = path.read_text(encoding="utf-8")
        if path == BATCH_CLUSTER:  # the stage methods' own docstrings are held to the list above
            text = text[: text.index("class BatchCluster(")]
        hits += [f"{path.name}: {m.group(0)}" for m in hand_written.finditer(text)]
    assert hits == []

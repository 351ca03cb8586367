"""Each fact once (issue #40): the well-known names and defaults in :mod:`batchplane.wellknown` are written there and
imported everywhere else — the package and the policy pack alike — so two copies cannot drift apart again (the pack
once counted only ``nvidia.com/gpu`` as GPUs while the webhook counted ``amd.com/gpu`` too)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from batchplane import wellknown
from tests.conftest import REPO_ROOT

WELLKNOWN = REPO_ROOT / "batchplane" / "wellknown.py"
#: Where the facts are used: the package and the policy pack.
SOURCES = sorted(
    p for root in ("batchplane", "policies") for p in (REPO_ROOT / root).rglob("*.py") if p != WELLKNOWN
)

#: The facts: wellknown's names whose value is a string or a tuple of strings.
FACTS = {
    name: value
    for name, value in vars(wellknown).items()
    if name.isupper()
    and (isinstance(value, str) or (isinstance(value, tuple) and all(isinstance(v, str) for v in value)))
}


def docstrings(tree: ast.AST) -> set[int]:
    """``id()`` of every string that is a statement by itself (a docstring or an attribute's docstring)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def literals(tree: ast.AST) -> Iterator[tuple[int, object]]:
    """``(line, value)`` of each string constant outside docstrings, and of each tuple/list of string constants."""
    skip = docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value
        elif (
            isinstance(node, ast.Tuple | ast.List)
            and node.elts
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
        ):
            yield node.lineno, tuple(e.value for e in node.elts if isinstance(e, ast.Constant))


def assigned_names(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        for target in targets:
            if isinstance(target, ast.Name):
                yield node.lineno, target.id


def test_the_facts_under_test_include_the_gpu_resources_and_the_node_pool_label() -> None:
    assert FACTS["DEFAULT_GPU_RESOURCES"] == ("nvidia.com/gpu", "amd.com/gpu")
    assert FACTS["GKE_NODEPOOL_LABEL"] == "cloud.google.com/gke-nodepool"


@pytest.mark.parametrize("name", sorted(FACTS))
def test_a_well_known_value_is_written_only_in_wellknown(name: str) -> None:
    value = FACTS[name]
    copies = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(REPO_ROOT)
        copies += [f"{rel}:{line}" for line, found in literals(tree) if found == value]
        copies += [f"{rel}:{line} assigns {name}" for line, found in assigned_names(tree) if found == name]
    assert copies == [], f"import {name} from batchplane.wellknown instead"


def test_wellknown_imports_nothing() -> None:
    """It is the lowest layer: every module, the webhook process and the pack import it."""
    tree = ast.parse(WELLKNOWN.read_text(encoding="utf-8"))
    assert [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)] == []


def test_sources_were_found() -> None:
    assert any(p.parts[-3:] == ("policies", "batchplane_policies", "kueue.py") for p in SOURCES)
    assert Path(REPO_ROOT / "batchplane" / "webhook" / "policy.py") in SOURCES

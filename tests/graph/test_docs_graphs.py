"""The committed pictures in docs/graphs/ are current: one per shipped stack, each drawn from its DOT.

``make graphs`` regenerates them. The DOT text is compared (it is deterministic); the SVG is checked
through the DOT digest it records and its node titles, not byte for byte (Graphviz versions differ).
"""

from __future__ import annotations

import re

import pytest

from batchplane.graph import dot_digest, stack_graph, to_dot
from batchplane.graph.dot import SVG_DIGEST_PREFIX
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES
from tests.graph.conftest import shipped, svg_node_titles

GRAPHS = REPO_ROOT / "docs" / "graphs"
ONBOARDING = REPO_ROOT / "docs" / "onboarding.md"
REGENERATE = "stale picture: run `make docs` (or just `make graphs`) and commit docs/graphs/"


@pytest.mark.parametrize("stack", TEMPLATE_NAMES, ids=TEMPLATE_NAMES)
def test_committed_dot_matches_the_stack(stack: str) -> None:
    path = GRAPHS / f"{stack}.dot"
    assert path.is_file(), REGENERATE
    assert path.read_text(encoding="utf-8") == to_dot(stack_graph(shipped(stack))), REGENERATE


@pytest.mark.parametrize("stack", TEMPLATE_NAMES, ids=TEMPLATE_NAMES)
def test_committed_svg_was_drawn_from_the_committed_dot(stack: str) -> None:
    svg = (GRAPHS / f"{stack}.svg").read_bytes()
    digest = dot_digest((GRAPHS / f"{stack}.dot").read_text(encoding="utf-8"))
    assert f"<!-- {SVG_DIGEST_PREFIX}{digest} -->".encode() in svg, REGENERATE
    graph = stack_graph(shipped(stack))
    assert sorted(svg_node_titles(svg)) == sorted(n.id for n in graph.nodes if n.kind != "cohort")


def test_no_picture_without_a_stack() -> None:
    stems = sorted({p.stem for p in GRAPHS.iterdir()})
    assert stems == TEMPLATE_NAMES, "docs/graphs/ has pictures of stacks that no longer exist"


def test_onboarding_guide_embeds_every_picture() -> None:
    embedded = re.findall(r"!\[[^\]]*\]\(graphs/([a-z0-9-]+)\.svg\)", ONBOARDING.read_text(encoding="utf-8"))
    assert sorted(embedded) == TEMPLATE_NAMES

"""Rendering the queue-topology graph: DOT and Mermaid text, and SVG/PNG through Graphviz's ``dot``."""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET

import pytest

from batchplane.graph import GraphRenderError, dot_digest, render, stack_graph, to_dot, to_mermaid
from batchplane.graph.dot import SVG_DIGEST_PREFIX
from batchplane.graph.mermaid import mermaid_ids
from batchplane.graph.model import Node, QueueGraph
from batchplane.stack import load_stack
from tests.graph.conftest import many_teams, shipped, svg_node_titles, svg_titles
from tests.graph.test_graph_model import HAND_WRITTEN

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

KIND_DOT = "\n".join(
    [
        'digraph "batchplane-kind" {',
        '\tgraph [fontname=Helvetica fontsize=12 label=<<B>stack kind</B> — queue topology<BR ALIGN="LEFT"/>'
        '<FONT POINT-SIZE="8">quota cell: nominalQuota +borrowingLimit lend lendingLimit · ⚑ admission check on '
        "that flavor · pool: per node, at most (max nodes × per node), nominal quota on its flavors</FONT>"
        '<BR ALIGN="LEFT"/>> labeljust=l labelloc=t newrank=true nodesep=0.12 rankdir=LR ranksep=0.5]',
        "\tnode [fontname=Helvetica fontsize=10 margin=0 shape=plaintext]",
        "\tedge [arrowsize=0.6 penwidth=0.8]",
        '\t"ResourceFlavor default-flavor" [label=<<TABLE BORDER="1" CELLBORDER="1" CELLSPACING="0" '
        'CELLPADDING="3" COLOR="#3f7f3a" BGCOLOR="#eef8ec"><TR><TD COLSPAN="1" BGCOLOR="#b7e1b0" ALIGN="LEFT">'
        '<B>default-flavor</B> <FONT POINT-SIZE="8">ResourceFlavor</FONT></TD></TR><TR><TD COLSPAN="1" '
        'ALIGN="LEFT"><FONT POINT-SIZE="8">any node (no nodeLabels)</FONT></TD></TR></TABLE>>]',
        '\t"ClusterQueue cluster-queue" [label=<<TABLE BORDER="1" CELLBORDER="1" CELLSPACING="0" '
        'CELLPADDING="3" COLOR="#4a6f9c" BGCOLOR="#eef4fc"><TR><TD COLSPAN="3" BGCOLOR="#b9d3f2" ALIGN="LEFT">'
        '<B>cluster-queue</B> <FONT POINT-SIZE="8">ClusterQueue</FONT></TD></TR><TR><TD COLSPAN="3" '
        'ALIGN="LEFT"><FONT POINT-SIZE="8">all namespaces</FONT></TD></TR><TR><TD ALIGN="LEFT">'
        '<FONT POINT-SIZE="8">flavor</FONT></TD><TD><FONT POINT-SIZE="8">cpu</FONT></TD><TD>'
        '<FONT POINT-SIZE="8">memory</FONT></TD></TR><TR><TD ALIGN="LEFT" PORT="r0">default-flavor</TD>'
        "<TD>4</TD><TD>8Gi</TD></TR></TABLE>>]",
        '\t"LocalQueue team-a/default" [label=<<TABLE BORDER="1" CELLBORDER="1" CELLSPACING="0" '
        'CELLPADDING="3" COLOR="#6b5b95" BGCOLOR="#f8f5fc"><TR><TD COLSPAN="1" BGCOLOR="#e8e0f3" ALIGN="LEFT">'
        '<B>default</B> <FONT POINT-SIZE="8">LocalQueue</FONT></TD></TR><TR><TD COLSPAN="1" ALIGN="LEFT">'
        '<FONT POINT-SIZE="8">default queue</FONT></TD></TR></TABLE>>]',
        '\t"Namespace team-a" [label="team-a" color="#6b5b95" fillcolor="#ffffff" shape=folder style=filled]',
        '\t"ResourceFlavor default-flavor" -> "ClusterQueue cluster-queue":r0:w [color="#4a6f9c"]',
        '\t"ClusterQueue cluster-queue" -> "LocalQueue team-a/default" [color="#6b5b95"]',
        '\t"LocalQueue team-a/default" -> "Namespace team-a" [color="#6b5b95"]',
        "}",
        "",
    ]
)

KIND_MERMAID = """\
flowchart LR
  %% batchplane graph: stack kind, queue topology
  flavor_default_flavor{{"<b>default-flavor (ResourceFlavor)</b><br/>any node (no nodeLabels)"}}:::flavor
  cq_cluster_queue["<b>cluster-queue (ClusterQueue)</b><br/>all namespaces<br/>default-flavor: cpu 4 · memory 8Gi"]:::cq
  lq_team_a_default(["<b>team-a/default (LocalQueue)</b><br/>default queue"]):::lq
  ns_team_a[/"<b>team-a (namespace)</b>"/]:::ns
  flavor_default_flavor --> cq_cluster_queue
  cq_cluster_queue --> lq_team_a_default
  lq_team_a_default --> ns_team_a
  classDef pool fill:#fdf0e0,stroke:#b46504
  classDef flavor fill:#eef8ec,stroke:#3f7f3a
  classDef cq fill:#eef4fc,stroke:#4a6f9c
  classDef lq fill:#f8f5fc,stroke:#6b5b95
  classDef ns fill:#ffffff,stroke:#6b5b95
"""


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    assert png[:8] == PNG_SIGNATURE
    assert png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


def test_kind_stack_dot_source_is_pinned() -> None:
    assert to_dot(stack_graph(shipped("kind"))) == KIND_DOT


def test_kind_stack_mermaid_text_is_pinned() -> None:
    assert to_mermaid(stack_graph(shipped("kind"))) == KIND_MERMAID


def test_dot_nests_cohort_clusters_and_marks_checked_quota_edges() -> None:
    dot = to_dot(stack_graph(load_stack(HAND_WRITTEN, "hand")))
    clusters = re.findall(r"^(\t*)subgraph (cluster_\d+) \{", dot, flags=re.MULTILINE)
    assert clusters == [
        ("\t", "cluster_1"),
        ("\t\t", "cluster_0"),
        ("\t", "cluster_2"),
    ]  # org ⊃ research; spare
    assert (
        '\t"ResourceFlavor gpu-nodes" -> "ClusterQueue vision":r1:w [arrowhead=normal color="#b85450" penwidth=1.6]'
        in dot.splitlines()
    )
    assert '\t"ResourceFlavor cpu-nodes" -> "ClusterQueue vision":r0:w [color="#4a6f9c"]' in dot.splitlines()
    assert "⚑ budget: example.com/budget on gpu-nodes" in dot


def test_mermaid_nests_cohort_subgraphs_and_draws_checked_edges_thick() -> None:
    text = to_mermaid(stack_graph(load_stack(HAND_WRITTEN, "hand")))
    structure = [
        line
        for line in text.splitlines()
        if line.strip().startswith(("subgraph", "end", "cq_")) and "-->" not in line
    ]
    assert [line.split("[", 1)[0] for line in structure] == [
        "  subgraph cohort_org",
        "    subgraph cohort_research",
        "      cq_vision",
        "    end",
        "  end",
        "  subgraph cohort_spare",
        "    cq_batch",
        "  end",
    ]
    assert "  flavor_gpu_nodes ==>|⚑| cq_vision" in text.splitlines()
    assert "  flavor_cpu_nodes --> cq_vision" in text.splitlines()


def test_mermaid_ids_stay_unique_when_names_collapse_and_labels_escape_quotes() -> None:
    graph = QueueGraph(
        stack="s",
        nodes=(
            Node("Namespace a-b", "namespace", "a-b"),
            Node("Namespace a.b", "namespace", "a.b"),
            Node("Namespace x", "namespace", "x", lines=('say "hi" <now> #1',)),
        ),
        edges=(),
    )
    assert mermaid_ids(graph) == {
        "Namespace a-b": "ns_a_b",
        "Namespace a.b": "ns_a_b_2",
        "Namespace x": "ns_x",
    }
    assert '  ns_x[/"<b>x (namespace)</b><br/>say #quot;hi#quot; #lt;now#gt; #35;1"/]:::ns' in to_mermaid(
        graph
    )


@pytest.mark.parametrize("stack", ["kind", "gke-prod-dws"], ids=["kind", "gke-prod-dws"])
def test_svg_parses_as_xml_with_a_title_per_node_and_the_dot_digest(stack: str) -> None:
    graph = stack_graph(shipped(stack))
    source = to_dot(graph)
    svg = render(source, "svg")
    assert ET.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"
    assert sorted(svg_node_titles(svg)) == sorted(n.id for n in graph.nodes if n.kind != "cohort")
    assert f"<!-- {SVG_DIGEST_PREFIX}{dot_digest(source)} -->".encode() in svg.splitlines()[1]


def test_svg_of_nested_cohorts_has_one_cluster_group_per_cohort() -> None:
    svg = render(to_dot(stack_graph(load_stack(HAND_WRITTEN, "hand"))), "svg")
    assert [t for t in svg_titles(svg) if t.startswith("cluster_")] == ["cluster_1", "cluster_0", "cluster_2"]


def test_png_has_the_png_signature_and_the_layout_size() -> None:
    png = render(to_dot(stack_graph(shipped("gke-prod-dws"))), "png")
    width, height = png_size(png)
    assert 1000 < width < 2500 and 400 < height < 1200, (width, height)


def test_fifty_team_picture_stays_one_column_of_readable_queues() -> None:
    """50 teams: the DOT stays linear in size and the PNG is a tall column (one row per team at the
    default 96 dpi, ~190 px each) no wider than the 3-team picture plus the nesting margins."""
    source = to_dot(stack_graph(many_teams(50)))
    assert 80_000 < len(source) < 120_000
    assert source.count(" -> ") == 2 + 150 + 50 + 50  # nodes, quota, queue, namespace edges
    width, height = png_size(render(source, "png"))
    assert 1000 < width < 2000, width
    assert 50 * 150 < height < 50 * 250, height
    svg = render(source, "svg")
    assert len(svg_node_titles(svg)) == 2 + 3 + 50 * 3


def test_rendering_without_the_dot_binary_names_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GraphRenderError) as info:
        render("digraph {}", "png")
    assert str(info.value) == (
        "cannot render png: the Graphviz `dot` binary is not installed (Debian/Ubuntu: apt-get install "
        "graphviz; or use --format dot or --format mermaid)"
    )


def test_rendering_broken_dot_reports_graphviz_error() -> None:
    with pytest.raises(GraphRenderError, match=r"^Graphviz dot failed to render svg: .*syntax error"):
        render("digraph { a -> }", "svg")

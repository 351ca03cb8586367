"""Mermaid rendering of a :class:`~batchplane.graph.model.QueueGraph` (text; GitHub renders it).

A ``flowchart LR`` with the same layout as the Graphviz picture: pools (cylinders) → flavors
(hexagons) → ClusterQueues (boxes, inside one ``subgraph`` per cohort, nested under parent cohorts)
→ LocalQueues (stadiums) → namespaces (parallelograms). Mermaid has no tables, so a ClusterQueue's
quotas are one line per flavor and a pool's capacity one line per resource. Quota edges of
admission-checked flavors are thick (``==>``) and labelled ``⚑``. Syntax reference:
https://mermaid.js.org/syntax/flowchart.html.
"""

from __future__ import annotations

import re

from batchplane.graph.model import Node, NodeKind, QueueGraph

CHECK_MARK = "⚑"

_PREFIX: dict[NodeKind, str] = {
    "pool": "pool",
    "flavor": "flavor",
    "cohort": "cohort",
    "cluster-queue": "cq",
    "local-queue": "lq",
    "namespace": "ns",
    "worker": "worker",
}
_SHAPES: dict[NodeKind, tuple[str, str]] = {
    "pool": ("[(", ")]"),
    "flavor": ("{{", "}}"),
    "cluster-queue": ("[", "]"),
    "local-queue": ("([", "])"),
    "namespace": ("[/", "/]"),
    "worker": ("[[", "]]"),
}
_CLASSES = (
    "classDef pool fill:#fdf0e0,stroke:#b46504",
    "classDef flavor fill:#eef8ec,stroke:#3f7f3a",
    "classDef cq fill:#eef4fc,stroke:#4a6f9c",
    "classDef lq fill:#f8f5fc,stroke:#6b5b95",
    "classDef ns fill:#ffffff,stroke:#6b5b95",
    "classDef worker fill:#fdf2f2,stroke:#b85450",
)


def _escape(text: str) -> str:
    """Mermaid entity codes for the characters that end or confuse a quoted label."""
    return text.replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def mermaid_ids(graph: QueueGraph) -> dict[str, str]:
    """Node id → Mermaid id: ``<kind prefix>_<name with [^A-Za-z0-9_] → _>``, suffixed ``_2``, ``_3``
    ... when two names collapse to the same id."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for node in graph.nodes:
        base = f"{_PREFIX[node.kind]}_{re.sub(r'[^A-Za-z0-9_]', '_', node.name)}"
        candidate, n = base, 1
        while candidate in used:
            n += 1
            candidate = f"{base}_{n}"
        used.add(candidate)
        out[node.id] = candidate
    return out


def label_lines(node: Node) -> list[str]:
    """The lines of a node's label (plain text, unescaped): name and kind, facts, quotas or capacity."""
    kind = {
        "pool": "pool",
        "flavor": "ResourceFlavor",
        "cohort": "Cohort",
        "cluster-queue": "ClusterQueue",
        "local-queue": "LocalQueue",
        "namespace": "namespace",
        "worker": "MultiKueue worker",
    }[node.kind]
    lines = [f"{node.name} ({kind})", *node.lines]
    if node.quotas is not None:
        for row in node.quotas.rows:
            mark = f" {CHECK_MARK}" if row.checks else ""
            cells = " · ".join(f"{c.resource} {c.text()}" for c in row.cells if c is not None)
            lines.append(f"{row.flavor}{mark}: {cells}")
    lines += [f"{CHECK_MARK} {check.text()}" for check in node.checks]
    for cap in node.capacity:
        lines.append(f"{cap.resource}: {cap.per_node}/node, at most {cap.capacity or '?'}, quota {cap.quota}")
    return lines


def _label(node: Node) -> str:
    lines = [_escape(line) for line in label_lines(node)]
    lines[0] = f"<b>{lines[0]}</b>"
    return '"' + "<br/>".join(lines) + '"'


def to_mermaid(graph: QueueGraph) -> str:
    """The Mermaid flowchart of the graph (deterministic text ending in a newline)."""
    ids = mermaid_ids(graph)
    out = ["flowchart LR", f"  %% batchplane graph: stack {graph.stack}, queue topology"]

    def node_line(node: Node, indent: str) -> str:
        left, right = _SHAPES[node.kind]
        return f"{indent}{ids[node.id]}{left}{_label(node)}{right}:::{_PREFIX[node.kind]}"

    def cohort(node: Node, indent: str) -> None:
        out.append(f"{indent}subgraph {ids[node.id]}[{_label(node)}]")
        for child in graph.children(node.id):
            if child.kind == "cluster-queue":
                out.append(node_line(child, indent + "  "))
            else:
                cohort(child, indent + "  ")
        out.append(f"{indent}end")

    for node in graph.of_kind("pool") + graph.of_kind("flavor"):
        out.append(node_line(node, "  "))
    for top in graph.children(None):
        if top.kind == "cohort":
            cohort(top, "  ")
        else:
            out.append(node_line(top, "  "))
    for node in graph.of_kind("local-queue") + graph.of_kind("namespace") + graph.of_kind("worker"):
        out.append(node_line(node, "  "))
    for edge in graph.edges:
        if edge.kind in ("member", "parent"):
            continue  # drawn as subgraph nesting
        arrow = f"==>|{CHECK_MARK}|" if edge.checked else ("-.->" if edge.kind == "dispatch" else "-->")
        out.append(f"  {ids[edge.source]} {arrow} {ids[edge.target]}")
    workers = bool(graph.of_kind("worker"))
    out += [f"  {c}" for c in _CLASSES if workers or not c.startswith("classDef worker ")]
    return "\n".join(out) + "\n"

"""Graphviz rendering of a :class:`~batchplane.graph.model.QueueGraph`: DOT text, SVG and PNG.

The DOT source is built with the ``graphviz`` Python package (quoting, subgraphs, HTML-like
labels) and needs no binary; SVG and PNG are produced by piping it through Graphviz's ``dot``
(Debian/Ubuntu package ``graphviz``; ``make install`` and ``.ci/run`` install it).

Layout choices that keep a 50-team stack readable: left-to-right ranks (pools → flavors →
ClusterQueues → LocalQueues → namespaces), one cluster box per cohort (nested for parent cohorts)
instead of 50 membership edges, compact HTML-like tables (a ClusterQueue's quotas as flavor rows ×
resource columns, a pool's capacity as resource rows), flavor → ClusterQueue edges that end on the
flavor's row, and admission checks marked on their rows and edges (``⚑``, red). Graphviz attribute
reference: https://graphviz.org/doc/info/attrs.html, HTML-like labels: https://graphviz.org/doc/info/shapes.html#html.
"""

from __future__ import annotations

import hashlib
from html import escape
from typing import Any, Literal, cast

import graphviz

from batchplane.errors import BatchplaneError
from batchplane.graph.model import CapacityRow, Edge, Node, QueueGraph, QuotaTable

RenderFormat = Literal["svg", "png"]

CHECK_MARK = "⚑"
"""Marks flavor rows, quota edges and check lines of admission-checked flavors."""
CHECK_COLOR = "#b85450"
SVG_DIGEST_PREFIX = "batchplane dot-sha256: "
"""An SVG written by :func:`render` carries ``<!-- batchplane dot-sha256: <hex> -->``: the SHA-256 of
the DOT source it was drawn from, so a committed picture can be checked against its committed DOT."""

_FONT = "Helvetica"
_SMALL = 8
_COLORS: dict[str, tuple[str, str, str]] = {  # kind → (header fill, body fill, border)
    "pool": ("#f5c28a", "#fdf0e0", "#b46504"),
    "flavor": ("#b7e1b0", "#eef8ec", "#3f7f3a"),
    "cluster-queue": ("#b9d3f2", "#eef4fc", "#4a6f9c"),
    "cohort": ("#e6e6e6", "#ffffff", "#7a7a7a"),
    "local-queue": ("#e8e0f3", "#f8f5fc", "#6b5b95"),
    "worker": ("#f3d1d0", "#fdf2f2", "#b85450"),
}
_EDGE_COLORS = {
    "nodes": "#b46504",
    "quota": "#4a6f9c",
    "queue": "#6b5b95",
    "namespace": "#6b5b95",
    "dispatch": "#b85450",
}


class GraphRenderError(BatchplaneError):
    """Raised when the Graphviz ``dot`` binary is missing or fails."""


def _text(value: str) -> str:
    return escape(value, quote=True)


def _small(value: str) -> str:
    return f'<FONT POINT-SIZE="{_SMALL}">{_text(value)}</FONT>'


def _header(node: Node, title: str, span: int) -> str:
    fill = _COLORS[node.kind][0]
    return (
        f'<TR><TD COLSPAN="{span}" BGCOLOR="{fill}" ALIGN="LEFT"><B>{_text(node.name)}</B> '
        f"{_small(title)}</TD></TR>"
    )


def _lines(node: Node, span: int) -> str:
    return "".join(f'<TR><TD COLSPAN="{span}" ALIGN="LEFT">{_small(line)}</TD></TR>' for line in node.lines)


def _quota_rows(table: QuotaTable, ports: bool) -> str:
    head = "".join(f"<TD>{_small(r)}</TD>" for r in table.resources)
    out = f'<TR><TD ALIGN="LEFT">{_small("flavor")}</TD>{head}</TR>'
    for i, row in enumerate(table.rows):
        port = f' PORT="r{i}"' if ports else ""
        mark = f' <FONT COLOR="{CHECK_COLOR}">{CHECK_MARK}</FONT>' if row.checks else ""
        cells = "".join(f"<TD>{'' if c is None else _text(c.text())}</TD>" for c in row.cells)
        out += f'<TR><TD ALIGN="LEFT"{port}>{_text(row.flavor)}{mark}</TD>{cells}</TR>'
    return out


def _capacity_rows(rows: tuple[CapacityRow, ...]) -> str:
    out = (
        "<TR>"
        + "".join(f"<TD>{_small(h)}</TD>" for h in ("resource", "per node", "at most", "quota"))
        + "</TR>"
    )
    for row in rows:
        out += (
            f'<TR><TD ALIGN="LEFT">{_text(row.resource)}</TD><TD>{_text(row.per_node)}</TD>'
            f"<TD>{_text(row.capacity or '?')}</TD><TD>{_text(row.quota)}</TD></TR>"
        )
    return out


def _table(node: Node, title: str, span: int, body: str) -> str:
    _, fill, border = _COLORS[node.kind]
    return (
        f'<<TABLE BORDER="1" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3" COLOR="{border}" BGCOLOR="{fill}">'
        f"{_header(node, title, span)}{_lines(node, span)}{body}</TABLE>>"
    )


def node_label(node: Node) -> str:
    """The HTML-like label of a node (``<...>``): a header with name and kind, its lines, its table.

    ClusterQueue tables have one ``PORT="r<i>"`` per flavor row, where quota edges end.
    """
    if node.kind == "cluster-queue":
        table = node.quotas
        span = 1 + (len(table.resources) if table is not None else 0)
        body = _quota_rows(table, ports=True) if table is not None else ""
        for check in node.checks:
            body += (
                f'<TR><TD COLSPAN="{span}" ALIGN="LEFT"><FONT COLOR="{CHECK_COLOR}" POINT-SIZE="{_SMALL}">'
                f"{CHECK_MARK} {_text(check.text())}</FONT></TD></TR>"
            )
        return _table(node, "ClusterQueue", span, body)
    if node.kind == "pool":
        return _table(node, "pool", 4, _capacity_rows(node.capacity) if node.capacity else "")
    if node.kind == "flavor":
        return _table(node, "ResourceFlavor", 1, "")
    if node.kind == "worker":
        return _table(node, "MultiKueue worker", 1, "")
    if node.kind == "local-queue":
        name = node.name.partition("/")[2]
        return _table(Node(node.id, node.kind, name, node.lines), "LocalQueue", 1, "")
    raise ValueError(f"no table label for {node.kind} nodes")


def cohort_label(node: Node) -> str:
    """The HTML-like label of a cohort's cluster box: name, lines and its own quota table."""
    table = node.quotas
    span = 1 + (len(table.resources) if table is not None else 0)
    body = _quota_rows(table, ports=False) if table is not None else ""
    title = f"<B>{_text(node.name)}</B> {_small('Cohort')}"
    rows = f'<TR><TD COLSPAN="{span}" ALIGN="LEFT">{title}</TD></TR>'
    rows += "".join(f'<TR><TD COLSPAN="{span}" ALIGN="LEFT">{_small(line)}</TD></TR>' for line in node.lines)
    border = "1" if table is not None else "0"
    return f'<<TABLE BORDER="0" CELLBORDER="{border}" CELLSPACING="0" CELLPADDING="2">{rows}{body}</TABLE>>'


def legend() -> str:
    """The graph's title legend: how to read quota cells, capacity rows and check marks."""
    return (
        "quota cell: nominalQuota +borrowingLimit lend lendingLimit · "
        f"{CHECK_MARK} admission check on that flavor · "
        "pool: per node, at most (max nodes × per node), nominal quota on its flavors"
    )


def _graph_label(graph: QueueGraph) -> str:
    return (
        f'<<B>stack {_text(graph.stack)}</B> — queue topology<BR ALIGN="LEFT"/>'
        f'<FONT POINT-SIZE="{_SMALL}">{_text(legend())}</FONT><BR ALIGN="LEFT"/>>'
    )


def _add_nodes(g: Any, nodes: list[Node]) -> None:
    for node in nodes:
        if node.kind == "namespace":
            label = node.name if not node.lines else f"{node.name}\n{node.lines[0]}"
            g.node(node.id, label=label, shape="folder", style="filled", fillcolor="#ffffff", color="#6b5b95")
        else:
            g.node(node.id, label=node_label(node))


def _add_cohort(g: Any, graph: QueueGraph, cohort: Node, depth: int) -> None:
    with g.subgraph(name=f"cluster_{_cluster_name(graph, cohort)}") as c:
        c.attr(
            label=cohort_label(cohort),
            labeljust="l",
            style="rounded,filled",
            fillcolor="#f7f7f7" if depth % 2 == 0 else "#ececec",
            color="#7a7a7a",
        )
        children = graph.children(cohort.id)
        _add_nodes(c, [n for n in children if n.kind == "cluster-queue"])
        for child in children:
            if child.kind == "cohort":
                _add_cohort(c, graph, child, depth + 1)


def _cluster_name(graph: QueueGraph, cohort: Node) -> int:
    return [n.id for n in graph.of_kind("cohort")].index(cohort.id)


def _edge(g: Any, graph: QueueGraph, edge: Edge) -> None:
    if edge.kind in ("member", "parent"):
        return  # drawn as cluster nesting
    head = edge.target
    attrs: dict[str, str] = {"color": _EDGE_COLORS[edge.kind]}
    if edge.kind == "quota":
        target = graph.node(edge.target)
        flavor = graph.node(edge.source).name
        rows = [r.flavor for r in target.quotas.rows] if target.quotas is not None else []
        if flavor in rows:
            head = f"{edge.target}:r{rows.index(flavor)}:w"
        if edge.checked:
            attrs.update(color=CHECK_COLOR, penwidth="1.6", arrowhead="normal")
    if edge.kind == "dispatch":
        attrs.update(style="dashed")
    g.edge(edge.source, head, **attrs)


def to_dot(graph: QueueGraph) -> str:
    """The DOT source of the graph (deterministic; no Graphviz binary needed).

    Returns:
        DOT text: ``digraph "batchplane-<stack>"`` with ``rankdir=LR``, one ``cluster_<n>`` subgraph
        per cohort (nested under its parent), HTML-like table labels, node ids as in the model.
    """
    g = graphviz.Digraph(
        name=f"batchplane-{graph.stack}",
        graph_attr={
            "rankdir": "LR",
            "label": _graph_label(graph),
            "labelloc": "t",
            "labeljust": "l",
            "fontname": _FONT,
            "fontsize": "12",
            "nodesep": "0.12",
            "ranksep": "0.5",
            "newrank": "true",
        },
        node_attr={"shape": "plaintext", "fontname": _FONT, "fontsize": "10", "margin": "0"},
        edge_attr={"arrowsize": "0.6", "penwidth": "0.8"},
    )
    _add_nodes(g, graph.of_kind("pool") + graph.of_kind("flavor"))
    for top in graph.children(None):
        if top.kind == "cohort":
            _add_cohort(g, graph, top, 0)
    _add_nodes(g, [n for n in graph.children(None) if n.kind == "cluster-queue"])
    _add_nodes(g, graph.of_kind("local-queue") + graph.of_kind("namespace") + graph.of_kind("worker"))
    for edge in graph.edges:
        _edge(g, graph, edge)
    return cast(str, g.source)


def dot_digest(source: str) -> str:
    """SHA-256 (hex) of a DOT source, as recorded in the SVGs :func:`render` writes."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def render(source: str, fmt: RenderFormat) -> bytes:
    """Lay out DOT text with Graphviz's ``dot`` and return the picture.

    Args:
        source: DOT text (:func:`to_dot`).
        fmt: ``svg`` or ``png`` (PNG at Graphviz's default 96 dpi).

    Returns:
        The picture's bytes. An SVG also carries ``<!-- batchplane dot-sha256: <hex> -->`` right after
        its XML declaration (:data:`SVG_DIGEST_PREFIX`).

    Raises:
        GraphRenderError: the ``dot`` binary is not installed or fails.
    """
    try:
        data = cast(bytes, graphviz.pipe(engine="dot", format=fmt, data=source.encode("utf-8"), quiet=True))
    except graphviz.ExecutableNotFound:
        raise GraphRenderError(
            f"cannot render {fmt}: the Graphviz `dot` binary is not installed "
            "(Debian/Ubuntu: apt-get install graphviz; or use --format dot or --format mermaid)"
        ) from None
    except graphviz.CalledProcessError as exc:
        detail = (exc.stderr or b"").decode("utf-8", "replace").strip()
        raise GraphRenderError(f"Graphviz dot failed to render {fmt}: {detail or exc}") from None
    if fmt == "svg":
        head, sep, rest = data.partition(b"?>\n")
        comment = f"<!-- {SVG_DIGEST_PREFIX}{dot_digest(source)} -->\n".encode()
        data = head + sep + comment + rest if sep else comment + data
    return data

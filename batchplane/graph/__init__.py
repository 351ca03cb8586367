"""``batchplane graph``: a picture of a stack's queue topology.

:func:`stack_graph` builds the pure model (:mod:`batchplane.graph.model`) from a validated stack and
the node pools backing its flavors; :func:`~batchplane.graph.mermaid.to_mermaid` and
:func:`~batchplane.graph.dot.to_dot` turn it into text, :func:`~batchplane.graph.dot.render` into SVG
or PNG through Graphviz. See docs/onboarding.md.
"""

from __future__ import annotations

from batchplane.graph.dot import GraphRenderError, dot_digest, render, to_dot
from batchplane.graph.mermaid import to_mermaid
from batchplane.graph.model import Edge, Node, QueueGraph, build_graph, node_id
from batchplane.stack.model import Stack
from batchplane.stack.pool_hooks import backed_pools

__all__ = [
    "Edge",
    "GraphRenderError",
    "Node",
    "QueueGraph",
    "build_graph",
    "dot_digest",
    "node_id",
    "render",
    "stack_graph",
    "to_dot",
    "to_mermaid",
]


def stack_graph(stack: Stack) -> QueueGraph:
    """The queue-topology graph of a validated stack, with the pools of its target
    (:func:`batchplane.stack.pool_hooks.backed_pools`: GKE GPU pools; none for kind/existing targets)."""
    return build_graph(stack, backed_pools(stack.config))

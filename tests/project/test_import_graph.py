"""The import graph of ``batchplane/`` has no cycle between modules (issue #40).

The graph is grimp's, the library import-linter builds its contracts on, so this test and ``make imports`` read the
same edges. It holds every import: those under ``TYPE_CHECKING`` (a type named from a higher layer is still a
dependency on it) and those inside functions (a deferred import still needs the module it names; the project defers
imports for start-up time, not to hide a dependency). A package's ``__init__`` counts as a module of its own, so a
submodule importing a name from its package's ``__init__`` while the ``__init__`` imports the submodule is a cycle.
"""

from __future__ import annotations

import tomllib
from collections import deque

import grimp

from tests.conftest import REPO_ROOT


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def shortest_cycle(graph: dict[str, set[str]], start: str) -> list[str]:
    """The shortest import path from ``start`` back to itself (breadth first), ``start`` at both ends."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph[node]):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [start, *reversed(path[:-1]), start] if node != start else [start, start]
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    return []


def import_graph() -> dict[str, set[str]]:
    built = grimp.build_graph("batchplane", exclude_type_checking_imports=False)
    return {module: set(built.find_modules_directly_imported_by(module)) for module in built.modules}


def test_a_cycle_is_found_and_printed() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert shortest_cycle(graph, "a") == ["a", "b", "c", "a"]


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert "batchplane.stack.load" in graph  # the graph is the package's, not an empty one
    components = strongly_connected(graph)
    report = [
        f"{len(members)} modules in a circle: {', '.join(members)}\n  e.g. {' -> '.join(shortest_cycle(graph, members[0]))}"
        for members in components
    ]
    assert not components, "\n".join(report)


#: The only edges the contracts may ignore (issue #40 wants none): the platforms' preflight halves name the one
#: requirements model that holds every platform's types, and two Pulumi imports made only when a program asks.
ALLOWED_IGNORES = {
    "Platforms do not import each other": {
        "batchplane.targets.preflight -> batchplane.preflight.model",
        "batchplane.targets.*.preflight -> batchplane.preflight.model",
    },
    "The webhook, config, stack loading, accounting and Kueue builders import no Pulumi": {
        "batchplane.stack.pulumi_source -> pulumi",
        "batchplane.targets.registry -> batchplane.targets.deploy",
    },
}


def test_the_contracts_ignore_no_import_beyond_the_listed_ones() -> None:
    with (REPO_ROOT / "pyproject.toml").open("rb") as fh:
        contracts = tomllib.load(fh)["tool"]["importlinter"]["contracts"]
    ignored = {c["name"]: set(c["ignore_imports"]) for c in contracts if c.get("ignore_imports")}
    assert ignored == ALLOWED_IGNORES

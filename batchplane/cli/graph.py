"""``batchplane graph``: a picture of a stack's queue topology (docs/onboarding.md).

Cohorts (nested under their parents) → ClusterQueues with their quota tables and admission checks →
LocalQueues → namespaces, and the pools backing each flavor with their capacity. Formats: ``svg``
and ``png`` (need Graphviz's ``dot`` binary), ``dot`` and ``mermaid`` (text, no binary). Without
``--format`` the format follows ``--output``'s suffix (``.svg``, ``.png``, ``.dot``/``.gv``,
``.mmd``/``.mermaid``), else ``svg``. Without ``--output`` the picture goes to stdout (PNG only when
stdout is not a terminal).

Exit codes: 0 written, 1 invalid stack config (every error on stderr), 2 usage or I/O errors,
including a missing ``dot`` binary.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from batchplane.cli.common import (
    EXIT_OK,
    ConfigOption,
    StackOption,
    config_errors_exit,
    fail_usage,
    resolve_stack_file,
)
from batchplane.cli.root import app


class GraphFormat(StrEnum):
    """Output formats of ``batchplane graph``."""

    svg = "svg"
    png = "png"
    mermaid = "mermaid"
    dot = "dot"


#: Output file suffix → format, used when ``--format`` is not given.
SUFFIX_FORMATS = {
    ".svg": GraphFormat.svg,
    ".png": GraphFormat.png,
    ".dot": GraphFormat.dot,
    ".gv": GraphFormat.dot,
    ".mmd": GraphFormat.mermaid,
    ".mermaid": GraphFormat.mermaid,
}


def picture(stack_file: Path, name: str, fmt: GraphFormat) -> bytes:
    """The picture of one stack file in one format.

    Raises:
        ConfigLoadError: the file cannot be read.
        ConfigValidationError: the stack config is invalid.
        GraphRenderError: SVG/PNG asked for and Graphviz's ``dot`` is missing or fails.
    """
    from batchplane.graph import render, stack_graph, to_dot, to_mermaid
    from batchplane.stack import load_stack_file

    graph = stack_graph(load_stack_file(stack_file, name))
    if fmt is GraphFormat.mermaid:
        return to_mermaid(graph).encode("utf-8")
    source = to_dot(graph)
    if fmt is GraphFormat.dot:
        return source.encode("utf-8")
    return render(source, "png" if fmt is GraphFormat.png else "svg")


@app.command()
def graph(
    stack: StackOption = None,
    config: ConfigOption = None,
    fmt: Annotated[
        GraphFormat | None,
        typer.Option(
            "--format", "-f", help="svg | png | mermaid | dot. Defaults to --output's suffix, else svg."
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to FILE instead of stdout.")
    ] = None,
) -> None:
    """Draw the queue topology of a stack: cohorts → ClusterQueues (quotas, admission checks) →
    LocalQueues → namespaces, and the pools backing each flavor with their capacity."""
    from batchplane.graph import GraphRenderError

    name, path = resolve_stack_file(stack, config)
    chosen = (
        fmt or (SUFFIX_FORMATS.get(output.suffix.lower()) if output is not None else None) or GraphFormat.svg
    )
    if chosen is GraphFormat.png and output is None and sys.stdout.isatty():
        fail_usage("PNG is binary: give --output FILE or redirect stdout")
    try:
        with config_errors_exit():
            data = picture(path, name, chosen)
    except GraphRenderError as exc:
        fail_usage(str(exc))
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        raise typer.Exit(EXIT_OK)
    try:
        output.write_bytes(data)
    except OSError as exc:
        fail_usage(f"cannot write {output}: {exc.strerror or exc}")
    print(f"batchplane: wrote {output} ({chosen.value}, stack {name})", file=sys.stderr)
    raise typer.Exit(EXIT_OK)

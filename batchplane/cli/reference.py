"""``batchplane config-reference``: print or write the generated config reference (Markdown)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from batchplane.cli.root import app


@app.command("config-reference")
def config_reference_command(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the config reference generated from the config models (docs/config-reference.md)."""
    from batchplane.stack.reference import config_reference

    text = config_reference()
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")

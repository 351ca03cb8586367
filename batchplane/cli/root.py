"""The ``batchplane`` Typer application, before any subcommand registers on it.

Each subcommand module imports :data:`app` from here and registers itself; :mod:`batchplane.cli` imports them all
and is the entry point. The application lives apart from the package ``__init__`` so no subcommand imports the
module that imports it (issue #40: no import circle).
"""

from __future__ import annotations

import typer

from batchplane.cli.common import HelpGroup

app = typer.Typer(
    name="batchplane",
    cls=HelpGroup,
    help="GPU batch platform as code: validate, preview, render and check Batchplane stacks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _root() -> None:
    """GPU batch platform as code: validate, preview, render and check Batchplane stacks."""

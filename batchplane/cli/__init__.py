"""The ``batchplane`` command line.

Exit codes, for every subcommand: 0 ok, 1 findings (invalid config, policy violations, denied
workloads), 2 usage or I/O errors. Each subcommand lives in its own module and registers itself
on :data:`app` when imported below.

Start-up (issue #37): every subcommand module imports at its top only the standard library, typer and
:mod:`batchplane.cli.common`; what a command runs with (stack loading, Pulumi, the Grafana SDK, the kubernetes
client, yaml) is imported inside the command's function, so ``batchplane --help`` and each command pay only for
their own imports (``tests/cli/test_startup_imports.py``). Help is click's plain formatter
(``rich_markup_mode=None``): typer's rich help imports rich, markdown-it and pygments, ~0.3 s.
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


# Subcommand modules register themselves on `app` (import for side effect).
from batchplane.cli import appwrapper as _appwrapper  # noqa: E402,F401
from batchplane.cli import check as _check  # noqa: E402,F401
from batchplane.cli import ci as _ci  # noqa: E402,F401
from batchplane.cli import dashboards as _dashboards  # noqa: E402,F401
from batchplane.cli import diff as _diff  # noqa: E402,F401
from batchplane.cli import explain as _explain  # noqa: E402,F401
from batchplane.cli import graph as _graph  # noqa: E402,F401
from batchplane.cli import new as _new  # noqa: E402,F401
from batchplane.cli import preflight as _preflight  # noqa: E402,F401
from batchplane.cli import preview as _preview  # noqa: E402,F401
from batchplane.cli import reference as _reference  # noqa: E402,F401
from batchplane.cli import render as _render  # noqa: E402,F401
from batchplane.cli import requests as _requests  # noqa: E402,F401
from batchplane.cli import upgrade as _upgrade  # noqa: E402,F401
from batchplane.cli import validate as _validate  # noqa: E402,F401
from batchplane.cli import webhook as _webhook  # noqa: E402,F401


def main() -> None:
    """Console-script entry point (``batchplane``)."""
    app()

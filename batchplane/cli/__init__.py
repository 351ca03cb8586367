"""The ``batchplane`` command line.

Exit codes, for every subcommand: 0 ok, 1 findings (invalid config, policy violations, denied
workloads), 2 usage or I/O errors. Each subcommand lives in its own module and registers itself
on :data:`app` (defined in :mod:`batchplane.cli.root`) when imported below.

Start-up (issue #37): every subcommand module imports at its top only the standard library, typer and
:mod:`batchplane.cli.common`; what a command runs with (stack loading, Pulumi, the Grafana SDK, the kubernetes
client, yaml) is imported inside the command's function, so ``batchplane --help`` and each command pay only for
their own imports (``tests/cli/test_startup_imports.py``). Help is click's plain formatter
(``rich_markup_mode=None``): typer's rich help imports rich, markdown-it and pygments, ~0.3 s.
"""

from __future__ import annotations

# Subcommand modules register themselves on `app` (import for side effect).
from batchplane.cli import appwrapper as _appwrapper  # noqa: F401
from batchplane.cli import check as _check  # noqa: F401
from batchplane.cli import ci as _ci  # noqa: F401
from batchplane.cli import dashboards as _dashboards  # noqa: F401
from batchplane.cli import diff as _diff  # noqa: F401
from batchplane.cli import explain as _explain  # noqa: F401
from batchplane.cli import graph as _graph  # noqa: F401
from batchplane.cli import new as _new  # noqa: F401
from batchplane.cli import preflight as _preflight  # noqa: F401
from batchplane.cli import preview as _preview  # noqa: F401
from batchplane.cli import reference as _reference  # noqa: F401
from batchplane.cli import render as _render  # noqa: F401
from batchplane.cli import requests as _requests  # noqa: F401
from batchplane.cli import upgrade as _upgrade  # noqa: F401
from batchplane.cli import validate as _validate  # noqa: F401
from batchplane.cli import webhook as _webhook  # noqa: F401
from batchplane.cli.root import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point (``batchplane``)."""
    app()

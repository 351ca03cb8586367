"""``batchplane webhook policy|serve``: the quota admission webhook's command group.

The commands live in :mod:`batchplane.webhook.command` (so the container can run them without the
rest of the CLI); this module registers them on the main CLI as the ``webhook`` sub-app.
"""

from __future__ import annotations

from batchplane.cli import app
from batchplane.webhook.command import webhook_app

app.add_typer(webhook_app, name="webhook")

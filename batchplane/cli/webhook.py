"""``batchplane webhook policy|serve|review``: the quota admission webhook's command group.

``policy`` renders a stack's policy document (stack loading, :mod:`batchplane.components.quota_webhook.policy`), so
it lives here, in the CLI; ``serve`` is :func:`batchplane.webhook.command.serve_command`, the command the container
runs on its own (``python -m batchplane.webhook serve``), registered here unchanged.
Exit codes as for every subcommand: 0 ok, 1 findings (invalid stack config), 2 usage or I/O errors.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from batchplane.cli.common import EXIT_USAGE, HelpGroup, StackOption, config_errors_exit, resolve_stack_file
from batchplane.cli.root import app
from batchplane.cli.webhook_review import review_command
from batchplane.webhook.command import serve_command

webhook_app = typer.Typer(
    name="webhook",
    help="The quota admission webhook: render its policy document, serve it over TLS, or build (and send) the "
    "AdmissionReview of a manifest.",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=HelpGroup,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@webhook_app.command("policy")
def policy_command(
    stack: StackOption = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="Any stack config file.")] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the webhook's policy document (JSON) rendered from a stack config."""
    from batchplane.components.quota_webhook.policy import render_policy
    from batchplane.stack import load_stack_file
    from batchplane.webhook.policy import policy_json

    name, path = resolve_stack_file(stack, config)
    with config_errors_exit():
        loaded = load_stack_file(path, name)
    text = policy_json(render_policy(loaded))
    if output is None:
        sys.stdout.write(text)
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"batchplane: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
            raise typer.Exit(EXIT_USAGE) from None


webhook_app.command("serve")(serve_command)
webhook_app.command("review")(review_command)

app.add_typer(webhook_app, name="webhook")

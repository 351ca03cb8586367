"""The ``webhook`` command group: ``policy`` (print the policy document) and ``serve`` (run the server).

Registered on the main CLI by :mod:`batchplane.cli.webhook` (``batchplane webhook ...``) and run on
its own by ``python -m batchplane.webhook`` in the container. It imports the rest of the CLI only
inside ``policy``, so serving needs nothing but the webhook's runtime dependencies.
Exit codes as for every subcommand: 0 ok, 1 findings (invalid stack config), 2 usage or I/O errors.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from batchplane.webhook.errors import WebhookError

EXIT_FINDINGS = 1
EXIT_USAGE = 2

webhook_app = typer.Typer(
    name="webhook",
    help="The quota admission webhook: render its policy document, or serve it over TLS.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@webhook_app.command("policy")
def policy_command(
    stack: Annotated[
        str | None, typer.Option("--stack", "-s", help="Stack name: reads stacks/Pulumi.<NAME>.yaml.")
    ] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="Any stack config file.")] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the webhook's policy document (JSON) rendered from a stack config."""
    from batchplane.cli.common import config_errors_exit, resolve_stack_file
    from batchplane.stack import load_stack_file
    from batchplane.webhook.policy import policy_json, render_policy

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


@webhook_app.command("serve")
def serve_command(
    policy: Annotated[
        Path, typer.Option("--policy", help="Policy document (JSON) from `batchplane webhook policy`.")
    ],
    cert_file: Annotated[Path, typer.Option("--cert-file", help="PEM certificate chain (tls.crt).")],
    key_file: Annotated[Path, typer.Option("--key-file", help="PEM private key (tls.key).")],
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="HTTPS port.")] = 8443,
    host: Annotated[str, typer.Option("--host", help="Listen address.")] = "0.0.0.0",
    reload_interval: Annotated[
        float, typer.Option("--reload-interval", min=0.05, help="Seconds between certificate file checks.")
    ] = 2.0,
    access_log: Annotated[
        bool, typer.Option("--access-log/--no-access-log", help="Log every request.")
    ] = False,
    enable_noop: Annotated[
        bool, typer.Option("--enable-noop", hidden=True, help="Serve /noop (benchmarks).")
    ] = False,
) -> None:
    """Serve /validate, /mutate, /healthz, /readyz and /metrics over TLS; reload the certificate on change."""
    from batchplane.webhook.policy import load_policy
    from batchplane.webhook.server import build_server, run_server

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        server, reloader = build_server(
            load_policy(policy),
            cert_file,
            key_file,
            host=host,
            port=port,
            reload_interval=reload_interval,
            enable_noop=enable_noop,
            access_log=access_log,
        )
    except WebhookError as exc:
        print(f"batchplane: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE) from None
    run_server(server, reloader)

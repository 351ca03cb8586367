"""The webhook process's command: ``serve`` (run the server), ``python -m batchplane.webhook serve ...``.

The container runs :data:`webhook_app` on its own; :mod:`batchplane.cli.webhook` registers the same ``serve`` on the
main CLI (``batchplane webhook serve``) beside ``policy``, which renders a stack and so lives in the CLI: nothing here
imports stack loading, the CLI or Pulumi, so serving needs only the ``webhook`` extra's dependencies.
Exit codes as for every subcommand: 0 ok, 2 usage or I/O errors.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from batchplane.webhook.errors import WebhookError

EXIT_USAGE = 2

webhook_app = typer.Typer(
    name="webhook",
    help="The quota admission webhook: serve its policy document over TLS.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@webhook_app.callback()
def _group() -> None:
    """The quota admission webhook: serve its policy document over TLS."""


#: The default listen address: loopback. The Deployment passes ``--host 0.0.0.0`` (the Service reaches the pod on
#: its pod IP); a workstation run is never exposed by default.
DEFAULT_HOST = "127.0.0.1"


@webhook_app.command("serve")
def serve_command(
    policy: Annotated[
        Path, typer.Option("--policy", help="Policy document (JSON) from `batchplane webhook policy`.")
    ],
    cert_file: Annotated[
        Path | None, typer.Option("--cert-file", help="PEM certificate chain (tls.crt). Not with --dev.")
    ] = None,
    key_file: Annotated[
        Path | None, typer.Option("--key-file", help="PEM private key (tls.key). Not with --dev.")
    ] = None,
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="HTTPS port.")] = 8443,
    host: Annotated[
        str,
        typer.Option("--host", help="Listen address. Defaults to loopback (the Deployment passes 0.0.0.0)."),
    ] = DEFAULT_HOST,
    dev: Annotated[
        bool,
        typer.Option(
            "--dev",
            help="Try it locally: a throwaway CA and certificate and a sample AdmissionReview in a temp dir, "
            "and the curl line that posts it.",
        ),
    ] = False,
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
    given = cert_file is not None or key_file is not None
    if (dev and given) or (not dev and (cert_file is None or key_file is None)):
        print("batchplane: give --cert-file and --key-file, or --dev (not both)", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE)
    try:
        document = load_policy(policy)
        if dev:
            from batchplane.webhook.dev import curl_line, prepare, url

            files = prepare(document)
            cert_file, key_file = files.cert, files.key
            print(
                f"batchplane webhook (dev): serving {url(host, port)} with a throwaway certificate in {files.directory}"
                f"\ntry:\n  {curl_line(files, host, port)}",
                flush=True,
            )
        assert cert_file is not None and key_file is not None
        server, reloader = build_server(
            document,
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

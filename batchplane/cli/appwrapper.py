"""``batchplane appwrapper convert FILE``: MCAD AppWrappers → ``workload.codeflare.dev/v1beta2`` AppWrappers.

Every MCAD AppWrapper document (``mcad.ibm.com/v1beta1`` or ``workload.codeflare.dev/v1beta1``) in FILE is
converted (:func:`batchplane.appwrapper.convert`); other documents are passed through unchanged. The result is
printed as YAML (or written to ``--output``); warnings go to stderr. Exit codes: 0 converted, 1 when a
document has fields that cannot be converted (each named on stderr; nothing is written), 2 usage or I/O
errors.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from batchplane.cli.common import EXIT_FINDINGS, EXIT_OK, HelpGroup, fail_usage, read_manifest
from batchplane.cli.root import app

appwrapper_app = typer.Typer(
    name="appwrapper",
    help="AppWrappers: convert MCAD's into the workload.codeflare.dev/v1beta2 AppWrapper Kueue queues.",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=HelpGroup,
)


@appwrapper_app.command("convert")
def convert_command(
    manifest: Annotated[Path, typer.Argument(help="YAML with one or more MCAD AppWrapper documents.")],
    queue: Annotated[
        str | None,
        typer.Option("--queue", help="LocalQueue for the label kueue.x-k8s.io/queue-name. Defaults to none."),
    ] = None,
    priority_class: Annotated[
        str | None,
        typer.Option(
            "--priority-class",
            help="Kueue WorkloadPriorityClass replacing MCAD's integer priority. Defaults to none (dropped).",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the YAML here instead of stdout.")
    ] = None,
) -> None:
    """Convert the MCAD AppWrappers in MANIFEST into workload.codeflare.dev/v1beta2 AppWrappers."""
    import yaml

    from batchplane.appwrapper import ConversionError, convert, is_mcad_appwrapper

    documents = read_manifest(manifest)
    converted: list[Any] = []
    failed = False
    found = False
    for index, document in enumerate(documents, start=1):
        if document is None:
            continue
        if not is_mcad_appwrapper(document):
            converted.append(document)
            continue
        found = True
        name = (document.get("metadata") or {}).get("name") or "<unnamed>"
        try:
            result = convert(document, queue_name=queue, priority_class=priority_class)
        except ConversionError as exc:
            for problem in exc.problems:
                print(
                    f"batchplane: document {index} (AppWrapper {name}): cannot convert {problem}",
                    file=sys.stderr,
                )
            failed = True
            continue
        for warning in result.warnings:
            print(f"batchplane: document {index} (AppWrapper {name}): warning: {warning}", file=sys.stderr)
        converted.append(result.appwrapper)
    if not found:
        fail_usage(
            f"{manifest} holds no MCAD AppWrapper (mcad.ibm.com/v1beta1 or workload.codeflare.dev/v1beta1)"
        )
    if failed:
        raise typer.Exit(EXIT_FINDINGS)
    text = yaml.safe_dump_all(converted, sort_keys=False)
    if output is None:
        sys.stdout.write(text)
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            fail_usage(f"cannot write {output}: {exc.strerror or exc}")
    raise typer.Exit(EXIT_OK)


app.add_typer(appwrapper_app, name="appwrapper")

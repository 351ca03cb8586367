"""``batchplane explain``: why a workload runs, waits or never runs, in words, with the stack line that decides it.

Offline: ``batchplane explain --stack ENV MANIFEST.yaml [--json] [-n NS]`` judges every workload of the file against
the stack (:mod:`batchplane.explain.offline`: the webhook's own decisions, then Kueue's flavor assigner on an empty
cluster). Exit codes: 0 every workload can run, 1 some workload never runs, 2 usage, I/O or an invalid manifest
(an invalid stack config: 1, every error listed, as for every subcommand).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
import yaml

from batchplane.cli import app
from batchplane.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    ConfigOption,
    StackOption,
    config_errors_exit,
    fail_usage,
    resolve_stack_file,
)


def _shown(path: Path) -> Path:
    """``path`` relative to the working directory when it lies under it (messages name ``stacks/…:12``)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path


@app.command("explain")
def explain_command(
    manifest: Annotated[Path, typer.Argument(help="YAML manifest with one or more job documents.")],
    stack: StackOption = None,
    config: ConfigOption = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="Namespace of documents that name none.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (a list, one object per workload).")
    ] = False,
) -> None:
    """Explain, for each workload in MANIFEST, whether the stack's queues admit it, make it wait or never run it."""
    from batchplane.explain.offline import OfflineExplainer, explain_documents, render_text
    from batchplane.stack import load_stack_file

    name, path = resolve_stack_file(stack, config)
    with config_errors_exit():
        loaded = load_stack_file(path, name)
    try:
        documents = list(yaml.safe_load_all(manifest.read_text(encoding="utf-8")))
    except OSError as exc:
        fail_usage(f"cannot read {manifest}: {exc.strerror or exc}")
    except yaml.YAMLError as exc:
        fail_usage(f"{manifest} is not YAML: {exc}")
    explanations = explain_documents(OfflineExplainer(loaded, _shown(path)), documents, namespace)
    if not explanations:
        fail_usage(
            f"{manifest} holds no workload Kueue manages (Job, RayJob, RayCluster, PyTorchJob, JobSet, …)"
        )
    if as_json:
        sys.stdout.write(json.dumps([e.to_json() for e in explanations], indent=2) + "\n")
    else:
        sys.stdout.write(render_text(explanations))
    raise typer.Exit(EXIT_FINDINGS if any(e.verdict == "never-runs" for e in explanations) else EXIT_OK)

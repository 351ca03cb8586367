"""``batchplane render``: every Kubernetes object the program declares, as apply-ready YAML.

Runs the program offline as ``pulumi up`` would (every Output resolved by the mocks) and writes
the objects (:mod:`batchplane.offline.render`) in apply order: to stdout as one multi-document
stream, or with ``--output DIR`` one ``NN-<kind>-<namespace>-<name>.yaml`` file per object. A program with
several clusters (MultiKueue workers) writes one subdirectory per cluster (``# cluster:`` comments on
stdout). Resources that only the provider can expand (Helm releases and v4 charts, ``yaml/v2``,
``kustomize/v2``, patches) are listed on stderr as "not rendered". Secret values (Pulumi secrets: a
worker's kubeconfig, ``secure:`` config) are written as ``secret-placeholder``, and each is listed on stderr.

Exit codes as ``batchplane preview``; also 2 when ``--output`` is not an empty directory (unless
``--overwrite``, which first deletes the directory's ``NN-*.yaml`` files) or cannot be written.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from batchplane.cli.common import EXIT_USAGE, ConfigOption, StackOption, fail_usage
from batchplane.cli.preview import OptionalProjectDir, run_stack
from batchplane.cli.root import app

if TYPE_CHECKING:  # the offline engine loads Pulumi: imported when the command runs
    from batchplane.offline.render import Rendering

_RENDERED_FILE = re.compile(r"^\d{2,}-.+\.yaml$")


def _prepare_directory(output: Path, overwrite: bool) -> None:
    if output.exists() and not output.is_dir():
        fail_usage(f"--output {output} is not a directory")
    if not output.is_dir():
        return
    if overwrite:
        for path in [*output.iterdir(), *(p for d in output.iterdir() if d.is_dir() for p in d.iterdir())]:
            if path.is_file() and _RENDERED_FILE.match(path.name):
                path.unlink()
        for sub in output.iterdir():
            if sub.is_dir() and not any(sub.iterdir()):
                sub.rmdir()
    leftovers = sorted(p.name for p in output.iterdir())
    if leftovers and not overwrite:
        fail_usage(f"output directory {output} is not empty (use --overwrite to replace its NN-*.yaml files)")


def _report(rendering: Rendering) -> None:
    from batchplane.offline.model import format_path, iter_unknown_paths
    from batchplane.stack.files import SECRET_PLACEHOLDER

    for skipped in rendering.skipped:
        detail = f" ({skipped.detail})" if skipped.detail else ""
        print(
            f"batchplane: not rendered: {skipped.type} {skipped.name}{detail}: {skipped.reason}",
            file=sys.stderr,
        )
    for obj in rendering.objects:
        for path in obj.secret_paths:
            print(
                f"batchplane: {obj.kind} {obj.name}: {format_path(path) or 'the whole object'} is a secret: "
                f"written as {SECRET_PLACEHOLDER!r}",
                file=sys.stderr,
            )
        for path in iter_unknown_paths(obj.manifest):
            print(
                f"batchplane: {obj.kind} {obj.name}: {format_path(path)} is unknown offline", file=sys.stderr
            )


@app.command()
def render(
    stack: StackOption = None,
    config: ConfigOption = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write one file per object into this directory.")
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Delete the output directory's NN-*.yaml files first.")
    ] = False,
    project_dir: OptionalProjectDir = None,
) -> None:
    """Render every Kubernetes object the program declares as kubectl-apply-ready YAML."""
    from batchplane.offline.render import render_resources

    _, run = run_stack(stack, config, project_dir, preview=False)
    rendering = render_resources(run.resources)
    _report(rendering)
    if output is None:
        sys.stdout.write(rendering.to_yaml())
        return
    _prepare_directory(output, overwrite)
    try:
        paths = rendering.write(output)
    except OSError as exc:
        print(f"batchplane: cannot write to {output}: {exc.strerror or exc}", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE) from None
    clusters = rendering.clusters()
    where = f" ({len(clusters)} clusters, one directory each)" if len(clusters) > 1 else ""
    print(f"batchplane: wrote {len(paths)} files to {output}{where}", file=sys.stderr)

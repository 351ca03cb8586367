"""``batchplane ci-matrix``: the stack files a pull request touches (:mod:`batchplane.ci`), as the PR workflow's
matrix."""

from __future__ import annotations

from typing import Annotated

import typer

from batchplane.cli.common import EXIT_OK, ProjectDirOption, fail_usage, project_root
from batchplane.cli.root import app


@app.command("ci-matrix")
def ci_matrix(
    base: Annotated[str, typer.Option("--base", help="The pull request's base commit (a git ref).")],
    head: Annotated[str, typer.Option("--head", help="The pull request's head.")] = "HEAD",
    project_dir: ProjectDirOption = None,
) -> None:
    """Print {"include": [...]}: every environment and template a change touches (a changed stack file → it; a
    changed policies/config/<name>.json → that stack; a changed program or package file → all)."""
    from batchplane.ci import changed_files, github_matrix, matrix

    root = (project_dir or project_root()).resolve()
    try:
        entries = matrix(root, changed_files(root, base, head))
    except RuntimeError as exc:
        fail_usage(str(exc))
    typer.echo(github_matrix(entries))
    raise typer.Exit(EXIT_OK)

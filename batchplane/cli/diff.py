"""``batchplane diff``: what a stack change means, for a pull request (docs/diff.md).

Two forms, both sides read by the one loader and validated in full:

* ``batchplane diff --base-config OLD.yaml --config NEW.yaml``
* ``batchplane diff --stack NAME --base GITREF`` (or ``--config PATH --base GITREF``): the base is the same file at
  ``GITREF`` (``git show GITREF:<path>``); a file absent there is a new stack (everything added).

Output: rich tables on a terminal (plain tables otherwise), ``--json`` (schema ``batchplane.dev/diff/v1``) or
``--markdown`` (the PR comment). Exit codes: 0 diff printed (empty or not); 1 a side's config is invalid (every issue
printed, prefixed ``base:``/``head:``; with ``--github`` also as annotations on the line of the key); 2 usage, I/O, git
or program errors.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from batchplane.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    ConfigOption,
    ProjectDirOption,
    StackOption,
    fail_usage,
    github_annotation,
    project_root,
    read_at_ref,
    resolve_stack_file,
)
from batchplane.cli.root import app
from batchplane.errors import ConfigIssue, ConfigLoadError, ConfigValidationError

BaseConfigOption = Annotated[
    Path | None,
    typer.Option("--base-config", help="The stack file before the change (Pulumi.<stack>.yaml format)."),
]
BaseRefOption = Annotated[
    str | None,
    typer.Option(
        "--base", help="A git ref (e.g. the PR's merge base): the base is the same stack file at that ref."
    ),
]


def _display(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _annotate(side: str, path: Path | None, shown: str, issues: list[ConfigIssue], github: bool) -> None:
    from batchplane.yamlfile import issue_position, read_positions

    positions = read_positions(path) if (github and path is not None) else {}
    for issue in issues:
        print(f"{side}: {issue}", file=sys.stderr)
        if github and side == "head":
            level = "warning" if issue.severity == "warning" else "error"
            line, col = issue_position(positions, issue.path)
            print(github_annotation(level, shown, "stack config", str(issue), line=line, col=col))


def _load(side: str, path: Path, name: str, shown: str, github: bool) -> Any:
    from batchplane.stack import load_stack_file

    try:
        return load_stack_file(path, name)
    except ConfigLoadError as exc:
        fail_usage(f"{side}: {exc}")
    except ConfigValidationError as exc:
        _annotate(side, path, shown, exc.issues, github)
        raise typer.Exit(EXIT_FINDINGS) from None


def _run(root: Path, name: str, path: Path) -> list[Any]:
    from batchplane.offline.engine import run_program
    from batchplane.stack import read_stack_file

    try:
        return list(run_program(root, name, read_stack_file(path)).resources)
    except ConfigLoadError as exc:
        fail_usage(str(exc))
    except Exception as exc:  # the program's own failure, whatever it is
        fail_usage(f"the program failed for stack {name}: {type(exc).__name__}: {exc}")


@app.command()
def diff(
    stack: StackOption = None,
    config: ConfigOption = None,
    base_config: BaseConfigOption = None,
    base: BaseRefOption = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the diff as JSON (batchplane.dev/diff/v1).")
    ] = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print the diff as a Markdown PR comment.")
    ] = False,
    objects: Annotated[
        bool,
        typer.Option("--objects/--no-objects", help="Run the program offline on both sides and diff by URN."),
    ] = True,
    decisions: Annotated[
        bool,
        typer.Option(
            "--decisions/--no-decisions", help="Judge generated workloads with both webhook policies."
        ),
    ] = True,
    project_dir: ProjectDirOption = None,
    github: Annotated[
        bool,
        typer.Option(
            "--github",
            help="Print config errors as GitHub annotations on the key's line (default in Actions).",
        ),
    ] = False,
) -> None:
    """Show what a stack change means: quotas, pools, capacity margin, GPU cost at maximum, objects, decisions."""
    from batchplane.diff import compare
    from batchplane.diff.render import print_table, to_json, to_markdown

    if json_output and markdown:
        fail_usage("give at most one of --json and --markdown")
    if (base_config is None) == (base is None):
        fail_usage("give exactly one of --base-config PATH or --base GITREF")
    root = (project_dir or project_root()).resolve()
    name, head_path = resolve_stack_file(stack, config, root)
    if not head_path.is_file():
        fail_usage(f"no stack config {head_path}")
    annotate = github or (os.environ.get("GITHUB_ACTIONS") == "true" and not (json_output or markdown))
    shown = _display(head_path)
    with tempfile.TemporaryDirectory(prefix="batchplane-diff-") as tmp:
        base_path: Path | None = base_config
        if base is not None:
            data = read_at_ref(root, base, head_path)
            if data is not None:
                base_path = Path(tmp) / head_path.name
                base_path.write_bytes(data)
        if base_path is not None and not base_path.is_file():
            fail_usage(f"no stack config {base_path}")
        head_stack = _load("head", head_path, name, shown, annotate)
        base_stack = None if base_path is None else _load("base", base_path, name, shown, annotate)
        base_resources = head_resources = None
        if objects:
            head_resources = _run(root, name, head_path)
            base_resources = [] if base_path is None else _run(root, name, base_path)
        result = compare(
            base_stack,
            head_stack,
            base_resources=base_resources,
            head_resources=head_resources,
            decisions=decisions,
        )
    if json_output:
        print(to_json(result))
    elif markdown:
        print(
            to_markdown(
                result,
                title=f"batchplane diff: `{shown}` ({base or _display(base_config or head_path)} → head)",
            ),
            end="",
        )
    else:
        print_table(result)
    raise typer.Exit(EXIT_OK)

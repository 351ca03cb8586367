"""Options and helpers shared by the CLI subcommands: stack selection and exit codes."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from batchplane.errors import ConfigLoadError, ConfigValidationError
from batchplane.stack.layout import (
    environment_names,
    environment_path,
    find_stack_file,
    stack_name_of,
    template_names,
    template_path,
)

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2

StackOption = Annotated[
    str | None,
    typer.Option(
        "--stack",
        "-s",
        help="Stack name: reads stacks/Pulumi.<NAME>.yaml (your environment), else templates/Pulumi.<NAME>.yaml.",
    ),
]
ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="Any stack config file (Pulumi.<stack>.yaml format)."),
]
ProjectDirOption = Annotated[
    Path | None, typer.Option("--project-dir", help="The Pulumi project directory (holds Pulumi.yaml).")
]


def project_root() -> Path:
    """The directory holding ``Pulumi.yaml``: the current directory or the nearest parent with it.

    Falls back to the repository that contains this package (an editable install).
    """
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if (candidate / "Pulumi.yaml").is_file():
            return candidate
    return Path(__file__).resolve().parents[2]


def resolve_stack_file(stack: str | None, config: Path | None, root: Path | None = None) -> tuple[str, Path]:
    """Turn ``--stack``/``--config`` into ``(stack_name, config_file)``; exits 2 on misuse.

    ``--stack NAME`` reads ``<root>/stacks/Pulumi.NAME.yaml`` (the team's environment) or, when there is none,
    ``<root>/templates/Pulumi.NAME.yaml`` (a shipped template): :func:`batchplane.stack.layout.find_stack_file`,
    the one resolution every command uses. ``--config PATH`` reads PATH and takes the stack name from its
    ``Pulumi.<name>.yaml`` file name (or the file stem).
    """
    if (stack is None) == (config is None):
        fail_usage("give exactly one of --stack NAME or --config PATH")
    if config is not None:
        return stack_name_of(config), config
    assert stack is not None
    base = root or project_root()
    path = find_stack_file(base, stack)
    if path is None:
        fail_usage(
            f"no stack config {environment_path(base, stack)} or {template_path(base, stack)} "
            f"(environments: {', '.join(environment_names(base)) or 'none'}; "
            f"templates: {', '.join(template_names(base)) or 'none'})"
        )
    return stack, path


def fail_usage(message: str) -> NoReturn:
    """Print ``batchplane: <message>`` to stderr and exit 2."""
    print(f"batchplane: {message}", file=sys.stderr)
    raise typer.Exit(EXIT_USAGE)


@contextmanager
def config_errors_exit() -> Iterator[None]:
    """Turn stack-config errors into the CLI contract.

    ``ConfigLoadError`` (I/O, YAML): ``batchplane: <message>`` on stderr, exit 2.
    ``ConfigValidationError``: every issue on its own line on stderr, exit 1.
    """
    try:
        yield
    except ConfigLoadError as exc:
        print(f"batchplane: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE) from None
    except ConfigValidationError as exc:
        for issue in exc.issues:
            print(str(issue), file=sys.stderr)
        raise typer.Exit(EXIT_FINDINGS) from None

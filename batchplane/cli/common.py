"""Options and helpers shared by the CLI subcommands: stack selection and exit codes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

from batchplane.errors import ConfigLoadError, ConfigValidationError


class HelpGroup(TyperGroup):
    """A command group whose help lists each command with its whole first sentence (click cuts it at the terminal
    width). Help is click's plain formatter: ``rich_markup_mode=None`` on every ``typer.Typer`` (rich help costs
    ~0.3 s of imports: rich, markdown-it, pygments)."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        shown = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        rows = [(name, cmd.get_short_help_str(limit=1_000)) for name, cmd in shown if cmd and not cmd.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


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
    # batchplane.stack's package loads stack loading: imported when a command resolves its stack, not at start-up.
    from batchplane.stack.layout import (
        environment_names,
        environment_path,
        find_stack_file,
        stack_name_of,
        template_names,
        template_path,
    )

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


#: The MANIFEST argument that reads standard input (``batchplane explain -``, ``requests -``).
STDIN = "-"


def read_manifest(manifest: str | Path) -> list[Any]:
    """Every YAML document of ``manifest`` (a file, or standard input for ``-``); empty documents are ``None``.

    Exits 2 (``batchplane: <message>``) when it cannot be read or is not YAML; the message names the file (or
    ``<stdin>``), line and column (:func:`batchplane.yamlfile.read_manifest_text`).
    """
    from batchplane.yamlfile import read_manifest_text

    source = "<stdin>" if str(manifest) == STDIN else str(manifest)
    try:
        text = sys.stdin.read() if str(manifest) == STDIN else Path(manifest).read_text(encoding="utf-8")
    except OSError as exc:
        fail_usage(f"cannot read {source}: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        fail_usage(f"{source} is not UTF-8 text: {exc.reason} at byte {exc.start}")
    try:
        return read_manifest_text(text, source)
    except ConfigLoadError as exc:
        fail_usage(str(exc))


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


# --- shared by `check` and `diff` (PR annotations, the base of a PR) -----------------------------------


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github_annotation(
    level: str, file: str, title: str, message: str, *, line: int | None = None, col: int | None = None
) -> str:
    """A GitHub Actions workflow command: ``::error file=F,line=L,col=C,title=T::M`` (``level`` error/warning/notice;
    ``line``/``col``, 1-based, only when known — GitHub then shows it on that line of the diff).

    Values are escaped as the Actions toolkit does (``%``, CR, LF everywhere; ``:`` and ``,`` in
    properties).
    """
    where = f"file={_escape_property(file)}"
    if line is not None:
        where += f",line={line}"
        if col is not None:
            where += f",col={col}"
    return f"::{level} {where},title={_escape_property(title)}::{_escape_data(message)}"


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        fail_usage(f"git {' '.join(args)}: {exc}")


def read_at_ref(root: Path, ref: str, path: Path) -> bytes | None:
    """The bytes of ``path`` at git ``ref`` (``git show REF:PATH``), or None when the file does not exist there.

    Raises:
        typer.Exit: (2) not a git work tree, or ``ref`` is not a commit.
    """
    top = _git(root, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        fail_usage(f"--base {ref}: {root} is not in a git work tree")
    toplevel = Path(top.stdout.decode().strip()).resolve()
    if _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode != 0:
        fail_usage(f"--base {ref}: not a commit in {toplevel}")
    try:
        relative = path.resolve().relative_to(toplevel).as_posix()
    except ValueError:
        fail_usage(f"--base {ref}: {path} is outside the git work tree {toplevel}")
    shown = _git(root, "show", f"{ref}:{relative}")
    if shown.returncode != 0:
        if _git(root, "cat-file", "-e", f"{ref}:{relative}").returncode != 0:
            return None
        fail_usage(f"git show {ref}:{relative}: {shown.stderr.decode().strip()}")
    return shown.stdout

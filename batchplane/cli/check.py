"""``batchplane check``: the policy pack over a stack, offline — the pull-request check.

It does what ``pulumi preview --policy-pack policies`` does, without the CLI, cloud credentials or a
state backend: validate the stack config, run the Pulumi program under the offline engine
(:func:`batchplane.offline.engine.run_program`, as ``batchplane preview``), start the pack in
``<project>/policies`` exactly as the CLI starts it (``python -u -m pulumi.policy``, gRPC analyzer;
:func:`batchplane.policyrun.run_policy_pack`), send every resource to ``Analyze`` and the whole stack
to ``AnalyzeStack``, and print the violations.

``--base GITREF`` (the PR's merge base in the workflow) also runs the program offline on the same stack file at that
ref and hands the result to ``production-node-pool-replacement`` as its ``baseline`` (a ``batchplane preview --json``
document in a temporary file), so a pull request that changes a production node pool's force-new inputs fails
unless the policy config lists the pool in ``allowReplace``. A ``baseline`` the policy config sets itself wins; a
stack file absent at the ref is a new stack (no baseline).

Exit codes: 0 no mandatory violation; 1 a mandatory violation, or an invalid stack config (its
issues are printed); 2 usage or I/O errors (no such stack, unreadable files, a bad policy config,
a program or pack that fails to run).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from batchplane.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    ConfigOption,
    ProjectDirOption,
    StackOption,
    github_annotation,
    project_root,
    read_at_ref,
    resolve_stack_file,
)
from batchplane.cli.root import app
from batchplane.errors import ConfigLoadError, ConfigValidationError
from batchplane.lookups import NOT_CHECKED_PREFIX

if TYPE_CHECKING:
    from batchplane.policyrun import PolicyReport, StartedPolicyPack, Violation

POLICY_PACK_DIR = "policies"
"""The pack's directory inside the project (``pulumi preview --policy-pack policies``)."""

_LEVEL_COMMANDS = {"mandatory": "error", "remediate": "error", "advisory": "warning"}


def policy_message(violation: Violation) -> str:
    """The policy's own message: the diagnostic without its leading ``<description>\\n``."""
    prefix = f"{violation.description}\n" if violation.description else ""
    if prefix and violation.message.startswith(prefix):
        return violation.message[len(prefix) :]
    return violation.message


def resource_label(violation: Violation) -> str:
    """``<type>: <name>`` of the resource a violation is about, or ``stack`` when it names none."""
    if violation.resource_type and violation.resource_name:
        return f"{violation.resource_type}: {violation.resource_name}"
    return violation.urn or "stack"


def github_annotations(
    report: PolicyReport, file: str, where: Mapping[str, tuple[int | None, int | None]] | None = None
) -> list[str]:
    """One GitHub annotation per violation: mandatory → ``error``, advisory → ``warning``; on the line and column of
    the config key the violating resource comes from when ``where`` (URN → position) knows it."""
    out = []
    for v in report.violations:
        level = _LEVEL_COMMANDS.get(v.enforcement_level)
        if level is not None:
            line, col = (where or {}).get(v.urn or "", (None, None))
            message = f"{resource_label(v)}: {policy_message(v)}"
            out.append(github_annotation(level, file, v.policy, message, line=line, col=col))
    return out


def _positions_by_urn(
    path: Path, stack: Any, resources: list[Any]
) -> dict[str, tuple[int | None, int | None]]:
    """URN → (line, column) of the config key each resource was declared from (batchplane/diff/locate.py)."""
    from batchplane.diff.locate import config_key_for
    from batchplane.yamlfile import issue_position, read_positions

    positions = read_positions(path)
    out: dict[str, tuple[int | None, int | None]] = {}
    for r in resources:
        key = config_key_for(stack, r.type, r.inputs)
        if key is not None:
            out[r.urn] = issue_position(positions, key)
    return out


def plain_lines(report: PolicyReport) -> list[str]:
    """``[level] policy (type: name): message`` per violation, as ``pulumi preview`` words them."""
    return [
        f"[{v.enforcement_level}] {v.policy} ({resource_label(v)}): {policy_message(v)}".replace("\n", " ")
        for v in report.violations
    ]


def _print_table(report: PolicyReport) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table("level", "policy", "resource", "message", title="policy violations")
    for v in report.violations:
        table.add_row(v.enforcement_level, v.policy, resource_label(v), policy_message(v))
    Console().print(table)


def _display_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    print(f"batchplane: {message}", file=sys.stderr)
    return typer.Exit(code)


@app.command()
def check(
    stack: StackOption = None,
    config: ConfigOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the policy report as JSON.")] = False,
    policy_config: Annotated[
        Path | None,
        typer.Option("--policy-config", help="Policy config JSON, as for pulumi's --policy-pack-config."),
    ] = None,
    project_dir: ProjectDirOption = None,
    github: Annotated[
        bool,
        typer.Option(
            "--github", help="Also print GitHub Actions annotations (default when GITHUB_ACTIONS=true)."
        ),
    ] = False,
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            help="A git ref (e.g. the PR's merge base): the same stack file there is the baseline of "
            "production-node-pool-replacement.",
        ),
    ] = None,
) -> None:
    """Run the policy pack over a stack offline: exit 1 on a mandatory violation or an invalid config."""
    from batchplane.offline.stackfile import encode_config, read_project
    from batchplane.offline.stackfile import read_stack_file as read_config
    from batchplane.policyrun import PolicyConfigError, PolicyRunError, load_policy_config_file
    from batchplane.stack import load_stack_file

    started = time.monotonic()
    root = (project_dir or project_root()).resolve()
    name, path = resolve_stack_file(stack, config, root)
    shown = _display_path(path)
    annotate = github or (os.environ.get("GITHUB_ACTIONS") == "true" and not json_output)
    try:
        project = read_project(root)
        raw = read_config(path)
        loaded = load_stack_file(path, name)
    except ConfigLoadError as exc:
        raise _fail(str(exc)) from None
    except ConfigValidationError as exc:
        from batchplane.yamlfile import issue_position, read_positions

        positions = read_positions(path) if annotate else {}
        for issue in exc.issues:
            print(str(issue), file=sys.stderr)
            if annotate:
                level = "warning" if issue.severity == "warning" else "error"
                at_line, at_col = issue_position(positions, issue.path)
                print(github_annotation(level, shown, "stack config", str(issue), line=at_line, col=at_col))
        raise typer.Exit(EXIT_FINDINGS) from None
    try:
        given = load_policy_config_file(policy_config) if policy_config is not None else None
    except PolicyConfigError as exc:
        raise _fail(str(exc)) from None

    encoded, _ = encode_config(project.name, {**project.config_defaults, **raw})
    with (
        tempfile.TemporaryDirectory(prefix="batchplane-check-") as scratch,
        _start_pack(
            root / POLICY_PACK_DIR, project.name, name, encoded
        ) as pack,  # boots while the program runs
    ):
        resources = _run_program(root, name, raw)
        if base is not None:
            baseline = write_baseline(root, name, path, base, Path(scratch))
            if baseline is not None:
                given = with_baseline(given, baseline)
        try:
            report = pack.analyze(resources, policy_config=given)
        except PolicyRunError as exc:  # PolicyConfigError included
            raise _fail(str(exc)) from None

    if json_output:
        print(report.to_json())
    else:
        if report.violations and sys.stdout.isatty():
            _print_table(report)
        else:
            for line in plain_lines(report):
                print(line)
        mandatory = sum(v.enforcement_level == "mandatory" for v in report.violations)
        print(
            f"stack {name}: {len(report.violations)} violation(s), {mandatory} mandatory; "
            f"{len(report.policies)} policies of pack {report.pack} {report.pack_version} over "
            f"{len(resources)} resources in {time.monotonic() - started:.1f}s"
        )
    if annotate:
        for line in github_annotations(report, shown, _positions_by_urn(path, loaded, resources)):
            print(line)
    raise typer.Exit(EXIT_FINDINGS if report.has_mandatory else EXIT_OK)


REPLACEMENT_POLICY = "production-node-pool-replacement"
"""The policy that compares node pools with a baseline (policies/batchplane_policies/budget.py)."""


def write_baseline(root: Path, stack: str, path: Path, ref: str, folder: Path) -> Path | None:
    """Run the program offline on ``path`` as it is at git ``ref`` (in the work tree holding ``path``) and write its ``batchplane preview --json``
    document to ``folder``; the file, or None when the stack file does not exist at ``ref`` (a new stack).

    Raises:
        typer.Exit: (2) not a git work tree, ``ref`` is not a commit, or the base does not load or run.
    """
    import json

    from batchplane.offline.engine import run_program
    from batchplane.stack import read_stack_file

    data = read_at_ref(path.resolve().parent, ref, path)  # the stack file's own git work tree
    if data is None:
        return None
    base_file = folder / "base" / path.name
    base_file.parent.mkdir(parents=True, exist_ok=True)
    base_file.write_bytes(data)
    try:
        run = run_program(root, stack, read_stack_file(base_file))
    except (ConfigLoadError, ConfigValidationError) as exc:
        raise _fail(f"--base {ref}: the stack file there does not load: {exc}") from None
    except Exception as exc:  # the program's own failure, whatever it is
        raise _fail(f"--base {ref}: the program failed for the base: {type(exc).__name__}: {exc}") from None
    out = folder / "base-preview.json"
    out.write_text(json.dumps(run.to_json(show_secrets=False)), encoding="utf-8")
    return out.resolve()


RELEASE_POLICY = "operator-release-replacement"
"""The policy that compares operator Helm releases with a baseline (policies/batchplane_policies/releases.py)."""


def with_baseline(given: Mapping[str, Any] | None, baseline: Path) -> dict[str, Any]:
    """``given`` policy config with ``baseline`` set to ``baseline`` for ``production-node-pool-replacement`` and
    ``operator-release-replacement`` unless it sets one itself (a bare enforcement level becomes
    ``{"enforcementLevel": level}``)."""
    config = dict(given or {})
    for name in (REPLACEMENT_POLICY, RELEASE_POLICY):
        entry = config.get(name)
        policy = {"enforcementLevel": entry} if isinstance(entry, str) else dict(entry or {})
        policy.setdefault("baseline", str(baseline))
        config[name] = policy
    return config


def _run_program(root: Path, stack: str, raw: Mapping[str, Any]) -> list[Any]:
    from batchplane.offline.engine import run_program

    try:
        run = run_program(root, stack, raw)
    except ConfigLoadError as exc:
        raise _fail(str(exc)) from None
    except Exception as exc:  # the program's own failure, whatever it is
        raise _fail(f"the program failed for stack {stack}: {type(exc).__name__}: {exc}") from None
    for (
        message
    ) in run.logs:  # a deploy-time check not made offline is said, not passed over (batchplane.lookups)
        if message.message.startswith(NOT_CHECKED_PREFIX):
            print(f"{message.severity}: {message.message}", file=sys.stderr)
    return list(run.resources)


def _start_pack(pack_dir: Path, project: str, stack: str, config: Mapping[str, str]) -> StartedPolicyPack:
    from batchplane.policyrun import PolicyRunError, start_policy_pack

    try:
        return start_policy_pack(pack_dir, project=project, stack=stack, config=config)
    except PolicyRunError as exc:
        raise _fail(str(exc)) from None


__all__ = [
    "REPLACEMENT_POLICY",
    "check",
    "github_annotations",
    "plain_lines",
    "policy_message",
    "resource_label",
    "with_baseline",
    "write_baseline",
]

"""``batchplane new ENV --from TEMPLATE``: a team's environment ``stacks/Pulumi.ENV.yaml`` from a shipped template.

Asks for what the template needs decided (:func:`batchplane.stack.scaffold.settings_for`: project, region, cluster
name, context, pool sizes, GPU quotas) — at prompts when stdin is a terminal (or ``--interactive``), from flags
otherwise (CI: ``--project``, ``--region``, ``--cluster-name``, ``--context``, ``--set KEY=VALUE`` for any key) —
keeps the template's comments, validates the result as ``validate`` does and writes it only when valid, never over
an existing file. Exit codes: 0 written, 1 the result is invalid (every error on stderr, nothing written), 2 usage
(unknown template, bad name, the file exists, a required value missing without a terminal).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from batchplane.cli.common import EXIT_FINDINGS, EXIT_OK, ProjectDirOption, fail_usage, project_root
from batchplane.cli.root import app
from batchplane.errors import ConfigIssue, ConfigLoadError, ConfigValidationError

if TYPE_CHECKING:  # batchplane.stack loads stack loading: imported when the command runs
    from batchplane.stack.scaffold import Scaffold, Setting

#: How many times an interactive run asks again for the values the validation refused.
MAX_ROUNDS = 3


def _problems(scaffold: Scaffold) -> list[ConfigIssue]:
    """The errors of the environment as it would be written (``validate``'s checks, on a temporary copy)."""
    from batchplane.cli.validate import validated

    with tempfile.TemporaryDirectory(prefix="batchplane-new-") as tmp:
        path = Path(tmp) / f"Pulumi.{scaffold.env}.yaml"
        path.write_text(scaffold.text(), encoding="utf-8")
        try:
            validated(path, scaffold.env)
        except ConfigValidationError as exc:
            return exc.errors
        except ConfigLoadError as exc:
            return [ConfigIssue(str(path.name), str(exc))]
    return []


def _ask(setting: Setting, current: Any) -> Any:
    from batchplane.stack.scaffold import parse_value

    if setting.note:
        typer.echo(f"  ({setting.note})")
    shown = None if current is None else str(current).lower() if isinstance(current, bool) else str(current)
    answer = typer.prompt(
        f"{setting.question} [{setting.path}]", default=shown, show_default=shown is not None
    )
    return parse_value(answer) if setting.flag is None else answer.strip()


def _refused(setting: Setting, problems: list[ConfigIssue]) -> bool:
    return any(
        p.path == setting.path or p.path.startswith((f"{setting.path}.", f"{setting.path}["))
        for p in problems
    )


@app.command("new")
def new_command(
    env: Annotated[str, typer.Argument(help="The environment's name: writes stacks/Pulumi.<ENV>.yaml.")],
    template: Annotated[
        str, typer.Option("--from", help="The template to start from: templates/Pulumi.<TEMPLATE>.yaml.")
    ],
    project: Annotated[
        str | None, typer.Option("--project", help="GKE templates: the GCP project (gcp:project).")
    ] = None,
    region: Annotated[
        str | None, typer.Option("--region", help="GKE templates: the region (or zone) of the cluster.")
    ] = None,
    cluster_name: Annotated[
        str | None, typer.Option("--cluster-name", help="GKE and kind templates: target.clusterName.")
    ] = None,
    context: Annotated[
        str | None,
        typer.Option("--context", help="OpenShift and existing-cluster templates: target.context."),
    ] = None,
    settings: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Any config key as a Pulumi config path, KEY=VALUE (repeatable), e.g. "
            "--set 'batchplane:teams.members[0].quotas.h100[\"nvidia.com/gpu\"].nominalQuota=16'.",
        ),
    ] = None,
    interactive: Annotated[
        bool | None,
        typer.Option(
            "--interactive/--no-interactive", help="Prompt for each value. Default: when stdin is a terminal."
        ),
    ] = None,
    project_dir: ProjectDirOption = None,
) -> None:
    """Write a new environment stacks/Pulumi.<ENV>.yaml from a template, asking for what to change."""
    from batchplane.stack.layout import environment_path
    from batchplane.stack.scaffold import Scaffold, ScaffoldError

    root = (project_dir or project_root()).resolve()
    try:
        scaffold = Scaffold.open(root, env, template)
        given = [_parse_set(text) for text in settings or []]
    except ScaffoldError as exc:
        fail_usage(str(exc))
    flags = {"project": project, "region": region, "cluster_name": cluster_name, "context": context}
    asked = {s.flag for s in scaffold.settings if s.flag}
    for flag, value in flags.items():
        if value is not None and flag not in asked:
            fail_usage(f"--{flag.replace('_', '-')} does not apply to template {template}")
    prompt = sys.stdin.isatty() if interactive is None else interactive
    _decide(scaffold, flags, {path for path, _, _, _ in given}, prompt)
    try:
        for _, key, steps, value in given:
            scaffold.set(key, steps, value)
    except ScaffoldError as exc:
        fail_usage(str(exc))
    problems = _validate(scaffold, prompt)
    if problems:
        for issue in problems:
            print(str(issue), file=sys.stderr)
        print(f"batchplane: {environment_path(root, env)} not written", file=sys.stderr)
        raise typer.Exit(EXIT_FINDINGS)
    target = environment_path(root, env)
    target.parent.mkdir(exist_ok=True)
    try:
        with target.open("x", encoding="utf-8") as out:  # never over a file created meanwhile
            out.write(scaffold.text())
    except FileExistsError:
        fail_usage(f"{target} exists: not overwritten")
    shown = target.relative_to(root) if target.is_relative_to(root) else target
    typer.echo(f"wrote {shown} from templates/Pulumi.{template}.yaml ({len(scaffold.changed)} values set)")
    typer.echo("next:")
    typer.echo(f"  .venv/bin/batchplane validate --stack {env}")
    typer.echo(f"  .venv/bin/batchplane graph --stack {env} --output {env}.svg    # what each team gets")
    typer.echo(f"  .venv/bin/batchplane check --stack {env}                       # the policy pack, offline")
    typer.echo(f"  .venv/bin/batchplane preflight --stack {env}                   # with your credentials")
    typer.echo(f"  pulumi stack init {env} && pulumi up --stack {env}")
    typer.echo("  make test    # validates, checks and previews every environment in stacks/")
    raise typer.Exit(EXIT_OK)


def _decide(scaffold: Scaffold, flags: dict[str, str | None], set_paths: set[str], prompt: bool) -> None:
    """Each setting from its flag, else a prompt, else its default; exits 2 naming the flags of required values
    that no flag gives when there is no prompt. Paths ``--set`` gives are left to it."""
    missing: list[Setting] = []
    if prompt:
        typer.echo(
            f"New environment {scaffold.env} from template {scaffold.template}: Enter keeps the value in brackets."
        )
    for setting in scaffold.settings:
        if setting.path in set_paths:
            continue
        flag_value = flags.get(setting.flag) if setting.flag else None
        if flag_value is not None:
            scaffold.apply(setting, flag_value)
        elif prompt:
            scaffold.apply(setting, _ask(setting, setting.default))
        elif setting.default is None:
            missing.append(setting)
        elif setting.default != scaffold.current(setting):
            scaffold.apply(setting, setting.default)  # a default that is not the template's (cluster names)
    if missing:
        fail_usage(
            "no terminal to ask at: give "
            + ", ".join(f"--{s.flag.replace('_', '-')}" if s.flag else f"--set '{s.path}=…'" for s in missing)
        )


def _validate(scaffold: Scaffold, prompt: bool) -> list[ConfigIssue]:
    """The environment's errors; at a prompt, the values refused are asked again (at most :data:`MAX_ROUNDS`)."""
    problems = _problems(scaffold)
    for _ in range(MAX_ROUNDS if prompt else 0):
        refused = [s for s in scaffold.settings if _refused(s, problems)]
        if not problems or not refused:
            break
        for issue in problems:
            typer.echo(str(issue), err=True)
        for setting in refused:
            scaffold.apply(setting, _ask(setting, scaffold.current(setting)))
        problems = _problems(scaffold)
    return problems


def _parse_set(text: str) -> tuple[str, str, tuple[str | int, ...], Any]:
    """``KEY=VALUE`` of ``--set`` → (path as given, key, steps, value)."""
    from batchplane.stack.scaffold import ScaffoldError, format_path, parse_path, parse_value

    path, sep, value = text.partition("=")
    if not sep:
        raise ScaffoldError(f"--set {text!r}: give KEY=VALUE")
    key, steps = parse_path(path.strip())
    return format_path(key, steps), key, steps, parse_value(value)

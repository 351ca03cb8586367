"""``batchplane preflight``: what will fail before anything is created, checked with the user's credentials."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from batchplane.cli.common import (
    EXIT_OK,
    ConfigOption,
    StackOption,
    config_errors_exit,
    fail_usage,
    project_root,
    resolve_stack_file,
)
from batchplane.cli.root import app

if TYPE_CHECKING:
    from batchplane.preflight.model import Environment


def environment(project: str | None) -> Environment:
    """How the command reaches the world: Application Default Credentials, the network, the kubeconfig."""
    from batchplane.preflight.model import Environment

    return Environment(gcp_project=project)


@app.command("preflight")
def preflight_command(
    stack: StackOption = None,
    config: ConfigOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    project: Annotated[
        str | None,
        typer.Option("--project", help="GCP project when neither target.project nor gcp:project is set."),
    ] = None,
    requirements: Annotated[
        bool,
        typer.Option(
            "--requirements",
            help="Print what the stack needs (Markdown, no API calls); without --stack, every template in "
            "templates/ (docs/requirements.md).",
        ),
    ] = False,
) -> None:
    """Check APIs, quotas, org policies, zones, versions, images, OLM catalogs and kind before `pulumi up`.

    Exit 0 when nothing blocks (warnings allowed), 1 with a blocker, 2 on usage, I/O or missing credentials.
    """
    from batchplane.preflight.docs import requirements_markdown, stack_section
    from batchplane.preflight.requirements import stack_requirements
    from batchplane.stack import load_stack_file
    from batchplane.stack.layout import template_names, template_path

    if requirements and stack is None and config is None:
        root = project_root()
        loaded = []
        with config_errors_exit():
            for name in template_names(root):
                loaded.append(stack_requirements(load_stack_file(template_path(root, name), name)))
        typer.echo(requirements_markdown(loaded), nl=False)
        raise typer.Exit(EXIT_OK)
    name, path = resolve_stack_file(stack, config)
    with config_errors_exit():
        loaded_stack = load_stack_file(path, name)
    if requirements:
        typer.echo(stack_section(stack_requirements(loaded_stack)), nl=False)
        raise typer.Exit(EXIT_OK)
    from batchplane.preflight.report import CredentialsMissing
    from batchplane.preflight.run import preflight

    try:
        report = preflight(loaded_stack, environment(project))
    except CredentialsMissing as exc:
        fail_usage(str(exc))
    print(report.to_json() if json_output else report.text(), file=sys.stdout)
    raise typer.Exit(report.exit_code)

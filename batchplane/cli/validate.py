"""``batchplane validate``: validate a stack config; every error on its own line with its key path."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from batchplane.cli.common import (
    EXIT_OK,
    ConfigOption,
    StackOption,
    config_errors_exit,
    resolve_stack_file,
)
from batchplane.cli.root import app
from batchplane.errors import ConfigValidationError

if TYPE_CHECKING:  # batchplane.stack loads stack loading: imported when the command runs
    from batchplane.stack import Stack


def validated(path: Path, name: str) -> Stack:
    """What ``validate`` checks: the stack file loaded with every rule, then what its deployment would refuse.

    Raises:
        ConfigLoadError: the file cannot be read or is not YAML.
        ConfigValidationError: every error (with the warnings found alongside).
    """
    from batchplane.components.quota_webhook.manifests import deployment_problems
    from batchplane.stack import load_stack_file

    loaded = load_stack_file(path, name)
    problems = deployment_problems(loaded)
    if problems:
        raise ConfigValidationError(loaded.warnings + problems)
    return loaded


@app.command()
def validate(stack: StackOption = None, config: ConfigOption = None) -> None:
    """Validate a stack config: exit 0 when valid, 1 with every error (stderr, one per line), 2 on I/O errors."""
    name, path = resolve_stack_file(stack, config)
    with config_errors_exit():
        loaded = validated(path, name)
    for warning in loaded.warnings:
        print(str(warning), file=sys.stderr)
    k = loaded.kueue
    print(
        f"stack {name}: valid ({len(k.cluster_queues)} ClusterQueues, {len(k.local_queues)} LocalQueues, "
        f"{len(k.resource_flavors)} ResourceFlavors, {len(k.admission_checks)} AdmissionChecks)"
    )
    raise typer.Exit(EXIT_OK)

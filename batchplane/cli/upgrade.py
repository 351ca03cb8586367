"""``batchplane upgrade plan --stack ENV [--context CTX] [--from kueue=0.13.1]``: the ordered operator upgrade
steps from what the cluster runs to the stack's pinned versions (docs/upgrading.md).

With ``--from`` it plans offline from the stated versions; otherwise it reads the cluster (GETs only) through the
kubeconfig context (``--context``, default the stack target's context). Exit codes: 0 a plan that may run, 1 the
upgrade is refused (a removed API version still stored, a downgrade; the step to run is printed), 2 usage, I/O or
an unreachable cluster.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from batchplane.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    ConfigOption,
    StackOption,
    config_errors_exit,
    fail_usage,
)
from batchplane.cli.root import app

upgrade_app = typer.Typer(
    name="upgrade",
    help="Operator upgrades: the steps from what a cluster runs to the stack's pinned versions.",
    no_args_is_help=True,
)


@upgrade_app.command("plan")
def plan_command(
    stack: StackOption = None,
    config: ConfigOption = None,
    context: Annotated[
        str | None,
        typer.Option("--context", help="kubeconfig context to read. Defaults to the stack target's context."),
    ] = None,
    from_versions: Annotated[
        list[str] | None,
        typer.Option(
            "--from",
            help="Plan offline from OPERATOR=VERSION (kueue=0.13.1, kuberay=1.6.0); repeatable. No cluster read.",
        ),
    ] = None,
) -> None:
    """Print the ordered upgrade steps (what each does to stored objects, what users notice, who does it)."""
    from batchplane.cli.common import resolve_stack_file
    from batchplane.stack import load_stack_file
    from batchplane.upgrade.cluster import ClusterReadError, ClusterState, read_cluster
    from batchplane.upgrade.plan import plan
    from batchplane.upgrade.steps import parse_version

    name, path = resolve_stack_file(stack, config)
    with config_errors_exit():
        loaded = load_stack_file(path, name)
    ops = loaded.config.operators
    if ops is None:
        fail_usage(f"stack {name} installs no operators (batchplane:operators): nothing to upgrade")
    if from_versions:
        stated = {}
        for item in from_versions:
            operator, sep, version = item.partition("=")
            if not sep or operator not in ("kueue", "kuberay"):
                fail_usage(f'--from "{item}": expected kueue=VERSION or kuberay=VERSION')
            try:
                stated[operator] = parse_version(version)
            except ValueError as exc:
                fail_usage(f"--from {item}: {exc}")
        result = plan(loaded, ClusterState(versions=stated), crds_read=False)
    else:
        from kubernetes import config as kube_config
        from kubernetes.config.config_exception import ConfigException

        kube_context = context or loaded.config.target.kube_context()
        try:
            api_client = kube_config.new_client_from_config(  # type: ignore[no-untyped-call]
                config_file=os.environ.get("KUBECONFIG") or None, context=kube_context
            )
        except (ConfigException, OSError) as exc:
            fail_usage(f"kubeconfig context {kube_context}: {exc}")
        try:
            state = read_cluster(
                api_client, ops.kueue.namespace, ops.kuberay.namespace if ops.kuberay.enabled else None
            )
        except ClusterReadError as exc:
            fail_usage(f"reading the cluster of context {kube_context}: {exc}")
        result = plan(loaded, state, crds_read=True)
    typer.echo(result.text(), nl=False)
    raise typer.Exit(EXIT_FINDINGS if result.refusals else EXIT_OK)


app.add_typer(upgrade_app, name="upgrade")

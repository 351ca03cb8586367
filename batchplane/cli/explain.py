"""``batchplane explain``: why a workload runs, waits or never runs, in words, with the stack line that decides it.

Offline: ``batchplane explain --stack ENV MANIFEST.yaml [--json] [-n NS]`` judges every workload of the file against
the stack (:mod:`batchplane.explain.offline`: the webhook's own decisions, then Kueue's flavor assigner on an empty
cluster). Exit codes: 0 every workload can run, 1 some workload never runs, 2 usage, I/O or an invalid manifest
(an invalid stack config: 1, every error listed, as for every subcommand).

Live: ``batchplane explain --context CTX [-n NS] NAME [--json]`` reads the cluster, read-only
(:mod:`batchplane.explain.live`). Exit codes: 0 admitted / waiting, 1 never fits, misconfigured queue or not managed
by Kueue, 2 usage, no access, no Kueue, an unsupported Kueue version.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from batchplane.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    STDIN,
    ConfigOption,
    StackOption,
    config_errors_exit,
    fail_usage,
    read_manifest,
    resolve_stack_file,
)
from batchplane.cli.root import app


def _shown(path: Path) -> Path:
    """``path`` relative to the working directory when it lies under it (messages name ``stacks/…:12``)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path


@app.command("explain")
def explain_command(
    target: Annotated[
        str,
        typer.Argument(
            metavar="MANIFEST|NAME",
            help="Offline: a YAML manifest of jobs (- reads standard input). Live: the job or Workload.",
        ),
    ],
    stack: StackOption = None,
    config: ConfigOption = None,
    context: Annotated[
        str | None,
        typer.Option(
            "--context", help="Live: the kubeconfig context to read (read-only) instead of a stack."
        ),
    ] = None,
    kubeconfig: Annotated[
        Path | None,
        typer.Option("--kubeconfig", help="Live: the kubeconfig. Defaults to $KUBECONFIG, ~/.kube/config."),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", help="Namespace (offline: of documents that name none)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    with_objects: Annotated[
        list[Path] | None,
        typer.Option(
            "--with", help="Offline: YAML with (Cluster)TrainingRuntimes for TrainJobs (repeatable)."
        ),
    ] = None,
) -> None:
    """Why a workload runs, waits or never runs: offline against a stack (MANIFEST), or live on a cluster (NAME)."""
    if context is not None:
        if stack is not None or config is not None:
            fail_usage("give --context (live) or --stack/--config (offline), not both")
        _live(context, kubeconfig, namespace, target, as_json)
    from batchplane.explain.offline import OfflineExplainer, explain_documents, render_text
    from batchplane.stack import load_stack_file

    manifest = "<stdin>" if target == STDIN else target
    name, path = resolve_stack_file(stack, config)
    with config_errors_exit():
        loaded = load_stack_file(path, name)
    documents = read_manifest(target)
    for extra in with_objects or []:  # their runtimes join the manifest's own (explain_documents reads them)
        documents += [d for d in read_manifest(extra) if _is_runtime(d)]
    explanations = explain_documents(OfflineExplainer(loaded, _shown(path)), documents, namespace)
    if not explanations:
        fail_usage(
            f"{manifest} holds no workload Kueue manages (Job, RayJob, RayCluster, PyTorchJob, JobSet, …)"
        )
    if as_json:
        sys.stdout.write(json.dumps([e.to_json() for e in explanations], indent=2) + "\n")
    else:
        sys.stdout.write(render_text(explanations))
    raise typer.Exit(EXIT_FINDINGS if any(e.verdict == "never-runs" for e in explanations) else EXIT_OK)


def _is_runtime(document: object) -> bool:
    return isinstance(document, dict) and document.get("kind") in (
        "TrainingRuntime",
        "ClusterTrainingRuntime",
    )


def _live(context: str, kubeconfig: Path | None, namespace: str | None, name: str, as_json: bool) -> NoReturn:
    from kubernetes import config as kube_config
    from kubernetes.config.config_exception import ConfigException

    from batchplane.explain.live import LiveError, LiveExplainer

    # $KUBECONFIG read now (the client reads it once, at import), as batchplane preflight does.
    config_file = str(kubeconfig) if kubeconfig is not None else os.environ.get("KUBECONFIG") or None
    try:
        api = kube_config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=config_file, context=context
        )
        if namespace is None:  # the context's own namespace, as kubectl takes it
            contexts, _ = kube_config.list_kube_config_contexts(config_file=config_file)  # type: ignore[no-untyped-call]
            chosen: dict[str, Any] = next((c for c in contexts if c.get("name") == context), {})
            namespace = str((chosen.get("context") or {}).get("namespace") or "default")
    except (ConfigException, OSError) as exc:
        fail_usage(f"cannot use kubeconfig context {context}: {exc}")
    assert namespace is not None
    try:
        explanation = LiveExplainer(api).explain(namespace, name)
    except LiveError as exc:
        fail_usage(str(exc))
    finally:
        api.close()
    if as_json:
        sys.stdout.write(json.dumps(explanation.to_json(), indent=2) + "\n")
    else:
        lines = [f"{namespace}/{name}: {explanation.sentence}"]
        if explanation.workload:
            lines.append(
                f"  Workload {explanation.workload} · LocalQueue {explanation.local_queue} · "
                f"ClusterQueue {explanation.cluster_queue}"
            )
        if explanation.kueue_reason:
            lines.append(f"  Kueue: {explanation.kueue_reason}")
        lines += [f"  {d}" for d in explanation.details]
        sys.stdout.write("\n".join(lines) + "\n")
    blocked = explanation.verdict in ("never-fits", "queue-misconfigured", "not-managed")
    raise typer.Exit(EXIT_FINDINGS if blocked else EXIT_OK)

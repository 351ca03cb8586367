"""``batchplane requests``: print the Kueue resource requests of the workloads in a manifest.

Each workload document gets a JSON report (:func:`batchplane.accounting.report_json` plus its
``kind`` and ``name``); documents Kueue never manages (ConfigMaps, Secrets, queues ...) are skipped.
A single-document manifest prints one object; a multi-document manifest prints a list.
Exit codes: 0 ok, 1 when any document could not be accounted (reported on stderr by document
number, kind, name and field), 2 for usage or I/O errors.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from batchplane.cli.common import EXIT_FINDINGS, EXIT_OK, fail_usage, read_manifest
from batchplane.cli.root import app

if TYPE_CHECKING:
    from batchplane.accounting import ResourceOptions

#: Kinds ``--with`` accepts: cluster objects that change a workload's requests.
WITH_KINDS = ("LimitRange", "RuntimeClass", "TrainingRuntime", "ClusterTrainingRuntime")


@app.command("requests")
def requests_command(
    manifest: Annotated[
        Path, typer.Argument(help="YAML manifest with one or more job documents (- reads standard input).")
    ],
    with_objects: Annotated[
        list[Path] | None,
        typer.Option(
            "--with",
            help="YAML with LimitRange, RuntimeClass and (Cluster)TrainingRuntime objects (repeatable).",
        ),
    ] = None,
    resource_options: Annotated[
        Path | None,
        typer.Option(
            "--resource-options",
            help="YAML of the Kueue Configuration resources: section"
            " (excludeResourcePrefixes, transformations). Defaults to none.",
        ),
    ] = None,
) -> None:
    """Print the resource requests Kueue v0.19.2 computes for each workload in MANIFEST, as JSON."""
    from batchplane.accounting import AccountingError, is_known_non_workload, report_json, workload_requests
    from batchplane.accounting.pod_groups import as_kueue_builds
    from batchplane.appwrapper import is_mcad_appwrapper

    # pod groups as one Workload; runtimes of the same file
    documents = as_kueue_builds(read_manifest(manifest))
    limit_ranges, runtime_classes, runtimes = _load_with(with_objects or [])
    options = _load_options(resource_options)

    reports: list[dict[str, Any]] = []
    failed = False
    for index, document in enumerate(documents, start=1):
        if document is None:
            continue
        if isinstance(document, Mapping) and is_known_non_workload(document):
            continue
        try:
            if not isinstance(document, Mapping):
                raise AccountingError("", "<unnamed>", "", "is not a Kubernetes object (expected a mapping)")
            workload = workload_requests(
                document,
                limit_ranges=limit_ranges,
                runtime_classes=runtime_classes,
                options=options,
                training_runtimes=runtimes,
            )
        except AccountingError as exc:
            hint = (
                " — an MCAD AppWrapper: convert it with `batchplane appwrapper convert`"
                if is_mcad_appwrapper(document)
                else ""
            )
            print(f"batchplane: document {index}: {exc}{hint}", file=sys.stderr)
            failed = True
            continue
        reports.append({"kind": workload.kind, "name": workload.name, **report_json(workload)})

    non_empty = [d for d in documents if d is not None]
    if len(non_empty) == 1:
        if reports:
            print(json.dumps(reports[0], indent=2))
    else:
        print(json.dumps(reports, indent=2))
    raise typer.Exit(EXIT_FINDINGS if failed else EXIT_OK)


def _load_with(
    paths: list[Path],
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    limit_ranges: list[Mapping[str, Any]] = []
    runtime_classes: list[Mapping[str, Any]] = []
    runtimes: list[Mapping[str, Any]] = []
    for path in paths:
        for index, document in enumerate(read_manifest(path), start=1):
            if document is None:
                continue
            kind = document.get("kind") if isinstance(document, Mapping) else None
            if kind not in WITH_KINDS:
                fail_usage(f"--with {path}: document {index} is {kind or 'not an object'}; expected one of "
                           f"{', '.join(WITH_KINDS)}")  # fmt: skip
            assert isinstance(document, Mapping)
            if kind == "LimitRange":
                limit_ranges.append(document)
            elif kind == "RuntimeClass":
                runtime_classes.append(document)
            else:
                runtimes.append(document)
    return limit_ranges, runtime_classes, runtimes


def _load_options(path: Path | None) -> ResourceOptions:
    from batchplane.accounting import AccountingError, ResourceOptions, resource_options_from_mapping

    if path is None:
        return ResourceOptions()
    documents = [d for d in read_manifest(path) if d is not None]
    if len(documents) > 1:
        fail_usage(f"--resource-options {path}: expected one YAML document, found {len(documents)}")
    section = documents[0] if documents else None
    if isinstance(section, Mapping) and isinstance(section.get("resources"), Mapping):
        section = section["resources"]  # a whole `resources:` block was given
    try:
        return resource_options_from_mapping(section)
    except AccountingError as exc:
        fail_usage(f"--resource-options {path}: {exc}")

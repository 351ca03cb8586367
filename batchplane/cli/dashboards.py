"""``batchplane dashboards``: the stack's dashboards as files, for import into any Grafana (docs/dashboards.md).

Writes one file per dashboard (overview, one per ClusterQueue, capacity, webhook) into ``--output DIR``:

* ``grafana`` (default) — ``<key>.json``, Grafana's dashboard JSON model (Dashboards → New → Import, or the HTTP
  API's ``POST /api/dashboards/db`` wrapped as ``{"dashboard": …}``);
* ``configmap`` — ``<key>.yaml``, the ConfigMap the Grafana sidecar loads (``kubectl apply -f``);
* ``grafana-operator`` — ``<key>.yaml``, a ``GrafanaDashboard`` for the Grafana Operator;
* ``cloud-monitoring`` — ``<key>.json``, a Cloud Monitoring dashboard
  (``gcloud monitoring dashboards create --config-from-file``).

Written whether or not ``dashboards.enabled`` is set; the ConfigMap/CR namespace, folder and Grafana selector come
from the stack's ``dashboards`` settings. Existing files of the same names are replaced; nothing else in the
directory is touched.

Exit codes: 0 written, 1 invalid stack config (every error on stderr), 2 usage or I/O errors.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from batchplane.cli.common import (
    EXIT_OK,
    ConfigOption,
    StackOption,
    config_errors_exit,
    fail_usage,
    resolve_stack_file,
)
from batchplane.cli.root import app

if TYPE_CHECKING:
    from batchplane.stack import Stack


class DashboardFormat(StrEnum):
    """Output formats of ``batchplane dashboards``."""

    grafana = "grafana"
    configmap = "configmap"
    grafana_operator = "grafana-operator"
    cloud_monitoring = "cloud-monitoring"


def dashboard_files(stack: Stack, fmt: DashboardFormat) -> dict[str, str]:
    """File name → content of every dashboard of ``stack`` in ``fmt`` (:class:`DashboardFormat`)."""
    import yaml

    # The Grafana foundation SDK costs ~0.3 s to import: loaded when dashboards are written, not at start-up.
    from batchplane.observability.dashboards import (
        cloud_monitoring_dashboard,
        dashboard_configmap,
        dashboard_specs,
        dashboards_namespace,
        grafana_dashboard_resource,
        grafana_json,
    )
    from batchplane.stack.observability import dashboards_config

    config = dashboards_config(stack)
    if fmt is DashboardFormat.cloud_monitoring:
        return {
            f"{spec.key}.json": json.dumps(
                cloud_monitoring_dashboard(spec, config.folder), indent=2, sort_keys=True
            )
            + "\n"
            for spec in dashboard_specs(stack, "cloud-monitoring")
        }
    specs = dashboard_specs(stack)
    if fmt is DashboardFormat.grafana:
        return {f"{spec.key}.json": grafana_json(spec) for spec in specs}
    namespace = dashboards_namespace(stack, config)
    objects: dict[str, dict[str, Any]] = {}
    for spec in specs:
        if fmt is DashboardFormat.configmap:
            objects[spec.key] = dashboard_configmap(spec, namespace, config.folder)
        else:
            objects[spec.key] = grafana_dashboard_resource(
                spec, namespace, config.folder, config.grafana_selector
            )
    return {f"{key}.yaml": yaml.safe_dump(obj, sort_keys=False) for key, obj in objects.items()}


@app.command()
def dashboards(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Directory to write the files into (created).")
    ],
    stack: StackOption = None,
    config: ConfigOption = None,
    fmt: Annotated[
        DashboardFormat,
        typer.Option("--format", "-f", help="grafana | configmap | grafana-operator | cloud-monitoring."),
    ] = DashboardFormat.grafana,
) -> None:
    """Write the stack's dashboards (overview, one per ClusterQueue, capacity, webhook) as files, one per
    dashboard: Grafana JSON to import, ConfigMaps, GrafanaDashboard CRs or Cloud Monitoring dashboards."""
    from batchplane.stack import load_stack_file

    name, path = resolve_stack_file(stack, config)
    with config_errors_exit():
        files = dashboard_files(load_stack_file(path, name), fmt)
    if output.exists() and not output.is_dir():
        fail_usage(f"--output {output} is not a directory")
    try:
        output.mkdir(parents=True, exist_ok=True)
        for file_name, text in files.items():
            (output / file_name).write_text(text, encoding="utf-8")
    except OSError as exc:
        fail_usage(f"cannot write {output}: {exc.strerror or exc}")
    print(
        f"batchplane: wrote {len(files)} dashboards ({fmt.value}, stack {name}) to {output}", file=sys.stderr
    )
    raise typer.Exit(EXIT_OK)

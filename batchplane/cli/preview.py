"""``batchplane preview``: run the Pulumi program offline and show what it would create.

Runs the project's real ``__main__.py`` under the mock engine (:mod:`batchplane.offline`) as
``pulumi preview`` would, with the stack's config, and prints a tree of resources (parent →
children) with a few key properties each, then a one-line summary. ``--json`` prints
``{"resources": [...], "outputs": {...}}`` instead (per resource: ``type``, ``name``, ``urn``,
``parent``, ``dependencies``, ``propertyDependencies``, ``provider``, ``inputs``; secrets masked
as ``[secret]`` unless ``--show-secrets``).

Exit codes: 0 ok; 1 the config is invalid (every issue on its own line, stderr) or the program
raised another Batchplane error; 2 usage or I/O errors (bad options, unreadable stack file).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from batchplane.cli.common import (
    EXIT_FINDINGS,
    ConfigOption,
    StackOption,
    config_errors_exit,
    project_root,
    resolve_stack_file,
)
from batchplane.cli.root import app
from batchplane.errors import BatchplaneError

if TYPE_CHECKING:  # the offline engine loads Pulumi: imported when a command runs the program
    from rich.tree import Tree

    from batchplane.offline.model import ProgramRun, RecordedResource

OptionalProjectDir = Annotated[
    Path | None,
    typer.Option(
        "--project-dir", help="The Pulumi project directory (holds Pulumi.yaml); default: found from cwd."
    ),
]

_HELM_TYPES = frozenset(
    {"kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart", "kubernetes:helm.sh/v3:Chart"}
)
#: Nested scalar inputs worth showing wherever they appear (GKE node pools and clusters).
_NESTED_KEYS = ("machineType", "location", "locationPolicy", "channel", "enabled", "flexStart", "spot")
_MAX_PROPS = 5
_MAX_VALUE = 48


def run_stack(
    stack: str | None, config: Path | None, project_dir: Path | None, *, preview: bool
) -> tuple[str, ProgramRun]:
    """Resolve ``--stack``/``--config``, load the stack file and run the program offline.

    Exits 2 on usage and I/O errors, 1 with every issue (stderr, one per line) on an invalid
    config or on any other :class:`~batchplane.errors.BatchplaneError` the program raises.
    Program log messages (info and above) go to stderr.
    """
    from batchplane.offline.engine import run_program
    from batchplane.offline.stackfile import read_stack_file

    root = (project_dir or project_root()).resolve()
    name, path = resolve_stack_file(stack, config, root)
    try:
        with config_errors_exit():
            run = run_program(root, name, read_stack_file(path), preview=preview)
    except BatchplaneError as exc:
        print(f"batchplane: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_FINDINGS) from None
    for message in run.logs:
        prefix = "" if message.message.startswith(f"{message.severity}:") else f"{message.severity}: "
        print(prefix + message.message, file=sys.stderr)
    return name, run


def _show(value: Any) -> str | None:
    from batchplane.offline.model import UNKNOWN

    if value == UNKNOWN:
        return "(unknown)"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str | int | float):
        text = str(value)
        if "\n" in text:
            return None
        return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"
    return None


def key_properties(resource: RecordedResource) -> list[str]:
    """A few properties that identify a resource at a glance (secrets masked).

    Kubernetes objects: ``Kind namespace/name``; Helm: ``chart@version`` (and namespace);
    anything else: GKE-style accelerators and autoscaling limits, well-known nested scalars
    (``machineType``, ...) and then top-level scalar inputs (not Pulumi-internal ``__*`` ones, such
    as a dynamic provider's pickled ``__provider``), at most five in all.
    """
    from batchplane.offline.model import mask_secrets

    inputs = mask_secrets(resource.inputs, resource.secret_paths)
    kind = inputs.get("kind")
    if (
        resource.type.startswith("kubernetes:")
        and isinstance(kind, str)
        and isinstance(inputs.get("metadata"), dict)
    ):
        metadata = inputs["metadata"]
        name = _show(metadata.get("name")) or resource.name
        namespace = _show(metadata.get("namespace"))
        return [f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"]
    if resource.type in _HELM_TYPES:
        chart = f"{inputs.get('chart', '?')}@{inputs.get('version', 'latest')}"
        namespace = _show(inputs.get("namespace"))
        return [chart, *([f"namespace={namespace}"] if namespace else [])]
    props: list[str] = []
    for key in sorted(inputs):
        value = inputs[key]
        if isinstance(value, dict):
            props += _nested_properties(key, value)
    for key in sorted(inputs):
        shown = None if key.startswith("__") else _show(inputs[key])
        if shown is not None and len(props) < _MAX_PROPS:
            props.append(f"{key}={shown}")
    return props[:_MAX_PROPS]


def _nested_properties(parent: str, value: dict[str, Any]) -> list[str]:
    props: list[str] = []
    accelerators = value.get("guestAccelerators")
    if isinstance(accelerators, list):
        props += [
            f"accelerators={a.get('count', 1)}×{a.get('type', '?')}"
            for a in accelerators
            if isinstance(a, dict)
        ]
    low = value.get("totalMinNodeCount", value.get("minNodeCount"))
    high = value.get("totalMaxNodeCount", value.get("maxNodeCount"))
    if low is not None or high is not None:
        props.append(f"{parent}={low if low is not None else '?'}..{high if high is not None else '?'}")
    for key in _NESTED_KEYS:
        shown = _show(value.get(key))
        if shown is not None:
            props.append(f"{key}={shown}" if key != "enabled" else f"{parent}.enabled={shown}")
    return props


def resource_tree(stack_label: str, run: ProgramRun) -> Tree:
    """A rich tree: the stack at the root, children under their parents, declaration order."""
    from rich.text import Text
    from rich.tree import Tree

    tree = Tree(Text(stack_label, style="bold"))
    nodes: dict[str, Tree] = {}
    for resource in run.resources:
        label = Text.assemble((resource.type, "cyan"), " ", (resource.name, "bold"))
        props = key_properties(resource)
        if props:
            label.append("  " + "  ".join(props), style="dim")
        parent = nodes.get(resource.parent or "", tree)
        nodes[resource.urn] = parent.add(label)
    return tree


def summary_line(run: ProgramRun) -> str:
    """``N resources: 3 kubernetes:core/v1:Namespace, 1 ...`` (most frequent type first)."""
    counts = Counter(r.type for r in run.resources)
    parts = [f"{n} {t}" for t, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    line = f"{len(run.resources)} resources" + (": " + ", ".join(parts) if parts else "")
    unknown = len(run.with_unknowns())
    if unknown:
        line += f" ({unknown} with inputs unknown until deployment)"
    return line


@app.command()
def preview(
    stack: StackOption = None,
    config: ConfigOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print resources and outputs as JSON.")] = False,
    show_secrets: Annotated[
        bool, typer.Option("--show-secrets", help="Print secret values in JSON.")
    ] = False,
    project_dir: OptionalProjectDir = None,
) -> None:
    """Run the Pulumi program offline (mock engine) and print the resources it would create."""
    from rich.console import Console

    name, run = run_stack(stack, config, project_dir, preview=True)
    if as_json:
        print(json.dumps(run.to_json(show_secrets=show_secrets), indent=2))
        return
    # Not a terminal (pipes, tests): never crop tree lines to the 80-column default.
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 100_000)
    stack_name = run.stack_urn.rsplit("::", 1)[-1] if run.stack_urn else name
    console.print(resource_tree(f"pulumi:pulumi:Stack {stack_name}", run))
    console.print(summary_line(run))

"""URN snapshots of every template: what a deployed stack holds, so a refactor that renames, re-parents or
re-types a resource without an alias (a replacement on `pulumi up`) fails a test.

A snapshot maps each resource's *identity* — the URN a stack deployed from an earlier layout knows it by: the
resource's own URN, or the one alias URN of it that the snapshot holds — to its type, parent, provider and
dependencies (as identities too): ``golden/<template>.json``. Each resource's inputs (secrets masked, as the
preview renders them) sit beside it, keyed by the same identity, as readable YAML: ``golden/<template>.inputs.yaml``
(keys sorted; multi-line text as YAML block text; a JSON document inside a string, e.g. a dashboard, indented), so
a change of one input shows in the PR as a diff of that object, not a changed hash. Regenerate after a deliberate
change with :data:`REGENERATE` and review the diff like code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

GOLDEN = Path(__file__).parent / "golden"
TEMPLATES = (
    "gke-a3-mega-tas",
    "gke-dev",
    "gke-dws",
    "gke-multiregion-dws",
    "gke-prod-dws",
    "kind",
    "openshift-ai",
    "openshift-ai-2",
    "openshift-ai-gpu",
)
#: Templates whose snapshot was taken from the program before BatchCluster existed (492c26c).
BEFORE_BATCH_CLUSTER = ("gke-dev", "gke-dws", "gke-prod-dws", "kind", "openshift-ai", "openshift-ai-gpu")


#: The command that rewrites the goldens from the current program (review its diff like code).
REGENERATE = ".venv/bin/python -m tests.program.urn_snapshot"

#: The project directory: the webhook image build's context and Dockerfile locations are absolute paths under it,
#: which differ from checkout to checkout, so the snapshot reads it as ``<project dir>``.
PROJECT_DIR = str(Path(__file__).resolve().parents[2])


def readable(value: Any) -> Any:
    """``value`` as the inputs golden stores it: the project directory as ``<project dir>``, and a string holding a
    JSON object or array re-indented (one key per line: a dashboard's change shows as the lines that changed)."""
    if isinstance(value, dict):
        return {k: readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [readable(v) for v in value]
    if isinstance(value, str):
        value = value.replace(PROJECT_DIR, "<project dir>")
        if value[:1] in "{[" and "\n" not in value:
            try:
                parsed = json.loads(value)
            except ValueError:
                return value
            if isinstance(parsed, dict | list):
                return json.dumps(parsed, indent=1, ensure_ascii=False) + "\n"
    return value


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as ``|`` blocks, so a changed line of an embedded manifest or dashboard diffs alone."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and not any(line != line.rstrip() for line in value.splitlines()) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def inputs_yaml(inputs: dict[str, Any]) -> str:
    """The YAML text of identity → inputs (keys sorted at every level: stable whatever order the program builds)."""
    return yaml.dump(inputs, Dumper=_Dumper, sort_keys=True, allow_unicode=True, width=120)


def load_inputs(text: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.load(text, Loader=yaml.CSafeLoader) if text.strip() else {}
    return data


def engine_urns(resources: list[dict[str, Any]]) -> dict[str, str]:
    """Mock URN → the URN the Pulumi engine gives the resource (parent types ``$``-joined, the stack
    omitted), computed from the parent links; documents from before ``engineUrn`` existed have none."""
    by_urn = {r["urn"]: r for r in resources}
    chains: dict[str, str] = {}

    def chain(urn: str) -> str:
        if urn not in chains:
            r = by_urn[urn]
            parent = r["parent"]
            chains[urn] = f"{chain(parent)}${r['type']}" if parent in by_urn else r["type"]
        return chains[urn]

    return {urn: "::".join([*urn.split("::", 2)[:2], chain(urn), by_urn[urn]["name"]]) for urn in by_urn}


def identities(resources: list[dict[str, Any]], known: set[str] | None = None) -> dict[str, str]:
    """Mock URN → identity: the alias of it that ``known`` holds (at most one may), else its engine URN."""
    engine = engine_urns(resources)
    out: dict[str, str] = {}
    for r in resources:
        matches = [a for a in r.get("aliases", []) if known is not None and a in known]
        if len(matches) > 1:
            raise AssertionError(f"{r['urn']}: several aliases are known URNs: {matches}")
        out[r["urn"]] = matches[0] if matches else engine[r["urn"]]
    return out


def snapshot(
    preview: dict[str, Any], known: set[str] | None = None, *, inputs: dict[str, Any] | None = None
) -> dict[str, dict[str, Any]]:
    """The snapshot of a ``batchplane preview --json`` document, keyed by identity (see the module doc); with
    ``inputs``, each kept resource's :func:`readable` inputs are put there under the same identity.

    With ``known`` (an earlier snapshot's identities), a resource that is neither known nor an alias of a
    known URN is *new*: it is left out, and it is transparent — its children's parent and anything depending
    on it count as its own parent. A new wrapping component (``BatchCluster``) therefore changes nothing else,
    while a renamed resource without an alias shows up as one missing identity.
    """
    resources = preview["resources"]
    ident = identities(resources, known)
    new = {r["urn"]: r["parent"] for r in resources if known is not None and ident[r["urn"]] not in known}

    def same(urn: str | None) -> str | None:
        while urn in new:
            urn = new[urn]
        return None if urn is None else ident.get(urn, "<the stack>")

    out: dict[str, dict[str, Any]] = {}
    for r in resources:
        if r["urn"] in new:
            continue
        provider = r["provider"]
        out[ident[r["urn"]]] = {
            "type": r["type"],
            "parent": same(r["parent"]),
            "provider": None if provider is None else same(provider.rsplit("::", 1)[0]),
            "dependencies": sorted({d for d in (same(d) for d in r["dependencies"]) if d is not None}),
        }
        if inputs is not None:
            inputs[ident[r["urn"]]] = readable(r["inputs"])
    return out


def new_resources(preview: dict[str, Any], known: set[str]) -> list[str]:
    """The type tokens of the resources that map to no identity in ``known`` (see :func:`snapshot`)."""
    ident = identities(preview["resources"], known)
    return sorted(r["type"] for r in preview["resources"] if ident[r["urn"]] not in known)


def preview_json(stack: str) -> dict[str, Any]:
    """Run the program offline on ``templates/Pulumi.<stack>.yaml`` and return its preview document."""
    from batchplane.offline.engine import run_program
    from batchplane.offline.stackfile import read_stack_file

    root = Path(__file__).resolve().parents[2]
    config = read_stack_file(root / "templates" / f"Pulumi.{stack}.yaml")
    return run_program(root, stack, config).to_json()


#: The one resource type a snapshot keeps transparent when it is new: the wrapper the earlier layout had not.
TRANSPARENT = "batchplane:cluster:BatchCluster"


def main() -> None:
    """Write ``golden/<template>.json`` and ``golden/<template>.inputs.yaml`` for every template from the current
    program. Resources the program added
    since the snapshot join it under their engine URN (a deployed stack creates them under that URN), except the
    :data:`TRANSPARENT` wrapper."""
    GOLDEN.mkdir(exist_ok=True)
    for stack in TEMPLATES:
        path = GOLDEN / f"{stack}.json"
        known = set(json.loads(path.read_text())) if path.exists() else None
        preview = preview_json(stack)
        if known is not None:
            engine = engine_urns(preview["resources"])
            ident = identities(preview["resources"], known)
            known |= {
                engine[r["urn"]]
                for r in preview["resources"]
                if ident[r["urn"]] not in known and r["type"] != TRANSPARENT
            }
        inputs: dict[str, Any] = {}
        data = snapshot(preview, known, inputs=inputs)
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        (GOLDEN / f"{stack}.inputs.yaml").write_text(inputs_yaml(inputs), encoding="utf-8")
        print(f"wrote {path} and its inputs ({len(data)} resources)", file=sys.stderr)


if __name__ == "__main__":
    main()

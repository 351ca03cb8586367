"""Helpers for the ``batchplane graph`` tests: shipped stacks, a generated 50-team stack, SVG parsing."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import yaml

from batchplane.stack import Stack, load_stack, load_stack_file
from tests.conftest import template_path

SVG_NS = "{http://www.w3.org/2000/svg}"


def shipped(name: str) -> Stack:
    """The validated shipped template ``templates/Pulumi.<name>.yaml``."""
    return load_stack_file(template_path(name))


def many_teams_config(teams: int) -> dict[str, Any]:
    """gke-prod-dws scaled to ``teams`` teams: its H100 (8 GPUs/node) and L4 pools sized so every team
    keeps 8 H100s and 4 L4s, the teams' cohort ``ml`` declared with parent cohort ``org``."""
    raw = yaml.safe_load((template_path("gke-prod-dws")).read_text(encoding="utf-8"))["config"]
    raw = copy.deepcopy(raw)
    pools = raw["batchplane:target"]["gpuPools"]
    pools[0]["maxNodes"] = teams
    pools[1]["maxNodes"] = 4 * teams
    quotas = raw["batchplane:teams"]["members"][0]["quotas"]
    raw["batchplane:teams"]["members"] = [{"name": f"team-{i:02d}", "quotas": quotas} for i in range(teams)]
    raw["batchplane:kueue"]["cohorts"] = [{"name": "ml", "parentName": "org"}, {"name": "org"}]
    return dict(raw)


def many_teams(teams: int) -> Stack:
    """The validated stack of :func:`many_teams_config`, named ``<teams>-teams``."""
    return load_stack(many_teams_config(teams), f"{teams}-teams")


def svg_titles(svg: bytes) -> list[str]:
    """The ``<title>`` of every node and cluster group of a Graphviz SVG (parsed as XML), in order."""
    root = ET.fromstring(svg)
    out: list[str] = []
    for group in root.iter(f"{SVG_NS}g"):
        if group.get("class") in ("node", "cluster"):
            title = group.find(f"{SVG_NS}title")
            assert title is not None and title.text is not None
            out.append(title.text)
    return out


def svg_node_titles(svg: bytes) -> list[str]:
    """The ``<title>`` of every node group (``class="node"``) of a Graphviz SVG."""
    root = ET.fromstring(svg)
    return [g.findtext(f"{SVG_NS}title") or "" for g in root.iter(f"{SVG_NS}g") if g.get("class") == "node"]


def write(tmp: Path, name: str, config: dict[str, Any]) -> Path:
    """Write ``config`` as ``<tmp>/Pulumi.<name>.yaml`` and return the path."""
    path = tmp / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False), encoding="utf-8")
    return path

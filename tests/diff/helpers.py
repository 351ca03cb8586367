"""Shared helpers of the diff tests: templates loaded once, a quota edited on a loaded stack, a modified stack file."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import yaml

from batchplane.config.rules import Located
from batchplane.pricing import PriceRow, PriceTable
from batchplane.stack import Stack
from batchplane.yamlfile import read_yaml_file
from tests.conftest import template_path
from tests.support.stacks import template as template  # the shared loader, re-exported for this folder

SNAKE = {
    "nominalQuota": "nominal_quota",
    "borrowingLimit": "borrowing_limit",
    "lendingLimit": "lending_limit",
}


def quota_slots(stack: Stack) -> list[tuple[int, int, int, int]]:
    """(ClusterQueue, group, flavor, resource) indexes of every ResourceQuota of the stack's ClusterQueues."""
    return [
        (q, g, f, r)
        for q, cq in enumerate(stack.kueue.cluster_queues)
        for g, group in enumerate(cq.obj.resource_groups)
        for f, flavor in enumerate(group.flavors)
        for r, _ in enumerate(flavor.resources)
    ]


def with_quota(stack: Stack, slot: tuple[int, int, int, int], field: str, text: str | None) -> Stack:
    """``stack`` with one quota field of one ClusterQueue set to ``text`` (a quantity, or None to unset a limit)."""
    q, g, f, r = slot
    loc = stack.kueue.cluster_queues[q]
    groups = list(loc.obj.resource_groups)
    flavors = list(groups[g].flavors)
    resources = list(flavors[f].resources)
    resources[r] = resources[r].model_copy(update={SNAKE[field]: text})
    flavors[f] = flavors[f].model_copy(update={"resources": resources})
    groups[g] = groups[g].model_copy(update={"flavors": flavors})
    queues = list(stack.kueue.cluster_queues)
    queues[q] = Located(loc.obj.model_copy(update={"resource_groups": groups}), loc.path)
    return dataclasses.replace(stack, kueue=dataclasses.replace(stack.kueue, cluster_queues=queues))


def stack_document(name: str) -> dict[str, Any]:
    """A template's whole file as plain (alias-free) data."""
    doc = read_yaml_file(template_path(name))
    return dict(json.loads(json.dumps(doc)))


def write_document(doc: dict[str, Any], path: Path) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def prod_dws_with_team_a_h100(tmp_path: Path, nominal: int = 16, provisioning: str | None = None) -> Path:
    """``gke-prod-dws`` with team-a's H100 ``nominalQuota`` set to ``nominal`` (and, given, the H100 pool's
    ``provisioning``), written as ``<tmp>/Pulumi.gke-prod-dws.yaml``."""
    doc = stack_document("gke-prod-dws")
    doc["config"]["batchplane:teams"]["members"][0]["quotas"]["h100"]["nvidia.com/gpu"]["nominalQuota"] = (
        nominal
    )
    if provisioning is not None:
        set_h100_provisioning(doc, provisioning)
    return write_document(doc, tmp_path / "Pulumi.gke-prod-dws.yaml")


def set_h100_provisioning(doc: dict[str, Any], provisioning: str) -> None:
    pool = doc["config"]["batchplane:target"]["gpuPools"][0]
    pool["provisioning"] = provisioning
    if provisioning != "flex-start":
        pool.pop("queuedProvisioning", None)
        pool.pop("provisioningRequest", None)


def _first_quota(node: Any, path: tuple[Any, ...]) -> tuple[dict[str, Any], str, tuple[Any, ...]] | None:
    """The first whole-number quota ≥ 1 in a config section: a ``nominalQuota`` (without a lending limit) or a
    teams shorthand ``{resource: amount}``; as (the mapping holding it, its key, its path)."""
    if isinstance(node, dict):
        nominal = node.get("nominalQuota")
        if isinstance(nominal, int) and nominal >= 1 and "lendingLimit" not in node:
            return node, "nominalQuota", path
        if path[-2:-1] == ("quotas",) or (len(path) >= 2 and path[-2] == "quotas"):
            for key, value in node.items():
                if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                    return node, key, (*path, key)
        for key, value in node.items():
            found = _first_quota(value, (*path, key))
            if found:
                return found
    if isinstance(node, list):
        for index, value in enumerate(node):
            found = _first_quota(value, (*path, index))
            if found:
                return found
    return None


def decrement_first_quota(doc: dict[str, Any]) -> tuple[Any, ...]:
    """Lower the first quota of ``batchplane:kueue`` or ``batchplane:teams`` by one (in place); its path."""
    config = doc["config"]
    for section in ("batchplane:kueue", "batchplane:teams"):
        if section in config:
            found = _first_quota(config[section], (section,))
            if found:
                holder, key, path = found
                holder[key] -= 1
                return path
    raise AssertionError("no quota to change")


def h100_price(table: PriceTable) -> PriceRow | None:
    """The row gke-prod-dws's flex-start a3-highgpu-8g pool in us-central1 is priced from: its own flex-start row,
    else its on-demand row as the ceiling (batchplane/diff/model.py)."""
    return table.lookup("gcp", "a3-highgpu-8g", "us-central1", "flex-start") or table.lookup(
        "gcp", "a3-highgpu-8g", "us-central1", "on-demand"
    )

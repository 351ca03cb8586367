"""Objects by URN: added, removed, changed leaf paths, and the changes that replace (providers' force-new fields)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from batchplane.diff.objects import changed_paths, diff_objects, replace_paths, summarize_objects
from batchplane.offline.engine import run_program
from batchplane.stack import read_stack_file
from tests.conftest import REPO_ROOT, template_path
from tests.diff.helpers import stack_document, write_document

POOL = "gcp:container/nodePool:NodePool"


@dataclass
class Res:
    urn: str
    type: str
    inputs: dict[str, Any] = field(default_factory=dict)


def test_changed_paths_are_leaf_paths_including_list_items() -> None:
    before = {"spec": {"a": [1, {"b": 2}], "c": "x"}}
    after = {"spec": {"a": [1, {"b": 3}, 4], "c": "x"}}
    assert changed_paths(before, after) == ["spec.a[1].b", "spec.a[2]"]
    assert changed_paths(before, before) == []


@pytest.mark.parametrize(
    ("type_token", "path", "replaces"),
    [
        (POOL, "nodeConfig.guestAccelerators[0].type", True),
        (POOL, "nodeConfig.guestAccelerators[0].count", True),
        (POOL, "nodeConfig.spot", True),
        (POOL, "name", True),
        (POOL, "nodeConfig.machineType", False),  # in place since terraform-provider-google v5.10.0
        (POOL, "nodeConfig.diskSizeGb", False),
        (POOL, "autoscaling.totalMaxNodeCount", False),
        ("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "metadata.name", True),
        ("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "spec.resourceGroups[0].flavors[0].name", False),
        ("kubernetes:core/v1:ConfigMap", "data.policy.json", True),
        ("kubernetes:core/v1:Service", "spec.clusterIP", True),
        ("kubernetes:core/v1:Service", "spec.ports[0].port", False),
        ("kubernetes:apps/v1:Deployment", "spec.selector.matchLabels.app", True),
        ("kubernetes:apps/v1:Deployment", "spec.replicas", False),
        ("kubernetes:batch/v1:Job", "spec.template.spec.containers[0].image", True),
        ("kubernetes:helm.sh/v3:Release", "values.x", False),
        ("pulumi:providers:kubernetes", "kubeconfig", False),
    ],
)
def test_replacement_rules_follow_the_providers_force_new_fields(
    type_token: str, path: str, replaces: bool
) -> None:
    (change,) = diff_objects(
        [Res("u", type_token, {"x": 0})], [Res("u", type_token, _set({"x": 0}, path, "new"))]
    )
    assert bool(change.replace) is replaces, (type_token, path, change)
    assert path in change.fields


def _set(inputs: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    import re

    out: Any = dict(inputs)
    cursor = out
    tokens = [t for t in re.split(r"\.(?![^\[]*\])|(?=\[)", path) if t]
    keys: list[Any] = []
    for token in tokens:
        keys.append(int(token[1:-1]) if token.startswith("[") else token)
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        nxt: Any = value if last else ([] if isinstance(keys[i + 1], int) else {})
        if isinstance(key, int):
            while len(cursor) <= key:
                cursor.append(None)
            if cursor[key] is None or last:
                cursor[key] = nxt
            cursor = cursor[key]
        else:
            if key not in cursor or last:
                cursor[key] = nxt
            cursor = cursor[key]
    return dict(out)


def test_only_one_side_means_added_or_removed_and_counts_add_up() -> None:
    changes = diff_objects(
        [Res("a", POOL), Res("b", POOL, {"name": "x"})],
        [Res("b", POOL, {"name": "y"}), Res("c", "kubernetes:core/v1:Namespace")],
    )
    assert [(c.urn, c.status) for c in changes] == [("a", "removed"), ("b", "changed"), ("c", "added")]
    assert summarize_objects(changes) == {"added": 1, "removed": 1, "changed": 1, "replaced": 1}


def test_replace_paths_of_a_kind_without_extra_rules_are_the_metadata_ones() -> None:
    assert replace_paths("kubernetes:core/v1:Namespace") == ("metadata.name", "metadata.namespace")
    assert replace_paths("batchplane:kueue:KueueQueues") == ()


def test_the_real_program_shows_an_h100_pool_moved_to_a3_mega_replaced_by_its_accelerator_not_its_machine_type(
    tmp_path: Path,
) -> None:
    doc = stack_document("gke-prod-dws")
    pool = doc["config"]["batchplane:target"]["gpuPools"][0]
    pool["machineType"] = "a3-megagpu-8g"
    pool["accelerator"]["type"] = "nvidia-h100-mega-80gb"
    head_file = write_document(doc, tmp_path / "Pulumi.gke-prod-dws.yaml")
    base = run_program(REPO_ROOT, "gke-prod-dws", read_stack_file(template_path("gke-prod-dws"))).resources
    head = run_program(REPO_ROOT, "gke-prod-dws", read_stack_file(head_file)).resources
    changes = diff_objects(base, head)
    (pool_change,) = [c for c in changes if c.type == POOL]
    assert pool_change.urn.endswith("::gke-h100")
    assert set(pool_change.fields) == {"nodeConfig.guestAccelerators[0].type", "nodeConfig.machineType"}
    assert pool_change.replace == ("nodeConfig.guestAccelerators[0].type",)
    assert all(c.status == "changed" for c in changes)

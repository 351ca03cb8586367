"""A manifest's Pods gathered into the pod groups Kueue makes one Workload of (batchplane.accounting.pod_groups)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from batchplane.accounting.pod_groups import PodGroup, group_pods
from batchplane.cli import app
from tests.frameworks.pod_objects import group_pod


def test_the_pods_of_a_group_become_one_document_at_the_first_pods_place() -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    pods = [group_pod(f"p{i}", {"cpu": "4"}) for i in range(3)]
    out = group_pods([pods[0], config, pods[1], pods[2]])
    assert len(out) == 2 and out[1] is config
    group = out[0]
    assert isinstance(group, PodGroup)
    assert group["metadata"]["name"] == "g" and group["metadata"]["namespace"] == "team-a"
    assert group.group_members == tuple(pods)


def test_groups_of_the_same_name_in_two_namespaces_stay_apart_and_unlabelled_pods_are_untouched() -> None:
    a = group_pod("a", {"cpu": "1"}, namespace="team-a")
    b = group_pod("b", {"cpu": "1"}, namespace="team-b")
    solo = group_pod("solo", {"cpu": "1"}, group=None, total=None)
    out = group_pods([a, b, solo])
    assert [len(d.group_members) for d in out[:2]] == [1, 1] and out[2] is solo


def test_requests_prints_one_report_for_a_group_of_three_pods(tmp_path: Path) -> None:
    manifest = tmp_path / "group.yaml"
    manifest.write_text(yaml.safe_dump_all([group_pod(f"p{i}", {"cpu": "4"}) for i in range(3)]))
    result = CliRunner().invoke(app, ["requests", str(manifest)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)  # one Workload: one report, not a list of three
    assert report["name"] == "g"
    assert [ps["count"] for ps in report["podSets"]] == [3]

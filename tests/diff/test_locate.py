"""Resources back to the config keys they come from, so `check --github` puts a violation on the key's line."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.diff.locate import config_key_for
from tests.conftest import REPO_ROOT
from tests.diff.helpers import stack_document, template, write_document


def test_kueue_objects_node_pools_and_namespaces_map_to_their_config_keys() -> None:
    stack = template("gke-prod-dws")
    cq = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
    assert config_key_for(stack, cq, {"metadata": {"name": "team-b"}}) == (
        'batchplane:teams.members[1] (generated ClusterQueue "team-b")'
    )
    assert (
        config_key_for(stack, "gcp:container/nodePool:NodePool", {"name": "l4"})
        == "batchplane:target.gpuPools[1]"
    )
    lq = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
    assert config_key_for(stack, lq, {"metadata": {"name": "default", "namespace": "team-c"}}) is not None
    assert config_key_for(stack, lq, {"metadata": {"name": "default", "namespace": "nowhere"}}) is None
    assert config_key_for(stack, "kubernetes:apps/v1:Deployment", {"metadata": {"name": "x"}}) is None
    assert config_key_for(stack, cq, {}) is None


def test_check_github_puts_a_violation_on_the_line_of_the_cluster_queue(tmp_path: Path) -> None:
    doc = stack_document("kind")
    doc["config"]["batchplane:environment"] = "staging"
    queue = doc["config"]["batchplane:kueue"]["clusterQueues"][0]
    queue["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = 10000
    path = write_document(doc, tmp_path / "Pulumi.kind.yaml")
    lines = path.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if text.strip() == f"- name: {queue['name']}")
    column = lines[line - 1].index("name") + 1  # a list item sits at its first key
    result = CliRunner().invoke(
        app, ["check", "--config", str(path), "--github", "--project-dir", str(REPO_ROOT)]
    )
    assert result.exit_code == 1, result.output
    (annotation,) = [
        a for a in result.stdout.splitlines() if a.startswith("::error ") and "kueue-finite-quotas" in a
    ]
    assert f",line={line},col={column},title=kueue-finite-quotas::" in annotation

"""``operator-release-replacement``: a change that replaces or deletes the Kueue Helm release is refused, naming
the CRDs it would take with it; end to end through ``batchplane check --base`` on the real program's render."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml
from batchplane_policies import releases
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.operators.installs import KUEUE_CHART
from batchplane.wellknown import KUEUE_CHART_CRDS
from tests.conftest import REPO_ROOT, template_path
from tests.policies.factories import Stack


def kueue_release(**inputs: Any) -> dict[str, Any]:
    return {"chart": KUEUE_CHART, "name": "kueue", "namespace": "kueue-system", "version": "0.19.2", **inputs}


def baseline(tmp_path: Path, stack: Stack, **inputs: Any) -> str:
    path = tmp_path / "base-preview.json"
    [release] = [r for r in stack.resources if r.resource_type == releases.RELEASE]
    resource = {"type": releases.RELEASE, "urn": release.urn, "inputs": kueue_release(**inputs)}
    path.write_text(json.dumps({"resources": [resource], "outputs": {}}))
    return str(path)


def stack_with(release: dict[str, Any]) -> Stack:
    stack = Stack()
    stack.add(releases.RELEASE, "batchplane-operators-kueue-release", release)
    stack.add("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "cq", {"metadata": {"name": "cq"}})
    stack.add("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "lq", {"metadata": {"name": "lq"}})
    return stack


def test_a_kueue_release_whose_namespace_changes_is_refused_naming_its_crds(tmp_path: Path) -> None:
    stack = stack_with(kueue_release(namespace="kueue"))
    found = stack.check(releases.operator_release_replacement, config={"baseline": baseline(tmp_path, stack)})
    [(message, resource)] = found
    assert resource == "batchplane-operators-kueue-release"
    assert message.startswith(
        'Helm release "kueue-system/kueue" would be replaced (deleted and created) because its namespace changed'
    )
    assert (
        all(crd in message for crd in KUEUE_CHART_CRDS)
        and "the 2 Kueue objects this stack declares" in message
    )


def test_a_renamed_release_is_refused_and_an_unchanged_one_passes(tmp_path: Path) -> None:
    stack = stack_with(kueue_release(name="kueue-2"))
    [(message, _)] = stack.check(
        releases.operator_release_replacement, config={"baseline": baseline(tmp_path, stack)}
    )
    assert "because its name changed" in message
    same = stack_with(kueue_release())
    assert (
        same.check(releases.operator_release_replacement, config={"baseline": baseline(tmp_path, same)}) == []
    )


def test_a_release_gone_from_the_stack_is_a_deletion(tmp_path: Path) -> None:
    stack = stack_with(kueue_release())
    base = baseline(tmp_path, stack)
    stack.resources = [r for r in stack.resources if r.resource_type != releases.RELEASE]
    [(message, resource)] = stack.check(releases.operator_release_replacement, config={"baseline": base})
    assert resource is None and "would be deleted" in message


def test_an_allowed_release_and_a_chart_without_template_crds_pass(tmp_path: Path) -> None:
    stack = stack_with(kueue_release(namespace="kueue"))
    config = {"baseline": baseline(tmp_path, stack), "allowReleaseReplace": ["kueue-system/kueue"]}
    assert stack.check(releases.operator_release_replacement, config=config) == []
    other = stack_with(kueue_release(chart="kuberay-operator", namespace="ray"))
    base = baseline(tmp_path, other, chart="kuberay-operator")
    assert other.check(releases.operator_release_replacement, config={"baseline": base}) == []
    assert other.check(releases.operator_release_replacement, config={}) == []


def _git(tmp_path: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.com", *args], check=True
    )


def test_check_refuses_a_stack_change_that_would_replace_the_kueue_release(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    stack = tmp_path / "Pulumi.kind.yaml"
    shutil.copy(template_path("kind"), stack)
    _git(tmp_path, "add", stack.name)
    _git(tmp_path, "commit", "-q", "-m", "base")
    config = yaml.safe_load(stack.read_text())
    config["config"]["batchplane:operators"]["kueue"]["namespace"] = "kueue"
    stack.write_text(yaml.safe_dump(config))
    result = CliRunner().invoke(
        app,
        ["check", "--project-dir", str(REPO_ROOT), "--config", str(stack), "--base", "HEAD", "--json"],
        env={"GITHUB_ACTIONS": ""},
    )
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    [violation] = [v for v in report["violations"] if v["policy"] == "operator-release-replacement"]
    assert violation["enforcement_level"] == "mandatory"
    assert 'Helm release "kueue-system/kueue" would be replaced' in violation["message"]
    assert "workloads.kueue.x-k8s.io" in violation["message"]

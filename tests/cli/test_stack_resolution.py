"""Every command that takes ``--stack NAME`` reads the same file: the environment ``stacks/Pulumi.NAME.yaml`` when
there is one, else the template ``templates/Pulumi.NAME.yaml`` (batchplane/stack/layout.py ``find_stack_file``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from tests.conftest import REPO_ROOT, TEMPLATES_DIR, template_path

#: Each command with ``--stack``, with the arguments that make it stop at loading the stack.
COMMANDS = {
    "validate": ["validate"],
    "preview": ["preview"],
    "render": ["render"],
    "check": ["check"],
    "graph": ["graph", "--format", "dot"],
    "diff": ["diff", "--base-config", str(template_path("kind")), "--no-objects", "--no-decisions"],
    "webhook policy": ["webhook", "policy"],
    "preflight": ["preflight", "--requirements"],
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory (the current one) with the templates and an empty stacks/."""
    shutil.copy(REPO_ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copytree(TEMPLATES_DIR, tmp_path / "templates")
    (tmp_path / "stacks").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def shadow(project: Path) -> None:
    """Write the environment `kind`: the template with one error, its LocalQueue naming a missing ClusterQueue."""
    text = template_path("kind").read_text(encoding="utf-8")
    assert text.count("clusterQueue: cluster-queue") == 1
    text = text.replace("clusterQueue: cluster-queue", "clusterQueue: no-such-queue")
    (project / "stacks" / "Pulumi.kind.yaml").write_text(text, encoding="utf-8")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_environment_named_like_a_template_is_what_every_command_reads(
    project: Path, command: str
) -> None:
    shadow(project)
    result = CliRunner().invoke(app, [*COMMANDS[command], "--stack", "kind"], env={"GITHUB_ACTIONS": ""})
    assert result.exit_code == 1, result.output
    assert 'no ClusterQueue "no-such-queue"' in result.stderr


@pytest.mark.parametrize("command", ["validate", "graph", "webhook policy", "preflight"])
def test_without_an_environment_the_template_of_that_name_is_read(project: Path, command: str) -> None:
    result = CliRunner().invoke(app, [*COMMANDS[command], "--stack", "kind"], env={"GITHUB_ACTIONS": ""})
    assert result.exit_code == 0, result.output

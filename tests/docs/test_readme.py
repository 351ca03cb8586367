"""The README stays true: its config example validates and its commands exist."""

from __future__ import annotations

import re

import yaml
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.stack import load_stack
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_config_example_is_a_valid_stack_config() -> None:
    section = README[README.index("## Configuration") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    stack = load_stack(yaml.safe_load(block.group(1))["config"], "readme")
    assert [cq.obj.name for cq in stack.kueue.cluster_queues] == ["cluster-queue", "vision"]


def test_readme_lists_every_shipped_stack() -> None:
    for name in TEMPLATE_NAMES:
        assert f"| `{name}` |" in README, f"stack {name} is missing from the README's stack table"


def test_every_cli_command_in_the_readme_exists() -> None:
    commands = set(re.findall(r"`batchplane ([a-z-]+)", README))
    runner = CliRunner()
    for command in sorted(commands):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0, f"batchplane {command} --help failed: {result.output}"


def test_the_two_fresh_machine_commands_are_make_targets() -> None:
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert "make preview" in README and "make test" in README
    assert re.search(r"^preview:", makefile, re.M) and re.search(r"^test:", makefile, re.M)

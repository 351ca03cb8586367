"""The README stays true and short, the docs index lists every page, links resolve, and `make help` lists every
target."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.stack import load_stack
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def test_the_configuration_page_example_is_a_valid_stack_config() -> None:
    section = (REPO_ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
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


def test_readme_is_read_in_two_minutes() -> None:
    """Issue #30: at most 120 lines; the rest lives in docs/."""
    assert len(README.splitlines()) <= 120


DOCS = REPO_ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_docs_index_lists_every_page() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = {m.split("#")[0] for m in LINK.findall(index)}
    pages = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    assert sorted(pages - linked) == []


@pytest.mark.parametrize(
    "page", ["README.md", "docs/index.md", "docs/development.md", "docs/cli.md", "docs/configuration.md"]
)
def test_every_relative_link_resolves_to_a_file_and_heading(page: str) -> None:
    path = REPO_ROOT / page
    broken = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.exists() or (
            anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved)
        ):
            broken.append(target)
    assert broken == []


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but - and _ dropped, spaces to -."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            text = line.lstrip("#").strip().lower()
            out.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text)))
    return out


def test_make_help_lists_every_target_with_a_description() -> None:
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    described = re.findall(r"^([^\s:#=]+):[^=\n]*## ", makefile, re.M)
    assert {"e2e-kind", "preview", "test", "all-checks", "lock"} <= set(described)
    done = subprocess.run(
        ["make", "--no-print-directory", "help"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    listed = [line.split("\t")[0] for line in done.stdout.splitlines()]
    assert listed == described


def test_make_check_is_not_a_target_so_it_is_never_confused_with_batchplane_check() -> None:
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert not re.search(r"^check:", makefile, re.M)
    assert "make check" not in README

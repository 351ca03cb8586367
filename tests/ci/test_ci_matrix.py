"""``batchplane ci-matrix`` / ``python -m batchplane.ci matrix``: the stack files a change touches, from git."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batchplane.ci import PROGRAM_PATHS, changed_files, main, matrix
from batchplane.cli import app
from tests.conftest import template_path


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A team's repository at its base commit: two templates, two environments, one policy config, docs."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "stacks").mkdir()
    (tmp_path / "policies" / "config").mkdir(parents=True)
    (tmp_path / "batchplane").mkdir()
    (tmp_path / "docs").mkdir()
    for name in ("kind", "gke-dev"):
        shutil.copy(template_path(name), tmp_path / "templates" / f"Pulumi.{name}.yaml")
    shutil.copy(template_path("kind"), tmp_path / "stacks" / "Pulumi.lab.yaml")
    shutil.copy(template_path("gke-dev"), tmp_path / "stacks" / "Pulumi.prod.yaml")
    (tmp_path / "policies" / "config" / "prod.json").write_text("{}\n")
    (tmp_path / "batchplane" / "x.py").write_text("X = 1\n")
    (tmp_path / "docs" / "a.md").write_text("# a\n")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path


def change(repo: Path, *edits: tuple[str, str | None]) -> str:
    """Commit the edits (path, new text; None deletes) and return the base commit."""
    base = git(repo, "rev-parse", "HEAD")
    for path, text in edits:
        if text is None:
            (repo / path).unlink()
        else:
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    return base


def keys(repo: Path, base: str) -> list[tuple[str, str, bool]]:
    return [(e.key, e.policyConfig, e.removed) for e in matrix(repo, changed_files(repo, base))]


def test_a_changed_environment_is_checked_with_its_policy_config(repo: Path) -> None:
    text = (repo / "stacks" / "Pulumi.prod.yaml").read_text() + "# reviewed\n"
    base = change(repo, ("stacks/Pulumi.prod.yaml", text), ("docs/a.md", "# b\n"))
    assert keys(repo, base) == [("prod", "policies/config/prod.json", False)]


def test_a_changed_policy_config_checks_its_environment(repo: Path) -> None:
    base = change(repo, ("policies/config/prod.json", '{"all": "advisory"}\n'))
    assert keys(repo, base) == [("prod", "policies/config/prod.json", False)]


def test_a_changed_template_checks_that_template_only(repo: Path) -> None:
    base = change(
        repo, ("templates/Pulumi.kind.yaml", (repo / "templates" / "Pulumi.kind.yaml").read_text() + "\n")
    )
    assert keys(repo, base) == [("templates/kind", "", False)]


@pytest.mark.parametrize(
    "path", ["batchplane/x.py", "__main__.py", "Pulumi.yaml", "requirements.txt", "policies/pack.py"]
)
def test_a_changed_program_or_package_file_checks_every_environment_and_template(
    repo: Path, path: str
) -> None:
    base = change(repo, (path, "changed = True\n"))
    assert keys(repo, base) == [
        ("lab", "", False),
        ("prod", "policies/config/prod.json", False),
        ("templates/gke-dev", "", False),
        ("templates/kind", "", False),
    ]


def test_docs_and_tests_touch_no_stack(repo: Path) -> None:
    base = change(repo, ("docs/a.md", "# b\n"), ("tests/test_x.py", "def test(): pass\n"))
    assert keys(repo, base) == []


def test_a_removed_or_renamed_environment_is_listed_as_removed_and_the_new_name_is_checked(
    repo: Path,
) -> None:
    text = (repo / "stacks" / "Pulumi.lab.yaml").read_text()
    base = change(repo, ("stacks/Pulumi.lab.yaml", None), ("stacks/Pulumi.lab2.yaml", text))
    assert keys(repo, base) == [("lab", "", True), ("lab2", "", False)]


def test_the_module_writes_the_github_outputs_and_the_cli_prints_the_same_matrix(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = change(repo, ("batchplane/x.py", "X = 2\n"))
    output = tmp_path / "out"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    assert main(["matrix", "--base", base, "--project-dir", str(repo), "--github-output"]) == 0
    printed = capsys.readouterr().out.strip()
    written = dict(line.split("=", 1) for line in output.read_text().splitlines())
    assert written == {"matrix": printed, "count": "4"}
    assert [e["file"] for e in json.loads(printed)["include"]] == [
        "stacks/Pulumi.lab.yaml",
        "stacks/Pulumi.prod.yaml",
        "templates/Pulumi.gke-dev.yaml",
        "templates/Pulumi.kind.yaml",
    ]
    result = CliRunner().invoke(app, ["ci-matrix", "--base", base, "--project-dir", str(repo)])
    assert result.exit_code == 0 and result.stdout.strip() == printed


def test_an_unknown_base_is_a_usage_error(repo: Path) -> None:
    assert main(["matrix", "--base", "no-such-ref", "--project-dir", str(repo)]) == 2
    result = CliRunner().invoke(app, ["ci-matrix", "--base", "no-such-ref", "--project-dir", str(repo)])
    assert result.exit_code == 2 and "no-such-ref" in result.stderr


def test_the_program_paths_are_the_projects_own() -> None:
    from tests.conftest import REPO_ROOT

    # every listed path but the lock another tool writes (uv.lock) exists in this repository
    assert [p for p in PROGRAM_PATHS if p != "uv.lock" and not (REPO_ROOT / p.rstrip("/")).exists()] == []

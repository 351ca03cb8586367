"""A team's environment in ``stacks/`` is checked by the generic tests and left alone by the template tests; the
template tests still fail on what they guard (a deleted golden).

Shown on a copy of the repository (its ``stacks/`` gets a template copied in as ``my-env``), running the suite's own
files there with pytest, as ``make test`` would on the team's clone.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from batchplane.stack.layout import environment_names, find_stack_file, template_names
from tests.conftest import REPO_ROOT, SHARED

pytestmark = pytest.mark.slow

#: The template tests the issue saw fail on a team's environment (pictures, README table, requirements page, URN
#: snapshots) and the generic environment checks.
TEMPLATE_TESTS = [
    "tests/graph/test_docs_graphs.py",
    "tests/docs/test_readme.py::test_readme_lists_every_shipped_stack",
    "tests/preflight/test_docs.py",
    "tests/program/test_urn_stability.py::test_every_template_has_a_snapshot",
    "tests/cli/test_validate_cli.py",
]
GENERIC_TESTS = "tests/stack/test_environments.py"
IGNORED = shutil.ignore_patterns(
    ".venv",
    ".git",
    "build",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".mypy_cache",
    ".ruff_cache",
    "*.egg-info",
)


def copy_repository(tmp_path: Path) -> Path:
    """The repository's files under ``tmp_path/repo``, with ``shared/`` beside it as in a checkout."""
    repo = tmp_path / "repo"
    shutil.copytree(REPO_ROOT, repo, ignore=IGNORED)
    (tmp_path / "shared").symlink_to(SHARED, target_is_directory=True)
    return repo


def run_pytest(repo: Path, *args: str) -> tuple[int, dict[str, str], str]:
    """Run pytest in ``repo``; returns (exit code, {test id: passed|failed|skipped|error}, output)."""
    report = repo / "report.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=900,
    )
    outcomes: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        children = {child.tag for child in case}
        outcome = next((tag for tag in ("failure", "error", "skipped") if tag in children), "passed")
        outcomes[test_id] = outcome
    return done.returncode, outcomes, done.stdout + done.stderr


@pytest.fixture(scope="module")
def team_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository as a team has it after ``batchplane new my-env --from gke-dev``-like copying: a template's
    file copied to ``stacks/Pulumi.my-env.yaml``."""
    repo = copy_repository(tmp_path_factory.mktemp("clone"))
    for own in (repo / "stacks").glob("Pulumi.*.yaml"):  # this checkout's environments: not part of the proof
        own.unlink()
    shutil.copy(repo / "templates" / "Pulumi.gke-dev.yaml", repo / "stacks" / "Pulumi.my-env.yaml")
    return repo


def test_an_environment_in_stacks_is_picked_up_by_the_generic_checks_and_not_by_the_template_tests(
    team_clone: Path,
) -> None:
    assert environment_names(team_clone) == ["my-env"]
    assert "my-env" not in template_names(team_clone)
    code, outcomes, output = run_pytest(team_clone, GENERIC_TESTS, *TEMPLATE_TESTS)
    assert code == 0, output[-5000:]
    generic = sorted(t for t in outcomes if t.startswith("tests.stack.test_environments::"))
    assert generic == [
        "tests.stack.test_environments::test_every_environment_passes_the_policy_pack_with_its_policy_config[my-env]",
        "tests.stack.test_environments::test_every_environment_runs_offline_and_every_rendered_custom_resource_"
        "passes_the_crd_check[my-env]",
        "tests.stack.test_environments::test_every_environment_validates[my-env]",
    ]
    assert {outcomes[t] for t in generic} == {"passed"}
    template_ids = [t for t in outcomes if not t.startswith("tests.stack.")]
    assert template_ids and [t for t in template_ids if "my-env" in t] == []
    assert {outcomes[t] for t in template_ids} == {"passed"}


def test_a_broken_environment_fails_the_generic_checks_with_its_key(team_clone: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(team_clone, repo, symlinks=True)
    (tmp_path / "shared").symlink_to(SHARED, target_is_directory=True)
    broken = (
        (repo / "stacks" / "Pulumi.my-env.yaml").read_text(encoding="utf-8").replace("maxNodes:", "maxNode:")
    )
    (repo / "stacks" / "Pulumi.my-env.yaml").write_text(broken, encoding="utf-8")
    code, outcomes, output = run_pytest(repo, f"{GENERIC_TESTS}::test_every_environment_validates")
    assert code == 1
    assert outcomes == {"tests.stack.test_environments::test_every_environment_validates[my-env]": "failure"}
    assert "maxNode" in output


def test_deleting_a_templates_golden_still_fails_the_suite(team_clone: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(team_clone, repo, symlinks=True)
    (tmp_path / "shared").symlink_to(SHARED, target_is_directory=True)
    (repo / "tests" / "program" / "golden" / "kind.json").unlink()
    code, outcomes, output = run_pytest(
        repo, "tests/program/test_urn_stability.py::test_every_template_has_a_snapshot"
    )
    assert code == 1, output[-3000:]
    assert outcomes == {"tests.program.test_urn_stability::test_every_template_has_a_snapshot": "failure"}


def test_stack_names_resolve_to_the_environment_first_then_the_template(
    team_clone: Path, tmp_path: Path
) -> None:
    assert find_stack_file(team_clone, "my-env") == team_clone / "stacks" / "Pulumi.my-env.yaml"
    assert find_stack_file(team_clone, "kind") == team_clone / "templates" / "Pulumi.kind.yaml"
    assert find_stack_file(team_clone, "nope") is None
    repo = tmp_path / "repo"
    shutil.copytree(team_clone, repo, symlinks=True)
    shutil.copy(repo / "templates" / "Pulumi.kind.yaml", repo / "stacks" / "Pulumi.kind.yaml")
    assert find_stack_file(repo, "kind") == repo / "stacks" / "Pulumi.kind.yaml"

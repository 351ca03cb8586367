"""The PR workflow: least privilege, SHA-pinned actions, no persisted credentials, every stack file the pull request
touches checked and diffed (a matrix from the changed files), one PR comment per stack file."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO_ROOT, template_path

WORKFLOW = REPO_ROOT / ".github" / "workflows" / "policy.yml"


def load() -> dict[Any, Any]:
    document: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return document


def steps(document: dict[Any, Any]) -> list[dict[str, Any]]:
    return [step for job in document["jobs"].values() for step in job.get("steps", [])]


def test_workflow_runs_on_pull_requests_with_no_default_permissions() -> None:
    document = load()
    assert document[True] == {"pull_request": None}  # YAML 1.1 reads the key `on` as True
    assert document["permissions"] == {}
    assert {name: job["permissions"] for name, job in document["jobs"].items()} == {
        "matrix": {"contents": "read"},
        "check": {"contents": "read"},
        "diff": {"contents": "read", "pull-requests": "write"},  # the only job that writes: the PR comment
        "credentials": {},
        "preview": {"contents": "read"},
    }


def test_every_action_is_pinned_to_a_full_commit_sha() -> None:
    uses = [step["uses"] for step in steps(load()) if "uses" in step]
    assert uses and [u for u in uses if not re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", u)] == []


def test_checkouts_do_not_persist_credentials() -> None:
    checkouts = [s for s in steps(load()) if s.get("uses", "").startswith("actions/checkout@")]
    assert len(checkouts) == 4
    assert all(s["with"]["persist-credentials"] is False for s in checkouts)


MATRIX_ENV = {
    "BASE_SHA": "${{ github.event.pull_request.base.sha }}",
    "STACK_FILE": "${{ matrix.file }}",
    "REMOVED": "${{ matrix.removed }}",
}


def test_the_matrix_job_lists_the_stack_files_the_pull_request_touches() -> None:
    job = load()["jobs"]["matrix"]
    assert job["steps"][0]["with"]["fetch-depth"] == 0  # the base commit, for the changed files
    step = job["steps"][-1]
    assert step["id"] == "matrix" and step["env"] == {"BASE_SHA": MATRIX_ENV["BASE_SHA"]}
    assert step["run"] == 'python -m batchplane.ci matrix --base "${BASE_SHA}" --github-output'
    assert job["outputs"] == {
        "matrix": "${{ steps.matrix.outputs.matrix }}",
        "count": "${{ steps.matrix.outputs.count }}",
    }


@pytest.mark.parametrize("name", ["check", "diff"])
def test_check_and_diff_run_once_per_stack_file_of_the_matrix(name: str) -> None:
    job = load()["jobs"][name]
    assert job["needs"] == "matrix" and job["if"] == "needs.matrix.outputs.count != '0'"
    assert job["strategy"] == {"fail-fast": False, "matrix": "${{ fromJSON(needs.matrix.outputs.matrix) }}"}
    assert job["steps"][0]["with"]["fetch-depth"] == 0  # the base commit, for --base
    assert "${{" not in "".join(
        step.get("run", "") for step in job["steps"]
    )  # values reach the shell through env


def test_check_job_runs_batchplane_check_on_its_stack_file_with_its_policy_config_against_the_pr_base() -> (
    None
):
    step = load()["jobs"]["check"]["steps"][-1]
    assert step["env"] == {**MATRIX_ENV, "POLICY_CONFIG": "${{ matrix.policyConfig }}"}
    assert (
        'batchplane check --config "${STACK_FILE}" --github --base "${BASE_SHA}" "${config[@]}"'
        in step["run"]
    )


def test_diff_job_diffs_its_stack_file_against_the_pr_base_and_keeps_one_comment_per_stack_file() -> None:
    job = load()["jobs"]["diff"]
    diff_step, comment_step = job["steps"][-2], job["steps"][-1]
    assert diff_step["env"] == MATRIX_ENV
    assert 'batchplane diff --config "${STACK_FILE}" --base "${BASE_SHA}" --markdown' in diff_step["run"]
    assert comment_step["if"] == "always()"
    assert comment_step["env"]["GITHUB_TOKEN"] == "${{ github.token }}"
    assert comment_step["env"]["STACK_KEY"] == "${{ matrix.key }}"
    assert (
        '.github/scripts/diff_comment.py --repo "${REPO}" --pr "${PR}" --key "${STACK_KEY}"'
        in comment_step["run"]
    )


def test_preview_job_runs_only_with_credentials() -> None:
    preview = load()["jobs"]["preview"]
    assert preview["if"] == "needs.credentials.outputs.present == 'true'"
    assert "--policy-pack policies" in preview["steps"][-1]["run"]


RELEASE = REPO_ROOT / ".github" / "workflows" / "release-webhook.yml"


def test_the_release_workflow_publishes_the_default_webhook_image_multi_arch_signed_with_an_sbom() -> None:
    from batchplane.config.webhook import DEFAULT_IMAGE

    document: dict[Any, Any] = yaml.safe_load(RELEASE.read_text(encoding="utf-8"))
    assert document[True] == {"push": {"tags": ["webhook-v*"]}}
    assert document["permissions"] == {}
    (job,) = document["jobs"].values()
    assert job["permissions"] == {"contents": "read", "packages": "write", "id-token": "write"}
    script = "\n".join(step.get("run", "") for step in job["steps"])
    assert "--platform linux/amd64,linux/arm64" in script and "--sbom=true" in script and "--push" in script
    assert "--file webhook/Dockerfile" in script
    # Keyless signing of the pushed index digest, verified against this workflow's identity.
    assert 'cosign sign --yes "$REF"' in script and 'cosign verify "$REF"' in script
    assert "release-webhook.yml@${GITHUB_REF}" in script
    uses = [step["uses"] for step in job["steps"] if "uses" in step]
    assert [u for u in uses if not re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", u)] == []
    # The default image (ghcr.io/batchplane/quota-webhook:<version>) is what a `webhook-v<version>` tag pushes
    # from the batchplane organisation.
    repository, _, version = DEFAULT_IMAGE.rpartition(":")
    assert repository == "ghcr.io/batchplane/quota-webhook" and re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert "quota-webhook" in script and "GITHUB_REPOSITORY_OWNER" in script


# --- the check step run for real, on a recorded pull request ------------------------------------------------

PROD_STACK = "Pulumi.gke-prod-dws.yaml"


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def pull_request(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A checkout as the workflow's jobs see it: the project with two environments at the PR base — gke-prod-dws
    (the production template as a team's environment) and kind-lab — and a head commit that turns gke-prod-dws's
    production `l4` node pool to Spot (`nodeConfig.spot` is force-new: the pool would be replaced) and edits a doc.
    Returns (the work tree, the base commit)."""
    repo = tmp_path_factory.mktemp("pr")
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO_ROOT / name, repo / name)
    shutil.copytree(REPO_ROOT / "policies", repo / "policies", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "stacks").mkdir()
    (repo / "docs").mkdir()
    (repo / "docs" / "notes.md").write_text("# notes\n", encoding="utf-8")
    stack = template_path("gke-prod-dws").read_text(encoding="utf-8")
    (repo / "stacks" / PROD_STACK).write_text(stack, encoding="utf-8")
    shutil.copy(template_path("kind"), repo / "stacks" / "Pulumi.kind-lab.yaml")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    spot = stack.replace(
        "provisioning: on-demand\n        machineType: g2-standard-8",
        "provisioning: spot\n        machineType: g2-standard-8",
    )
    assert spot != stack
    (repo / "stacks" / PROD_STACK).write_text(spot, encoding="utf-8")
    (repo / "docs" / "notes.md").write_text("# notes\n\nl4 on Spot.\n", encoding="utf-8")
    _git(repo, "commit", "-q", "-am", "l4 on Spot")
    return repo, base


def _expand(value: str, entry: dict[str, Any], base: str) -> str:
    """A workflow ``env`` value as GitHub expands it for one matrix entry."""
    value = value.replace("${{ github.event.pull_request.base.sha }}", base)
    for key, item in entry.items():
        value = value.replace(
            f"${{{{ matrix.{key} }}}}", str(item).lower() if isinstance(item, bool) else str(item)
        )
    assert "${{" not in value, value
    return value


def _run_step(
    step: dict[str, Any], repo: Path, base: str, tmp_path: Path, entry: dict[str, Any] | None = None
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """One workflow step as GitHub runs it (`bash -e`) in ``repo``, with `batchplane` on PATH and its ``env``
    expanded for ``entry``; returns the result and what the step wrote to ``$GITHUB_OUTPUT``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "batchplane"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from batchplane.cli import main; main()" "$@"\n')
    shim.chmod(0o755)
    python = bin_dir / "python"
    if not python.exists():
        python.symlink_to(sys.executable)
    output = tmp_path / "github_output"
    output.write_text("", encoding="utf-8")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO_ROOT),
        "GITHUB_ACTIONS": "true",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_ENV": str(tmp_path / "github_env"),
        **{key: _expand(value, entry or {}, base) for key, value in step.get("env", {}).items()},
    }
    result = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=repo, env=env, capture_output=True, text=True, timeout=600
    )
    written = dict(
        line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines() if "=" in line
    )
    return result, written


def _matrix(repo: Path, base: str, tmp_path: Path) -> list[dict[str, Any]]:
    """The matrix job's step run for real: the entries it hands to check and diff."""
    result, outputs = _run_step(load()["jobs"]["matrix"]["steps"][-1], repo, base, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    entries: list[dict[str, Any]] = json.loads(outputs["matrix"])["include"]
    assert outputs["count"] == str(len(entries))
    return entries


def _run_check_step(repo: Path, base: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The check job for the one stack file the recorded pull request touches."""
    (entry,) = _matrix(repo, base, tmp_path)
    result, _ = _run_step(load()["jobs"]["check"]["steps"][-1], repo, base, tmp_path, entry)
    return result


def test_the_matrix_of_the_recorded_pull_request_is_the_one_environment_it_changes(
    pull_request: tuple[Path, str], tmp_path: Path
) -> None:
    repo, base = pull_request
    assert _matrix(repo, base, tmp_path) == [  # not kind-lab (untouched), nothing for the doc
        {
            "key": "gke-prod-dws",
            "name": "gke-prod-dws",
            "file": f"stacks/{PROD_STACK}",
            "kind": "environment",
            "policyConfig": "",
            "removed": False,
        }
    ]


def test_the_check_step_fails_a_pr_that_replaces_a_production_node_pool(
    pull_request: tuple[Path, str], tmp_path: Path
) -> None:
    repo, base = pull_request
    result = _run_check_step(repo, base, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1, result.stdout
    (error,) = errors
    assert f"file=stacks/{PROD_STACK}" in error and "title=production-node-pool-replacement" in error
    assert 'node pool "l4" would be replaced' in error and "nodeConfig.spot" in error


def test_the_check_step_passes_it_when_the_stacks_policy_config_allows_replacing_that_pool(
    pull_request: tuple[Path, str], tmp_path: Path
) -> None:
    repo, base = pull_request
    allowed = tmp_path / "allowed"
    shutil.copytree(repo, allowed, symlinks=True)
    (allowed / "policies" / "config").mkdir()
    (allowed / "policies" / "config" / "gke-prod-dws.json").write_text(
        json.dumps({"production-node-pool-replacement": {"allowReplace": ["l4"]}})
    )
    result = _run_check_step(allowed, base, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "::error " not in result.stdout


def test_the_diff_step_writes_the_markdown_of_its_stack_file_for_the_comment(
    pull_request: tuple[Path, str], tmp_path: Path
) -> None:
    repo, base = pull_request
    work = tmp_path / "work"
    shutil.copytree(repo, work, symlinks=True)
    (entry,) = _matrix(work, base, tmp_path)
    result, _ = _run_step(load()["jobs"]["diff"]["steps"][-2], work, base, tmp_path, entry)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "github_env").read_text(
        encoding="utf-8"
    ) == "status=0\n"  # the comment step's exit code
    markdown = (work / "diff-comment" / "diff.md").read_text(encoding="utf-8")
    assert markdown.startswith("<!-- batchplane-diff -->")
    assert "l4" in markdown and "replace" in markdown.lower()

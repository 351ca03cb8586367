"""The PR workflow: least privilege, SHA-pinned actions, no persisted credentials, every stack checked."""

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

from tests.conftest import REPO_ROOT

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
    assert len(checkouts) == 3
    assert all(s["with"]["persist-credentials"] is False for s in checkouts)


def test_check_job_runs_batchplane_check_on_every_stack_with_annotations_against_the_pr_base() -> None:
    job = load()["jobs"]["check"]
    assert job["steps"][0]["with"]["fetch-depth"] == 0  # the base commit, for --base
    script = job["steps"][-1]["run"]
    assert "for file in stacks/Pulumi.*.yaml" in script
    assert 'batchplane check --stack "${stack}" --github --base "${BASE_SHA}"' in script
    assert "${{" not in script  # event values reach the shell through env


def test_diff_job_diffs_every_changed_stack_against_the_pr_base_and_keeps_one_comment() -> None:
    job = load()["jobs"]["diff"]
    checkout = job["steps"][0]
    assert checkout["with"]["fetch-depth"] == 0
    diff_step, comment_step = job["steps"][-2], job["steps"][-1]
    assert diff_step["env"] == {"BASE_SHA": "${{ github.event.pull_request.base.sha }}"}
    assert "git diff --name-only \"${BASE_SHA}\" HEAD -- 'stacks/Pulumi.*.yaml'" in diff_step["run"]
    assert 'batchplane diff --stack "${stack}" --base "${BASE_SHA}" --markdown' in diff_step["run"]
    assert comment_step["if"] == "always()"
    assert comment_step["env"]["GITHUB_TOKEN"] == "${{ github.token }}"
    assert "python .github/scripts/diff_comment.py" in comment_step["run"]
    # event values reach the shell through env, never spliced into the script
    assert "${{" not in diff_step["run"] and "${{" not in comment_step["run"]


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
    """A checkout as the check job sees it: the project with gke-prod-dws at the PR base, and a head commit that
    turns the production `l4` node pool to Spot (`nodeConfig.spot` is force-new: the pool would be replaced).
    Returns (the work tree, the base commit)."""
    repo = tmp_path_factory.mktemp("pr")
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO_ROOT / name, repo / name)
    shutil.copytree(REPO_ROOT / "policies", repo / "policies", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "stacks").mkdir()
    stack = (REPO_ROOT / "stacks" / PROD_STACK).read_text(encoding="utf-8")
    (repo / "stacks" / PROD_STACK).write_text(stack, encoding="utf-8")
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
    _git(repo, "commit", "-q", "-am", "l4 on Spot")
    return repo, base


def _run_check_step(repo: Path, base: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The check job's last step, as GitHub runs it (`bash -e`), with `batchplane` on PATH."""
    step = load()["jobs"]["check"]["steps"][-1]
    assert step["env"] == {"BASE_SHA": "${{ github.event.pull_request.base.sha }}"}
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "batchplane"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from batchplane.cli import main; main()" "$@"\n')
    shim.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO_ROOT),
        "BASE_SHA": base,
        "GITHUB_ACTIONS": "true",
    }
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=repo, env=env, capture_output=True, text=True, timeout=600
    )


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

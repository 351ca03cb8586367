"""``batchplane diff``: both forms (two files, a stack against a git ref), three formats, exit codes, and config
errors as GitHub annotations on the key's line."""

from __future__ import annotations

import json
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.diff.render import COMMENT_MARKER, SCHEMA, usd, usd_delta
from batchplane.pricing import load_price_table
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES, template_path
from tests.diff.helpers import (
    decrement_first_quota,
    h100_price,
    prod_dws_with_team_a_h100,
    stack_document,
    write_document,
)

PROD = template_path("gke-prod-dws")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def _json(runner: CliRunner, *args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["diff", *args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_template_against_a_copy_with_one_quota_lowered_shows_that_one_change_in_all_three_formats(
    runner: CliRunner, tmp_path: Path, name: str
) -> None:
    doc = stack_document(name)
    decrement_first_quota(doc)
    head = write_document(doc, tmp_path / f"Pulumi.{name}.yaml")
    args = ["--base-config", str(template_path(name)), "--config", str(head), "--no-objects"]
    data = _json(runner, *args)
    assert data["schema"] == SCHEMA and data["empty"] is False
    quotas = data["quotas"]
    assert isinstance(quotas, list) and len(quotas) == 1, quotas
    (change,) = quotas
    assert change["field"] == "nominalQuota" and change["delta"] == -1 and change["status"] == "changed"
    assert data["pools"] == []
    row = f"| {change['kind']} {change['name']} | {change['flavor']} | {change['resource']} | nominalQuota |"
    markdown = runner.invoke(app, ["diff", *args, "--markdown"])
    assert markdown.exit_code == 0, markdown.output
    assert markdown.stdout.startswith(COMMENT_MARKER)
    assert sum(line.startswith(row) for line in markdown.stdout.splitlines()) == 1
    assert f"| -1 {change['unit']} |" in markdown.stdout
    table = runner.invoke(app, ["diff", *args])
    assert table.exit_code == 0, table.output
    assert "Quotas" in table.stdout and f"-1 {change['unit']}" in table.stdout


def test_the_issue_example_prints_the_quota_margin_and_gpu_deltas_in_json(
    runner: CliRunner, tmp_path: Path
) -> None:
    head = prod_dws_with_team_a_h100(tmp_path, nominal=16)
    data = _json(runner, "--base-config", str(PROD), "--config", str(head), "--no-objects")
    assert [
        (q["name"], q["flavor"], q["unit"], q["before"], q["after"], q["delta"]) for q in data["quotas"]
    ] == [("team-a", "h100", "GPUs", 8, 16, 8)]
    assert [(c["pool"], c["margin"]) for c in data["capacity"]] == [("h100", {"before": 8, "after": 0})]
    costs = data["costs"]
    assert costs["label"] == "list price, maximum, not a bill"
    flex = h100_price(load_price_table())
    assert flex is not None
    eight_h100 = float(round(8 * flex.usd_per_hour / 8, 4))  # 8 more GPUs, each 1/8 of the node's price
    assert [(r["scope"], r["gpus"]["delta"], r["usdPerHour"]["delta"]) for r in costs["rows"]] == [
        ("team", 8, eight_h100),
        ("pool", 8, eight_h100),
        ("stack", 8, eight_h100),
    ]
    assert {(p["machineType"], p["model"], p["source"], p["upperBoundFor"]) for p in costs["prices"]} >= {
        ("a3-highgpu-8g", flex.model, flex.source, None if flex.model == "flex-start" else "flex-start")
    }
    delta = usd_delta(8 * flex.usd_per_hour / 8)
    markdown = runner.invoke(
        app, ["diff", "--base-config", str(PROD), "--config", str(head), "--no-objects", "--markdown"]
    )
    assert markdown.exit_code == 0, markdown.output
    assert (
        f"| team team-a on h100 | 16 GPUs · {usd(16 * flex.usd_per_hour / 8)} | 24 GPUs · {usd(24 * flex.usd_per_hour / 8)} | +8 GPUs | {delta} |"
        in markdown.stdout
    )
    assert f"a3-highgpu-8g us-central1 {flex.model}: ${flex.usd_per_hour}/h" in markdown.stdout
    terminal = runner.invoke(
        app,
        ["diff", "--base-config", str(PROD), "--config", str(head), "--no-objects"],
        env={"COLUMNS": "250"},
    )
    assert terminal.exit_code == 0, terminal.output
    team_line = next(line for line in terminal.stdout.splitlines() if "team team-a on h100" in line)
    assert "+8 GPUs" in team_line and delta in team_line
    # More quota makes 17-24 GPUs fit the queue, but one pod of them never fits an 8-GPU a3-highgpu-8g node
    # (issue #31): still refused, now for the node, and the row says so in words.
    rows = [
        (d["shape"], d["namespace"], d["before"]["reason"], d["after"]["allowed"], d["after"]["reason"])
        for d in data["decisions"]
    ]
    assert rows == [
        ("Job, 1 pod: 17 GPUs, 1 CPU, 1Gi", "team-a", "never-admissible", False, "larger-than-any-node"),
        ("Job, 1 pod: 24 GPUs, 1 CPU, 1Gi", "team-a", "never-admissible", False, "larger-than-any-node"),
    ]
    assert data["decisions"][1]["why"] == (
        "never runs: one pod asks for 24 GPUs, but the largest node flavor h100 runs on (a3-highgpu-8g) has 8 GPUs "
        "— ask for at most 8 GPUs per pod and use more pods"
    )


def test_on_an_on_demand_pool_the_markdown_shows_delta_dollars_per_hour_and_the_price_source(
    runner: CliRunner, tmp_path: Path
) -> None:
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    base = prod_dws_with_team_a_h100(tmp_path / "base", 8, "on-demand")
    head = prod_dws_with_team_a_h100(tmp_path / "head", 16, "on-demand")
    result = runner.invoke(
        app, ["diff", "--base-config", str(base), "--config", str(head), "--markdown", "--no-objects"]
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    g2 = load_price_table().lookup("gcp", "g2-standard-8", "us-central1", "on-demand")
    a3 = load_price_table().lookup("gcp", "a3-highgpu-8g", "us-central1", "on-demand")
    assert g2 is not None and a3 is not None and a3.usd_per_hour == Decimal("88.4899999025753")
    l4 = 12 * g2.usd_per_hour  # the l4 pool's 12 GPUs of quota, unchanged
    assert "| team team-a on h100 | 16 GPUs · $176.98/h | 24 GPUs · $265.47/h | +8 GPUs | +$88.49/h |" in out
    share = a3.usd_per_hour / 8
    assert (
        f"| stack gke-prod-dws | 36 GPUs · {usd(24 * share + l4)} | 44 GPUs · {usd(32 * share + l4)}"
        f" | +8 GPUs | {usd_delta(a3.usd_per_hour)} |" in out
    )
    assert (
        "a3-highgpu-8g us-central1 on-demand: $88.4899999025753/h —" in out and "retrieved 2026-07-30" in out
    )
    assert "list price, maximum, not a bill" in out


def test_the_markdown_with_objects_calls_out_the_replaced_policy_configmap(
    runner: CliRunner, tmp_path: Path
) -> None:
    head = prod_dws_with_team_a_h100(tmp_path, nominal=16)
    result = runner.invoke(app, ["diff", "--base-config", str(PROD), "--config", str(head), "--markdown"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("| changed")]
    assert any("ClusterQueue::kueue-clusterqueue-team-a" in line and "nominalQuota" in line for line in lines)
    assert any(
        line.startswith("| changed (replace) |") and "ConfigMap::quota-webhook-policy" in line
        for line in lines
    )


def test_a_config_diffed_with_itself_prints_no_change(runner: CliRunner) -> None:
    result = runner.invoke(app, ["diff", "--base-config", str(PROD), "--config", str(PROD), "--markdown"])
    assert result.exit_code == 0, result.output
    assert "No change to quotas" in result.stdout
    assert _json(runner, "--base-config", str(PROD), "--config", str(PROD))["empty"] is True


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git work tree holding the project file and the gke-prod-dws stack, committed."""
    (tmp_path / "stacks").mkdir()
    shutil.copy(REPO_ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copy(PROD, tmp_path / "stacks" / PROD.name)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
    return tmp_path


def test_stack_against_a_git_ref_reads_the_base_from_that_commit(runner: CliRunner, repo: Path) -> None:
    prod_dws_with_team_a_h100(repo / "stacks", nominal=16)
    data = _json(
        runner, "--stack", "gke-prod-dws", "--base", "HEAD", "--project-dir", str(repo), "--no-objects"
    )
    assert [(q["name"], q["before"], q["after"]) for q in data["quotas"]] == [("team-a", 8, 16)]


def test_a_stack_absent_at_the_base_ref_is_all_added(runner: CliRunner, repo: Path) -> None:
    shutil.copy(template_path("gke-dev"), repo / "stacks" / "Pulumi.gke-dev.yaml")
    data = _json(runner, "--stack", "gke-dev", "--base", "HEAD", "--project-dir", str(repo), "--no-objects")
    assert data["quotas"] and all(q["status"] == "added" for q in data["quotas"])
    assert data["decisions"] is None


def test_a_ref_that_is_not_a_commit_is_a_usage_error(runner: CliRunner, repo: Path) -> None:
    result = runner.invoke(
        app,
        [
            "diff",
            "--stack",
            "gke-prod-dws",
            "--base",
            "no-such-ref",
            "--project-dir",
            str(repo),
            "--no-objects",
        ],
    )
    assert result.exit_code == 2
    assert "not a commit" in result.stderr


def test_usage_errors_exit_2(runner: CliRunner) -> None:
    assert runner.invoke(app, ["diff", "--config", str(PROD)]).exit_code == 2
    both = ["diff", "--config", str(PROD), "--base-config", str(PROD), "--json", "--markdown"]
    assert runner.invoke(app, both).exit_code == 2


def test_an_invalid_head_exits_1_with_github_annotations_on_the_line_of_the_key(
    runner: CliRunner, tmp_path: Path
) -> None:
    head = prod_dws_with_team_a_h100(tmp_path, nominal=40)
    lines = head.read_text().splitlines()
    max_nodes_line = next(i for i, line in enumerate(lines, 1) if line.strip() == "maxNodes: 4")
    column = lines[max_nodes_line - 1].index("maxNodes") + 1
    result = runner.invoke(
        app, ["diff", "--base-config", str(PROD), "--config", str(head), "--github", "--no-objects"]
    )
    assert result.exit_code == 1
    assert "head: batchplane:target.gpuPools[0].maxNodes:" in result.stderr
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert annotations and all(f",line={max_nodes_line},col={column}," in a for a in annotations), annotations

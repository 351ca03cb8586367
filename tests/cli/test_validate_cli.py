"""`batchplane validate`: exit 0 valid, 1 with every error on stderr (one per line), 2 on usage/IO errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from tests.conftest import TEMPLATE_NAMES


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_every_template_validates(runner: CliRunner, template: str) -> None:
    result = runner.invoke(app, ["validate", "--stack", template])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"stack {template}: valid (")


def test_invalid_config_prints_every_error_with_its_key_path_and_exits_1(
    runner: CliRunner, tmp_path: Path
) -> None:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(
        "config:\n"
        "  batchplane:target: {kind: kind}\n"
        "  batchplane:typo: 1\n"
        "  batchplane:kueue:\n"
        "    resourceFlavors: [{name: f}]\n"
        "    clusterQueues:\n"
        "      - name: cq\n"
        "        resourceGroups:\n"
        "          - coveredResources: [cpu]\n"
        "            flavors: [{name: f, resources: [{name: cpu, nominalQuota: lots}]}]\n"
        "    localQueues: [{name: q, namespace: a, clusterQueue: nope}]\n"
    )
    result = runner.invoke(app, ["validate", "--config", str(path)])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        'batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0].nominalQuota: "lots" is not a Kubernetes quantity',
        "batchplane:typo: unknown key",
    ]


def test_yes_stays_a_string_as_in_pulumis_yaml_reader(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.yes.yaml"
    path.write_text("config:\n  batchplane:target: {kind: kind, clusterName: yes}\n")
    result = runner.invoke(app, ["validate", "--config", str(path)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("args", "want_stderr"),
    [
        (["validate"], "batchplane: give exactly one of --stack NAME or --config PATH\n"),
        (
            ["validate", "--stack", "kind", "--config", "x.yaml"],
            "batchplane: give exactly one of --stack NAME or --config PATH\n",
        ),
    ],
    ids=["neither", "both"],
)
def test_usage_errors_exit_2(runner: CliRunner, args: list[str], want_stderr: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.stderr == want_stderr


def test_unknown_stack_lists_the_stacks_and_exits_2(runner: CliRunner) -> None:
    result = runner.invoke(app, ["validate", "--stack", "nope"])
    assert result.exit_code == 2
    assert "no stack config" in result.stderr
    assert "stacks/Pulumi.nope.yaml or " in result.stderr and "templates/Pulumi.nope.yaml" in result.stderr
    assert f"templates: {', '.join(TEMPLATE_NAMES)})" in result.stderr


@pytest.mark.parametrize(
    ("content", "want_fragment"),
    [
        ("config: [1, 2]\n", "'config' must be a mapping of 'namespace:key' to values"),
        ("config: {a: [\n", "is not valid YAML"),
        ("- 1\n", "expected a mapping with a 'config' key, got list"),
    ],
    ids=["config-not-a-mapping", "broken-yaml", "document-not-a-mapping"],
)
def test_unreadable_stack_files_exit_2_with_the_reason(
    runner: CliRunner, tmp_path: Path, content: str, want_fragment: str
) -> None:
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text(content)
    result = runner.invoke(app, ["validate", "--config", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith("batchplane: ")
    assert want_fragment in result.stderr


def test_missing_file_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", "--config", str(tmp_path / "Pulumi.none.yaml")])
    assert result.exit_code == 2
    assert "cannot read" in result.stderr

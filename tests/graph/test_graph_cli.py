"""``batchplane graph``: formats, output files, exit codes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.graph import stack_graph, to_dot, to_mermaid
from tests.graph.conftest import many_teams_config, shipped, write
from tests.graph.test_graph_render import PNG_SIGNATURE


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.mark.parametrize(
    ("args", "exp_start"),
    [
        (["--format", "dot"], b'digraph "batchplane-kind" {'),
        (["--format", "mermaid"], b"flowchart LR\n"),
        (
            ["--format", "svg"],
            b'<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<!-- batchplane dot-sha256: ',
        ),
        ([], b'<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<!-- batchplane dot-sha256: '),
        (["--format", "png"], PNG_SIGNATURE),
    ],
    ids=["dot", "mermaid", "svg", "default-svg", "png-to-pipe"],
)
def test_graph_writes_each_format_to_stdout(runner: CliRunner, args: list[str], exp_start: bytes) -> None:
    result = runner.invoke(app, ["graph", "--stack", "kind", *args])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout_bytes.startswith(exp_start)


@pytest.mark.parametrize(
    ("file_name", "exp_format"),
    [
        ("g.svg", "svg"),
        ("g.png", "png"),
        ("g.dot", "dot"),
        ("g.gv", "dot"),
        ("g.mmd", "mermaid"),
        ("g.txt", "svg"),
    ],
    ids=["svg", "png", "dot", "gv", "mmd", "unknown-suffix-svg"],
)
def test_graph_output_format_follows_the_file_suffix(
    runner: CliRunner, tmp_path: Path, file_name: str, exp_format: str
) -> None:
    out = tmp_path / file_name
    result = runner.invoke(app, ["graph", "--stack", "gke-dws", "--output", str(out)])
    assert (result.exit_code, result.stderr) == (
        0,
        f"batchplane: wrote {out} ({exp_format}, stack gke-dws)\n",
    )
    data = out.read_bytes()
    graph = stack_graph(shipped("gke-dws"))
    if exp_format == "dot":
        assert data.decode() == to_dot(graph)
    elif exp_format == "mermaid":
        assert data.decode() == to_mermaid(graph)
    elif exp_format == "png":
        assert data.startswith(PNG_SIGNATURE)
    else:
        assert ET.fromstring(data).tag == "{http://www.w3.org/2000/svg}svg"


def test_graph_format_option_wins_over_the_suffix(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "g.svg"
    result = runner.invoke(app, ["graph", "--stack", "kind", "--format", "mermaid", "-o", str(out)])
    assert result.exit_code == 0
    assert out.read_text(encoding="utf-8") == to_mermaid(stack_graph(shipped("kind")))


def test_graph_reads_any_config_file(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, "scaled", many_teams_config(4))
    result = runner.invoke(app, ["graph", "--config", str(path), "--format", "mermaid"])
    assert result.exit_code == 0
    assert "%% batchplane graph: stack scaled, queue topology" in result.stdout
    assert result.stdout.count("(ClusterQueue)") == 4


def test_graph_of_an_invalid_stack_lists_every_error_and_exits_1(runner: CliRunner, tmp_path: Path) -> None:
    config = {
        "batchplane:target": {"kind": "kind"},
        "batchplane:kueue": {"localQueues": [{"name": "q", "namespace": "a", "clusterQueue": "missing"}]},
    }
    result = runner.invoke(app, ["graph", "--config", str(write(tmp_path, "bad", config)), "-f", "dot"])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        'batchplane:kueue.localQueues[0].clusterQueue: no ClusterQueue "missing" in this stack (defined: none)\n'
    )


@pytest.mark.parametrize(
    ("args", "exp_stderr"),
    [
        (["--format", "svg"], "batchplane: give exactly one of --stack NAME or --config PATH\n"),
        (["--stack", "kind", "--format", "jpeg"], None),
    ],
    ids=["no-stack", "unknown-format"],
)
def test_graph_usage_errors_exit_2(runner: CliRunner, args: list[str], exp_stderr: str | None) -> None:
    result = runner.invoke(app, ["graph", *args])
    assert result.exit_code == 2
    if exp_stderr is not None:
        assert result.stderr == exp_stderr
    else:
        assert "'jpeg' is not one of" in result.stderr


def test_graph_without_dot_binary_exits_2_and_names_the_package(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = runner.invoke(app, ["graph", "--stack", "kind", "--format", "svg"])
    assert result.exit_code == 2
    assert (
        "the Graphviz `dot` binary is not installed (Debian/Ubuntu: apt-get install graphviz;"
        in result.stderr
    )
    ok = runner.invoke(app, ["graph", "--stack", "kind", "--format", "dot"])  # text formats need no binary
    assert ok.exit_code == 0


def test_graph_to_an_unwritable_path_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "missing-dir" / "g.dot"
    result = runner.invoke(app, ["graph", "--stack", "kind", "--output", str(out)])
    assert (result.exit_code, result.stderr) == (
        2,
        f"batchplane: cannot write {out}: No such file or directory\n",
    )

"""kind preflight: Docker, the kind CLI, the cluster's node and images on it, through fake ``docker``/``kind``
executables on ``PATH`` (the machine running the tests has no Docker engine)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from batchplane.preflight import Environment, Report, preflight
from tests.preflight.conftest import fake_executable, template, template_with
from tests.preflight.olm_helpers import kubeconfig
from tests.preflight.replay import RecordedServer, Replay, load

# A docker stand-in: `version` answers per $FAKE_ENGINE, `inspect` per $FAKE_NODE ("running", "stopped", absent),
# `exec … crictl inspecti` per $FAKE_LOADED (the image the node has).
DOCKER = """
case "$1" in
  version) [ "$FAKE_ENGINE" = up ] && { echo 28.5.1; exit 0; }
           echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2
           exit 1 ;;
  inspect) case "$FAKE_NODE" in
             running) echo "true kindest/node:v1.34.0@sha256:7416a61b42b1662ca6ca89f02028ac133a309a2a30ba309614e8ec94d976dc5a" ;;
             stopped) echo "false kindest/node:v1.34.0@sha256:7416a61b42b1662ca6ca89f02028ac133a309a2a30ba309614e8ec94d976dc5a" ;;
             *) echo "Error: No such object: $4" >&2; exit 1 ;;
           esac ;;
  exec) [ "$6" = "$FAKE_LOADED" ] && { echo sha256:1f2e; exit 0; }
        echo "no such image" >&2; exit 1 ;;
esac
"""


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A bin directory first on PATH with fake docker and kind; the engine is up, the node runs, nothing loaded; the
    cluster's API (a recorded server) has the Prometheus Operator's CRDs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_executable(bin_dir, "docker", DOCKER)
    fake_executable(bin_dir, "kind", "echo kind v0.30.0\n")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("FAKE_ENGINE", "up")
    monkeypatch.setenv("FAKE_NODE", "running")
    monkeypatch.setenv("FAKE_LOADED", "")
    with RecordedServer(load("monitoring/prometheus-operator-crds.json")) as server:
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path, server.url, "kind-batchplane")))
        yield bin_dir


PUBLISHED = "ghcr.io/batchplane/quota-webhook:0.1.0"


def run(
    image_recording: str = "images/ghcr-served.json", *, published: bool = False
) -> tuple[Report, Replay]:
    replay = Replay(load(image_recording))
    stack = template_with("kind", image=PUBLISHED) if published else template("kind")
    return preflight(stack, Environment(adapter=replay)), replay


def test_a_running_kind_cluster_passes_and_no_registry_is_asked_for_the_image_the_stack_builds(
    tools: Path,
) -> None:
    report, replay = run()
    assert report.findings == []
    assert report.checked == ["docker", "kind", "kube-context", "monitoring"]
    assert replay.requests == []


def test_a_running_kind_cluster_with_a_published_image_passes(tools: Path) -> None:
    report, _ = run(published=True)
    assert report.findings == []
    assert report.checked == ["docker", "kind", "kube-context", "monitoring", "image"]


def test_docker_missing_is_a_blocker(tools: Path) -> None:
    (tools / "docker").unlink()
    report, _ = run()
    assert [(f.check, f.path) for f in report.blockers] == [("docker", "batchplane:target")]
    assert "not installed" in report.blockers[0].message


def test_a_docker_engine_that_does_not_answer_is_a_blocker(
    tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_ENGINE", "down")
    report, _ = run()
    [finding] = report.blockers
    assert finding.check == "docker" and "Is the docker daemon running?" in finding.message


def test_the_kind_cli_missing_is_a_blocker(tools: Path) -> None:
    (tools / "kind").unlink()
    report, _ = run()
    assert [f.check for f in report.blockers] == ["kind"]
    assert "go install sigs.k8s.io/kind" in report.blockers[0].fix


def test_a_cluster_not_created_yet_is_a_blocker_with_the_create_command(
    tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NODE", "absent")
    report, _ = run()
    [finding] = report.blockers
    assert finding.check == "kind" and finding.fix == "kind create cluster --name batchplane"


def test_a_stopped_node_is_a_blocker_naming_its_node_image(
    tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NODE", "stopped")
    report, _ = run()
    [finding] = report.blockers
    assert (
        "kindest/node:v1.34.0" in finding.message and finding.fix == "docker start batchplane-control-plane"
    )


def test_an_unpublished_image_blocks_unless_kind_load_put_it_on_the_node(
    tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, _ = run("images/ghcr-missing.json", published=True)
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("image", "batchplane:webhook.image")
    assert "omit webhook.image so that the stack builds it" in finding.fix
    assert f"kind load docker-image {PUBLISHED} --name batchplane" in finding.fix
    monkeypatch.setenv("FAKE_LOADED", PUBLISHED)
    report, _ = run("images/ghcr-missing.json", published=True)
    assert report.findings == []

"""``webhook.build.inCluster``: the webhook image built by an OpenShift BuildConfig binary build, so no Docker engine
and no registry route are needed where ``pulumi up`` runs.

The build runs with the real kubernetes client against a loopback API server that answers like OpenShift's build API
(``instantiatebinary`` starts a Build; the Build then reports its phase and pushed digest)."""

from __future__ import annotations

import io
import json
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.offline import read_stack_file, run_program
from batchplane.operators.readiness import GateError, KubernetesClusterClient
from batchplane.preflight.requirements import stack_requirements
from batchplane.stack import load_stack
from batchplane.targets.openshift.binary_build import context_files, run_binary_build
from tests.conftest import REPO_ROOT, TEMPLATES_DIR
from tests.operators.conftest import FakeClock

NS = "batchplane"
DIGEST = "sha256:" + "ab" * 32


def build(phase: str, **status: Any) -> dict[str, Any]:
    """A ``build.openshift.io/v1`` Build as the API answers it (openshift/api ``build/v1/types.go``)."""
    return {
        "apiVersion": "build.openshift.io/v1",
        "kind": "Build",
        "metadata": {"name": "quota-webhook-3", "namespace": NS},
        "status": {"phase": phase, **status},
    }


class BuildApi:
    def __init__(self, phases: list[dict[str, Any]]) -> None:
        self.phases = phases
        self.uploads: list[tuple[str, str, bytes]] = []

    def answer(self, method: str, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        base = f"/apis/build.openshift.io/v1/namespaces/{NS}"
        if method == "POST" and path == f"{base}/buildconfigs/quota-webhook/instantiatebinary":
            self.uploads.append((path, headers.get("Content-Type"), body))
            return 201, build("New")
        if method == "GET" and path == f"{base}/builds/quota-webhook-3":
            return 200, self.phases.pop(0) if len(self.phases) > 1 else self.phases[0]
        return 404, {"kind": "Status", "status": "Failure", "reason": "NotFound", "message": path}


@pytest.fixture
def build_api(request: pytest.FixtureRequest) -> Iterator[tuple[BuildApi, str]]:
    api = BuildApi(list(request.param))

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, answer = api.answer(self.command, self.path.partition("?")[0], self.headers, body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _serve

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = (
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:"
        f"{server.server_address[1]}'}}\ncontexts:\n- name: ctx\n  context: {{cluster: c, user: u}}\n"
        "current-context: ctx\nusers:\n- name: u\n  user: {token: t}\n"
    )
    try:
        yield api, kubeconfig
    finally:
        server.shutdown()
        server.server_close()


PROPS = {
    "namespace": NS,
    "buildConfig": "quota-webhook",
    "context": str(REPO_ROOT),
    "timeoutSeconds": 600,
    "intervalSeconds": 10,
}


@pytest.mark.parametrize(
    "build_api",
    [[build("Pending"), build("Running"), build("Complete", output={"to": {"imageDigest": DIGEST}})]],
    indirect=True,
)
def test_the_context_is_uploaded_as_oc_start_build_does_and_the_pushed_digest_comes_back(
    build_api: tuple[BuildApi, str],
) -> None:
    api, kubeconfig = build_api
    clock = FakeClock()
    out = run_binary_build(PROPS, KubernetesClusterClient(kubeconfig, "ctx"), clock=clock, sleep=clock.sleep)
    assert out == {"build": "quota-webhook-3", "digest": DIGEST}
    [(_, content_type, body)] = api.uploads
    assert content_type == "application/octet-stream"
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as archive:
        names = archive.getnames()
    assert {
        "webhook/Dockerfile",
        "pyproject.toml",
        "webhook/requirements.txt",
        "batchplane/__init__.py",
    } <= set(names)
    assert not [n for n in names if n.startswith((".venv", "tests/", ".git")) or "__pycache__" in n]
    assert clock.sleeps == [10.0, 10.0]


@pytest.mark.parametrize(
    "build_api",
    [
        [
            build(
                "Failed",
                reason="DockerBuildFailed",
                message="Docker build strategy has failed.",
                logSnippet="pip: no",
            )
        ]
    ],
    indirect=True,
)
def test_a_failed_build_fails_with_its_message_and_log_snippet(build_api: tuple[BuildApi, str]) -> None:
    _, kubeconfig = build_api
    with pytest.raises(
        GateError,
        match=r"Build batchplane/quota-webhook-3 Failed: Docker build strategy has failed\.\npip: no",
    ):
        run_binary_build(PROPS, KubernetesClusterClient(kubeconfig, "ctx"))


def test_the_context_is_what_the_dockerfile_copies() -> None:
    files = context_files(REPO_ROOT)
    assert "webhook/Dockerfile" in files and "README.md" in files
    assert all(
        f.startswith(("batchplane/", "webhook/")) or f in {"README.md", "pyproject.toml"} for f in files
    )


def _in_cluster_config(**build_settings: Any) -> dict[str, Any]:
    config = read_stack_file(TEMPLATES_DIR / "Pulumi.openshift-ai.yaml")
    config["batchplane:webhook"] = {"build": {"registry": "openshift", "inCluster": True, **build_settings}}
    return config


def test_offline_the_stack_declares_a_build_config_and_no_docker_build_nor_route() -> None:
    run = run_program(REPO_ROOT, "openshift-ai", _in_cluster_config())
    types = [r.type for r in run.resources]
    assert "docker-build:index:Image" not in types
    config = run.get("kubernetes:build.openshift.io/v1:BuildConfig", "webhook-image-buildconfig")
    assert config.inputs["spec"] == {
        "runPolicy": "Serial",
        "source": {"type": "Binary", "binary": {}},
        "strategy": {"type": "Docker", "dockerStrategy": {"dockerfilePath": "webhook/Dockerfile"}},
        "output": {"to": {"kind": "ImageStreamTag", "name": config.inputs["spec"]["output"]["to"]["name"]}},
    }
    assert config.inputs["spec"]["output"]["to"]["name"].startswith("quota-webhook:")
    gates = [r.inputs.get("gate") for r in run.of_type("pulumi-python:dynamic:Resource")]
    assert "binary-build" in gates and "registry-route" not in gates and "service-account-token" not in gates
    [deployment] = [r for r in run.resources if r.type == "kubernetes:apps/v1:Deployment"]
    image = deployment.inputs["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image.startswith(
        "image-registry.openshift-image-registry.svc:5000/batchplane/quota-webhook@sha256:"
    )
    requirements = stack_requirements(load_stack(_in_cluster_config(), "openshift-ai"))
    assert (requirements.registry_route, requirements.builds_image) == (None, None)  # no route, no Docker


@pytest.mark.parametrize(
    ("build_settings", "message"),
    [
        ({"registry": "kind"}, "inCluster is allowed only with registry openshift"),
        ({"registryHost": "registry.example.com"}, "remove registryHost"),
    ],
)
def test_in_cluster_needs_the_openshift_registry_and_no_route(
    build_settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigValidationError, match=message):
        load_stack(_in_cluster_config(**build_settings), "openshift-ai")


def test_the_archive_is_reproducible(tmp_path: Path) -> None:
    from batchplane.targets.openshift.binary_build import context_archive, context_digest

    (tmp_path / "webhook").mkdir()
    (tmp_path / "webhook" / "Dockerfile").write_text("FROM x\nCOPY app /app\nCOPY --from=b /y /z\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "main.py").write_text("print(1)\n")
    assert context_archive(tmp_path) == context_archive(tmp_path)
    before = context_digest(tmp_path)
    (tmp_path / "app" / "main.py").write_text("print(2)\n")
    assert context_digest(tmp_path) != before
    assert json.dumps(context_files(tmp_path)) == '["app/main.py", "webhook/Dockerfile"]'

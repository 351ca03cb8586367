"""The readiness gate's dynamic provider and its real Kubernetes client (without a cluster)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from batchplane.operators import readiness
from batchplane.operators.readiness import ClusterApiError, KubernetesClusterClient, is_transient
from batchplane.operators.readiness_provider import ReadinessGateProvider
from tests.operators.conftest import FakeCluster
from tests.preflight.olm_helpers import kubeconfig
from tests.preflight.replay import RecordedServer, load

UNREACHABLE_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:9"}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
users:
- name: u
  user: {token: not-a-real-token}
"""


def test_real_client_reports_an_unreachable_api_server_as_transient() -> None:
    client = KubernetesClusterClient(UNREACHABLE_KUBECONFIG, "ctx")
    with pytest.raises(ClusterApiError) as caught:
        client.ready_endpoints("kueue-system", "kueue-webhook-service")
    assert caught.value.status == 0
    assert caught.value.message.startswith("cannot reach the API server: ")
    assert is_transient(caught.value)


def test_provider_create_polls_and_returns_outputs_without_the_kubeconfig(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[Any, Any]] = []

    def fake_client(kubeconfig: Any, context: Any) -> FakeCluster:
        seen.append((kubeconfig, context))
        return FakeCluster(endpoints=[1], dry_runs=[None])

    monkeypatch.setattr(readiness, "KubernetesClusterClient", fake_client)
    props = {
        "gate": "kueue-webhook",
        "namespace": "kueue-system",
        "service": "kueue-webhook-service",
        "resourceFlavorApiVersion": "kueue.x-k8s.io/v1beta2",
        "timeoutSeconds": 5,
        "intervalSeconds": 1,
        "context": "kind-batchplane",
        "kubeconfig": "secret-text",
        "version": "0.19.2",
    }
    result = ReadinessGateProvider().create(props)
    assert seen == [("secret-text", "kind-batchplane")]
    assert result.id == "kueue-webhook/kueue-system/kueue-webhook-service"
    assert "kubeconfig" not in result.outs
    assert result.outs["attempts"] == 1
    assert result.outs["version"] == "0.19.2"


@pytest.mark.parametrize(
    ("news", "exp_changes"),
    [
        pytest.param({"version": "0.19.2", "kubeconfig": "rotated"}, False, id="credentials-only"),
        pytest.param({"version": "0.20.0", "kubeconfig": "same"}, True, id="kueue-upgraded"),
    ],
)
def test_gate_reruns_only_when_what_it_awaits_changes(news: dict[str, Any], exp_changes: bool) -> None:
    olds = {"gate": "kueue-webhook", "version": "0.19.2", "attempts": 3, "detail": "ok", "waitedSeconds": 10}
    result = ReadinessGateProvider().diff("id", olds, {"gate": "kueue-webhook", **news})
    assert result.changes is exp_changes
    assert result.replaces == []


ROUTE_GATE = {
    "gate": "registry-route",
    "namespace": "openshift-image-registry",
    "route": "default-route",
    "timeoutSeconds": 0,
    "intervalSeconds": 1,
    "context": "ocp",
    "version": "",
}


def test_the_registry_route_gate_outputs_the_route_host_read_through_the_kubernetes_client(
    tmp_path: Path,
) -> None:
    with RecordedServer(load("openshift/registry-route.json")) as server:
        props = {**ROUTE_GATE, "kubeconfig": str(kubeconfig(tmp_path, server.url, "ocp"))}
        result = ReadinessGateProvider().create(props)
        requests = server.replay.requests
    assert result.outs["host"] == "default-route-openshift-image-registry.apps.ocp.example.com"
    assert result.id == "registry-route/openshift-image-registry/default-route"
    assert {r.split(" ", 1)[0] for r in requests} == {
        "GET"
    }  # reads only: the cluster setting is never changed


def test_the_registry_route_gate_fails_naming_the_oc_patch_fix_when_the_route_is_missing(
    tmp_path: Path,
) -> None:
    with RecordedServer(load("openshift/no-registry-route.json")) as server:
        props = {**ROUTE_GATE, "kubeconfig": str(kubeconfig(tmp_path, server.url, "ocp"))}
        with pytest.raises(readiness.GateTimeoutError) as caught:
            ReadinessGateProvider().create(props)
    assert "Route openshift-image-registry/default-route not found" in str(caught.value)
    assert (
        """oc patch configs.imageregistry.operator.openshift.io/cluster --type merge -p '{"spec":{"defaultRoute":true}}'"""
        in str(caught.value)
    )


def test_the_pickled_provider_loads_from_any_working_directory(tmp_path: Path) -> None:
    """Pulumi pickles the provider with dill by reference; the dynamic-provider host must load it outside
    the repository root (another cwd, the Automation API) — only the installed package is importable there."""
    import base64
    import os
    import subprocess
    import sys

    from pulumi.dynamic.dynamic import serialize_provider

    payload = serialize_provider(ReadinessGateProvider())
    assert b"components" not in base64.b64decode(payload)
    code = (
        "import base64, sys, dill; p = dill.loads(base64.b64decode(sys.argv[1])); "
        "print(type(p).__module__, type(p).__name__)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", code, payload],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["batchplane.operators.readiness_provider", "ReadinessGateProvider"]

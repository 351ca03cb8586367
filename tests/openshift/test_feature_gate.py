"""The ProvisioningRequest admission check needs OpenShift's ``ProvisioningRequestAvailable`` feature gate, which
openshift/api enables in ``DevPreviewNoUpgrade`` only (``features/features.go``): a NoUpgrade feature set needs an
explicit key and is refused in production; at deploy time a gate reads ``featuregates.config.openshift.io/cluster``
before any Kueue object (the AdmissionCheck among them)."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.offline import read_stack_file, run_program
from batchplane.operators.readiness import ClusterApiError, GateError, read_feature_gate, run_gate
from batchplane.stack import load_stack
from tests.config.factories import DELETE, apply_changes
from tests.conftest import REPO_ROOT, TEMPLATES_DIR
from tests.operators.conftest import FakeCluster

GATE = "ProvisioningRequestAvailable"
SETS = ("DevPreviewNoUpgrade",)


def feature_gate(
    feature_set: str, *, enabled: bool, versions: tuple[str, ...] = ("4.21.3",)
) -> dict[str, Any]:
    """A FeatureGate ``cluster`` as the cluster-config-operator writes it (one status entry per payload version)."""
    entry = {"name": GATE}
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "FeatureGate",
        "metadata": {"name": "cluster"},
        "spec": {"featureSet": feature_set} if feature_set != "Default" else {},
        "status": {
            "featureGates": [
                {
                    "version": v,
                    "enabled": [{"name": "GatewayAPI"}, *([entry] if enabled else [])],
                    "disabled": [] if enabled else [entry],
                }
                for v in versions
            ]
        },
    }


def gate_props() -> dict[str, Any]:
    return {
        "gate": "feature-gate",
        "namespace": "",
        "featureGate": GATE,
        "enablingFeatureSets": list(SETS),
        "timeoutSeconds": 30,
        "intervalSeconds": 10,
    }


def run(cluster: FakeCluster) -> Any:
    clock = iter(range(0, 1000, 10))
    return run_gate(gate_props(), cluster, clock=lambda: next(clock), sleep=lambda _: None)


def test_the_gate_passes_when_every_version_enables_the_gate() -> None:
    cluster = FakeCluster(
        objects={("featuregates", "cluster"): [feature_gate("DevPreviewNoUpgrade", enabled=True)]}
    )
    outcome = run(cluster)
    assert outcome.attempts == 1 and "enables ProvisioningRequestAvailable for 4.21.3" in outcome.detail
    assert cluster.calls == ["get featuregates /cluster"]


def test_the_gate_waits_while_the_selected_feature_set_rolls_out() -> None:
    answers = [
        feature_gate("DevPreviewNoUpgrade", enabled=False),
        ClusterApiError(503, "service unavailable"),
        feature_gate("DevPreviewNoUpgrade", enabled=True),
    ]
    assert run(FakeCluster(objects={("featuregates", "cluster"): answers})).attempts == 3


def test_a_default_feature_set_fails_the_gate_at_once_naming_the_irreversible_fix() -> None:
    cluster = FakeCluster(objects={("featuregates", "cluster"): [feature_gate("Default", enabled=False)]})
    with pytest.raises(GateError) as info:
        run(cluster)
    assert "disables ProvisioningRequestAvailable for 4.21.3" in str(info.value)
    assert '"featureSet":"DevPreviewNoUpgrade"' in str(info.value) and "CANNOT BE UNDONE" in str(info.value)
    assert len(cluster.calls) == 1


def test_custom_no_upgrade_enables_the_gate_only_when_it_lists_it() -> None:
    both = ("DevPreviewNoUpgrade", "CustomNoUpgrade")
    obj = feature_gate("CustomNoUpgrade", enabled=False)
    assert read_feature_gate(obj, GATE, both).state == "disabled"
    obj["spec"]["customNoUpgrade"] = {"enabled": [GATE]}
    assert read_feature_gate(obj, GATE, both).state == "rolling-out"


def test_custom_no_upgrade_listing_the_gate_still_reads_disabled_because_the_crd_ships_for_dev_preview_only() -> (
    None
):
    """cluster-autoscaler-operator release-4.21 annotates the ProvisioningRequest CRD
    release.openshift.io/feature-set: DevPreviewNoUpgrade: the gate enabled under CustomNoUpgrade creates no CRD."""
    obj = feature_gate("CustomNoUpgrade", enabled=True)
    obj["spec"]["customNoUpgrade"] = {"enabled": [GATE]}
    reading = read_feature_gate(obj, GATE, SETS)
    assert reading.state == "disabled" and "DevPreviewNoUpgrade only" in reading.detail


def test_a_release_without_the_gate_and_a_cluster_without_a_feature_gate_are_told_apart() -> None:
    obj = feature_gate("DevPreviewNoUpgrade", enabled=True)
    obj["status"]["featureGates"][0]["enabled"] = [{"name": "GatewayAPI"}]
    assert read_feature_gate(obj, GATE, SETS).state == "unknown"
    assert read_feature_gate(None, GATE, SETS).state == "missing"
    assert read_feature_gate({"spec": {}}, GATE, SETS).state == "pending"


def test_during_an_upgrade_every_listed_version_must_enable_it() -> None:
    obj = feature_gate("DevPreviewNoUpgrade", enabled=True, versions=("4.21.3", "4.21.4"))
    obj["status"]["featureGates"][1]["enabled"] = []
    obj["status"]["featureGates"][1]["disabled"] = [{"name": GATE}]
    assert read_feature_gate(obj, GATE, SETS).state == "rolling-out"


# --- config ---------------------------------------------------------------------------------------------------------


def gpu_template(**changes: Any) -> dict[str, Any]:
    return apply_changes(read_stack_file(TEMPLATES_DIR / "Pulumi.openshift-ai-gpu.yaml"), **changes)


def test_a_no_upgrade_feature_set_without_the_explicit_key_is_an_error_naming_it() -> None:
    with pytest.raises(ConfigValidationError) as info:
        load_stack(gpu_template(target__allowNoUpgradeFeatureSet=DELETE))
    [issue] = [i for i in info.value.issues if "featureSet" in i.path or "FeatureSet" in i.path]
    assert issue.path == "batchplane:target.allowNoUpgradeFeatureSet"
    assert "cannot be undone" in issue.message and "prevents upgrades" in issue.message


def test_a_production_stack_is_refused_a_no_upgrade_feature_set_even_with_the_key() -> None:
    config = gpu_template(environment="production")
    with pytest.raises(ConfigValidationError) as info:
        load_stack(config)
    paths = {i.path for i in info.value.issues}
    assert "batchplane:target.featureSet" in paths
    [issue] = [i for i in info.value.issues if i.path == "batchplane:target.featureSet"]
    assert "production" in issue.message


def test_the_template_with_the_key_loads() -> None:
    assert load_stack(gpu_template()).config.target.allow_no_upgrade_feature_set is True  # type: ignore[union-attr]


# --- the program ------------------------------------------------------------------------------------------------------


def test_the_program_reads_the_feature_gate_before_the_admission_check() -> None:
    run_ = run_program(REPO_ROOT, "openshift-ai-gpu", gpu_template(), preview=False)
    [gate] = [
        r
        for r in run_.resources
        if r.type == "pulumi-python:dynamic:Resource" and r.inputs.get("gate") == "feature-gate"
    ]
    assert gate.inputs["featureGate"] == GATE
    assert gate.inputs["enablingFeatureSets"] == list(SETS)
    checks = [r for r in run_.resources if r.type.endswith(":AdmissionCheck")]
    assert checks
    by_urn = {r.urn: r for r in run_.resources}

    def waits_for(resource: Any, target: str, seen: set[str]) -> bool:
        for dep in [*resource.dependencies, resource.parent]:
            if dep == target:
                return True
            if dep in by_urn and dep not in seen:
                seen.add(dep)
                if waits_for(by_urn[dep], target, seen):
                    return True
        return False

    assert all(waits_for(check, gate.urn, set()) for check in checks)
    # offline nothing was read from the cluster: said as such, never as a verdict
    [note] = [m.message for m in run_.logs if m.message.startswith("FeatureGate cluster not checked offline")]
    assert GATE in note and note.endswith("run batchplane preflight")


def test_the_gates_provider_says_it_read_the_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a real `pulumi up` the provider's outputs carry ``checked: true`` (so no offline note is logged)."""
    from batchplane.operators import readiness
    from batchplane.operators.readiness_provider import ReadinessGateProvider

    cluster = FakeCluster(
        objects={("featuregates", "cluster"): [feature_gate("DevPreviewNoUpgrade", enabled=True)]}
    )
    monkeypatch.setattr(readiness, "KubernetesClusterClient", lambda *_: cluster)
    outs = ReadinessGateProvider()._run(
        {**gate_props(), "checked": None, "context": "ocp", "kubeconfig": None}
    )
    assert outs["checked"] is True and outs["attempts"] == 1


def test_a_stack_without_provisioning_requests_declares_no_feature_gate() -> None:
    config = gpu_template(
        target__gpuPools__0__provisioning="none",
        target__featureSet=DELETE,
        target__allowNoUpgradeFeatureSet=DELETE,
    )
    run_ = run_program(REPO_ROOT, "openshift-ai-gpu", config, preview=False)
    assert not [r for r in run_.resources if r.inputs.get("gate") == "feature-gate"]


def test_the_real_client_reads_the_cluster_scoped_feature_gate(tmp_path: Any) -> None:
    from batchplane.operators.readiness import KubernetesClusterClient
    from tests.preflight.olm_helpers import kubeconfig
    from tests.preflight.replay import RecordedServer, load

    with RecordedServer(load("openshift/featuregate-dev-preview.json")) as server:
        client = KubernetesClusterClient(str(kubeconfig(tmp_path, server.url, "ctx")), "ctx")
        outcome = run_gate(gate_props(), client, clock=lambda: 0.0, sleep=lambda _: None)
        assert server.replay.unmatched == []
    assert "enables ProvisioningRequestAvailable for 4.21.3" in outcome.detail

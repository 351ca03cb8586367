"""OpenShift preflight of the cluster's own objects, through the real kubernetes client against recorded answers: the
FeatureGate ``cluster`` (``ProvisioningRequestAvailable`` for GPU pools with ProvisioningRequests) and the Red Hat build
of Kueue's ``Kueue`` CR ``cluster`` (the frameworks the stack needs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from batchplane.preflight import Environment, Report, preflight
from batchplane.stack import Stack
from tests.preflight.conftest import template
from tests.preflight.olm_helpers import OPENSHIFT_DEFAULTS, kubeconfig
from tests.preflight.replay import RecordedServer, load

#: The OpenShift defaults but the two objects these tests are about (each test records its own FeatureGate and Kueue CR).
BASE = tuple(
    r
    for r in OPENSHIFT_DEFAULTS
    if r not in {"openshift/featuregate-dev-preview.json", "openshift/no-kueue-cr.json"}
)


def check(stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *recordings: str) -> Report:
    with RecordedServer(load(*recordings, *BASE)) as server:
        monkeypatch.setenv(
            "KUBECONFIG", str(kubeconfig(tmp_path, server.url, stack.config.target.kube_context()))
        )
        report = preflight(stack, Environment(check_images=False))
        assert server.replay.unmatched == []
        return report


def test_a_cluster_with_the_gate_enabled_and_no_kueue_cr_yet_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = check(
        template("openshift-ai-gpu"),
        tmp_path,
        monkeypatch,
        "openshift/featuregate-dev-preview.json",
        "openshift/no-kueue-cr.json",
    )
    assert report.findings == []
    assert {"feature-gate", "kueue-cr"} <= set(report.checked)


def test_a_default_feature_set_is_a_blocker_naming_feature_set_and_the_irreversible_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = check(
        template("openshift-ai-gpu"),
        tmp_path,
        monkeypatch,
        "openshift/featuregate-default.json",
        "openshift/no-kueue-cr.json",
    )
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("feature-gate", "batchplane:target.featureSet")
    assert (
        "FeatureGate cluster (featureSet Default) disables ProvisioningRequestAvailable for 4.21.3"
        in finding.message
    )
    assert 'gpuPools[0] "a10g"' in finding.message
    assert "CANNOT BE UNDONE" in finding.fix and "provisioning: none" in finding.fix
    assert report.exit_code == 1


def test_a_feature_gate_the_user_cannot_read_is_reported_as_not_checked_never_as_a_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = check(
        template("openshift-ai-gpu"),
        tmp_path,
        monkeypatch,
        "openshift/featuregate-forbidden.json",
        "openshift/no-kueue-cr.json",
    )
    [finding] = report.findings
    assert finding.severity == "warning" and finding.message.startswith("not checked: ")
    assert "feature-gate" not in report.checked


def test_a_stack_without_gpu_pools_does_not_read_the_feature_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = check(template("openshift-ai"), tmp_path, monkeypatch, "openshift/no-kueue-cr.json")
    assert report.findings == [] and "feature-gate" not in report.checked


def test_an_existing_kueue_cr_without_the_stack_s_frameworks_is_reported_naming_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = check(template("openshift-ai"), tmp_path, monkeypatch, "openshift/kueue-cr-batchjob-only.json")
    [finding] = report.findings
    assert (finding.severity, finding.check, finding.path) == (
        "warning",
        "kueue-cr",
        "batchplane:target.kueue.frameworks",
    )
    assert "enables BatchJob, not RayJob, RayCluster, RayService, JobSet, TrainJob" in finding.message


def test_a_running_kueue_that_serves_only_v1beta1_is_a_blocker_at_the_api_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = check(
        template("openshift-ai"),
        tmp_path,
        monkeypatch,
        "openshift/apis-kueue-v1beta1.json",
        "openshift/no-kueue-cr.json",
    )
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("kueue-api", "batchplane:kueue.apiVersion")
    assert "serves kueue.x-k8s.io v1beta1, not v1beta2" in finding.message


def test_a_cluster_queue_default_the_stack_does_not_declare_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = check(
        template("openshift-ai"),
        tmp_path,
        monkeypatch,
        "openshift/apis-kueue-with-default-queue.json",
        "openshift/no-kueue-cr.json",
    )
    [finding] = report.findings
    assert (finding.severity, finding.check, finding.path) == (
        "warning",
        "kueue-api",
        "batchplane:target.openshiftAi",
    )
    assert 'ClusterQueue "default"' in finding.message and "refuseUndeclaredQueues" in finding.fix

"""The readiness gates' polling logic, run for real against a scripted cluster and a fake clock."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.operators.readiness import (
    ClusterApiError,
    GateError,
    GateTimeoutError,
    ProbeResult,
    csv_probe,
    kueue_webhook_probe,
    poll_until_ready,
    registry_route_probe,
    run_gate,
    token_probe,
)
from tests.operators.conftest import FakeClock, FakeCluster

NO_ENDPOINTS = ClusterApiError(
    500,
    'Internal error occurred: failed calling webhook "mresourceflavor.kb.io": '
    'failed to call webhook: Post "https://kueue-webhook-service.kueue-system.svc:443/'
    'mutate-kueue-x-k8s-io-v1beta2-resourceflavor?timeout=10s": no endpoints available '
    'for service "kueue-webhook-service"',
)

WEBHOOK_PROPS: dict[str, Any] = {
    "gate": "kueue-webhook",
    "namespace": "kueue-system",
    "service": "kueue-webhook-service",
    "resourceFlavorApiVersion": "kueue.x-k8s.io/v1beta2",
    "timeoutSeconds": 60,
    "intervalSeconds": 5,
}


def test_webhook_gate_succeeds_after_three_failed_checks() -> None:
    cluster = FakeCluster(endpoints=[0, 1], dry_runs=[NO_ENDPOINTS, NO_ENDPOINTS, None])
    clock = FakeClock()
    outcome = run_gate(WEBHOOK_PROPS, cluster, clock=clock, sleep=clock.sleep)
    assert (outcome.attempts, outcome.waited_seconds) == (4, 15)
    assert outcome.detail == "dry-run ResourceFlavor create passed Kueue's webhooks"
    assert clock.sleeps == [5, 5, 5]
    assert cluster.calls == [
        "endpoints kueue-system/kueue-webhook-service",
        "endpoints kueue-system/kueue-webhook-service",
        "dry-run kueue.x-k8s.io/v1beta2 resourceflavors batchplane-readiness-probe",
        "endpoints kueue-system/kueue-webhook-service",
        "dry-run kueue.x-k8s.io/v1beta2 resourceflavors batchplane-readiness-probe",
        "endpoints kueue-system/kueue-webhook-service",
        "dry-run kueue.x-k8s.io/v1beta2 resourceflavors batchplane-readiness-probe",
    ]


def test_webhook_gate_times_out_with_the_last_check_in_the_message() -> None:
    cluster = FakeCluster(endpoints=[1], dry_runs=[NO_ENDPOINTS])
    clock = FakeClock()
    with pytest.raises(GateTimeoutError) as caught:
        run_gate({**WEBHOOK_PROPS, "timeoutSeconds": 12}, cluster, clock=clock, sleep=clock.sleep)
    assert str(caught.value) == (
        "Kueue webhook kueue-system/kueue-webhook-service not ready after 12s (4 checks); last check: dry-run "
        f"ResourceFlavor create failed: 500: {NO_ENDPOINTS.message}"
    )
    assert clock.sleeps == [5, 5, 2]  # the last pause is cut to the remaining budget


def test_service_without_ready_endpoints_is_not_ready_and_skips_the_dry_run() -> None:
    probe = kueue_webhook_probe(
        FakeCluster(endpoints=[0]), "kueue-system", "kueue-webhook-service", "kueue.x-k8s.io/v1beta2"
    )
    assert probe() == ProbeResult(False, "service kueue-system/kueue-webhook-service has no ready endpoints")


@pytest.mark.parametrize(
    ("error", "exp"),
    [
        pytest.param(
            NO_ENDPOINTS,
            ProbeResult(False, f"dry-run ResourceFlavor create failed: 500: {NO_ENDPOINTS.message}"),
            id="no-endpoints-available",
        ),
        pytest.param(
            ClusterApiError(404, "the server could not find the requested resource"),
            ProbeResult(
                False,
                "dry-run ResourceFlavor create failed: 404: the server could not find the requested resource",
            ),
            id="crd-not-served-yet",
        ),
        pytest.param(
            ClusterApiError(0, "cannot reach the API server: connection refused"),
            ProbeResult(
                False, "dry-run ResourceFlavor create failed: cannot reach the API server: connection refused"
            ),
            id="api-server-unreachable",
        ),
        pytest.param(
            ClusterApiError(
                400,
                'failed calling webhook "vresourceflavor.kb.io": x509: certificate signed by '
                "unknown authority",
            ),
            ProbeResult(
                False,
                "dry-run ResourceFlavor create failed: 400: failed calling webhook "
                '"vresourceflavor.kb.io": x509: certificate signed by unknown authority',
            ),
            id="ca-not-injected-yet",
        ),
        pytest.param(
            ClusterApiError(
                409, 'resourceflavors.kueue.x-k8s.io "batchplane-readiness-probe" already exists'
            ),
            ProbeResult(True, "dry-run ResourceFlavor create reached storage (already exists)"),
            id="already-exists-means-admission-passed",
        ),
    ],
)
def test_dry_run_errors_are_classified(error: ClusterApiError, exp: ProbeResult) -> None:
    probe = kueue_webhook_probe(FakeCluster(dry_runs=[error]), "kueue-system", None, "kueue.x-k8s.io/v1beta2")
    assert probe() == exp


def test_forbidden_dry_run_fails_at_once() -> None:
    cluster = FakeCluster(endpoints=[1], dry_runs=[ClusterApiError(403, "resourceflavors is forbidden")])
    clock = FakeClock()
    with pytest.raises(GateError) as caught:
        run_gate(WEBHOOK_PROPS, cluster, clock=clock, sleep=clock.sleep)
    assert (
        str(caught.value)
        == "dry-run create of a ResourceFlavor was refused: 403: resourceflavors is forbidden"
    )
    assert clock.sleeps == []


def test_poll_never_sleeps_once_ready() -> None:
    clock = FakeClock()
    outcome = poll_until_ready(
        lambda: ProbeResult(True, "ok"),
        what="x",
        timeout_seconds=10,
        interval_seconds=1,
        clock=clock,
        sleep=clock.sleep,
    )
    assert (outcome.attempts, clock.sleeps) == (1, [])


SUB = ("subscriptions", "kueue-operator")
CSV = ("clusterserviceversions", "kueue-operator.v1.4.0")


def _sub(status: dict[str, Any], approval: str = "Automatic") -> dict[str, Any]:
    return {"spec": {"installPlanApproval": approval}, "status": status}


def test_csv_gate_waits_for_the_installed_csv_to_succeed() -> None:
    cluster = FakeCluster(
        objects={
            SUB: [None, _sub({"state": "UpgradePending"}), _sub({"installedCSV": "kueue-operator.v1.4.0"})],
            CSV: [
                {"status": {"phase": "Installing", "message": "waiting for install components"}},
                {"status": {"phase": "Succeeded"}},
            ],
        }
    )
    clock = FakeClock()
    props = {
        "gate": "olm-csv",
        "namespace": "openshift-kueue-operator",
        "subscription": "kueue-operator",
        "timeoutSeconds": 300,
        "intervalSeconds": 10,
    }
    outcome = run_gate(props, cluster, clock=clock, sleep=clock.sleep)
    assert (outcome.attempts, outcome.detail) == (
        4,
        "CSV openshift-kueue-operator/kueue-operator.v1.4.0 Succeeded",
    )


@pytest.mark.parametrize(
    ("objects", "exp_detail"),
    [
        pytest.param(
            {SUB: [None]},
            "Subscription openshift-kueue-operator/kueue-operator not found",
            id="no-subscription",
        ),
        pytest.param(
            {SUB: [_sub({"state": "UpgradePending"}, "Manual")]},
            "Subscription openshift-kueue-operator/kueue-operator has no installed CSV (state: UpgradePending) "
            "(installPlanApproval is Manual: approve the InstallPlan)",
            id="manual-approval-pending",
        ),
        pytest.param(
            {SUB: [_sub({"installedCSV": "kueue-operator.v1.4.0"})], CSV: [None]},
            "CSV openshift-kueue-operator/kueue-operator.v1.4.0 not found yet",
            id="csv-not-created",
        ),
        pytest.param(
            {
                SUB: [_sub({"installedCSV": "kueue-operator.v1.4.0"})],
                CSV: [{"status": {"phase": "Failed", "message": "install strategy failed"}}],
            },
            "CSV openshift-kueue-operator/kueue-operator.v1.4.0 is Failed: install strategy failed",
            id="csv-failed",
        ),
    ],
)
def test_csv_probe_reports_why_it_is_not_ready(objects: Any, exp_detail: str) -> None:
    result = csv_probe(FakeCluster(objects=objects), "openshift-kueue-operator", "kueue-operator")()
    assert result == ProbeResult(False, exp_detail)


def test_token_gate_waits_for_the_token_controller_to_fill_the_secret() -> None:
    cluster = FakeCluster(
        secrets=[
            None,
            ClusterApiError(503, "etcdserver: leader changed"),
            {},
            {"ca.crt": "Y2E="},
            {"ca.crt": "Y2E=", "token": "dG9r"},
        ]
    )
    clock = FakeClock()
    props = {
        "gate": "service-account-token",
        "namespace": "kueue-system",
        "secret": "batchplane-multikueue",
        "timeoutSeconds": 120,
        "intervalSeconds": 2,
    }
    outcome = run_gate(props, cluster, clock=clock, sleep=clock.sleep)
    assert (outcome.attempts, outcome.detail) == (
        5,
        "Secret kueue-system/batchplane-multikueue holds a token",
    )


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        (None, "Secret kueue-system/sa not found yet"),
        ({}, "Secret kueue-system/sa has no token or ca.crt yet"),
        ({"token": "dG9r"}, "Secret kueue-system/sa has no ca.crt yet"),
    ],
    ids=["missing", "empty", "no-ca"],
)
def test_token_probe_says_what_is_missing(answer: dict[str, str] | None, detail: str) -> None:
    assert token_probe(FakeCluster(secrets=[answer]), "kueue-system", "sa")() == ProbeResult(False, detail)


def test_forbidden_secret_read_fails_at_once() -> None:
    cluster = FakeCluster(secrets=[ClusterApiError(403, 'secrets "sa" is forbidden')])
    with pytest.raises(GateError) as caught:
        token_probe(cluster, "kueue-system", "sa")()
    assert str(caught.value) == 'cannot read Secret kueue-system/sa: 403: secrets "sa" is forbidden'


def test_token_outputs_decode_the_token_and_keep_the_ca_base64() -> None:
    from batchplane.operators.readiness_provider import token_outputs

    assert token_outputs({"token": "dG9r", "ca.crt": "Y2E="}) == {"token": "tok", "caData": "Y2E="}


def test_unknown_gate_kind_is_an_error() -> None:
    with pytest.raises(GateError) as caught:
        run_gate({"gate": "dns", "namespace": "x", "timeoutSeconds": 1, "intervalSeconds": 1}, FakeCluster())
    assert (
        str(caught.value)
        == "unknown gate 'dns'; expected one of kueue-webhook, olm-csv, service-account-token, registry-route, "
        "olm-namespace, feature-gate, kueue-storage-migration, kueue-stored-versions"
    )


ROUTE_HOST = "default-route-openshift-image-registry.apps.ocp.example.com"
ROUTE_PROPS: dict[str, Any] = {
    "gate": "registry-route",
    "namespace": "openshift-image-registry",
    "route": "default-route",
    "timeoutSeconds": 60,
    "intervalSeconds": 5,
}


def test_registry_route_gate_waits_for_the_route_to_get_its_host() -> None:
    cluster = FakeCluster(
        objects={
            ("routes", "default-route"): [
                None,
                ClusterApiError(503, "etcdserver: leader changed"),
                {"spec": {}},
                {"spec": {"host": ROUTE_HOST}},
            ]
        }
    )
    clock = FakeClock()
    outcome = run_gate(ROUTE_PROPS, cluster, clock=clock, sleep=clock.sleep)
    assert (outcome.attempts, outcome.detail) == (
        4,
        f"Route openshift-image-registry/default-route serves {ROUTE_HOST}",
    )
    assert cluster.calls[0] == "get routes openshift-image-registry/default-route"


def test_registry_route_gate_times_out_with_the_oc_patch_fix_when_the_registry_is_not_exposed() -> None:
    cluster = FakeCluster(objects={("routes", "default-route"): [None]})
    clock = FakeClock()
    with pytest.raises(GateTimeoutError) as caught:
        run_gate(ROUTE_PROPS, cluster, clock=clock, sleep=clock.sleep)
    message = str(caught.value)
    assert message.startswith(
        "image registry Route openshift-image-registry/default-route not ready after 60s"
    )
    assert (
        "the internal image registry is not exposed; expose it with `oc patch "
        "configs.imageregistry.operator.openshift.io/cluster --type merge -p "
        """'{"spec":{"defaultRoute":true}}'`"""
    ) in message
    assert not [
        c for c in cluster.calls if not c.startswith("get routes")
    ]  # never changes the cluster itself


def test_forbidden_route_read_fails_at_once() -> None:
    cluster = FakeCluster(
        objects={("routes", "default-route"): [ClusterApiError(403, "routes is forbidden")]}
    )
    with pytest.raises(GateError) as caught:
        registry_route_probe(cluster, "openshift-image-registry", "default-route")()
    assert str(caught.value) == (
        "cannot read Route openshift-image-registry/default-route: 403: routes is forbidden"
    )


def _crds(stored: dict[str, list[str]]) -> dict[tuple[str, str], list[Any]]:
    from batchplane.wellknown import KUEUE_CHART_CRDS

    return {
        ("customresourcedefinitions", name): [
            None if name not in stored else {"status": {"storedVersions": stored[name]}}
        ]
        for name in KUEUE_CHART_CRDS
    }


def test_the_stored_versions_gate_refuses_a_kueue_install_while_a_crd_stores_a_version_it_no_longer_serves() -> (
    None
):
    cluster = FakeCluster(
        objects=_crds({"topologies.kueue.x-k8s.io": ["v1alpha1"], "workloads.kueue.x-k8s.io": ["v1beta1"]})
    )
    props = {"gate": "kueue-stored-versions", "namespace": "kueue-system", "version": "0.19.2"}
    with pytest.raises(GateError) as caught:
        run_gate({**props, "timeoutSeconds": 5, "intervalSeconds": 1}, cluster)
    assert str(caught.value).startswith(
        "refused: topologies.kueue.x-k8s.io still lists v1alpha1 in status.storedVersions and Kueue 0.14.0 stops "
        "serving it: run step topology-v1alpha1-removed"
    )


def test_the_stored_versions_gate_passes_a_first_install_and_a_cluster_storing_only_served_versions() -> None:
    props = {"gate": "kueue-stored-versions", "namespace": "kueue-system", "version": "0.19.2"}
    fresh = run_gate({**props, "timeoutSeconds": 5, "intervalSeconds": 1}, FakeCluster(objects=_crds({})))
    assert fresh.detail == "0 Kueue CRDs store only versions Kueue 0.19.2 serves"
    upgraded = FakeCluster(objects=_crds({"topologies.kueue.x-k8s.io": ["v1beta1"]}))
    assert run_gate({**props, "timeoutSeconds": 5, "intervalSeconds": 1}, upgraded).attempts == 1

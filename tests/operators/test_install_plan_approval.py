"""Pinned OLM upgrades: with ``installPlanApproval: Manual`` and a ``startingCSV`` the CSV gate approves exactly the
InstallPlan of that CSV, refuses any other, and never touches the channel's next CSV once the pinned one runs."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.operators.readiness import GateError, KubernetesClusterClient, csv_probe, run_gate
from batchplane.stack import load_stack
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.olm import openshift_plan
from tests.operators.conftest import FakeClock, FakeCluster, openshift_target, with_operators

NS = "openshift-kueue-operator"
PINNED = "kueue-operator.v1.4.1"
SUB = ("subscriptions", "kueue-operator")
PLAN = ("installplans", "install-abcde")
REF = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "InstallPlan",
    "name": "install-abcde",
    "namespace": NS,
}


def sub(**status: Any) -> dict[str, Any]:
    return {"spec": {"installPlanApproval": "Manual", "startingCSV": PINNED}, "status": status}


def plan(csvs: list[str], approved: bool, phase: str = "RequiresApproval") -> dict[str, Any]:
    return {
        "spec": {"approval": "Manual", "approved": approved, "clusterServiceVersionNames": csvs},
        "status": {"phase": phase},
    }


def gate_props(approve: str | None = PINNED) -> dict[str, Any]:
    props = {
        "gate": "olm-csv",
        "namespace": NS,
        "subscription": "kueue-operator",
        "timeoutSeconds": 300,
        "intervalSeconds": 10,
    }
    if approve is not None:
        props["approveCsv"] = approve
    return props


def test_gate_approves_the_pinned_install_plan_once_and_waits_for_its_csv() -> None:
    cluster = FakeCluster(
        objects={
            SUB: [
                sub(state="UpgradePending"),
                sub(state="UpgradePending", installPlanRef=REF),
                sub(state="UpgradePending", installPlanRef=REF),
                sub(state="AtLatestKnown", installPlanRef=REF, installedCSV=PINNED),
            ],
            PLAN: [plan([PINNED], False), plan([PINNED], True, "Installing")],
            ("clusterserviceversions", PINNED): [{"status": {"phase": "Succeeded"}}],
        }
    )
    clock = FakeClock()
    outcome = run_gate(gate_props(), cluster, clock=clock, sleep=clock.sleep)
    assert outcome.detail == f"CSV {NS}/{PINNED} Succeeded"
    assert cluster.approvals == [f"{NS}/install-abcde"]
    assert outcome.attempts == 4


@pytest.mark.parametrize(
    "csvs",
    [["kueue-operator.v1.5.0"], [PINNED, "some-dependency.v2.0.0"], []],
    ids=["next-csv-of-the-channel", "pinned-plus-a-dependency", "no-csv"],
)
def test_gate_refuses_to_approve_an_install_plan_of_other_csvs(csvs: list[str]) -> None:
    cluster = FakeCluster(
        objects={SUB: [sub(state="UpgradePending", installPlanRef=REF)], PLAN: [plan(csvs, False)]}
    )
    clock = FakeClock()
    with pytest.raises(GateError, match=rf"installs .*not the pinned startingCSV {PINNED}") as caught:
        run_gate(gate_props(), cluster, clock=clock, sleep=clock.sleep)
    assert cluster.approvals == []
    assert "install-abcde" in str(caught.value)


def test_running_pinned_csv_is_ready_and_the_pending_upgrade_is_left_alone() -> None:
    """OLM creates the next CSV's InstallPlan as soon as the pinned one is installed: Manual keeps it pending."""
    cluster = FakeCluster(
        objects={
            SUB: [
                sub(
                    state="UpgradePending",
                    installedCSV=PINNED,
                    installPlanRef=REF,
                    currentCSV="kueue-operator.v1.5.0",
                )
            ],
            PLAN: [plan(["kueue-operator.v1.5.0"], False)],
            ("clusterserviceversions", PINNED): [{"status": {"phase": "Succeeded"}}],
        }
    )
    result = csv_probe(cluster, NS, "kueue-operator", PINNED)()
    assert result.ready
    assert cluster.approvals == []
    assert not any("installplans" in call for call in cluster.calls)


def test_bumping_the_pin_approves_exactly_the_upgrade() -> None:
    newer = "kueue-operator.v1.5.0"
    cluster = FakeCluster(
        objects={
            SUB: [sub(state="UpgradePending", installedCSV=PINNED, installPlanRef=REF)],
            PLAN: [plan([newer], False)],
        }
    )
    result = csv_probe(cluster, NS, "kueue-operator", newer)()
    assert (result.ready, result.detail) == (
        False,
        f"approved InstallPlan {NS}/install-abcde ({newer}) towards the target CSV {newer}",
    )
    assert cluster.approvals == [f"{NS}/install-abcde"]


def test_without_a_pin_the_gate_never_approves() -> None:
    cluster = FakeCluster(
        objects={SUB: [sub(state="UpgradePending", installPlanRef=REF)], PLAN: [plan([PINNED], False)]}
    )
    result = csv_probe(cluster, NS, "kueue-operator")()
    assert not result.ready
    assert "approve the InstallPlan" in result.detail
    assert cluster.approvals == []


# --- the real client, through the kubernetes package's own HTTP transport --------------------------------------


class Recorder(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []

    def do_PATCH(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Recorder.requests.append(
            {"path": self.path, "type": self.headers["Content-Type"], "body": json.loads(body)}
        )
        answer = json.dumps({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def api_server() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_real_client_approves_with_a_merge_patch_of_spec_approved(api_server: str) -> None:
    Recorder.requests = []
    kubeconfig = (
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: '" + api_server + "'}\n"
        "contexts:\n- name: ctx\n  context: {cluster: c, user: u}\ncurrent-context: ctx\n"
        "users:\n- name: u\n  user: {token: t}\n"
    )
    KubernetesClusterClient(kubeconfig, "ctx").approve_install_plan(NS, "install-abcde")
    assert Recorder.requests == [
        {
            "path": f"/apis/operators.coreos.com/v1alpha1/namespaces/{NS}/installplans/install-abcde",
            "type": "application/merge-patch+json",
            "body": {"spec": {"approved": True}},
        }
    ]


# --- config: Manual by default in production ---------------------------------------------------------------


PINS = {
    "certManager": {"startingCsv": "cert-manager-operator.v1.18.0"},
    "kueue": {"startingCsv": PINNED},
    "openshiftAi": {
        "startingCsv": "rhods-operator.3.5.0",
        "jobSetOperator": {"startingCsv": "jobset-operator.v1.0.0"},
    },
}


def test_production_subscriptions_default_to_manual_with_the_pin_approved_by_the_gate() -> None:
    plan_ = openshift_plan(OpenShiftTarget.model_validate(openshift_target(**PINS)), "production")
    assert [(i.subscription["spec"]["installPlanApproval"], i.approve_csv) for i in plan_.installs] == [
        ("Manual", "cert-manager-operator.v1.18.0"),
        ("Manual", PINNED),
        ("Manual", "jobset-operator.v1.0.0"),
        ("Manual", "rhods-operator.3.5.0"),
    ]
    dev = openshift_plan(OpenShiftTarget.model_validate(openshift_target(**PINS)), "dev")
    assert [(i.subscription["spec"]["installPlanApproval"], i.approve_csv) for i in dev.installs] == [
        ("Automatic", None)
    ] * 4


def test_automatic_stays_available_in_production() -> None:
    target = {**PINS, "kueue": {"approval": "Automatic"}}
    plan_ = openshift_plan(OpenShiftTarget.model_validate(openshift_target(**target)), "production")
    assert plan_.installs[1].subscription["spec"]["installPlanApproval"] == "Automatic"
    assert plan_.installs[1].approve_csv is None


def test_production_without_pins_names_every_unpinned_subscription() -> None:
    config = with_operators(target=openshift_target(certManager=PINS["certManager"]))
    config["batchplane:environment"] = "production"
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    assert sorted(i.path for i in caught.value.errors) == [
        "batchplane:target.kueue.startingCsv",
        "batchplane:target.openshiftAi.jobSetOperator.startingCsv",
        "batchplane:target.openshiftAi.startingCsv",
    ]


def test_explicit_manual_without_a_pin_is_a_warning() -> None:
    stack = load_stack(with_operators(target=openshift_target(kueue={"approval": "Manual"})))
    assert [str(w) for w in stack.warnings if "approval" in w.path] == [
        "warning: batchplane:target.kueue.approval: Manual approval without startingCsv: Batchplane approves no "
        "InstallPlan, so the CSV gate waits (up to csvGate.timeoutSeconds) for a person to approve each one; pin "
        "startingCsv to have exactly that CSV approved"
    ]

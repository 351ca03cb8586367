"""Manual-approval upgrades: OLM proposes one upgrade at a time, so the CSV gate approves each InstallPlan on the
channel's path to the target CSV, step after step, and nothing else.

The gate runs with the real kubernetes client against a loopback API server that answers from recorded OLM objects
(``recordings/olm-upgrade.json``) and, like OLM, moves the Subscription one step on when the InstallPlan it points
at is approved.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from batchplane.operators.readiness import (
    GateError,
    KubernetesClusterClient,
    channel_versions,
    plan_upgrade_edges,
    run_gate,
    skip_range_includes,
    upgrade_step_problem,
)
from batchplane.stack import load_stack
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.olm import openshift_plan
from tests.operators.conftest import FakeClock, openshift_target, with_operators

RECORDED = json.loads((Path(__file__).parent / "recordings" / "olm-upgrade.json").read_text(encoding="utf-8"))
NS = "cert-manager-operator"
SUB = "openshift-cert-manager-operator"
V116, V117, V118 = (f"cert-manager-operator.v1.{v}" for v in ("16.1", "17.0", "18.0"))
OLM = "/apis/operators.coreos.com/v1alpha1"


class OlmApi:
    """The recorded objects, one state at a time: approving the InstallPlan of state i moves to state i + 1."""

    def __init__(self, states: list[dict[str, Any]]) -> None:
        self.states = copy.deepcopy(states)
        self.step = 0
        self.patches: list[str] = []
        self.manifests = copy.deepcopy(RECORDED["packagemanifests"])

    def answer(self, method: str, path: str, query: str) -> tuple[int, Any]:
        state = self.states[self.step]
        plan = state["installplan"]
        if method == "GET" and path == f"{OLM}/namespaces/{NS}/subscriptions/{SUB}":
            return 200, state["subscription"]
        if method == "GET" and path.startswith(
            "/apis/packages.operators.coreos.com/v1/namespaces/openshift-marketplace"
        ):
            assert query == "labelSelector=catalog%3Dredhat-operators"
            return 200, self.manifests
        if plan is not None and path == f"{OLM}/namespaces/{NS}/installplans/{plan['metadata']['name']}":
            if method == "PATCH":
                self.patches.append(plan["metadata"]["name"])
                self.step += 1
                return 200, plan
            return 200, plan
        if method == "GET" and path == f"{OLM}/namespaces/{NS}/clusterserviceversions/{V118}":
            return 200, RECORDED["csv"]
        return 404, {
            "kind": "Status",
            "status": "Failure",
            "reason": "NotFound",
            "message": f"{path} not found",
        }


@pytest.fixture
def olm_api() -> Iterator[tuple[OlmApi, str]]:
    api = OlmApi(RECORDED["states"])

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            path, _, query = self.path.partition("?")
            status, body = api.answer(self.command, path, query)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PATCH = _serve

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
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


def props(target: str) -> dict[str, Any]:
    return {
        "gate": "olm-csv",
        "namespace": NS,
        "subscription": SUB,
        "approveCsv": target,
        "package": SUB,
        "channel": "stable-v1",
        "catalog": "redhat-operators",
        "catalogNamespace": "openshift-marketplace",
        "timeoutSeconds": 600,
        "intervalSeconds": 10,
    }


def test_a_two_step_upgrade_is_approved_one_install_plan_after_the_other(olm_api: tuple[OlmApi, str]) -> None:
    api, kubeconfig = olm_api
    clock = FakeClock()
    outcome = run_gate(
        props(V118), KubernetesClusterClient(kubeconfig, "ctx"), clock=clock, sleep=clock.sleep
    )
    assert api.patches == ["install-v117", "install-v118"]
    assert outcome.detail == f"CSV {NS}/{V118} Succeeded"


def test_an_install_plan_beyond_the_target_is_left_unapproved(olm_api: tuple[OlmApi, str]) -> None:
    """Target v1.17.0, but OLM proposes v1.18.0, which skips the installed v1.16.1: the gate stops, approves nothing."""
    api, kubeconfig = olm_api
    api.states[0]["installplan"] = RECORDED["off_path_installplan"]
    api.states[0]["subscription"]["status"]["installPlanRef"]["name"] = "install-v118-skip"
    clock = FakeClock()
    with pytest.raises(
        GateError, match=r"install-v118-skip .* not a step .* towards the target CSV"
    ) as caught:
        run_gate(props(V117), KubernetesClusterClient(kubeconfig, "ctx"), clock=clock, sleep=clock.sleep)
    assert api.patches == []
    assert f"{V118} (1.18.0) is beyond the target {V117} (1.17.0)" in str(caught.value)


def test_a_head_whose_skip_range_covers_the_installed_csv_is_named_with_the_target_csv_that_works(
    olm_api: tuple[OlmApi, str],
) -> None:
    """Target v1.17.0 below the head v1.18.0 whose olm.skipRange (>=1.16.0 <1.18.0) includes the installed v1.16.1:
    OLM proposes only the head (resolver.go L244, head first), so the gate says so and names targetCsv v1.18.0."""
    api, kubeconfig = olm_api
    api.states[0]["installplan"] = RECORDED["off_path_installplan"]
    api.states[0]["subscription"]["status"]["installPlanRef"]["name"] = "install-v118-skip"
    [channel] = [c for c in api.manifests["items"][0]["status"]["channels"] if c["name"] == "stable-v1"]
    channel["currentCSVDesc"] = {"version": "1.18.0", "annotations": {"olm.skipRange": ">=1.16.0 <1.18.0"}}
    clock = FakeClock()
    with pytest.raises(GateError) as caught:
        run_gate(props(V117), KubernetesClusterClient(kubeconfig, "ctx"), clock=clock, sleep=clock.sleep)
    assert api.patches == []
    message = str(caught.value)
    assert "olm.skipRange '>=1.16.0 <1.18.0', which includes the installed" in message
    assert f"set targetCsv to {V118} (the only upgrade OLM offers from {V116})" in message


@pytest.mark.parametrize(
    ("skip_range", "version", "included"),
    [
        (">=1.16.0 <1.18.0", "1.16.1", True),
        (">=1.16.0 <1.18.0", "1.18.0", False),
        (">=1.16.0 <1.18.0", "1.15.9", False),
        ("<1.2.0 || >=3.0.0", "3.1.0", True),
        ("<1.2.0 || >=3.0.0", "2.0.0", False),
        (">=4.19.0-0 <4.20.0", "4.19.0-202511040914", True),
        ("1.2.3", "1.2.3", True),
        ("!=1.2.3", "1.2.3", False),
        (">=1.x", "1.2.3", None),
    ],
)
def test_skip_ranges_are_read_as_blang_semver_ranges(
    skip_range: str, version: str, included: bool | None
) -> None:
    assert skip_range_includes(skip_range, version) is included


def test_an_upgrade_that_does_not_start_from_the_installed_csv_is_refused() -> None:
    plan = RECORDED["states"][1]["installplan"]  # v1.18.0, replaces v1.17.0
    versions = channel_versions(RECORDED["packagemanifests"]["items"][0], "stable-v1")
    edges = plan_upgrade_edges(plan, V118)
    assert edges == {V117}
    assert upgrade_step_problem(V116, V118, V118, versions, edges) == (
        f"{V118} does not replace or skip the installed {V116} (it upgrades from {V117})"
    )
    assert upgrade_step_problem(V117, V118, V118, versions, edges) is None


@pytest.mark.parametrize(
    ("candidate", "target", "problem"),
    [
        (V117, V118, None),
        (V118, V117, "is beyond the target"),
        ("cert-manager-operator.v1.15.1", V118, "is not newer than the installed"),
        ("other.v1.0.0", V118, "the channel has no other.v1.0.0"),
    ],
)
def test_steps_are_judged_by_the_channel_versions(candidate: str, target: str, problem: str | None) -> None:
    versions = channel_versions(RECORDED["packagemanifests"]["items"][0], "stable-v1")
    found = upgrade_step_problem(V116, candidate, target, versions, None)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_without_channel_entries_only_the_target_itself_is_approved() -> None:
    assert upgrade_step_problem(V116, V118, V118, None, None) is None
    assert "lists no entries" in (upgrade_step_problem(V116, V117, V118, None, None) or "")


def test_target_csv_is_what_the_gate_approves_towards_and_what_a_first_install_starts_at() -> None:
    target = OpenShiftTarget.model_validate(
        openshift_target(certManager={"approval": "Manual", "targetCsv": V118}, openshiftAi=None)
    )
    install = openshift_plan(target, "dev").installs[0]
    assert install.approve_csv == V118
    assert install.subscription["spec"]["startingCSV"] == V118
    pinned = OpenShiftTarget.model_validate(
        openshift_target(
            certManager={"approval": "Manual", "startingCsv": V116, "targetCsv": V118}, openshiftAi=None
        )
    )
    install = openshift_plan(pinned, "dev").installs[0]
    assert (install.approve_csv, install.subscription["spec"]["startingCSV"]) == (V118, V116)


def test_production_accepts_a_target_csv_instead_of_a_starting_csv() -> None:
    config = with_operators(
        target=openshift_target(
            certManager={"targetCsv": V118},
            kueue={"targetCsv": "kueue-operator.v1.4.1"},
            openshiftAi={
                "targetCsv": "rhods-operator.3.5.0",
                "jobSetOperator": {"targetCsv": "jobset-operator.v1.0.0"},
            },
        )
    )
    config["batchplane:environment"] = "production"
    stack = load_stack(config)
    assert not [w for w in stack.warnings if "Csv" in w.path]


def test_target_csv_with_automatic_approval_is_a_warning() -> None:
    stack = load_stack(with_operators(target=openshift_target(kueue={"targetCsv": "kueue-operator.v1.4.1"})))
    [warning] = [w for w in stack.warnings if w.path == "batchplane:target.kueue.targetCsv"]
    assert "no effect with approval: Automatic" in str(warning)


# --- property: the gate against a transcription of OLM's choice of the next CSV ------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def channels(draw: st.DrawFn) -> tuple[dict[str, str], dict[str, set[str]], int, int]:
    """A channel of 2-8 CSVs ``op.v1.<k>.0`` (version order = channel order): entry k replaces k-1 and skips a random
    subset of the older ones; a start and a target at or after it."""
    size = draw(st.integers(2, 8))
    names = [f"op.v1.{k}.0" for k in range(size)]
    versions = {n: n.removeprefix("op.v") for n in names}
    edges = {names[0]: set()}
    for k in range(1, size):
        skips = draw(st.sets(st.sampled_from(names[:k]), max_size=k)) if k > 1 else set()
        edges[names[k]] = {names[k - 1], *skips}
    start = draw(st.integers(0, size - 1))
    target = draw(st.integers(start, size - 1))
    return versions, edges, start, target


def olm_next(installed: str, names: list[str], edges: dict[str, set[str]]) -> str | None:
    """OLM's next CSV for ``installed`` (operator-lifecycle-manager v0.46.0 pkg/controller/registry/resolver/
    resolver.go lines 242-247: only entries that replace or skip the installed one), the newest of them first."""
    candidates = [n for n in names if installed in edges[n]]
    return candidates[-1] if candidates else None


@settings(max_examples=300, deadline=None)
@given(channels())
def test_the_gate_walks_olms_proposals_up_to_the_target_and_never_past_it(
    channel: tuple[dict[str, str], dict[str, set[str]], int, int],
) -> None:
    versions, edges, start, target_index = channel
    names = list(versions)
    target = names[target_index]
    installed = names[start]
    approved: list[str] = []
    refused = None
    while installed != target:
        proposal = olm_next(installed, names, edges)
        if proposal is None:
            break
        problem = upgrade_step_problem(installed, proposal, target, versions, edges[proposal])
        if problem is not None:
            refused = proposal
            break
        approved.append(proposal)
        installed = proposal
    assert all(names.index(a) <= target_index for a in approved)  # never past the target
    if installed != target:  # stopped early: only because OLM's next step jumps past the target
        assert refused is not None and names.index(refused) > target_index

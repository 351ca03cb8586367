"""The deploy-time ``olm-namespace`` lookup: an operator installed from the web console keeps its OperatorGroup (no
second group, which OLM answers with TooManyOperatorGroups) and its Subscription is not silently moved to the stack's
channel. Runs the gate with the real kubernetes client against recorded OLM answers
(``tests/preflight/recordings/openshift/console-installed.json``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from batchplane.operators.olm_lookup import StackInstall, plan_namespace
from batchplane.operators.readiness import GateError, KubernetesClusterClient, run_gate
from tests.operators.conftest import FakeClock
from tests.preflight.olm_helpers import kubeconfig
from tests.preflight.replay import RecordedServer, load


def props(namespace: str, package: str, channel: str, group: str, adopt: bool = False) -> dict[str, Any]:
    return {
        "gate": "olm-namespace",
        "namespace": namespace,
        "package": package,
        "channel": channel,
        "stackOperatorGroup": group,
        "stackOperatorGroupSpec": {},
        "stackSubscription": package,
        "adopt": adopt,
        "timeoutSeconds": 60,
        "intervalSeconds": 5,
    }


def lookup(tmp_path: Path, gate_props: dict[str, Any]) -> dict[str, Any]:
    with RecordedServer(
        load("openshift/console-installed.json", "openshift/fresh-operator-namespaces.json")
    ) as server:
        client = KubernetesClusterClient(str(kubeconfig(tmp_path, server.url, "ocp")), "ocp")
        clock = FakeClock()
        return dict(run_gate(gate_props, client, clock=clock, sleep=clock.sleep).outputs)


def test_an_operator_group_made_by_the_console_is_reused_by_name_and_spec(tmp_path: Path) -> None:
    outputs = lookup(
        tmp_path,
        props("openshift-kueue-operator", "kueue-operator", "stable-v1.4", "openshift-kueue-operator"),
    )
    assert outputs == {
        "operatorGroup": "openshift-kueue-operator-4hq9m",
        "operatorGroupSpec": {"upgradeStrategy": "Default"},
        "subscription": "kueue-operator",
        "checked": True,
    }


def test_a_subscription_on_another_channel_is_refused_before_anything_changes(tmp_path: Path) -> None:
    with pytest.raises(GateError, match=r"channel stable-2\.25, not the stack's stable-3\.x"):
        lookup(tmp_path, props("redhat-ods-operator", "rhods-operator", "stable-3.x", "rhods-operator"))


def test_adopt_true_takes_the_subscription_over(tmp_path: Path) -> None:
    outputs = lookup(
        tmp_path, props("redhat-ods-operator", "rhods-operator", "stable-3.x", "rhods-operator", adopt=True)
    )
    assert (outputs["operatorGroup"], outputs["subscription"]) == (
        "redhat-ods-operator-x7k2p",
        "rhods-operator",
    )


def test_two_operator_groups_are_refused(tmp_path: Path) -> None:
    with pytest.raises(
        GateError, match=r"has 2 OperatorGroups \(.*\): OLM fails every CSV there with TooManyOperatorGroups"
    ):
        lookup(
            tmp_path,
            props(
                "cert-manager-operator",
                "openshift-cert-manager-operator",
                "stable-v1",
                "openshift-cert-manager-operator",
            ),
        )


def test_an_empty_namespace_gets_the_stacks_own_objects(tmp_path: Path) -> None:
    outputs = lookup(tmp_path, props("openshift-nfd", "nfd", "stable", "openshift-nfd"))
    assert (outputs["operatorGroup"], outputs["subscription"]) == ("openshift-nfd", "nfd")


def test_a_subscription_of_the_package_under_another_name_is_adopted_by_that_name() -> None:
    install = StackInstall("ns", "nfd", "stable", "ns", {}, "nfd")
    sub = {"metadata": {"name": "nfd-from-console"}, "spec": {"name": "nfd", "channel": "stable"}}
    plan = plan_namespace(install, [], [sub])
    assert (plan.subscription, plan.problems) == ("nfd-from-console", [])
    other = {"metadata": {"name": "nfd"}, "spec": {"name": "something-else", "channel": "stable"}}
    assert "package something-else, not the stack's nfd" in plan_namespace(install, [], [other]).problems[0]


def test_the_stacks_own_subscription_may_change_channel() -> None:
    """After a first `pulumi up` the Subscription carries the stack's label: a channel change in the config is the
    stack's own upgrade, not an adoption."""
    install = StackInstall(
        "openshift-kueue-operator", "kueue-operator", "stable-v1.4", "g", {}, "kueue-operator"
    )
    sub = {
        "metadata": {"name": "kueue-operator", "labels": {"app.kubernetes.io/managed-by": "batchplane"}},
        "spec": {"name": "kueue-operator", "channel": "stable-v1.3"},
    }
    plan = plan_namespace(install, [{"metadata": {"name": "g"}, "spec": {}}], [sub])
    assert plan.problems == []
    assert plan.notes == [
        "Subscription openshift-kueue-operator/kueue-operator is the stack's own: pulumi up moves it from channel "
        "stable-v1.3, not the stack's stable-v1.4"
    ]
    unlabelled = {**sub, "metadata": {"name": "kueue-operator"}}
    assert plan_namespace(install, [], [unlabelled]).problems != []

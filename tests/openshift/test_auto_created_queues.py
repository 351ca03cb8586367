"""OpenShift AI 3.0-3.4 with ``kueue: Unmanaged`` creates ResourceFlavor ``default-flavor``, ClusterQueue ``default``
(the whole cluster) and LocalQueue ``default`` in every managed namespace (opendatahub-operator
``internal/controller/components/kueue/kueue_controller_actions.go`` ``manageDefaultKueueResourcesAction``); 3.5 made
it opt-in (``autoCreateQueues``, default false: the RHOAI 3.5 CRD in ``../shared/crds/rhoai/3.5.0``). The stack pins it
off where the release has the field, warns loudly where it does not, and the webhook can refuse workloads Kueue would
default into a LocalQueue the stack does not declare."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.offline import read_stack_file
from batchplane.stack import load_stack
from batchplane.targets.openshift.olm import data_science_cluster
from batchplane.webhook.decisions import Decider
from tests.config.factories import apply_changes
from tests.conftest import TEMPLATES_DIR
from tests.webhook.conftest import job, one_queue


def openshift_ai(**changes: Any) -> dict[str, Any]:
    return apply_changes(read_stack_file(TEMPLATES_DIR / "Pulumi.openshift-ai.yaml"), **changes)


def kueue_component(config: dict[str, Any]) -> dict[str, Any]:
    dsc = data_science_cluster(load_stack(config).config.target)  # type: ignore[arg-type]
    assert dsc is not None
    component: dict[str, Any] = dsc["spec"]["components"]["kueue"]
    return component


@pytest.mark.parametrize("channel", ["stable-3.x", "stable-3.5", "fast-3.6"])
def test_auto_create_queues_is_pinned_off_where_the_release_has_the_field(channel: str) -> None:
    component = kueue_component(openshift_ai(target__openshiftAi__channel=channel))
    assert component == {"managementState": "Unmanaged", "autoCreateQueues": False}


def test_an_explicit_auto_create_queues_is_kept() -> None:
    config = openshift_ai(
        target__openshiftAi__components={"kueue": {"managementState": "Unmanaged", "autoCreateQueues": True}}
    )
    assert kueue_component(config)["autoCreateQueues"] is True


@pytest.mark.parametrize("channel", ["stable-3.0", "stable-3.4"])
def test_a_release_that_creates_queues_around_the_quotas_is_warned_naming_the_channel_and_the_webhook_key(
    channel: str,
) -> None:
    stack = load_stack(openshift_ai(target__openshiftAi__channel=channel))
    [warning] = [w for w in stack.warnings if w.path == "batchplane:target.openshiftAi.channel"]
    assert f"OpenShift AI {channel.removeprefix('stable-')}" in warning.message
    assert 'ClusterQueue "default"' in warning.message and "webhook.refuseUndeclaredQueues" in warning.message
    assert "autoCreateQueues" not in kueue_component(openshift_ai(target__openshiftAi__channel=channel))


def test_auto_create_queues_on_a_release_without_the_field_is_an_error() -> None:
    config = openshift_ai(
        target__openshiftAi__channel="stable-3.4",
        target__openshiftAi__components={
            "kueue": {"managementState": "Unmanaged", "autoCreateQueues": False}
        },
    )
    with pytest.raises(ConfigValidationError) as info:
        load_stack(config)
    [issue] = [i for i in info.value.issues if i.path.endswith("kueue.autoCreateQueues")]
    assert "OpenShift AI 3.4" in issue.message


# --- the webhook -----------------------------------------------------------------------------------------------------


def test_with_refuse_undeclared_queues_an_unlabeled_job_kueue_would_default_elsewhere_is_denied() -> None:
    policy = one_queue({"cpu": 1}, webhook={"refuseUndeclaredQueues": True})
    assert policy.webhook.refuse_undeclared_queues is True
    decision = Decider(policy).validate(job(queue=None), "team-a")
    assert not decision.allowed
    assert decision.reason == "undeclared-local-queue"
    assert 'LocalQueue "default"' in decision.message and "refuseUndeclaredQueues" in decision.message


def test_without_the_option_an_unlabeled_job_is_still_only_warned() -> None:
    decision = Decider(one_queue({"cpu": 1})).validate(job(queue=None), "team-a")
    assert decision.allowed and decision.warnings


def test_the_option_never_refuses_a_job_of_a_declared_queue() -> None:
    policy = one_queue({"cpu": 1}, webhook={"refuseUndeclaredQueues": True})
    assert Decider(policy).validate(job(), "team-a").allowed
    declared_default = one_queue({"cpu": 1}, queue="default", webhook={"refuseUndeclaredQueues": True})
    assert Decider(declared_default).validate(job(queue=None), "team-a").allowed


def test_a_pinned_3_4_csv_under_manual_approval_is_warned_at_starting_csv() -> None:
    stack = load_stack(
        openshift_ai(
            target__openshiftAi__approval="Manual", target__openshiftAi__startingCsv="rhods-operator.3.4.1"
        )
    )
    [warning] = [w for w in stack.warnings if w.path == "batchplane:target.openshiftAi.startingCsv"]
    assert "OpenShift AI 3.4" in warning.message

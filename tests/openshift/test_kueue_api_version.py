"""The Kueue API version an OpenShift stack renders follows the Kueue its cluster runs: the Red Hat build of Kueue
1.0-1.2 (Kueue 0.11-0.14, openshift/kueue-operator ``release-1.2`` ``bindata/assets/kueue-operator/crds/``) serves
only ``kueue.x-k8s.io/v1beta1``, so a defaulted ``kueue.apiVersion`` renders v1beta1 there and an explicit v1beta2 is
refused naming both keys."""

from __future__ import annotations

import pytest

from batchplane.config.kueue import KUEUE_V1BETA1, KUEUE_V1BETA2
from batchplane.errors import ConfigValidationError
from batchplane.offline import read_stack_file
from batchplane.stack import load_stack
from tests.config.factories import DELETE, apply_changes
from tests.conftest import TEMPLATES_DIR


def openshift_ai(**changes: object) -> dict[str, object]:
    return apply_changes(read_stack_file(TEMPLATES_DIR / "Pulumi.openshift-ai.yaml"), **changes)


@pytest.mark.parametrize(
    ("channel", "rendered"),
    [
        ("stable-v1.0", KUEUE_V1BETA1),
        ("stable-v1.1", KUEUE_V1BETA1),
        ("stable-v1.2", KUEUE_V1BETA1),
        ("stable-v1.3", KUEUE_V1BETA2),
        ("stable-v1.4", KUEUE_V1BETA2),
        ("stable-v1.9", KUEUE_V1BETA2),  # unknown Kueue: the config default
    ],
)
def test_a_defaulted_api_version_follows_the_rhbok_channel(channel: str, rendered: str) -> None:
    stack = load_stack(openshift_ai(target__kueue__channel=channel))
    assert stack.kueue.api_version == rendered


def test_a_pinned_rhbok_csv_under_manual_approval_decides_the_api_version() -> None:
    stack = load_stack(
        openshift_ai(
            target__kueue__channel="stable-v1.3",
            target__kueue__approval="Manual",
            target__kueue__startingCsv="kueue-operator.v1.2.0",
        )
    )
    assert stack.kueue.api_version == KUEUE_V1BETA1


def test_an_explicit_v1beta2_on_a_kueue_that_serves_only_v1beta1_is_refused_naming_both_keys() -> None:
    config = openshift_ai(target__kueue__channel="stable-v1.2", kueue__apiVersion=KUEUE_V1BETA2)
    with pytest.raises(ConfigValidationError) as info:
        load_stack(config)
    [issue] = [i for i in info.value.issues if i.path == "batchplane:kueue.apiVersion"]
    assert "target.kueue.channel" in issue.message and "stable-v1.2" in issue.message
    assert "Kueue 0.14" in issue.message and "v1beta1" in issue.message


def test_the_embedded_kueue_of_openshift_ai_2_renders_v1beta1_when_the_api_version_is_defaulted() -> None:
    config = apply_changes(
        read_stack_file(TEMPLATES_DIR / "Pulumi.openshift-ai-2.yaml"), kueue__apiVersion=DELETE
    )
    assert load_stack(config).kueue.api_version == KUEUE_V1BETA1

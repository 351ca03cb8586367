"""The upstream Kueue an OpenShift target runs (``OpenShiftPlatform.kueue_version``): the Red Hat build of Kueue's
channel head or kept CSV, or OpenShift AI 2.x's embedded Kueue — facts from the release branches of
openshift/kueue-operator (``upstream/kueue/src`` submodule) and red-hat-data-services/kueue (``rhoai-2.*``)."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.kueue.policy import node_affinity_keys_of
from batchplane.stack.target import platform_for
from batchplane.targets.openshift.config import OpenShiftTarget, rhbok_kueue_version

CHANNELS = [
    ("stable-v1.0", "0.11", "ResourceGroup"),
    ("stable-v1.1", "0.12", "ResourceGroup"),
    ("stable-v1.2", "0.14", "ResourceGroup"),
    ("stable-v1.3", "0.16", "ResourceGroup"),
    ("stable-v1.4", "0.18.5", "Flavor"),  # the head, 1.4.1, is built from release-0.18 after v0.18.5
    ("stable-v1.5", None, "Flavor"),  # not known yet: the permissive keys
    ("alpha", None, "Flavor"),
]


@pytest.mark.parametrize(("channel", "version", "keys"), CHANNELS)
def test_each_rhbok_channel_head_runs_the_kueue_of_its_release_branch(
    channel: str, version: str | None, keys: str
) -> None:
    assert rhbok_kueue_version(channel, None) == version
    assert node_affinity_keys_of(version) == keys


CSVS = [
    ("kueue-operator.v1.3.1", "0.16", "ResourceGroup"),
    (
        "kueue-operator.v1.4.0",
        "0.18",
        "Flavor",
    ),  # its builds span v0.18.1 (before the fix) to v0.18.4 (after)
    ("kueue-operator.v1.4.1", "0.18.5", "Flavor"),
    ("kueue-operator.v2.0.0", None, "Flavor"),
    ("other.v1.3.0", None, "Flavor"),
]


@pytest.mark.parametrize(("csv", "version", "keys"), CSVS)
def test_a_kept_rhbok_csv_decides_over_the_channel(csv: str, version: str | None, keys: str) -> None:
    assert rhbok_kueue_version("stable-v1.4", csv) == version
    assert node_affinity_keys_of(version) == keys


def _platform(**target: Any) -> Any:
    return platform_for(OpenShiftTarget.model_validate({"kind": "openshift", "context": "ocp", **target}))


def test_the_platform_reads_the_csv_only_where_manual_approval_keeps_it() -> None:
    pinned = _platform(kueue={"channel": "stable-v1.4", "startingCsv": "kueue-operator.v1.4.0"})
    assert pinned.kueue_version(None, "production") == "0.18"  # Manual by default: 1.4.0 stays
    assert pinned.kueue_version(None, "dev") == "0.18.5"  # Automatic: OLM upgrades to the channel head
    old = _platform(
        kueue={"channel": "stable-v1.3", "approval": "Manual", "startingCsv": "kueue-operator.v1.3.0"}
    )
    assert old.kueue_version(None, "dev") == "0.16"


@pytest.mark.parametrize(("channel", "version"), [("stable", "0.11"), ("eus-2.16", "0.8")])
def test_openshift_ai_2_with_embedded_kueue_runs_its_release_s_kueue_whatever_the_rhbok_channel(
    channel: str, version: str
) -> None:
    platform = _platform(
        kueue={"channel": "stable-v1.4"},
        openshiftAi={
            "channel": channel,
            "release": "2.x",
            "components": {"kueue": {"managementState": "Managed"}},
        },
    )
    assert platform.kueue_version(None, "dev") == version
    assert node_affinity_keys_of(platform.kueue_version(None, "dev")) == "ResourceGroup"

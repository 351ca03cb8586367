"""load_stack reports every error in one pass: each key parsed on its own, rules run on what parsed."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from tests.config.factories import base_config


def issues_of(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    return [str(issue) for issue in caught.value.issues]


def test_parse_errors_in_several_keys_and_rule_errors_in_parsed_keys_are_reported_together() -> None:
    config = base_config()
    config["batchplane:kueue"]["localQueues"].append(
        {"name": "lq2", "namespace": "team-b", "clusterQueue": "nope"}
    )
    config["batchplane:kueue"]["clusterQueues"][0]["cohortName"] = "co"
    config["batchplane:environment"] = "prod"
    config["batchplane:colour"] = "blue"
    config["batchplane:webhook"] = {"replicas": "two"}
    config["batchplane:operators"] = {"kueue": {"version": 19}}
    issues = issues_of(config)
    assert issues == [
        "batchplane:environment: \"prod\" is not allowed; expected 'dev', 'staging' or 'production'",
        "batchplane:operators.kueue.version: 19: Input should be a valid string",
        "batchplane:webhook.replicas: 'two': Input should be a valid integer",
        "batchplane:colour: unknown key",
        'batchplane:kueue.localQueues[1].clusterQueue: no ClusterQueue "nope" in this stack (defined: cq)',
    ]


def test_a_rule_whose_input_failed_to_parse_is_skipped_rather_than_reporting_a_consequence() -> None:
    config = base_config()
    config["batchplane:kueue"]["resourceFlavors"] = [{"name": "F1"}]  # bad name: the whole kueue key fails
    issues = issues_of(config)
    assert all(issue.startswith("batchplane:kueue.resourceFlavors[0].name") for issue in issues), issues


def test_a_bad_target_still_lets_the_kueue_rules_be_skipped_and_other_keys_checked() -> None:
    config = base_config()
    config["batchplane:target"] = {"kind": "gke", "project": "x"}
    config["batchplane:webhook"] = {"failurePolicy": "Sometimes"}
    issues = issues_of(config)
    assert any(i.startswith("batchplane:target.") for i in issues)
    assert any(i.startswith("batchplane:webhook.failurePolicy") for i in issues)


@pytest.mark.parametrize(
    "key",
    ["Batchplane:kueue", "BATCHPLANE:teams", "batchplan:kueue", "batch-plane:target", "batchplanes:webhook", "Batchplane.x:kueue"],
)  # fmt: skip
def test_keys_in_a_namespace_close_to_batchplane_are_warned_about(key: str) -> None:
    stack = load_stack({**base_config(), key: {"x": 1}})
    assert [str(w) for w in stack.warnings if w.path == key] == [
        f"warning: {key}: this key is not in the batchplane: namespace and is ignored; did you mean "
        f"'batchplane:{key.partition(':')[2]}'?"
    ]


def test_a_dotted_key_that_pulumi_files_under_the_project_namespace_is_an_unknown_key_with_a_hint() -> None:
    assert issues_of({**base_config(), "batchplane.kueue": {"x": 1}}) == [
        "batchplane:batchplane.kueue: unknown key; did you mean 'batchplane:kueue'?"
    ]


@pytest.mark.parametrize(
    "key", ["gcp:project", "kubernetes:context", "batch:x", "pulumi:tags", "app:batchsize"]
)
def test_other_namespaces_are_not_warned_about(key: str) -> None:
    assert [w for w in load_stack({**base_config(), key: "my-project-1"}).warnings if w.path == key] == []


def test_a_stack_without_any_queue_is_valid_but_warned_about() -> None:
    stack = load_stack({"batchplane:target": {"kind": "kind"}})
    assert [str(w) for w in stack.warnings] == [
        "warning: batchplane:kueue: the stack declares no ClusterQueue and no LocalQueue: nothing will be "
        "admitted (declare kueue.clusterQueues/localQueues or teams)"
    ]


def test_a_team_that_expands_past_a_kueue_list_limit_is_an_error_at_the_team() -> None:
    config = {
        "batchplane:target": {"kind": "kind"},
        "batchplane:kueue": {"resourceFlavors": [{"name": "f"}]},
        "batchplane:teams": {
            "admissionChecks": [f"shared-{i}" for i in range(64)],
            "members": [
                {"name": "a", "admissionChecks": [f"own-{i}" for i in range(64)], "quotas": {"f": {"cpu": 1}}}
            ],
        },
    }
    assert issues_of(config) == [
        "batchplane:teams.members[0]: expands into a ClusterQueue/LocalQueue Kueue would refuse: "
        "admissionChecks: at most 64 entries allowed, 128 given"
    ]


def _gke_stack() -> dict[str, Any]:
    from tests.gke.conftest import gke_config

    return gke_config()


def test_a_bad_local_queue_does_not_hide_the_targets_own_errors() -> None:
    config = _gke_stack()
    config["batchplane:kueue"]["localQueues"][0]["namespace"] = "Not_A_Namespace"
    config["batchplane:target"]["zone"] = "us-central1-a"  # region and zone together: a target rule
    paths = [i.split(": ", 1)[0] for i in issues_of(config)]
    assert "batchplane:kueue.localQueues[0].namespace" in paths
    assert "batchplane:target.zone" in paths


def test_a_gpu_pool_key_that_fails_to_parse_does_not_hide_the_pools_other_rules() -> None:
    config = _gke_stack()
    pool = config["batchplane:target"]["gpuPools"][0]
    pool["maxRunDurationSeconds"] = 10**9  # over the 7-day limit: a parse error
    pool["accelerator"] = {"type": "nvidia-l4", "count": 2}  # g2-standard-4 has 1 L4: a rule error
    issues = issues_of(config)
    paths = [i.split(": ", 1)[0] for i in issues]
    assert "batchplane:target.gpuPools[0].maxRunDurationSeconds" in paths
    assert "batchplane:target.gpuPools[0].accelerator.count" in paths or (
        "batchplane:target.gpuPools[0].accelerator" in paths
    )
    # nothing reported about the removed key beyond its own parse error
    assert paths.count("batchplane:target.gpuPools[0].maxRunDurationSeconds") == 1


def test_one_operator_version_off_its_allow_list_does_not_hide_another() -> None:
    config = base_config()
    config["batchplane:operators"] = {
        "kuberay": {"version": "1.6.1"},
        "training": {"kind": "trainer-v2", "version": "9.9.9"},
    }
    assert [i.split(": ", 1)[0] for i in issues_of(config)] == [
        "batchplane:operators.kuberay.version",
        "batchplane:operators.training.version",
    ]


def test_an_unrepairable_target_still_skips_the_rules_that_need_it() -> None:
    config = _gke_stack()
    del config["batchplane:target"]["gpuPools"][0]["machineType"]  # required: the section cannot be repaired
    config["batchplane:target"]["zone"] = "us-central1-a"
    paths = [i.split(": ", 1)[0] for i in issues_of(config)]
    assert paths == ["batchplane:target.gpuPools[0].machineType"]

"""Every error at once inside ``teams`` (issue #30): a team entry that fails to parse no longer hides the rules that
need only its other fields (queue references, cohort, namespace), and unknown keys say what was meant."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import batchplane.config.renames as renames_module
from batchplane.config.renames import Rename, pattern_of, renamed
from batchplane.config.suggest import keys_at, nearest_key
from batchplane.errors import ConfigValidationError
from batchplane.stack import StackConfig, load_stack, read_stack_file
from batchplane.stack.partial import outside_stand_ins, partial_teams
from tests.conftest import template_path


def issues_of(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    return [str(issue) for issue in caught.value.errors]


def teams_stack() -> dict[str, Any]:
    """A valid kind stack: three teams in the teams cohort and one hand-written LocalQueue on team-b's queue."""
    return {
        "batchplane:target": {"kind": "kind"},
        "batchplane:kueue": {
            "resourceFlavors": [{"name": "default-flavor"}],
            "localQueues": [{"name": "batch", "namespace": "team-b", "clusterQueue": "team-b"}],
        },
        "batchplane:teams": {
            "members": [
                {"name": "team-a", "quotas": {"default-flavor": {"cpu": 4, "nvidia.com/gpu": 8}}},
                {"name": "team-b", "quotas": {"default-flavor": {"cpu": 4}}},
                {
                    "name": "team-c",
                    "quotas": {"default-flavor": {"cpu": {"nominalQuota": 4, "borrowingLimit": 2}}},
                },
            ]
        },
    }


THREE_MISTAKES = [
    "batchplane:teams.members[0].quotas.default-flavor.nvidia.com/gpu.nominalQuota: "
    '"8 GPUs" is not a Kubernetes quantity',
    "batchplane:teams.members[0].maxNode: unknown key",
    'batchplane:kueue.localQueues[0].clusterQueue: no ClusterQueue "team-d" in this stack '
    "(defined: team-a, team-b, team-c)",
]


def test_the_issues_three_mistakes_are_all_reported_in_one_run() -> None:
    config = teams_stack()
    team_a = config["batchplane:teams"]["members"][0]
    team_a["maxNode"] = 2  # a typo, in a team entry
    team_a["quotas"]["default-flavor"]["nvidia.com/gpu"] = "8 GPUs"  # not a quantity
    config["batchplane:kueue"]["localQueues"][0]["clusterQueue"] = "team-d"  # no such ClusterQueue
    assert issues_of(config) == THREE_MISTAKES


def test_a_borrowing_limit_typo_does_not_hide_the_missing_cluster_queue_and_names_the_key_meant() -> None:
    config = teams_stack()
    quota = config["batchplane:teams"]["members"][2]["quotas"]["default-flavor"]["cpu"]
    quota["borowingLimit"] = quota.pop("borrowingLimit")
    config["batchplane:kueue"]["localQueues"][0]["clusterQueue"] = "team-d"
    assert issues_of(config) == [
        "batchplane:teams.members[2].quotas.default-flavor.cpu.borowingLimit: unknown key; did you mean "
        "`borrowingLimit`?",
        'batchplane:kueue.localQueues[0].clusterQueue: no ClusterQueue "team-d" in this stack '
        "(defined: team-a, team-b, team-c)",
    ]


def test_a_failed_team_still_backs_the_local_queues_that_name_it_and_its_namespace() -> None:
    config = teams_stack()
    config["batchplane:teams"]["members"][1]["quotas"]["default-flavor"]["cpu"] = "four"
    # the hand-written LocalQueue names team-b's ClusterQueue in team-b's namespace: no consequence reported
    assert issues_of(config) == [
        'batchplane:teams.members[1].quotas.default-flavor.cpu.nominalQuota: "four" is not a Kubernetes quantity'
    ]
    config["batchplane:kueue"]["localQueues"][0]["namespace"] = "team-a"  # not selected by team-b's queue
    assert issues_of(config)[1:] == [
        'batchplane:kueue.localQueues[0].namespace: namespace "team-a" is not selected by the namespaceSelector of '
        'ClusterQueue "team-b": its workloads would never be admitted'
    ]


def test_a_failed_team_with_an_invalid_name_keeps_the_queue_rules_skipped() -> None:
    config = teams_stack()
    config["batchplane:teams"]["members"][1]["name"] = "Team_B"  # its ClusterQueue's name is unknown
    issues = issues_of(config)
    assert all(i.startswith("batchplane:teams.members[1].name") for i in issues), issues


def test_the_gpu_pool_typo_is_named_with_the_key_meant() -> None:
    config = read_stack_file(template_path("gke-dev"))
    config["batchplane:target"]["gpuPools"][0]["maxNode"] = config["batchplane:target"]["gpuPools"][0].pop(
        "maxNodes"
    )
    assert "batchplane:target.gpuPools[0].maxNode: unknown key; did you mean `maxNodes`?" in issues_of(config)


def test_an_unknown_top_level_key_is_named_with_its_namespace() -> None:
    config = teams_stack()
    config["batchplane:team"] = config.pop("batchplane:teams")
    assert issues_of(config) == ["batchplane:team: unknown key; did you mean `batchplane:teams`?"]


def test_an_unknown_key_far_from_every_key_gets_no_suggestion() -> None:
    config = teams_stack()
    config["batchplane:colour"] = "blue"
    assert issues_of(config) == ["batchplane:colour: unknown key"]


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        ((), "teams"),
        (("target", "gke", "gpuPools", 0), "maxNodes"),
        (("teams", "members", 0, "quotas", "f", "cpu"), "borrowingLimit"),
        (("kueue", "clusterQueues", 0, "resourceGroups", 0, "flavors", 0, "resources", 0), "borrowingLimit"),
    ],
)
def test_the_keys_at_a_location_come_from_the_model_there(loc: tuple[Any, ...], expected: str) -> None:
    assert expected in keys_at(StackConfig, loc)


def test_nearest_key_is_case_insensitive_and_none_when_nothing_is_close() -> None:
    assert nearest_key("MAXNODE", ["maxNodes", "minNodes"]) == "maxNodes"
    assert nearest_key("zzz", ["maxNodes", "minNodes"]) is None


# --- renames ------------------------------------------------------------------------------------------------


def test_a_key_from_an_older_release_is_reported_as_renamed(monkeypatch: pytest.MonkeyPatch) -> None:
    table = (
        Rename(
            "teams.members[].quotas.*.*.borrowLimit", "teams.members[].quotas.*.*.borrowingLimit", "0.2.0"
        ),
        Rename("team", "teams", "0.2.0"),
    )
    monkeypatch.setattr(renames_module, "RENAMES", table)
    config = teams_stack()
    quota = config["batchplane:teams"]["members"][2]["quotas"]["default-flavor"]["cpu"]
    quota["borrowLimit"] = quota.pop("borrowingLimit")
    config["batchplane:team"] = config.pop("batchplane:teams")
    assert issues_of(config) == ["batchplane:team: unknown key: renamed in 0.2.0: use `batchplane:teams`"]
    config["batchplane:teams"] = config.pop("batchplane:team")
    assert issues_of(config) == [
        "batchplane:teams.members[2].quotas.default-flavor.cpu.borrowLimit: unknown key: renamed in 0.2.0: use "
        "`borrowingLimit`"
    ]


def test_rename_patterns_match_list_items_and_map_keys_with_dots() -> None:
    rename = Rename("target.gpuPools[].maxNode", "target.gpuPools[].maxNodes", "0.2.0")
    assert renamed(["target", "gpuPools", 3, "maxNode"], [rename]) == rename
    assert renamed(["target", "gpuPools", "maxNode"], [rename]) is None
    quota = Rename("teams.members[].quotas.*.*.x", "teams.members[].quotas.*.*.y", "0.2.0")
    assert renamed(["teams", "members", 0, "quotas", "f", "nvidia.com/gpu", "x"], [quota]) == quota
    assert pattern_of(["target", "gpuPools", 0, "maxNode"]) == "target.gpuPools[].maxNode"


def test_every_rename_names_a_key_the_models_no_longer_accept_and_one_they_do() -> None:
    for row in renames_module.RENAMES:
        *parent, old = row.old.replace("[]", ".0").split(".")
        *_, new = row.new.split(".")
        loc = [int(p) if p.isdigit() else p for p in parent]
        assert old not in keys_at(StackConfig, loc) and new in keys_at(StackConfig, loc), row


# --- the property: an independent error never hides another -------------------------------------------------

Mutation = Callable[[dict[str, Any]], None]


def _set(path: tuple[Any, ...], value: Any) -> Mutation:
    def apply(config: dict[str, Any]) -> None:
        node: Any = config
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value

    return apply


def _rename(path: tuple[Any, ...], old: str, new: str) -> Mutation:
    def apply(config: dict[str, Any]) -> None:
        node: Any = config
        for step in path:
            node = node[step]
        node[new] = node.pop(old)

    return apply


def _add_local_queue(config: dict[str, Any]) -> None:
    config["batchplane:kueue"]["localQueues"].append(
        {"name": "extra", "namespace": "team-c", "clusterQueue": "x"}
    )


TEAMS = ("batchplane:teams", "members")
#: Independent mistakes, each in its own object, and the key path its error is reported at.
MISTAKES: dict[str, tuple[Mutation, str]] = {
    "team-typo": (_set((*TEAMS, 0, "maxNode"), 2), "batchplane:teams.members[0].maxNode"),
    "team-quantity": (
        _set((*TEAMS, 1, "quotas", "default-flavor", "cpu"), "8 GPUs"),
        "batchplane:teams.members[1].quotas.default-flavor.cpu",
    ),
    "team-limit-typo": (
        _rename((*TEAMS, 2, "quotas", "default-flavor", "cpu"), "borrowingLimit", "borowingLimit"),
        "batchplane:teams.members[2].quotas.default-flavor.cpu.borowingLimit",
    ),
    "missing-cluster-queue": (
        _set(("batchplane:kueue", "localQueues", 0, "clusterQueue"), "team-d"),
        "batchplane:kueue.localQueues[0].clusterQueue",
    ),
    "second-missing-cluster-queue": (_add_local_queue, "batchplane:kueue.localQueues[1].clusterQueue"),
    "environment": (_set(("batchplane:environment",), "prod"), "batchplane:environment"),
    "webhook": (_set(("batchplane:webhook",), {"replicas": "two"}), "batchplane:webhook.replicas"),
    "unknown-top-level-key": (_set(("batchplane:colour",), "blue"), "batchplane:colour"),
    "target-typo": (_set(("batchplane:target", "clusterNme"), "x"), "batchplane:target.clusterNme"),
}


@settings(max_examples=60, deadline=None)
@given(st.sets(st.sampled_from(sorted(MISTAKES)), min_size=1))
def test_adding_an_independent_error_never_hides_another(chosen: set[str]) -> None:
    config = copy.deepcopy(teams_stack())
    for name in sorted(chosen):
        MISTAKES[name][0](config)
    reported = issues_of(config)
    for name in chosen:
        path = MISTAKES[name][1]
        assert any(i.startswith(f"{path}:") or i.startswith(f"{path}.") for i in reported), (name, reported)


def test_partial_teams_is_none_when_a_section_wide_key_fails() -> None:
    raw = {"cohortName": "Bad_Cohort", "members": [{"name": "a", "quotas": {"f": {"cpu": "x"}}}]}
    assert partial_teams(raw, "batchplane:teams") is None


def test_a_stand_ins_own_paths_and_generated_objects_are_dropped_and_its_neighbours_kept() -> None:
    heads = ("batchplane:teams.members[1]",)
    assert not outside_stand_ins("batchplane:teams.members[1]", heads)
    assert not outside_stand_ins(
        'batchplane:teams.members[1] (generated ClusterQueue "b").resourceGroups', heads
    )
    assert outside_stand_ins("batchplane:teams.members[10].name", heads)
    assert outside_stand_ins("batchplane:kueue.localQueues[1]", heads)

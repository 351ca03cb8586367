"""The MultiKueue worker ClusterRole matches Kueue v0.19.2's create-multikueue-kubeconfig.sh rule for rule.

The script's rules are transcribed verbatim in ``kueue_v0.19.2_multikueue_role.yaml`` (URL and tag in its header).
The script grants every kind at once; Batchplane grants the rules of the frameworks the worker's Kueue enables, so
the test filters the script's rules by the resource each one names, with its own mapping below (read off the
script and Kueue's ``pkg/controller/jobs/<framework>/`` at v0.19.2, independently of the registry).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from batchplane.frameworks import BY_NAME, FRAMEWORKS, KUEUE_INTEGRATIONS, worker_cluster_role_rules
from batchplane.multikueue.worker import DISPATCHED_INTEGRATIONS, cluster_role_rules, worker_access_objects

SCRIPT_RULES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).with_name("kueue_v0.19.2_multikueue_role.yaml")).read_text(encoding="utf-8")
)["rules"]

#: The script's resources → the Kueue integrations that need them (None: needed whatever is dispatched).
#: Deployment has no MultiKueue adapter of its own; its Pods are dispatched by the Pod adapter.
SCRIPT_RESOURCE_OWNERS: dict[str, frozenset[str] | None] = {
    "workloads": None,
    "workloads/status": None,
    "clusterqueues": None,
    "localqueues": None,
    "jobs": frozenset({"batch/job"}),
    "pods": frozenset({"pod", "deployment"}),
    "statefulsets": frozenset({"statefulset"}),
    "leaderworkersets": frozenset({"leaderworkerset.x-k8s.io/leaderworkerset"}),
    "jobsets": frozenset({"jobset.x-k8s.io/jobset"}),
    "tfjobs": frozenset({"kubeflow.org/tfjob"}),
    "paddlejobs": frozenset({"kubeflow.org/paddlejob"}),
    "pytorchjobs": frozenset({"kubeflow.org/pytorchjob"}),
    "xgboostjobs": frozenset({"kubeflow.org/xgboostjob"}),
    "mpijobs": frozenset({"kubeflow.org/mpijob"}),
    "rayjobs": frozenset({"ray.io/rayjob"}),
    "rayclusters": frozenset({"ray.io/raycluster"}),
    "rayservices": frozenset({"ray.io/rayservice"}),
    "appwrappers": frozenset({"workload.codeflare.dev/appwrapper"}),
}

#: Kinds Kueue v0.19.2 registers a MultiKueue adapter for that the script grants nothing on.
BEYOND_SCRIPT = {"kubeflow.org/jaxjob", "trainer.kubeflow.org/trainjob"}


def _owners(rule: dict[str, Any]) -> frozenset[str] | None:
    owners = {
        SCRIPT_RESOURCE_OWNERS[r.split("/")[0] if r != "workloads/status" else r] for r in rule["resources"]
    }
    assert len(owners) == 1, rule
    return owners.pop()


def script_rules_for(enabled: set[str]) -> list[dict[str, Any]]:
    """The script's rules a worker enabling ``enabled`` needs: the common ones and those of enabled frameworks."""
    return [r for r in SCRIPT_RULES if (owners := _owners(r)) is None or owners & enabled]


def canonical(rules: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rules)


def test_the_transcribed_script_names_only_resources_the_test_maps() -> None:
    resources = {r for rule in SCRIPT_RULES for r in rule["resources"]}
    assert {r.split("/")[0] if r != "workloads/status" else r for r in resources} == set(
        SCRIPT_RESOURCE_OWNERS
    )
    assert len(SCRIPT_RULES) == 30


def test_every_framework_enabled_gives_the_scripts_rules_rule_for_rule_plus_the_dispatched_kinds_it_omits() -> (
    None
):
    generated = cluster_role_rules(KUEUE_INTEGRATIONS)
    beyond = [r for name in sorted(BEYOND_SCRIPT) for r in BY_NAME[name].worker_rules]
    assert canonical(generated) == canonical(SCRIPT_RULES + [r.manifest() for r in beyond])
    assert len(generated) == len({json.dumps(r, sort_keys=True) for r in generated})  # each rule once


@settings(max_examples=200, deadline=None)
@given(st.sets(st.sampled_from(KUEUE_INTEGRATIONS)))
def test_the_worker_role_for_any_enabled_frameworks_is_the_scripts_rules_for_them(enabled: set[str]) -> None:
    generated = worker_cluster_role_rules(enabled)
    beyond = [r.manifest() for name in sorted(enabled & BEYOND_SCRIPT) for r in BY_NAME[name].worker_rules]
    assert canonical(generated) == canonical(script_rules_for(enabled) + beyond)


def test_rayservices_and_rayclusters_and_workloads_get_what_kueue_grants() -> None:
    rules = cluster_role_rules(["ray.io/rayservice", "ray.io/raycluster"])
    by_resource = {r["resources"][0]: r["verbs"] for r in rules}
    assert by_resource["rayservices"] == ["create", "delete", "get", "list", "watch"]
    assert by_resource["rayservices/status"] == ["get"]
    assert {"update", "patch"} <= set(by_resource["rayclusters"])
    assert {"update", "patch"} <= set(by_resource["workloads"])
    assert "rayjobs" not in by_resource


def test_the_kinds_beyond_the_script_are_exactly_the_dispatched_ones_it_omits() -> None:
    in_script = {name for owners in SCRIPT_RESOURCE_OWNERS.values() if owners for name in owners}
    assert {f.name for f in FRAMEWORKS if f.worker_rules_beyond_script} == BEYOND_SCRIPT
    assert DISPATCHED_INTEGRATIONS - in_script == BEYOND_SCRIPT
    for name in BEYOND_SCRIPT:  # the shape the script gives every other dispatched kind
        framework = BY_NAME[name]
        assert [r.manifest() for r in framework.worker_rules] == [
            {
                "apiGroups": [framework.group],
                "resources": [framework.plural],
                "verbs": ["create", "delete", "get", "list", "watch"],
            },
            {"apiGroups": [framework.group], "resources": [f"{framework.plural}/status"], "verbs": ["get"]},
        ]


def test_frameworks_multikueue_does_not_dispatch_get_no_rules() -> None:
    for framework in FRAMEWORKS:
        assert bool(framework.worker_rules) == framework.multikueue, framework.name
    assert cluster_role_rules(["sparkoperator.k8s.io/sparkapplication"]) == cluster_role_rules([])


def test_an_unknown_integration_is_refused() -> None:
    try:
        cluster_role_rules(["example.com/foo"])
    except KeyError as error:
        assert "example.com/foo" in str(error)
    else:
        raise AssertionError("an unknown integration must raise KeyError")


def test_the_worker_cluster_role_object_carries_the_rules() -> None:
    role = worker_access_objects("kueue-system", ["batch/job", "ray.io/rayservice"])[1]
    assert role["kind"] == "ClusterRole"
    assert role["rules"] == cluster_role_rules(["batch/job", "ray.io/rayservice"])

"""Structural defaults: applied like apiextensions-apiserver, and what CEL rules see."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.crdcheck import CrdCatalog, SchemaIssue

from .conftest import cluster_queue, local_queue, messages, provisioning_request_config

CLUSTER_QUEUE_DEFAULTS = {
    "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
    "preemption": {
        "borrowWithinCohort": {"policy": "Never"},
        "reclaimWithinCohort": "Never",
        "withinClusterQueue": "Never",
    },
    "queueingStrategy": "BestEffortFIFO",
    "stopPolicy": "None",
}


def test_cluster_queue_gets_every_spec_default(catalog: CrdCatalog) -> None:
    obj = cluster_queue()
    defaulted = catalog.apply_defaults(obj)
    assert defaulted["spec"] == {**obj["spec"], **CLUSTER_QUEUE_DEFAULTS}


def test_apply_defaults_returns_a_copy_and_leaves_the_input_alone(catalog: CrdCatalog) -> None:
    obj = cluster_queue()
    defaulted = catalog.apply_defaults(obj)
    assert "queueingStrategy" not in obj["spec"]
    defaulted["spec"]["resourceGroups"][0]["coveredResources"].append("gpu")
    assert obj["spec"]["resourceGroups"][0]["coveredResources"] == ["cpu", "memory"]


def test_explicit_values_win_over_defaults(catalog: CrdCatalog) -> None:
    defaulted = catalog.apply_defaults(cluster_queue(queueingStrategy="StrictFIFO", preemption={}))
    assert defaulted["spec"]["queueingStrategy"] == "StrictFIFO"
    # an empty object present in the input still gets its nested defaults
    assert defaulted["spec"]["preemption"] == CLUSTER_QUEUE_DEFAULTS["preemption"]


@pytest.mark.parametrize(
    ("retry_strategy", "want"),
    [
        (None, {"backoffBaseSeconds": 60, "backoffLimitCount": 3, "backoffMaxSeconds": 1800}),
        (
            {"backoffLimitCount": 5},
            {"backoffBaseSeconds": 60, "backoffLimitCount": 5, "backoffMaxSeconds": 1800},
        ),
        ({}, {"backoffBaseSeconds": 60, "backoffLimitCount": 3, "backoffMaxSeconds": 1800}),
    ],
    ids=["absent-gets-the-object-default", "partial-gets-field-defaults", "empty-gets-field-defaults"],
)
def test_provisioning_request_config_retry_strategy_defaults(
    catalog: CrdCatalog, retry_strategy: dict[str, int] | None, want: dict[str, int]
) -> None:
    spec: dict[str, Any] = {} if retry_strategy is None else {"retryStrategy": retry_strategy}
    defaulted = catalog.apply_defaults(provisioning_request_config(**spec))
    assert defaulted["spec"]["retryStrategy"] == want


def test_null_with_a_default_is_defaulted_and_null_without_one_is_pruned(catalog: CrdCatalog) -> None:
    defaulted = catalog.apply_defaults(cluster_queue(queueingStrategy=None, cohortName=None))
    assert defaulted["spec"]["queueingStrategy"] == "BestEffortFIFO"
    assert "cohortName" not in defaulted["spec"]
    assert catalog.validate(cluster_queue(queueingStrategy=None, cohortName=None)) == []


def test_local_queue_fair_sharing_weight_defaults_inside_a_present_object(catalog: CrdCatalog) -> None:
    assert "fairSharing" not in catalog.apply_defaults(local_queue())["spec"]
    assert catalog.apply_defaults(local_queue(fairSharing={}))["spec"]["fairSharing"] == {"weight": 1}


def test_defaulted_when_can_preempt_lets_the_fungibility_rule_pass(catalog: CrdCatalog) -> None:
    obj = cluster_queue(
        flavorFungibility={"whenCanBorrow": "TryNextFlavor", "preference": "BorrowingOverPreemption"}
    )
    assert catalog.validate(obj) == []
    assert catalog.validate(obj, defaults=False) == [
        SchemaIssue(
            "spec.flavorFungibility",
            "no such key: whenCanPreempt evaluating rule: "
            "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
            "cel",
        )
    ]


def test_defaulted_reclaim_within_cohort_makes_the_preemption_rule_fire(catalog: CrdCatalog) -> None:
    obj = cluster_queue(cohortName="team", preemption={"borrowWithinCohort": {"policy": "LowerPriority"}})
    assert messages(catalog.validate(obj)) == [
        ("spec.preemption", "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never", "cel")
    ]
    assert messages(catalog.validate(obj, defaults=False)) == [
        (
            "spec.preemption",
            "no such key: reclaimWithinCohort evaluating rule: "
            "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
            "cel",
        )
    ]

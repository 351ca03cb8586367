"""PolicyReport: the mandatory flag and the JSON form."""

from __future__ import annotations

import json

import pytest

from batchplane.policyrun import EnforcementLevel, PolicyInfo, PolicyReport, Violation


def violation(level: EnforcementLevel) -> Violation:
    return Violation(
        policy="p",
        pack="pack",
        enforcement_level=level,
        message="desc\nmsg",
        urn="urn:pulumi:dev::fixture::kubernetes:core/v1:ConfigMap::cm",
        resource_type="kubernetes:core/v1:ConfigMap",
        resource_name="cm",
        description="desc",
    )


@pytest.mark.parametrize(
    ("levels", "exp"),
    [
        ([], False),
        (["advisory"], False),
        (["advisory", "mandatory"], True),
        (["disabled", "remediate"], False),
    ],
    ids=["none", "advisory-only", "one-mandatory", "other-levels"],
)
def test_has_mandatory_is_true_only_with_a_mandatory_violation(
    levels: list[EnforcementLevel], exp: bool
) -> None:
    report = PolicyReport(policies=[], violations=[violation(level) for level in levels])

    assert report.has_mandatory is exp


def test_report_json_holds_policies_violations_and_logs_but_not_timings() -> None:
    report = PolicyReport(
        policies=[PolicyInfo(name="p", description="desc", enforcement_level="mandatory", config={"max": 2})],
        violations=[violation("mandatory")],
        pack="pack",
        pack_version="1.0.0",
        logs=["info: hello"],
        timings={"total": 0.5},
    )

    assert json.loads(report.to_json()) == {
        "pack": "pack",
        "packVersion": "1.0.0",
        "policies": [
            {
                "name": "p",
                "description": "desc",
                "enforcement_level": "mandatory",
                "policy_type": "unspecified",
                "display_name": "",
                "config_schema": None,
                "config": {"max": 2},
            }
        ],
        "violations": [
            {
                "policy": "p",
                "pack": "pack",
                "enforcement_level": "mandatory",
                "message": "desc\nmsg",
                "urn": "urn:pulumi:dev::fixture::kubernetes:core/v1:ConfigMap::cm",
                "resource_type": "kubernetes:core/v1:ConfigMap",
                "resource_name": "cm",
                "description": "desc",
            }
        ],
        "logs": ["info: hello"],
    }

"""Policy config parsing and reconciliation, mirroring the Pulumi CLI (pkg/resource/analyzer/config.go)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from batchplane.policyrun import (
    PolicyConfig,
    PolicyConfigError,
    PolicyInfo,
    load_policy_config_file,
    parse_policy_config,
    reconcile_policy_config,
)

POLICIES = [
    PolicyInfo(name="plain", description="d", enforcement_level="advisory"),
    PolicyInfo(
        name="limited",
        description="d",
        enforcement_level="mandatory",
        config_schema={
            "properties": {
                "max": {"type": "integer", "minimum": 0, "default": 4},
                "note": {"type": "string"},
            },
            "required": ["max"],
        },
    ),
]


@pytest.mark.parametrize(
    ("raw", "exp"),
    [
        ({"all": "mandatory"}, {"all": PolicyConfig("mandatory", None)}),
        ({"limited": {"max": 2}}, {"limited": PolicyConfig(None, {"max": 2})}),
        (
            {"limited": {"enforcementLevel": "disabled", "max": 2}},
            {"limited": PolicyConfig("disabled", {"max": 2})},
        ),
        ({"limited": {"enforcementLevel": "remediate"}}, {"limited": PolicyConfig("remediate", None)}),
        ({"plain": {}}, {}),
    ],
    ids=["all-level", "properties-only", "level-and-properties", "level-in-object", "empty-object-dropped"],
)
def test_policy_config_file_parses_like_the_cli(raw: dict[str, Any], exp: dict[str, PolicyConfig]) -> None:
    assert parse_policy_config(raw) == exp


def test_bad_policy_config_entries_are_all_reported() -> None:
    raw = {"all": "strict", "plain": {"enforcementLevel": 1}, "limited": {"enforcementLevel": "hard"}, "x": 5}

    with pytest.raises(PolicyConfigError) as caught:
        parse_policy_config(raw)

    assert caught.value.issues == [
        'parsing enforcement level for "all": "strict" is not a valid enforcement level',
        'parsing enforcement level for "plain": 1 is not a valid enforcement level; must be a string',
        'parsing enforcement level for "limited": "hard" is not a valid enforcement level',
        'parsing "x": 5 is not a valid value; must be a string or object',
    ]


@pytest.mark.parametrize(
    ("given", "initial", "exp"),
    [
        (
            None,
            None,
            {"plain": PolicyConfig("advisory", None), "limited": PolicyConfig("mandatory", {"max": 4})},
        ),
        (
            {"all": PolicyConfig("disabled")},
            None,
            {
                "plain": PolicyConfig("disabled", None),
                "limited": PolicyConfig("disabled", {"max": 4}),
                "all": PolicyConfig("disabled", None),
            },
        ),
        (
            {"all": PolicyConfig("mandatory"), "plain": PolicyConfig("advisory")},
            None,
            {
                "plain": PolicyConfig("advisory", None),
                "limited": PolicyConfig("mandatory", {"max": 4}),
                "all": PolicyConfig("mandatory", None),
            },
        ),
        (
            {"limited": PolicyConfig(None, {"note": "n"})},
            None,
            {
                "plain": PolicyConfig("advisory", None),
                "limited": PolicyConfig("mandatory", {"max": 4, "note": "n"}),
            },
        ),
        (
            {"limited": PolicyConfig(None, {"max": 1})},
            {"limited": PolicyConfig("advisory", {"max": 9})},
            {"plain": PolicyConfig("advisory", None), "limited": PolicyConfig("advisory", {"max": 1})},
        ),
    ],
    ids=[
        "defaults",
        "all-overrides-levels",
        "policy-entry-beats-all",
        "properties-merge-defaults",
        "file-beats-initial",
    ],
)
def test_reconcile_fills_defaults_then_initial_then_file(
    given: dict[str, PolicyConfig] | None,
    initial: dict[str, PolicyConfig] | None,
    exp: dict[str, PolicyConfig],
) -> None:
    assert reconcile_policy_config(POLICIES, given, initial=initial) == exp


@pytest.mark.parametrize(
    ("given", "exp_issues"),
    [
        ({"limited": PolicyConfig(None, {"max": -1})}, ["limited: max: -1 is less than the minimum of 0"]),
        (
            {"limited": PolicyConfig(None, {"max": "x", "note": 3})},
            ["limited: max: 'x' is not of type 'integer'", "limited: note: 3 is not of type 'string'"],
        ),
        (
            {"typo": PolicyConfig(None, {"max": 1})},
            ['typo: invalid enforcement level "" (no policy of that name, and no enforcementLevel given)'],
        ),
    ],
    ids=["below-minimum", "wrong-types", "unknown-policy-without-level"],
)
def test_reconcile_rejects_config_that_breaks_the_schema(
    given: dict[str, PolicyConfig], exp_issues: list[str]
) -> None:
    with pytest.raises(PolicyConfigError) as caught:
        reconcile_policy_config(POLICIES, given)

    assert caught.value.issues == exp_issues


def test_required_property_without_default_is_reported() -> None:
    policies = [
        PolicyInfo(
            name="needs-team",
            description="d",
            enforcement_level="advisory",
            config_schema={"properties": {"team": {"type": "string"}}, "required": ["team"]},
        )
    ]

    with pytest.raises(PolicyConfigError) as caught:
        reconcile_policy_config(policies)

    assert str(caught.value) == "invalid policy config:\n  needs-team: 'team' is a required property"


def test_unknown_policy_with_a_level_is_passed_through() -> None:
    result = reconcile_policy_config(POLICIES, {"typo": PolicyConfig("mandatory")})

    assert result["typo"] == PolicyConfig("mandatory", None)


@pytest.mark.parametrize(
    ("content", "exp"),
    [
        ('{"all": "mandatory", "limited": {"max": 2}}', {"all": "mandatory", "limited": {"max": 2}}),
        ("  \n", None),
    ],
    ids=["object", "blank-means-none"],
)
def test_policy_config_file_loads(tmp_path: Path, content: str, exp: dict[str, Any] | None) -> None:
    path = tmp_path / "policy-config.json"
    path.write_text(content)

    assert load_policy_config_file(path) == exp


@pytest.mark.parametrize(
    ("content", "exp_issue"),
    [
        ("[1]", "parsing {path}: not a JSON object"),
        ("{", "parsing {path}: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        (None, "reading {path}: No such file or directory"),
    ],
    ids=["array", "bad-json", "missing"],
)
def test_bad_policy_config_file_is_a_config_error(
    tmp_path: Path, content: str | None, exp_issue: str
) -> None:
    path = tmp_path / "policy-config.json"
    if content is not None:
        path.write_text(content)

    with pytest.raises(PolicyConfigError) as caught:
        load_policy_config_file(path)

    assert caught.value.issues == [exp_issue.format(path=path)]

"""Wire forms: resource inputs, provider references, stack config, the pack environment and project file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from batchplane.policyrun import UNKNOWN, PolicyRunError
from batchplane.policyrun.resources import provider_urn, stack_config_strings, wire_properties, wire_value
from batchplane.policyrun.runner import load_pack_version, pack_environment


class _Resource:
    urn = "urn:pulumi:dev::fixture::kubernetes:core/v1:ConfigMap::cm"

    def __init__(self, inputs: dict[str, Any]) -> None:
        self.inputs = inputs


def test_unknown_values_become_the_sentinel() -> None:
    from pulumi.output import Unknown

    value = {"a": Unknown(), "b": [Unknown(), UNKNOWN], "c": {"d": Unknown()}}

    assert wire_value(value) == {"a": UNKNOWN, "b": [UNKNOWN, UNKNOWN], "c": {"d": UNKNOWN}}


@pytest.mark.parametrize(
    ("value", "exp"),
    [
        (
            {"replicas": 1, "ratio": 0.5, "on": True, "off": None},
            {"replicas": 1, "ratio": 0.5, "on": True, "off": None},
        ),
        ({"ports": (80, 443)}, {"ports": [80, 443]}),
        ({"__defaults": ["x"], "spec": {"__inputs": 1, "a": "b"}}, {"spec": {"a": "b"}}),
        (
            {"s": {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "pw"}},
            {"s": {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "pw"}},
        ),
    ],
    ids=["scalars", "tuple-to-list", "internal-keys-dropped", "secret-kept-wrapped"],
)
def test_json_data_goes_on_the_wire_as_the_cli_marshals_it(value: Any, exp: Any) -> None:
    assert wire_value(value) == exp


@pytest.mark.parametrize(
    ("inputs", "exp_message"),
    [
        (
            {"spec": {"data": b"x"}},
            "resource urn:pulumi:dev::fixture::kubernetes:core/v1:ConfigMap::cm: property spec.data: "
            "a builtins.bytes cannot be sent to a policy pack (only JSON data and unknowns can)",
        ),
        (
            {"ports": [1, float("nan")]},
            "resource urn:pulumi:dev::fixture::kubernetes:core/v1:ConfigMap::cm: property ports[1]: "
            "nan cannot be sent to a policy pack",
        ),
        (
            {"labels": {1: "x"}},
            "resource urn:pulumi:dev::fixture::kubernetes:core/v1:ConfigMap::cm: "
            "property labels: key 1 is not a string",
        ),
    ],
    ids=["bytes", "nan", "non-string-key"],
)
def test_values_without_a_wire_form_are_rejected_with_their_path(
    inputs: dict[str, Any], exp_message: str
) -> None:
    with pytest.raises(PolicyRunError) as caught:
        wire_properties(_Resource(inputs))  # type: ignore[arg-type]

    assert str(caught.value) == exp_message


@pytest.mark.parametrize(
    ("reference", "exp"),
    [
        (
            "urn:pulumi:dev::p::pulumi:providers:kubernetes::kind::0b1c-id",
            "urn:pulumi:dev::p::pulumi:providers:kubernetes::kind",
        ),
        (None, None),
        ("", None),
    ],
    ids=["reference", "none", "empty"],
)
def test_provider_reference_splits_off_the_id(reference: str | None, exp: str | None) -> None:
    assert provider_urn(reference) == exp


def test_stack_config_is_a_string_map_with_project_namespace() -> None:
    config = {
        "env": "prod",
        "batchplane:gpus": 8,
        "batchplane:spot": False,
        "batchplane:teams": [{"name": "a"}],
    }

    assert stack_config_strings("batchplane", config) == {
        "batchplane:env": "prod",
        "batchplane:gpus": "8",
        "batchplane:spot": "false",
        "batchplane:teams": '[{"name":"a"}]',
    }


def test_pack_environment_carries_stack_identity_and_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULUMI_CONFIG", '{"stale:key": "1"}')
    monkeypatch.setenv("PULUMI_ORGANIZATION", "stale-org")

    env = pack_environment(project="fixture", stack="dev", config={"env": "prod"}, organization="acme")
    bare = pack_environment(project="fixture", stack="dev", config={})

    assert {k: v for k, v in env.items() if k.startswith("PULUMI_")} == {
        "PULUMI_PROJECT": "fixture",
        "PULUMI_STACK": "dev",
        "PULUMI_DRY_RUN": "true",
        "PULUMI_CONFIG": json.dumps({"fixture:env": "prod"}),
        "PULUMI_ORGANIZATION": "acme",
    }
    assert "PULUMI_CONFIG" not in bare
    assert "PULUMI_ORGANIZATION" not in bare


@pytest.mark.parametrize(
    ("content", "exp_version"),
    [
        ("runtime: python\nversion: 1.2.3\n", "1.2.3"),
        ("runtime:\n  name: python\n  options: {virtualenv: venv}\n", ""),
    ],
    ids=["string-runtime", "runtime-with-options"],
)
def test_pack_project_gives_the_version(tmp_path: Path, content: str, exp_version: str) -> None:
    (tmp_path / "PulumiPolicy.yaml").write_text(content)

    assert load_pack_version(tmp_path) == exp_version


@pytest.mark.parametrize(
    ("content", "exp_message"),
    [
        (None, "{dir} is not a policy pack: it has no PulumiPolicy.yaml"),
        ("runtime: nodejs\n", "policy pack {dir} has runtime 'nodejs'; only Python policy packs run offline"),
        ("- runtime\n", "failed to load policy pack project {dir}/PulumiPolicy.yaml: not a YAML mapping"),
    ],
    ids=["missing", "nodejs", "not-a-mapping"],
)
def test_pack_project_problems_are_policy_run_errors(
    tmp_path: Path, content: str | None, exp_message: str
) -> None:
    if content is not None:
        (tmp_path / "PulumiPolicy.yaml").write_text(content)

    with pytest.raises(PolicyRunError) as caught:
        load_pack_version(tmp_path)

    assert str(caught.value) == exp_message.format(dir=tmp_path)

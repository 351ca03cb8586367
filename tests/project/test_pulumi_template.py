"""``Pulumi.yaml``: the project keys stay, and its ``template:`` section makes ``pulumi new`` prompt for
a working environment (schema: Pulumi project file reference, ``template.{description, quickstart,
important, config.<key>.{description, default, secret}}``)."""

from __future__ import annotations

import re
from typing import Any

import pulumi_gcp.config as gcp_config
import pytest

from batchplane.stack import StackConfig, load_stack
from batchplane.stack.files import read_yaml_file
from tests.conftest import REPO_ROOT

TEMPLATE_KEYS = {"description", "quickstart", "important", "config"}
CONFIG_VALUE_KEYS = {"description", "default", "secret"}
BATCHPLANE_KEYS = {field.alias or name for name, field in StackConfig.model_fields.items()}


def project() -> dict[str, Any]:
    doc = read_yaml_file(REPO_ROOT / "Pulumi.yaml")
    assert isinstance(doc, dict)
    return doc


def key_problem(key: str) -> str | None:
    """Why ``key`` is not a config key Batchplane or the GCP provider reads, or None."""
    namespace, sep, name = key.partition(":")
    if not sep:
        return f"{key}: give the namespace (batchplane:{key})"
    if namespace == "batchplane":
        return (
            None
            if name in BATCHPLANE_KEYS
            else f"{key}: not a batchplane key ({', '.join(sorted(BATCHPLANE_KEYS))})"
        )
    if namespace == "gcp":
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
        return None if snake in dir(type(gcp_config)) else f"{key}: not a pulumi-gcp provider config key"
    return f"{key}: namespace {namespace} is neither batchplane nor gcp"


def test_project_keys_are_kept() -> None:
    doc = project()
    assert doc["name"] == "batchplane"
    assert doc["runtime"] == {"name": "python", "options": {"toolchain": "uv", "virtualenv": ".venv"}}
    assert doc["stackConfigDir"] == "stacks"


def test_template_section_has_only_pulumi_keys_and_every_config_key_is_documented() -> None:
    template = project()["template"]
    assert set(template) <= TEMPLATE_KEYS
    assert template["description"] and "batchplane validate" in template["quickstart"]
    assert list(template["config"]) == [
        "batchplane:environment",
        "batchplane:target",
        "batchplane:operators",
        "batchplane:kueue",
        "batchplane:teams",
    ]
    for key, value in template["config"].items():
        assert set(value) <= CONFIG_VALUE_KEYS, key
        assert isinstance(value["description"], str) and len(value["description"]) > 40, key
        assert isinstance(value["default"], str), key  # pulumi new stores prompted values as strings


def test_template_config_keys_are_batchplane_or_gcp_keys() -> None:
    assert [key_problem(k) for k in project()["template"]["config"]] == [None] * 5


@pytest.mark.parametrize(
    ("key", "exp_problem"),
    [
        ("batchplane:teams", None),
        ("gcp:project", None),
        ("gcp:region", None),
        (
            "batchplane:team",
            "batchplane:team: not a batchplane key (environment, kueue, multiKueue, observability, operators, target, teams, webhook)",
        ),
        ("gcp:projectName", "gcp:projectName: not a pulumi-gcp provider config key"),
        ("kubernetes:context", "kubernetes:context: namespace kubernetes is neither batchplane nor gcp"),
        ("environment", "environment: give the namespace (batchplane:environment)"),
    ],
    ids=["batchplane", "gcp-project", "gcp-region", "typo", "gcp-unknown", "other-namespace", "no-namespace"],
)
def test_key_problem_accepts_batchplane_and_gcp_keys_only(key: str, exp_problem: str | None) -> None:
    assert key_problem(key) == exp_problem


def test_template_defaults_make_a_valid_kind_stack_with_one_team() -> None:
    config = {key: value["default"] for key, value in project()["template"]["config"].items()}
    stack = load_stack(config, "new-env")  # JSON text, as `pulumi new` stores it
    assert stack.config.target.kind == "kind"
    assert stack.config.environment == "dev"
    assert [(lq.obj.namespace, lq.obj.name, lq.obj.cluster_queue) for lq in stack.kueue.local_queues] == [
        ("team-a", "default", "team-a")
    ]
    assert stack.warnings == []  # a new environment's first command prints no warning (issue #30)

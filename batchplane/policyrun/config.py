"""Policy config the way the Pulumi CLI builds it before calling ``Configure`` on a pack.

``pulumi preview --policy-pack DIR --policy-pack-config FILE`` reads FILE (JSON:
``{"all": "mandatory", "<policy>": "advisory" | {"enforcementLevel": ..., <props>}}``), then
reconciles it with what the pack declares: every policy starts at its own enforcement level with
the ``default`` of each config-schema property, the pack's ``initial_config`` is applied, then the
file; ``"all"`` sets the level of every policy first, then per-policy entries win. Each policy's
resulting properties are validated against its config schema (JSON Schema, ``type: object``).
This module mirrors ``pkg/resource/analyzer/config.go`` (``parsePolicyPackConfig``,
``ReconcilePolicyPackConfig``, ``applyConfig``) of pulumi/pulumi; like the CLI, the result keeps
an ``"all"`` entry, which the Python analyzer ignores.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchplane.policyrun.errors import PolicyConfigError
from batchplane.policyrun.report import ENFORCEMENT_LEVELS, EnforcementLevel, PolicyInfo

ALL = "all"
"""The policy-config key that sets the enforcement level of every policy of the pack."""


@dataclass(frozen=True)
class PolicyConfig:
    """The config of one policy (``AnalyzerPolicyConfig`` in the CLI).

    Attributes:
        enforcement_level: the level to run the policy at; ``None`` when the config gives none.
        properties: the policy's config properties (``None`` when there are none).
    """

    enforcement_level: EnforcementLevel | None = None
    properties: Mapping[str, Any] | None = None


def _level(value: object) -> EnforcementLevel | None:
    if isinstance(value, str) and value in ENFORCEMENT_LEVELS:
        return value
    return None


def parse_policy_config(raw: Mapping[str, Any]) -> dict[str, PolicyConfig]:
    """Parse the content of a policy-config file (already decoded from JSON).

    Args:
        raw: ``{"<policy>|all": "<level>" | {"enforcementLevel": "<level>", <property>: <value>}}``.

    Returns:
        One :class:`PolicyConfig` per key; entries with neither a level nor properties are dropped.

    Raises:
        PolicyConfigError: with every bad entry, in the CLI's words, e.g.
            ``parsing enforcement level for "all": "strict" is not a valid enforcement level``.
    """
    result: dict[str, PolicyConfig] = {}
    issues: list[str] = []
    for key, value in raw.items():
        level: EnforcementLevel | None = None
        properties: dict[str, Any] | None = None
        if isinstance(value, str):
            level = _level(value)
            if level is None:
                issues.append(
                    f'parsing enforcement level for "{key}": "{value}" is not a valid enforcement level'
                )
                continue
        elif isinstance(value, Mapping):
            props = {str(k): copy.deepcopy(v) for k, v in value.items()}
            if "enforcementLevel" in props:
                given = props.pop("enforcementLevel")
                if not isinstance(given, str):
                    issues.append(
                        f'parsing enforcement level for "{key}": {given!r} is not a valid enforcement level; '
                        "must be a string"
                    )
                    continue
                level = _level(given)
                if level is None:
                    issues.append(
                        f'parsing enforcement level for "{key}": "{given}" is not a valid enforcement level'
                    )
                    continue
            properties = props or None
        else:
            issues.append(f'parsing "{key}": {value!r} is not a valid value; must be a string or object')
            continue
        if level is None and not properties:
            continue
        result[str(key)] = PolicyConfig(level, properties)
    if issues:
        raise PolicyConfigError(issues)
    return result


def load_policy_config_file(path: Path) -> dict[str, Any] | None:
    """Read a ``--policy-pack-config`` JSON file; blank content means no config (``None``), as in the CLI.

    Raises:
        PolicyConfigError: the file cannot be read, is not JSON, or is not a JSON object.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise PolicyConfigError([f"reading {path}: {err.strerror or err}"]) from None
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise PolicyConfigError([f"parsing {path}: {err}"]) from None
    if not isinstance(data, dict):
        raise PolicyConfigError([f"parsing {path}: not a JSON object"])
    return data


def _defaults(policies: Sequence[PolicyInfo]) -> dict[str, PolicyConfig]:
    result: dict[str, PolicyConfig] = {}
    for policy in policies:
        props: dict[str, Any] = {}
        schema_props = (policy.config_schema or {}).get("properties") or {}
        for name, schema in schema_props.items():
            if isinstance(schema, Mapping) and "default" in schema:
                props[name] = copy.deepcopy(schema["default"])
        result[policy.name] = PolicyConfig(policy.enforcement_level, props or None)
    return result


def _apply(result: dict[str, PolicyConfig], to_apply: Mapping[str, PolicyConfig]) -> dict[str, PolicyConfig]:
    everything = to_apply.get(ALL)
    if everything is not None and everything.enforcement_level is not None:
        result = {k: PolicyConfig(everything.enforcement_level, v.properties) for k, v in result.items()}
    for name, given in to_apply.items():
        current = result.get(name, PolicyConfig())
        level = given.enforcement_level or current.enforcement_level
        properties = dict(current.properties) if current.properties is not None else None
        if given.properties:
            properties = {**(properties or {}), **copy.deepcopy(dict(given.properties))}
        result[name] = PolicyConfig(level, properties)
    return result


def _schema_issues(policies: Sequence[PolicyInfo], config: Mapping[str, PolicyConfig]) -> list[str]:
    from jsonschema import Draft7Validator

    issues: list[str] = []
    for policy in policies:
        if policy.config_schema is None:
            continue
        schema: dict[str, Any] = {"type": "object"}
        if policy.config_schema.get("properties"):
            schema["properties"] = policy.config_schema["properties"]
        if policy.config_schema.get("required"):
            schema["required"] = list(policy.config_schema["required"])
        entry = config.get(policy.name)
        props = dict(entry.properties) if entry is not None and entry.properties is not None else {}
        validator = Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)
        for error in validator.iter_errors(props):
            path = ".".join(str(p) for p in error.absolute_path)
            issues.append(
                f"{policy.name}: {path}: {error.message}" if path else f"{policy.name}: {error.message}"
            )
    return sorted(issues)


def reconcile_policy_config(
    policies: Sequence[PolicyInfo],
    given: Mapping[str, PolicyConfig] | None = None,
    *,
    initial: Mapping[str, PolicyConfig] | None = None,
) -> dict[str, PolicyConfig]:
    """Build the config to send with ``Configure``, exactly as the CLI reconciles it.

    Args:
        policies: the pack's policies (``GetAnalyzerInfo``) with their own enforcement levels
            and config schemas.
        given: the parsed policy-config file (:func:`parse_policy_config`); ``None`` = no file.
        initial: the pack's ``initial_config`` (``AnalyzerInfo.initialConfig``).

    Returns:
        ``{policy: PolicyConfig}`` for every policy (plus ``"all"`` and any other key of the
        file), every policy with a level and its schema defaults filled in.

    Raises:
        PolicyConfigError: a key that names no policy has no level (the CLI fails ``Configure``
            with ``invalid enforcement level ""``), or properties break a config schema
            (JSON Schema draft 7, as ``gojsonschema`` checks them), one issue per error.
    """
    result = _defaults(policies)
    if initial:
        result = _apply(result, initial)
    if given:
        result = _apply(result, given)
    issues = _schema_issues(policies, result)
    issues += [
        f'{name}: invalid enforcement level "" (no policy of that name, and no enforcementLevel given)'
        for name, entry in sorted(result.items())
        if entry.enforcement_level is None
    ]
    if issues:
        raise PolicyConfigError(issues)
    return result

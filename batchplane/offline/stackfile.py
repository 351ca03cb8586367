"""Pulumi project and stack files, and config encoded the way the Pulumi CLI hands it to a program.

Mirrors the Pulumi CLI's behaviour (``pulumi/pkg/resource/config``, ``sdk/python/cmd/
pulumi-language-python-exec``): the CLI reads ``Pulumi.<stack>.yaml``'s ``config:`` map, merges
project-level ``config:`` defaults from ``Pulumi.yaml``, and passes every value to the language host
as a *string*: strings as they are, numbers and booleans as their JSON text, objects and lists as
compact JSON (keys sorted, as Go's ``encoding/json`` writes maps). Keys are ``namespace:key``; a
bare ``key`` gets the project's name as namespace. ``secure:`` values cannot be decrypted offline:
they become :data:`SECRET_PLACEHOLDER` and their keys are marked secret.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batchplane.errors import ConfigLoadError
from batchplane.stack.files import (
    read_stack_file as read_stack_file,  # re-exported: the offline API reads stack files
)
from batchplane.stack.files import replace_secure
from batchplane.yamlfile import read_yaml_file as _read_yaml

#: Deprecated name of :func:`~batchplane.stack.files.read_stack_file` (it returns the raw ``config:`` map, not the
#: :class:`~batchplane.stack.Stack` that :func:`batchplane.stack.load_stack_file` returns); use ``read_stack_file``.
load_stack_file = read_stack_file


@dataclass(frozen=True)
class ProjectFile:
    """The parts of ``Pulumi.yaml`` the offline engine needs.

    Attributes:
        directory: the project directory (holds ``Pulumi.yaml``), absolute.
        name: the project name (``name:``).
        program: what the Python language host runs: the ``main:`` directory or file, default the
            project directory (whose ``__main__.py`` runs).
        config_defaults: project-level ``config:`` values and ``default:``s, keys normalised to
            ``namespace:key``; stack values override them.
    """

    directory: Path
    name: str
    program: Path
    config_defaults: dict[str, Any] = field(default_factory=dict)


_SCHEMA_KEYS = frozenset({"type", "default", "value", "description", "secret", "items"})


def read_project(project_dir: Path) -> ProjectFile:
    """Read ``<project_dir>/Pulumi.yaml``.

    Raises:
        ConfigLoadError: the file is missing or unreadable, not YAML, has no string ``name``, or its
            ``main:`` does not exist.
    """
    directory = project_dir.resolve()
    path = directory / "Pulumi.yaml"
    doc = _read_yaml(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or not doc["name"]:
        raise ConfigLoadError(f"{path}: expected a mapping with a non-empty string 'name'")
    name: str = doc["name"]
    main = doc.get("main")
    program = directory / str(main) if main else directory
    if not program.exists():
        raise ConfigLoadError(f"{path}: main program {program} does not exist")
    defaults: dict[str, Any] = {}
    raw = doc.get("config") or {}
    if not isinstance(raw, dict):
        raise ConfigLoadError(f"{path}: 'config' must be a mapping")
    for key, value in raw.items():
        if isinstance(value, dict) and value and set(value) <= _SCHEMA_KEYS:
            if "value" in value:
                value = value["value"]
            elif "default" in value:
                value = value["default"]
            else:
                continue
        defaults[normalise_key(name, str(key))] = value
    return ProjectFile(directory=directory, name=name, program=program, config_defaults=defaults)


def normalise_key(project: str, key: str) -> str:
    """``key`` → ``project:key``; legacy ``ns:config:key`` → ``ns:key``; ``ns:key`` unchanged."""
    parts = key.split(":")
    if len(parts) == 1:
        return f"{project}:{key}"
    if len(parts) == 3 and parts[1] == "config":
        return f"{parts[0]}:{parts[2]}"
    return key


def encode_value(value: Any) -> str:
    """One config value as the CLI passes it: strings as-is, anything else as compact JSON text.

    Objects are written with sorted keys and no spaces (Go's ``json.Marshal`` of a map), numbers and
    booleans as JSON (``3``, ``1.5``, ``true``), ``None`` as ``null``.
    """
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def encode_config(project: str, config: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Encode a stack's config map (as :func:`read_stack_file` returns it) for the language host.

    Args:
        project: the project name (namespace of bare keys).
        config: ``{"namespace:key" or "key": YAML value}``.

    Returns:
        ``({"namespace:key": "text"}, sorted secret keys)``: the arguments of
        ``pulumi.runtime.set_all_config`` and the ``PULUMI_CONFIG``/``PULUMI_CONFIG_SECRET_KEYS``
        environment bag.
    """
    encoded: dict[str, str] = {}
    secret: set[str] = set()
    for raw_key, raw_value in config.items():
        key = normalise_key(project, str(raw_key))
        value, is_secret = replace_secure(raw_value)
        encoded[key] = encode_value(value)
        if is_secret:
            secret.add(key)
    return encoded, sorted(secret)

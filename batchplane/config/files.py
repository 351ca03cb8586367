"""Reading ``stacks/Pulumi.<stack>.yaml`` files (the Pulumi stack settings format).

One reader for every command (``validate``, ``preview``, ``check`` ...), so they agree on what a
value is: YAML 1.2 scalars as Pulumi's Go YAML reader parses them (``yes`` and dates stay strings).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from batchplane.config.stack import Stack, load_stack
from batchplane.errors import ConfigLoadError

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_YAML12_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")


class _StackLoader(yaml.SafeLoader):
    """SafeLoader closer to YAML 1.2 (as Pulumi's Go YAML reader): dates stay strings, ``yes``/``on``
    stay strings (only ``true``/``false`` are booleans)."""


_StackLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_TIMESTAMP_TAG, _BOOL_TAG)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_StackLoader.add_implicit_resolver(_BOOL_TAG, _YAML12_BOOL, list("tTfF"))


def read_yaml_file(path: Path) -> Any:
    """Read one YAML document the way Pulumi reads project and stack files (YAML 1.2 scalars).

    Raises:
        ConfigLoadError: the file cannot be read or is not YAML (the message gives line and column).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigLoadError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return yaml.load(text, Loader=_StackLoader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        where = (
            f" (line {exc.problem_mark.line + 1}, column {exc.problem_mark.column + 1})"
            if exc.problem_mark
            else ""
        )
        raise ConfigLoadError(f"{path} is not valid YAML{where}: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigLoadError(f"{path} is not valid YAML: {exc}") from None


def read_stack_file(path: Path) -> dict[str, Any]:
    """Read a ``Pulumi.<stack>.yaml`` file and return its ``config:`` map as written.

    Values keep their YAML types (objects stay dicts, ``secure:`` values stay ``{"secure": ...}``);
    dates and ``yes``/``no`` stay strings, as Pulumi's YAML 1.2 reader reads them. Other top-level
    keys (``secretsprovider``, ``encryptionsalt``, ``environment``) are ignored.

    Returns:
        ``{"namespace:key": value}`` (``{}`` for an empty file or one without ``config:``).

    Raises:
        ConfigLoadError: the file cannot be read, is not YAML, is not a mapping, or ``config`` is
            not a mapping.
    """
    doc = read_yaml_file(path)
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigLoadError(f"{path}: expected a mapping with a 'config' key, got {type(doc).__name__}")
    config = doc.get("config")
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise ConfigLoadError(f"{path}: 'config' must be a mapping of 'namespace:key' to values")
    return {str(k): v for k, v in config.items()}


def load_stack_file(path: Path, stack_name: str | None = None) -> Stack:
    """Read and validate a stack file. The stack name defaults to ``<name>`` of ``Pulumi.<name>.yaml``.

    Raises:
        ConfigLoadError: I/O or YAML problems.
        ConfigValidationError: the config is invalid (every error listed).
    """
    name = stack_name or path.name.removeprefix("Pulumi.").rsplit(".", 1)[0]
    return load_stack(read_stack_file(path), name)

"""Reading ``stacks/Pulumi.<stack>.yaml`` files (the Pulumi stack settings format)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from batchplane.config.stack import Stack, load_stack
from batchplane.errors import ConfigLoadError


def read_stack_file(path: Path) -> dict[str, Any]:
    """Read a stack settings file and return its ``config:`` map (``{}`` when absent).

    Raises:
        ConfigLoadError: the file cannot be read, is not YAML, or ``config`` is not a mapping.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigLoadError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigLoadError(f"{path} is not valid YAML: {exc}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigLoadError(f"{path}: expected a mapping with a 'config' key, got {type(doc).__name__}")
    config = doc.get("config") or {}
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

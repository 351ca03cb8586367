"""Reading ``stacks/Pulumi.<stack>.yaml`` files (the Pulumi stack settings format).

The YAML itself is read by :mod:`batchplane.yamlfile` (the one reader, with Pulumi's semantics and bounds);
this module picks the ``config:`` map out of it and replaces ``secure:`` values the way the offline engine
does, so ``validate`` and ``preview`` see the same values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from batchplane.errors import ConfigLoadError
from batchplane.stack.load import load_stack
from batchplane.stack.model import Stack
from batchplane.yamlfile import read_yaml_file

#: What a ``secure:`` (encrypted) config value becomes offline; its key is marked secret.
SECRET_PLACEHOLDER = "secret-placeholder"


def is_secure(value: Any) -> bool:
    """True for a Pulumi encrypted value, ``{secure: <ciphertext>}``."""
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("secure"), str)


def replace_secure(value: Any) -> tuple[Any, bool]:
    """Replace every ``{secure: ...}`` anywhere inside ``value`` (Pulumi allows them at any depth of a
    structured value) by :data:`SECRET_PLACEHOLDER`; report whether any was found."""
    if is_secure(value):
        return SECRET_PLACEHOLDER, True
    if isinstance(value, dict):
        found = False
        out: dict[str, Any] = {}
        for k, v in value.items():
            out[str(k)], hit = replace_secure(v)
            found = found or hit
        return out, found
    if isinstance(value, list):
        items = [replace_secure(v) for v in value]
        return [v for v, _ in items], any(hit for _, hit in items)
    return value, False


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


def load_stack_file(path: Path | str, stack_name: str | None = None) -> Stack:
    """Read and validate a stack file. The stack name defaults to ``<name>`` of ``Pulumi.<name>.yaml``.

    Args:
        path: the ``Pulumi.<name>.yaml`` file (a path or its text).
        stack_name: the stack's name; defaults to ``<name>`` of the file name.

    Raises:
        ConfigLoadError: I/O or YAML problems.
        ConfigValidationError: the config is invalid (every error listed).
    """
    path = Path(path)
    name = stack_name or path.name.removeprefix("Pulumi.").rsplit(".", 1)[0]
    config = {key: replace_secure(value)[0] for key, value in read_stack_file(path).items()}
    return load_stack(config, name)

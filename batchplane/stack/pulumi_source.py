"""Read the stack config from the running Pulumi program (imports Pulumi lazily, on call only)."""

from __future__ import annotations

from typing import Any


def pulumi_config_map() -> dict[str, Any]:
    """Every config key of the running Pulumi program, ``{"namespace:key": value}``.

    Merges what the language host set (``pulumi.runtime.config.CONFIG``) over the ``PULUMI_CONFIG``
    environment bag, which is how the Pulumi CLI passes stack config. Object values arrive as JSON
    text and are decoded by :func:`batchplane.config.split_config`.
    """
    from pulumi.runtime import config as runtime_config

    merged: dict[str, Any] = dict(runtime_config.get_config_env())
    merged.update(runtime_config.CONFIG.get())
    return merged

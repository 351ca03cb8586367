"""One setting a team decides for an environment made from a template (``batchplane new``): the config key, the
path below it, the question, the default and the CLI flag. Each platform states its own
(:meth:`batchplane.targets.platform.Platform.environment_settings`); :mod:`batchplane.stack.scaffold` asks them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Step = str | int
"""One step of a config path below its key: a mapping key or a list index."""


@dataclass(frozen=True)
class Setting:
    """One thing to decide for an environment.

    Attributes:
        key: the Pulumi config key, ``batchplane:target`` or ``gcp:project``.
        steps: the path below the key (mapping keys and list indices); ``()`` for the key itself.
        question: what the prompt asks.
        default: the value offered (``None``: required, no usable default).
        flag: the CLI option that sets it (``project``, ``region``, ``cluster_name``, ``context``), or None.
        note: what changes with it, shown under the prompt.
    """

    key: str
    steps: tuple[Step, ...]
    question: str
    default: Any = None
    flag: str | None = None
    note: str | None = None

    @property
    def path(self) -> str:
        """The Pulumi config path, e.g. ``batchplane:target.gpuPools[0].maxNodes``."""
        return format_path(self.key, self.steps)


def format_path(key: str, steps: Sequence[Step]) -> str:
    """``key`` and ``steps`` as a Pulumi config path (``pulumi config set --path``): ``.name``, ``[0]``, and
    ``["nvidia.com/gpu"]`` for a key that is not a plain name."""
    out = key
    for step in steps:
        if isinstance(step, int):
            out += f"[{step}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", step):
            out += f".{step}"
        else:
            out += f'["{step}"]'
    return out

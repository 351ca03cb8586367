"""Every rule whose inputs parsed still runs: a section that fails to parse is parsed again without its bad keys.

Pydantic refuses a whole top-level section (``batchplane:target``) when one key in it is wrong, and the rules of
that section (cross-field and cross-section checks) then cannot run: the user fixes one error only to meet the
next. :func:`repair_section` removes each key pydantic refused — only optional dictionary keys, never a list item
(that would shift the indices of the items after it, and with them every later key path) — and parses the section
again, a bounded number of times. When that parses, the rules run on it; :func:`outside_removed` then drops what
the rules say about a removed key (or below it), which would only repeat, or be a consequence of, the parse error
already reported there. A section whose bad key is required (a ``missing`` error, or an object-level validator)
cannot be repaired and stays failed: the rules that need it are skipped, as before.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_core import ErrorDetails

__all__ = ["MAX_ROUNDS", "Repair", "outside_removed", "raw_path", "repair_section"]

#: How many times a section is parsed again after removing the keys the previous parse refused. Each round removes
#: at least one key; a section needing more rounds stays failed.
MAX_ROUNDS = 4


@dataclass(frozen=True)
class Repair:
    """A section that parses once its refused keys are removed.

    Attributes:
        value: the section's raw value without those keys (a deep copy; the input is never changed).
        removed: the removed keys as key paths below the section, e.g. ``("gpuPools[0].maxRunDurationSeconds",)``.
    """

    value: Any
    removed: tuple[str, ...]


def raw_path(value: Any, loc: Sequence[int | str]) -> list[int | str] | None:
    """The path of a pydantic error location inside the raw ``value`` it came from, or None.

    Pydantic adds the tag of a tagged union (``target`` → ``gke``) and ``[key]`` markers to locations, so a string
    step may be one the raw value does not have. The path returned consumes the location's last step (the key the
    error is about) and skips only string steps before it, preferring a real key over a skip.

    Args:
        value: the raw section (dicts, lists, scalars).
        loc: the error's ``loc`` below the section.

    Returns:
        The steps through ``value`` (dictionary keys and list indices), or None when the location leaves it.
    """
    parts = list(loc)
    while parts and parts[-1] == "[key]":
        parts.pop()

    def match(current: Any, i: int) -> list[int | str] | None:
        if i == len(parts):
            return []
        part = parts[i]
        in_dict = isinstance(current, Mapping) and part in current
        in_list = isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        if in_dict or in_list:
            rest = match(current[part], i + 1)
            if rest is not None:
                return [part, *rest]
        if isinstance(part, str) and i < len(parts) - 1:  # a union tag or a marker: not in the raw value
            return match(current, i + 1)
        return None

    return match(value, 0) if parts else []


def _dotted(steps: Sequence[int | str]) -> str:
    out = ""
    for step in steps:
        out += f"[{step}]" if isinstance(step, int) else ("." if out else "") + str(step)
    return out


def repair_section(
    value: Any, errors_of: Callable[[Any], list[ErrorDetails]], *, rounds: int = MAX_ROUNDS
) -> Repair | None:
    """``value`` without the keys ``errors_of`` refuses, if that parses within ``rounds`` tries.

    Args:
        value: the section's raw value as the stack file gives it.
        errors_of: pydantic's errors for a section value (:meth:`ValidationError.errors`), with locations relative
            to the section; empty when it parses.
        rounds: most parses after the first. Defaults to :data:`MAX_ROUNDS`.

    Returns:
        The :class:`Repair` (``removed`` empty when ``value`` parses as it is), or None when a refused key cannot
        be removed (a missing required key, an object-level rule at the section itself, a list item) or ``rounds``
        is not enough.
    """
    current = copy.deepcopy(value)
    removed: list[str] = []
    for _ in range(rounds + 1):
        errors = errors_of(current)
        if not errors:
            return Repair(current, tuple(removed))
        targets: list[list[int | str]] = []
        for err in errors:
            if err["type"] == "missing":
                return None
            steps = raw_path(current, err["loc"])
            if not steps or not isinstance(steps[-1], str):
                return None  # the object itself, or a list item: nothing to remove safely
            targets.append(steps)
        for steps in targets:
            parent = current
            for step in steps[:-1]:
                parent = parent[step]
            if isinstance(parent, dict) and steps[-1] in parent:
                del parent[steps[-1]]
                removed.append(_dotted(steps))
    return None


def outside_removed(path: str, section_path: str, removed: Sequence[str]) -> bool:
    """Whether an issue at ``path`` is about none of the ``removed`` keys of the section at ``section_path``.

    Args:
        path: the issue's key path, e.g. ``batchplane:target.gpuPools[0].maxNodes``.
        section_path: the section's key path, e.g. ``batchplane:target``.
        removed: the :attr:`Repair.removed` paths below the section.

    Returns:
        False when ``path`` is a removed key or lies below one.
    """
    for key in removed:
        full = f"{section_path}.{key}"
        if path == full or path.startswith((f"{full}.", f"{full}[")):
            return False
    return True

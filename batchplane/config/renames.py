"""Config keys renamed between releases: the machine-readable half of CHANGELOG.md's "Config keys" sections.

``batchplane validate`` reads :data:`RENAMES` for every unknown key: a key that an older release accepted is
reported as "renamed in <release>: use `<new key>`" instead of a plain "unknown key" (``batchplane.stack.load``).
A team that cloned the project and merges a newer release then sees what to change in its own environments
(docs/upgrading.md). ``tests/config/test_renames.py`` keeps this table, CHANGELOG.md and the models in agreement:
every ``old`` is no longer accepted, every ``new`` is, and the changelog lists every row under its release.

Key paths are written as in a stack file below the ``batchplane:`` namespace, with ``[]`` for any list item and
``*`` for any map key: ``target.gpuPools[].maxNodes``, ``teams.members[].quotas.*.*.borrowingLimit``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RENAMES", "Rename", "pattern_of", "renamed"]


@dataclass(frozen=True)
class Rename:
    """One config key renamed.

    Attributes:
        old: the key path the older release accepted (``[]`` any list item, ``*`` any map key).
        new: the key path that replaces it.
        release: the package version (``pyproject.toml``) that made the change.
    """

    old: str
    new: str
    release: str

    @property
    def new_key(self) -> str:
        """The new key's last segment, e.g. ``maxNodes`` for ``target.gpuPools[].maxNodes``."""
        return self.new.rsplit(".", 1)[-1]


#: Every config key renamed since the first release, oldest first. Empty: Batchplane has one version (0.1.0, in
#: ``pyproject.toml`` since the first commit) and no key any commit of it accepted has been renamed or removed
#: (CHANGELOG.md says how that was checked). A release that renames a key adds its row here and in CHANGELOG.md.
RENAMES: tuple[Rename, ...] = ()


def pattern_of(loc: Sequence[int | str]) -> str:
    """The key path pattern of a location in a stack file's ``batchplane:`` map: list indices become ``[]``.

    >>> pattern_of(["target", "gpuPools", 0, "maxNode"])
    'target.gpuPools[].maxNode'
    """
    out = ""
    for part in loc:
        out += "[]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out


def _segments(pattern: str) -> list[str]:
    """``target.gpuPools[].maxNodes`` → ``["target", "gpuPools", "[]", "maxNodes"]``."""
    return [part for part in pattern.replace("[]", ".[].").split(".") if part]


def _matches(pattern: str, loc: Sequence[int | str]) -> bool:
    want = _segments(pattern)
    got = ["[]" if isinstance(part, int) else str(part) for part in loc]
    return len(want) == len(got) and all(w in ("*", g) for w, g in zip(want, got, strict=True))


def renamed(loc: Sequence[int | str], table: Sequence[Rename] | None = None) -> Rename | None:
    """The rename whose ``old`` key is at ``loc`` (a pydantic location without union tags), or None.

    Args:
        loc: the unknown key's location below the ``batchplane:`` namespace, e.g. ``["teams", "memberz"]``; map
            keys may hold dots (``nvidia.com/gpu``), so the location is matched step by step.
        table: the renames to search, the latest last. Defaults to :data:`RENAMES` (read at call time).
    """
    rows = RENAMES if table is None else table
    return next((r for r in reversed(rows) if _matches(r.old, loc)), None)

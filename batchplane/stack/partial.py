"""Every error at once inside ``teams``: when team entries fail to parse, the rules that need only their other
fields still run.

Pydantic refuses the whole ``teams`` section when one member has a typo (``maxNode``) or a bad quantity
(``"8 GPUs"``); every Kueue rule was then skipped, so a LocalQueue naming a missing ClusterQueue surfaced only after
the member was fixed. :func:`partial_teams` parses each member on its own. A member that fails is replaced by a
*stand-in*: a :class:`~batchplane.config.teams.Team` with the member's identity only — ``name`` (its ClusterQueue),
``namespace`` and ``localQueueName`` (its LocalQueue), each parsed with the field's own type — and no quotas. The
stand-in expands like any team (a ClusterQueue in the teams' cohort selecting the namespace, a default LocalQueue),
so the reference rules see every queue, cohort and namespace the stack declares. What a rule says *at* a stand-in
(``batchplane:teams.members[i]…``) is dropped (:func:`outside_stand_ins`): it would describe the missing quotas,
a consequence of the parse error already reported there. Rules that add quotas across queues (pool capacity) are
not run on a partial ``teams``: a stand-in's quotas are unknown, not zero.

Only member failures are tolerated: a failure of a section-wide key (``cohortName``, ``preemption``) or of a member's
identity keeps the whole section failed, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from batchplane.config.teams import Team, TeamsConfig

__all__ = ["IDENTITY_FIELDS", "PartialTeams", "outside_stand_ins", "partial_teams"]

#: The fields of a team entry that the reference rules need: its ClusterQueue's name, its namespace and its
#: LocalQueue's name.
IDENTITY_FIELDS = ("name", "namespace", "local_queue_name")


@dataclass(frozen=True)
class PartialTeams:
    """A ``teams`` section whose failed members are stand-ins.

    Attributes:
        value: the section, every member parsed or a stand-in.
        stand_ins: the key paths of the stand-in members, ``batchplane:teams.members[i]``.
    """

    value: TeamsConfig
    stand_ins: tuple[str, ...]


def _identity(raw: Any) -> Team | None:
    """A stand-in for a team entry that failed to parse: its identity fields, each validated with the field's own
    annotation and constraints, and no quotas; None when an identity field is missing or invalid."""
    if not isinstance(raw, Mapping):
        return None
    values: dict[str, Any] = {}
    for name in IDENTITY_FIELDS:
        info = Team.model_fields[name]
        alias = info.alias or name
        if alias not in raw and name not in raw:
            if info.is_required():
                return None
            continue
        try:
            values[name] = TypeAdapter(info.rebuild_annotation()).validate_python(
                raw.get(alias, raw.get(name))
            )
        except ValidationError:
            return None
    return Team.model_construct(quotas={}, **values)


def partial_teams(raw: Any, stack_path: str) -> PartialTeams | None:
    """The ``teams`` section with each member that fails to parse replaced by a stand-in.

    Args:
        raw: the section as the stack file gives it.
        stack_path: the section's key path, ``batchplane:teams``.

    Returns:
        The :class:`PartialTeams`, or None when the section fails outside its members, when a failed member's
        identity (``name``, ``namespace``, ``localQueueName``) is itself invalid, or when every member parses
        (the failure is elsewhere).
    """
    if not isinstance(raw, Mapping) or not isinstance(raw.get("members"), list):
        return None
    try:
        shared = TeamsConfig.model_validate({**raw, "members": []})
    except ValidationError:
        return None
    members: list[Team] = []
    stand_ins: list[str] = []
    for i, entry in enumerate(raw["members"]):
        try:
            members.append(Team.model_validate(entry))
        except ValidationError:
            stand_in = _identity(entry)
            if stand_in is None:
                return None
            members.append(stand_in)
            stand_ins.append(f"{stack_path}.members[{i}]")
    if not stand_ins:
        return None
    return PartialTeams(shared.model_copy(update={"members": members}), tuple(stand_ins))


def outside_stand_ins(path: str, stand_ins: Sequence[str]) -> bool:
    """Whether an issue at ``path`` is about none of the ``stand_ins`` (a stand-in's path itself, a key below it or
    an object generated from it: ``batchplane:teams.members[0] (generated ClusterQueue "a").resourceGroups``)."""
    for head in stand_ins:
        if path == head or path.startswith((f"{head}.", f"{head}[", f"{head} ")):
            return False
    return True

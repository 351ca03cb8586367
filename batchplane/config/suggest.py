"""What an unknown config key was probably meant to be: the keys a model accepts at a path, and the nearest one.

Used for every pydantic ``extra_forbidden`` error (``maxNode`` → "did you mean `maxNodes`?") and for unknown
top-level keys (``batchplane:team`` → ``batchplane:teams``). The candidates are the field aliases (the camelCase
keys a stack file uses) of the model found by walking the error's location through the models' annotations:
nested models, ``list[...]``, ``dict[..., ...]`` (any string step or pydantic's ``[key]`` marker), ``X | None``,
``Annotated[...]`` and tagged unions (a step that is a union member's tag, as pydantic puts it in the location, or
else every member that has the next step). Nearness is :func:`difflib.get_close_matches` (Ratcliff/Obershelp,
cutoff 0.6), the standard library's, case-insensitively.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Sequence
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel

__all__ = ["field_keys", "keys_at", "nearest_key"]

#: ``difflib.get_close_matches`` cutoff: 0.6 is the library's default.
CUTOFF = 0.6


def field_keys(model: type[BaseModel]) -> list[str]:
    """The keys a stack file uses for ``model``'s fields: each field's alias, else its name, in declaration order."""
    return [info.alias or name for name, info in model.model_fields.items()]


def _strip(annotation: Any) -> list[Any]:
    """The concrete types an annotation stands for: ``Annotated`` unwrapped, unions split, ``None`` dropped."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _strip(get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for arg in get_args(annotation) for t in _strip(arg)]
    if annotation is type(None):
        return []
    return [annotation]


def _tag_of(model: type[BaseModel]) -> set[str]:
    """The literal values of a model's ``kind`` field (the tag of the target union)."""
    info = model.model_fields.get("kind")
    if info is None:
        return set()
    return {str(v) for t in [info.annotation] if get_origin(t) is Literal for v in get_args(t)}


def _step(types_here: list[Any], part: int | str) -> list[Any]:
    """The types one location step below ``types_here``."""
    out: list[Any] = []
    for t in types_here:
        origin = get_origin(t)
        if isinstance(t, type) and issubclass(t, BaseModel):
            if isinstance(part, str):
                for name, info in t.model_fields.items():
                    if part in (name, info.alias):
                        out += _strip(info.annotation)
        elif origin in (list, tuple, set, frozenset, Sequence) and isinstance(part, int):
            out += [s for arg in get_args(t)[:1] for s in _strip(arg)]
        elif origin is dict and isinstance(part, str):
            if part == "[key]":
                continue
            out += [s for arg in get_args(t)[1:2] for s in _strip(arg)]
    return out


def keys_at(root: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """The keys the model at ``loc`` (a pydantic error location without its last step) accepts.

    Args:
        root: the model the location starts from (``StackConfig``).
        loc: the steps below ``root``: field aliases, list indices, dict keys, a union tag.

    Returns:
        The union of :func:`field_keys` of every model the location can reach (``[]`` when it reaches none).
    """
    current: list[Any] = [root]
    for part in loc:
        models = [t for t in current if isinstance(t, type) and issubclass(t, BaseModel)]
        tagged = [m for m in models if isinstance(part, str) and part in _tag_of(m)]
        if tagged:  # pydantic puts a tagged union's tag into the location
            current = tagged
            continue
        current = _step(current, part)
    keys: list[str] = []
    for t in current:
        if isinstance(t, type) and issubclass(t, BaseModel):
            keys += [k for k in field_keys(t) if k not in keys]
    return keys


def nearest_key(key: str, candidates: Sequence[str]) -> str | None:
    """The candidate nearest to ``key`` (difflib, case-insensitive, cutoff :data:`CUTOFF`), or None."""
    lowered = {c.lower(): c for c in candidates}
    found = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=CUTOFF)
    return lowered[found[0]] if found else None

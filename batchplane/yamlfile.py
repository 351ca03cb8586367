"""The one YAML reader of Batchplane's inputs: stack and project files, MachineSet templates.

Every command (``validate``, ``preview``, ``render``, ``check``, ``graph``, ``webhook policy``) and the Pulumi
program read through it, so they agree on what a value is: YAML 1.2 scalars as Pulumi's Go YAML reader parses
them (``yes`` and dates stay strings), duplicate keys refused as Pulumi refuses them, only values JSON can carry
(the Pulumi CLI hands config to the program as JSON), and bounded size, depth and alias expansion.

:func:`deep_merge` is the one overlay of such documents (Helm values over typed settings, a stack's
DataScienceCluster settings over the release's sample).

Imports nothing of Batchplane but its errors, so any layer may use it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

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


def _construct_document_from(node: yaml.Node) -> Any:
    """Build Python values from an already composed (and checked) node graph."""
    loader = _StackLoader("")
    try:
        return loader.construct_document(node)
    finally:
        loader.dispose()


#: Largest stack, project or template file read, bytes (Pulumi stack files are a few KiB; the largest template
#: Batchplane ships is under 10 KiB).
MAX_FILE_BYTES = 2 * 1024 * 1024
#: Deepest nesting of mappings and lists, counted after aliases are expanded.
MAX_DEPTH = 64
#: Most nodes (scalars, mappings, lists) a file may stand for once every alias is expanded ("billion laughs").
MAX_NODES = 200_000
#: Tags a value may carry explicitly (``!!str 5``); they name the types JSON has. Any other tag
#: (``!!timestamp``, ``!!binary``, ``!!set``, ``!local``) makes a value that JSON, and so the Pulumi CLI, cannot
#: pass to the program.
_JSON_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "map", "seq")
)
_STR_TAG = "tag:yaml.org,2002:str"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", _FLOAT_TAG})
#: Longest number literal (JSON-safe and far beyond any quota; Python refuses ints over 4,300 digits).
MAX_NUMBER_CHARS = 100


def read_yaml_text(text: str | bytes, source: str) -> Any:
    """Parse one YAML document the way Pulumi reads project and stack files, within bounds.

    YAML 1.2 scalars (only ``true``/``false`` are booleans, dates stay strings), as Pulumi's Go reader; a
    duplicate key is an error (as in Pulumi's reader); every key must be a string; only JSON's types may
    be tagged explicitly; ``.inf``/``.nan`` are refused (JSON has no such numbers). Bounds: at most
    :data:`MAX_FILE_BYTES` bytes, :data:`MAX_DEPTH` levels and :data:`MAX_NODES` nodes after alias
    expansion, all checked before any Python object is built.

    Args:
        text: the file's content (bytes must be UTF-8).
        source: what to call it in messages (a path).

    Raises:
        ConfigLoadError: the text breaks one of the rules above or is not YAML; the message gives the line
            and column (1-based) or key path.
    """
    if len(text) > MAX_FILE_BYTES:
        raise ConfigLoadError(f"{source} is larger than {MAX_FILE_BYTES} bytes ({len(text)} bytes)")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigLoadError(f"{source} is not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    try:
        _check_events(text, source)
        node = yaml.compose(text, Loader=_StackLoader)
        if node is None:
            return None
        _check_nodes(node, source)
        return _construct_document_from(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise ConfigLoadError(f"{source} is not valid YAML{where}: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigLoadError(f"{source} is not valid YAML: {exc}") from None


def _at(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"


def _check_events(text: str, source: str) -> None:
    """Depth of the text itself, before composing (PyYAML composes recursively)."""
    depth = 0
    for event in yaml.parse(text, Loader=_StackLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigLoadError(
                    f"{source}: nested deeper than {MAX_DEPTH} levels at {_at(event.start_mark)}"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _check_nodes(root: yaml.Node, source: str) -> None:
    """Tags, keys, non-finite floats, and depth/size after alias expansion (each distinct node visited once)."""
    sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded nodes, expanded depth)
    in_progress: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            in_progress.discard(key)
            children = _children(node)
            size = 1 + sum(sizes[id(c)][0] for c in children)
            depth = (1 + max((sizes[id(c)][1] for c in children), default=0)) if children else 0
            if size > MAX_NODES:
                raise ConfigLoadError(
                    f"{source}: aliases expand to more than {MAX_NODES} values (at {_at(node.start_mark)})"
                )
            if depth > MAX_DEPTH:
                raise ConfigLoadError(
                    f"{source}: aliases nest deeper than {MAX_DEPTH} levels (at {_at(node.start_mark)})"
                )
            sizes[key] = (size, depth)
            continue
        if key in sizes:
            continue
        if key in in_progress:
            raise ConfigLoadError(f"{source}: an alias refers to its own anchor at {_at(node.start_mark)}")
        _check_node(node, source)
        in_progress.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_node(node: yaml.Node, source: str) -> None:
    if node.tag not in _JSON_TAGS and node.tag != _MERGE_TAG:
        raise ConfigLoadError(
            f"{source}: the tag {node.tag!r} at {_at(node.start_mark)} is not allowed; "
            "stack config values are JSON types (string, number, boolean, null, map, list)"
        )
    if isinstance(node, yaml.ScalarNode) and node.tag in _NUMBER_TAGS and len(node.value) > MAX_NUMBER_CHARS:
        raise ConfigLoadError(
            f"{source}: the number at {_at(node.start_mark)} has more than {MAX_NUMBER_CHARS} characters"
        )
    if (
        isinstance(node, yaml.ScalarNode)
        and node.tag == _FLOAT_TAG
        and node.value.lower().lstrip("+-") in (".inf", ".nan")
    ):
        raise ConfigLoadError(f"{source}: {node.value!r} at {_at(node.start_mark)} is not a JSON number")
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue  # `<<: *defaults` (Pulumi's YAML reader merges too); merged keys may be overridden
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR_TAG:
                shown = key_node.value if isinstance(key_node, yaml.ScalarNode) else key_node.tag
                raise ConfigLoadError(
                    f"{source}: the key {shown!r} at {_at(key_node.start_mark)} is not a string; quote it"
                )
            if key_node.value in seen:
                first = seen[key_node.value].start_mark
                raise ConfigLoadError(
                    f"{source}: duplicate key {key_node.value!r} at {_at(key_node.start_mark)} "
                    f"(first at {_at(first)})"
                )
            seen[key_node.value] = key_node


def read_yaml_file(path: Path) -> Any:
    """Read one YAML file with :func:`read_yaml_text` (Pulumi's semantics, bounded).

    Raises:
        ConfigLoadError: the file cannot be read, is too large, is not UTF-8 or breaks a rule of
            :func:`read_yaml_text`.
    """
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigLoadError(f"{path} is larger than {MAX_FILE_BYTES} bytes ({size} bytes)")
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigLoadError(f"cannot read {path}: {exc.strerror or exc}") from None
    return read_yaml_text(data, str(path))


def read_manifest_text(text: str, source: str) -> list[Any]:
    """Every document of a Kubernetes manifest (``kubectl apply -f`` input; an empty document is ``None``).

    PyYAML's safe loader (YAML 1.1 scalars, as the manifests' own readers, not the stack files' Pulumi rules);
    ``source`` (a file name or ``<stdin>``) names the text in errors instead of PyYAML's ``<unicode string>``.

    Raises:
        ConfigLoadError: ``<source> is not valid YAML (line L, column C): <problem>`` (1-based line and column).
    """
    loader = yaml.SafeLoader(text)
    loader.name = source
    documents: list[Any] = []
    try:
        while loader.check_data():  # type: ignore[no-untyped-call]
            documents.append(loader.get_data())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" ({_at(mark)})" if mark else ""
        raise ConfigLoadError(
            f"{source} is not valid YAML{where}: {exc.problem or exc.context or exc}"
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigLoadError(f"{source} is not valid YAML: {exc}") from None
    finally:
        loader.dispose()
    return documents


Position = tuple[int, int]
"""A key's place in a file: (line, column), both 1-based."""


def _walk_positions(node: yaml.Node, path: str, out: dict[str, Position]) -> None:
    stack: list[tuple[yaml.Node, str]] = [(node, path)]
    while stack and len(out) < MAX_NODES:
        current, where = stack.pop()
        if isinstance(current, yaml.MappingNode):
            for key_node, value_node in current.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                    continue
                child = f"{where}.{key_node.value}" if where else str(key_node.value)
                out.setdefault(child, (key_node.start_mark.line + 1, key_node.start_mark.column + 1))
                stack.append((value_node, child))
        elif isinstance(current, yaml.SequenceNode):
            for index, item in enumerate(current.value):
                child = f"{where}[{index}]"
                out.setdefault(child, (item.start_mark.line + 1, item.start_mark.column + 1))
                stack.append((item, child))


def read_positions_text(text: str | bytes, source: str) -> dict[str, Position]:
    """Where each config key of a stack file is: ``{"batchplane:kueue.clusterQueues[0].cohortName": (12, 9)}``.

    Paths are the config key paths every :class:`~batchplane.errors.ConfigIssue` uses (the keys under the file's
    ``config:`` map, then ``.key`` and ``[index]``); a mapping key's position is the key's own, a list item's the
    item's first character. The text is checked exactly as :func:`read_yaml_text` checks it (same bounds), and a
    value reached through an alias is placed at its anchor. At most :data:`MAX_NODES` paths are recorded.

    Raises:
        ConfigLoadError: as :func:`read_yaml_text`.
    """
    read_yaml_text(text, source)  # every rule and bound first
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    root = yaml.compose(text, Loader=_StackLoader)
    out: dict[str, Position] = {}
    if isinstance(root, yaml.MappingNode):
        for key_node, value_node in root.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == "config":
                _walk_positions(value_node, "", out)
    return out


def read_positions(path: Path) -> dict[str, Position]:
    """:func:`read_positions_text` of a file; ``{}`` when it cannot be read or parsed (positions only place
    messages — the file's own errors are reported by the loader)."""
    try:
        return read_positions_text(read_yaml_file_bytes(path), str(path))
    except ConfigLoadError:
        return {}


def read_yaml_file_bytes(path: Path) -> bytes:
    """A file's bytes, within :data:`MAX_FILE_BYTES`.

    Raises:
        ConfigLoadError: unreadable or too large.
    """
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ConfigLoadError(f"{path} is larger than {MAX_FILE_BYTES} bytes")
        return path.read_bytes()
    except OSError as exc:
        raise ConfigLoadError(f"cannot read {path}: {exc.strerror or exc}") from None


_PATH_CUTS = re.compile(r"[.\[ ]")


def issue_position(positions: dict[str, Position], key_path: str) -> tuple[int | None, int | None]:
    """The (line, column) of ``key_path`` or of its nearest ancestor present in ``positions``; (None, None) when
    none is (the message then belongs to the file as a whole).

    ``batchplane:kueue.clusterQueues[0].cohortName`` → that key; a path the file does not spell out (a default,
    ``batchplane:teams.members[0] (generated ClusterQueue "a")``) → the closest key it does.
    """
    candidate = key_path
    while candidate:
        if candidate in positions:
            return positions[candidate]
        cuts = [m.start() for m in _PATH_CUTS.finditer(candidate)]
        if not cuts:
            break
        candidate = candidate[: cuts[-1]]
    return None, None


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``override`` merged into a copy of ``base``: where both hold a mapping under a key, the mappings are merged
    the same way (recursively); every other value of ``override`` (scalars, lists, ``None``) replaces ``base``'s.
    Neither argument is changed. The way Helm lays a ``--values`` file over a chart's values, except that a ``null``
    replaces the value instead of deleting the key (https://helm.sh/docs/chart_template_guide/values_files/,
    "Deleting a default key")."""
    out = dict(base)
    for key, value in override.items():
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = deep_merge(current, value)
        else:
            out[key] = value
    return out

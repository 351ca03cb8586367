"""No framework's kind or integration name is spelled outside the registry (`batchplane/frameworks/`) unless
docs/architecture.md lists the file, the strings and why (issue #33: "grep finds no framework kind string outside
batchplane/frameworks/ except where a platform's own names for it are").

The scan walks the syntax tree of every module under `batchplane/` outside `batchplane/frameworks/` and of the
policy pack (`policies/`), and collects every string constant equal to a registered framework's kind (`RayJob`),
Kueue integration name (`ray.io/rayjob`) or Red Hat build of Kueue name (`BatchJob`). The kinds Kubernetes itself
defines (`Job`, `Pod`, `Deployment`, `StatefulSet`) and the integration names that are plain words (`pod`,
`deployment`, `statefulset`) count too: a scan cannot tell the webhook's own Deployment from a Deployment workload,
so a file holding one for its own reasons is listed with exactly those strings — any other string there, or any
string in an unlisted file, fails, and so does a listed string the file no longer holds.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

from batchplane.frameworks import FRAMEWORKS
from tests.conftest import REPO_ROOT

ARCHITECTURE = REPO_ROOT / "docs" / "architecture.md"
TABLE_HEADING = "## Framework strings outside the registry"
REGISTRY = REPO_ROOT / "batchplane" / "frameworks"

#: Every string that names a registered framework: kind, Kueue integration name, RHBoK name.
FRAMEWORK_STRINGS: frozenset[str] = frozenset(
    {f.kind for f in FRAMEWORKS}
    | {f.name for f in FRAMEWORKS}
    | {f.rhbok_name for f in FRAMEWORKS if f.rhbok_name}
)


def scanned_modules() -> list[Path]:
    """The package outside the registry, and the policy pack."""
    package = [p for p in (REPO_ROOT / "batchplane").rglob("*.py") if REGISTRY not in p.parents]
    return sorted([*package, *(REPO_ROOT / "policies").rglob("*.py")])


def framework_strings(source: str) -> dict[str, list[int]]:
    """String constant equal to a framework's name → the lines it is on."""
    found: dict[str, list[int]] = defaultdict(list)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in FRAMEWORK_STRINGS:
            found[node.value].append(node.lineno)
    return dict(found)


_CELL = re.compile(r"`([^`]+)`")


def listed_exceptions(text: str) -> dict[str, tuple[frozenset[str], str]]:
    """The table under :data:`TABLE_HEADING`: repository path → (the strings it may hold, the reason).

    Raises:
        AssertionError: no such section, a row that does not have four cells, or a row without a reason.
    """
    lines = text.splitlines()
    assert TABLE_HEADING in lines, f"docs/architecture.md has no section {TABLE_HEADING!r}"
    rows: dict[str, tuple[frozenset[str], str]] = {}
    for line in lines[lines.index(TABLE_HEADING) + 1 :]:
        if line.startswith("## "):
            break
        if not line.startswith("|") or line.startswith(("| file", "|---")):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 4, (
            f"a row of the exceptions table needs file | strings | whose name | why: {line}"
        )
        (path,) = _CELL.findall(cells[0])
        strings = frozenset(_CELL.findall(cells[1]))
        assert strings and cells[2] and cells[3], (
            f"a row of the exceptions table lacks strings or a reason: {line}"
        )
        rows[path] = (strings, cells[3])
    return rows


def test_a_kind_compared_or_keyed_anywhere_in_a_module_is_found() -> None:
    source = (
        'def f(obj):\n    """RayJob in a docstring is prose, not a constant equal to a kind."""\n'
        '    if obj["kind"] == "RayJob":\n        return {"kubeflow.org/pytorchjob": 1, "Deployment": 2}\n'
        '    return "BatchJob", f"a {obj} RayJob"\n'
    )
    assert framework_strings(source) == {
        "RayJob": [3],
        "kubeflow.org/pytorchjob": [4],
        "Deployment": [4],
        "BatchJob": [5],
    }


def test_the_exceptions_table_reads_path_strings_and_reason() -> None:
    text = (
        f"intro\n{TABLE_HEADING}\n\n| file | strings | whose name | why |\n|---|---|---|---|\n"
        "| `batchplane/x.py` | `Pod`, `pod` | Kubernetes | its own Pod |\n\n## Next\n| `batchplane/y.py` | `Job` | k | r |\n"
    )
    assert listed_exceptions(text) == {"batchplane/x.py": (frozenset({"Pod", "pod"}), "its own Pod")}


def test_no_framework_string_outside_the_registry_but_the_listed_exceptions() -> None:
    allowed = listed_exceptions(ARCHITECTURE.read_text(encoding="utf-8"))
    unlisted = []
    for module in scanned_modules():
        path = module.relative_to(REPO_ROOT).as_posix()
        strings, _ = allowed.get(path, (frozenset(), ""))
        for string, at in sorted(framework_strings(module.read_text(encoding="utf-8")).items()):
            if string not in strings:
                unlisted += [f"{path}:{line}: {string!r}" for line in at]
    assert not unlisted, (
        "framework names spelled outside batchplane/frameworks/ (derive them from the registry, or list the file "
        f"in docs/architecture.md {TABLE_HEADING!r} with the platform whose name it is):\n"
        + "\n".join(unlisted)
    )


@pytest.mark.parametrize("path", sorted(listed_exceptions(ARCHITECTURE.read_text(encoding="utf-8"))))
def test_each_listed_exception_still_holds_every_string_it_lists(path: str) -> None:
    strings, _ = listed_exceptions(ARCHITECTURE.read_text(encoding="utf-8"))[path]
    module = REPO_ROOT / path
    assert module in scanned_modules(), (
        f"{path} is not a scanned module (moved, deleted, or inside the registry)"
    )
    assert strings <= FRAMEWORK_STRINGS, (
        f"{path} lists strings that name no framework: {strings - FRAMEWORK_STRINGS}"
    )
    held = framework_strings(module.read_text(encoding="utf-8"))
    assert strings <= held.keys(), (
        f"{path} no longer holds {sorted(strings - held.keys())}: drop them from the table"
    )

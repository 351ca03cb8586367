"""No platform type test outside `batchplane/targets/`: the rest of the package asks the target's platform
(`batchplane.targets.platform.Platform`) instead of testing `isinstance(target, GkeTarget)` or
`target.kind == "openshift"` (issue #21), and dispatches through the one platform registry
(`batchplane.targets.registry.REGISTRY`) instead of its own table keyed by platform names —
`{"gke": …, "openshift": …}`, `match kind: case "gke"`, `kind in ("gke", "openshift")` (issue #29)."""

from __future__ import annotations

import ast
from pathlib import Path

from batchplane.stack.target import TARGET_KINDS
from batchplane.targets.registry import REGISTRY
from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "batchplane"
#: Every class a type test could name: the target models and the platforms.
PLATFORM_CLASSES = frozenset(
    {"GkeTarget", "KindTarget", "OpenShiftTarget", "ExistingTarget"}
    | {d.platform.__name__ for d in REGISTRY.values()}
)


def _names(node: ast.expr) -> list[str]:
    """The class names of an isinstance's second argument (a name, an attribute or a tuple of them)."""
    if isinstance(node, ast.Tuple):
        return [n for element in node.elts for n in _names(element)]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.BinOp):  # isinstance(x, A | B)
        return _names(node.left) + _names(node.right)
    return []


def _mentions_target_kind(node: ast.expr) -> bool:
    """Whether an expression reads a target's kind: ``….target.kind``, ``target_kind``, ``….get("kind")`` on a
    target, and the like."""
    text = ast.unparse(node)
    return "target" in text or text.endswith("kind") or "_kind" in text


#: The platform names a dispatch could spell (``kind`` is also an ordinary word — a dict's ``"kind"`` key, a
#: manifest's kind — so it counts only beside another platform's name).
PLATFORM_NAMES = frozenset(TARGET_KINDS)
_UNAMBIGUOUS = PLATFORM_NAMES - {"kind"}


def _strings(nodes: list[ast.expr | None] | list[ast.expr]) -> list[str]:
    return [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _pattern_names(pattern: ast.pattern) -> list[str]:
    """The string literals a ``case`` pattern matches (``case "gke"``, ``case "gke" | "openshift"``)."""
    if isinstance(pattern, ast.MatchValue):
        return _strings([pattern.value])
    if isinstance(pattern, ast.MatchOr):
        return [n for p in pattern.patterns for n in _pattern_names(p)]
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
        return _pattern_names(pattern.pattern)
    return []


def _dispatch_by_name(node: ast.AST) -> bool:
    """Whether ``node`` dispatches on a platform's name: a dict literal keyed by two or more platform names, a
    ``case`` on one, or membership in a literal collection naming one."""
    if isinstance(node, ast.Dict):
        keys = set(_strings(node.keys)) & PLATFORM_NAMES
        return len(keys) >= 2 and bool(keys & _UNAMBIGUOUS)
    if isinstance(node, ast.match_case):
        return bool(set(_pattern_names(node.pattern)) & _UNAMBIGUOUS)
    if isinstance(node, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
        return any(
            isinstance(c, ast.Tuple | ast.List | ast.Set) and bool(set(_strings(c.elts)) & _UNAMBIGUOUS)
            for c in node.comparators
        )
    return False


def platform_switches(root: Path) -> list[str]:
    """``path:line: code`` of every platform type test and every dispatch on a platform's name in ``root``'s Python
    files outside ``targets/``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] == "targets":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            hit = False
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "isinstance"
            ):
                hit = len(node.args) == 2 and bool(set(_names(node.args[1])) & PLATFORM_CLASSES)
            elif isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                kinds = [
                    s
                    for s in sides
                    if isinstance(s, ast.Constant) and s.value in TARGET_KINDS and s.value != "kind"
                ]
                others = [s for s in sides if not isinstance(s, ast.Constant)]
                hit = bool(kinds) and any(_mentions_target_kind(s) for s in others)
            hit = hit or _dispatch_by_name(node)
            if hit:
                line = node.pattern.lineno if isinstance(node, ast.match_case) else node.lineno  # type: ignore[attr-defined]
                code = ast.unparse(node.pattern) if isinstance(node, ast.match_case) else ast.unparse(node)
                found.append(f"{relative}:{line}: {code}")
    return found


def test_no_module_outside_targets_tests_a_platform_type() -> None:
    assert platform_switches(PACKAGE) == []


def test_the_check_finds_isinstance_and_kind_comparisons(tmp_path: Path) -> None:
    # Switches as the package had them before the platform interface (batch_cluster.py, load.py, manifests.py,
    # config/operators.py), and one inside targets/ that is allowed.
    (tmp_path / "components").mkdir()
    (tmp_path / "components" / "cluster.py").write_text(
        "if isinstance(target, GkeTarget):\n"
        "    pass\n"
        "upsert = True if isinstance(target, (KindTarget, OpenShiftTarget)) else None\n"
        "if stack.config.target.kind == 'openshift':\n"
        "    pass\n"
        "if target_kind != 'gke':\n"
        "    pass\n"
        "if (worker.target or {}).get('kind') == 'openshift':\n"
        "    pass\n"
        "if self.registry == 'openshift':\n"  # a registry name, not a target type
        "    pass\n",
        encoding="utf-8",
    )
    (tmp_path / "targets").mkdir()
    (tmp_path / "targets" / "own.py").write_text("ok = isinstance(target, GkeTarget)\n", encoding="utf-8")
    assert sorted(int(line.split(":")[1]) for line in platform_switches(tmp_path)) == [1, 3, 4, 6, 8]


def test_the_check_finds_tables_cases_and_memberships_keyed_by_platform_name(tmp_path: Path) -> None:
    # Dispatch by a kind string as preflight had it (`_PLATFORM_REQUIREMENTS`, keyed "gke"/"openshift"/…), and what
    # looks alike but is no dispatch: a manifest's "kind" key, a dict naming one platform among other keys.
    (tmp_path / "preflight").mkdir()
    (tmp_path / "preflight" / "requirements.py").write_text(
        "BUILDERS = {'gke': _gke, 'openshift': _openshift, 'existing': _existing, 'kind': _kind}\n"
        "match target.kind:\n"
        "    case 'gke' | 'openshift':\n"
        "        pass\n"
        "    case _:\n"
        "        pass\n"
        "if kind in ('gke', 'kind'):\n"
        "    pass\n"
        "if name not in ['openshift']:\n"
        "    pass\n"
        "manifest = {'apiVersion': 'v1', 'kind': 'ConfigMap'}\n"
        "labels = {'cloud': 'gcp', 'gke': 'yes'}\n"
        "match value:\n"
        "    case 'kind':\n"
        "        pass\n",
        encoding="utf-8",
    )
    (tmp_path / "targets").mkdir()
    (tmp_path / "targets" / "registry.py").write_text(
        "REGISTRY = {'gke': Gke, 'openshift': OpenShift}\n", encoding="utf-8"
    )
    assert sorted(int(line.split(":")[1]) for line in platform_switches(tmp_path)) == [1, 3, 7, 9]

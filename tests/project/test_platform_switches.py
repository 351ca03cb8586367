"""No platform type test outside `batchplane/targets/`: the rest of the package asks the target's platform
(`batchplane.targets.platform.Platform`) instead of testing `isinstance(target, GkeTarget)` or
`target.kind == "openshift"` (issue #21)."""

from __future__ import annotations

import ast
from pathlib import Path

from batchplane.stack.target import PLATFORMS, TARGET_KINDS
from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "batchplane"
#: Every class a type test could name: the target models and the platforms.
PLATFORM_CLASSES = frozenset(
    {"GkeTarget", "KindTarget", "OpenShiftTarget", "ExistingTarget"}
    | {cls.__name__ for cls in PLATFORMS.values()}
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


def platform_switches(root: Path) -> list[str]:
    """``path:line: code`` of every platform type test in ``root``'s Python files outside ``targets/``."""
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
            if hit:
                found.append(f"{relative}:{node.lineno}: {ast.unparse(node)}")  # type: ignore[attr-defined]
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

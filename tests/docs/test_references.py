"""Docs cannot drift from the code: every repository path, ``batchplane.*`` name and relative link they give resolves.

A path in backticks counts as a repository path when its first segment is one of the repository's own top-level
folders (``batchplane/``, ``tests/``, ``docs/`` …) or one of the ``batchplane`` package's sub-packages written
relative to the package (``targets/gke/cluster.py``, ``webhook/queues.py``); upstream paths (``pkg/metrics/metrics.go``
in Kueue, ``internal/controller/…`` in the OpenDataHub operator) start elsewhere and are left alone. ``<…>``
placeholders and ``*`` match any one segment.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "batchplane"

#: The Markdown files whose references are held: README and every page under docs/ (generated pages included —
#: what generates them must write true paths too).
DOCUMENTS = sorted([REPO_ROOT / "README.md", *(REPO_ROOT / "docs").rglob("*.md")])

_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_PATH = re.compile(r"^[A-Za-z0-9_.<>*-]+(?:/[A-Za-z0-9_.<>*-]*)+$")
_DOTTED = re.compile(r"^batchplane(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")


def _top_level_dirs() -> frozenset[str]:
    return frozenset(
        p.name for p in REPO_ROOT.iterdir() if p.is_dir() and not p.name.startswith((".venv", "build"))
    )


def _package_dirs() -> frozenset[str]:
    return frozenset(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists())


@dataclass(frozen=True)
class Reference:
    document: Path
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.document.relative_to(REPO_ROOT)}:{self.line}: {self.text}"


def references(pattern: re.Pattern[str], documents: list[Path] = DOCUMENTS) -> list[Reference]:
    found = []
    for document in documents:
        in_fence = False
        for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), start=1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            found.extend(Reference(document, number, m.group(1)) for m in pattern.finditer(line))
    return found


#: Folders that hold the team's own files (its environments, its policy configs): a path below them names what a
#: team creates, not something the repository ships, so it is not checked.
USER_FOLDERS = ("stacks/", "policies/config/")


def _glob(base: Path, path: str) -> bool:
    pattern = re.sub(r"<[^>/]*>|\b[A-Z][A-Z_]+\b(?=\.)", "*", path.rstrip("/"))
    if "*" in pattern:
        return any(base.glob(pattern))
    return (base / pattern).exists()


def repository_path_resolves(path: str) -> bool | None:
    """True/False for a repository path; None when the text is not one (an upstream path, a URL, a key path)."""
    path = path.split("#", 1)[0].split(":", 1)[0]
    if not _PATH.match(path) or "//" in path or path.startswith(USER_FOLDERS):
        return None
    first = path.split("/", 1)[0]
    candidates = []
    if first in _top_level_dirs() or first in {".github", ".ci"}:
        candidates.append(REPO_ROOT)
    if first in _package_dirs() and (path.endswith((".py", "/")) or "." not in path.rsplit("/", 1)[-1]):
        # Package-relative paths name modules and sub-packages; ``kueue/sample-job.yaml`` is an upstream sample.
        candidates.append(PACKAGE)
    if not candidates:
        return None
    return any(_glob(base, path) for base in candidates)


def dotted_name_resolves(name: str) -> bool:
    """``batchplane.a.b.C``: the longest importable module prefix, then attributes for the rest."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            target: object = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name is not None and module_name.startswith(error.name) and error.name != module_name:
                continue
            if error.name == module_name:
                continue
            raise
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def test_every_repository_path_in_the_docs_exists() -> None:
    missing = [str(ref) for ref in references(_CODE) if repository_path_resolves(ref.text.strip()) is False]
    assert not missing, "paths in the docs that are not in the repository:\n" + "\n".join(missing)


def test_every_batchplane_name_in_the_docs_imports() -> None:
    missing = [
        str(ref)
        for ref in references(_CODE)
        if _DOTTED.match(ref.text.strip().rstrip("()"))
        and not dotted_name_resolves(ref.text.strip().rstrip("()"))
    ]
    assert not missing, "batchplane names in the docs that do not exist:\n" + "\n".join(missing)


_CONSTANT = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")


def _sources() -> str:
    """Batchplane's code, the policy pack, the tests (recorded answers name Compute Engine quota metrics, the kind
    e2e Pulumi's variables) and the workflows (``PULUMI_ACCESS_TOKEN``): every place a constant-style name the docs
    quote can come from. This file is left out, so a name quoted here proves nothing."""
    roots = (PACKAGE, REPO_ROOT / "policies", REPO_ROOT / "tests", REPO_ROOT / ".github")
    return "\n".join(
        path.read_text(encoding="utf-8")
        for root in roots
        for path in root.rglob("*")
        if path.suffix in {".py", ".yml", ".yaml", ".json"} and path.is_file() and path != Path(__file__)
    )


def test_every_constant_the_docs_name_is_defined_in_the_code() -> None:
    """A constant-style name in backticks (``UPDATE_RULES``, ``DEMAND_LABELS``) is named in :func:`_sources` (the
    docs once named ``CREATE_ONLY_RULES`` after that table was removed)."""
    source = _sources()
    missing = [
        str(ref)
        for ref in references(_CODE)
        if _CONSTANT.match(ref.text.strip()) and not re.search(rf"\b{ref.text.strip()}\b", source)
    ]
    assert not missing, "constants in the docs that no code defines:\n" + "\n".join(missing)


def test_every_relative_link_in_the_docs_resolves() -> None:
    missing = []
    for ref in references(_LINK):
        target = ref.text.split("#", 1)[0]
        if not target or re.match(r"^[a-z]+:", target):
            continue
        if not (ref.document.parent / target).exists():
            missing.append(str(ref))
    assert not missing, "relative links in the docs that lead nowhere:\n" + "\n".join(missing)


def test_every_repository_path_in_pyproject_comments_exists() -> None:
    """pyproject.toml explains each dependency with the module that needs it; renaming the module renames that."""
    text = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    named = re.findall(r"#[^\n]*?\b(batchplane/[A-Za-z0-9_/]+\.py)", text)
    assert named, "the probe found no path in pyproject.toml's comments (has the comment style changed?)"
    missing = [path for path in named if not (REPO_ROOT / path).exists()]
    assert not missing, f"pyproject.toml comments name modules that do not exist: {missing}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("batchplane/webhook/queues.py", True),
        ("targets/gke/cluster.py", True),
        ("webhook/manifests.py", False),
        ("batchplane/webhook/nothing_here.py", False),
        ("templates/Pulumi.<template>.yaml", True),
        ("templates/Pulumi.nothing-here.yaml", False),
        ("tests/webhook/test_nothing_here.py", False),
        ("pkg/metrics/metrics.go", None),
        ("kueue/sample-job.yaml", None),
        ("templates/Pulumi.NAME.yaml", True),
        ("stacks/Pulumi.my-env.yaml", None),
        ("config/gke.py", False),
        ("https://example.com/a/b", None),
        ("batchplane:kueue.clusterQueues", None),
    ],
)
def test_the_path_check_tells_repository_paths_from_upstream_ones(text: str, expected: bool | None) -> None:
    assert repository_path_resolves(text) is expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("batchplane.stack.load_stack_config", True),
        ("batchplane.webhook.decisions", True),
        ("batchplane.webhook.decisions.NoSuchThing", False),
        ("batchplane.no_such_module", False),
    ],
)
def test_the_name_check_imports_modules_and_attributes(name: str, expected: bool) -> None:
    assert dotted_name_resolves(name) is expected

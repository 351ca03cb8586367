"""The layering contracts hold, and a forbidden import breaks them (import-linter, as `make imports` runs it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root)},
    )


def test_the_contracts_are_kept() -> None:
    result = lint_imports(REPO_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 3 kept, 0 broken." in result.stdout


def test_a_pulumi_import_in_the_webhook_breaks_the_build(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in ("batchplane", "components"):
        shutil.copytree(REPO_ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / "pyproject.toml", copy / "pyproject.toml")
    quota = copy / "batchplane" / "webhook" / "quota.py"
    quota.write_text(
        "import pulumi  # a forbidden import\n" + quota.read_text(encoding="utf-8"), encoding="utf-8"
    )
    result = lint_imports(copy)
    assert result.returncode == 1
    assert "batchplane.webhook.quota -> pulumi (l.1)" in result.stdout

"""The layering contracts hold, and a forbidden import breaks them (import-linter, as `make imports` runs it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        # rich wraps the report at 80 columns, splitting a long "a -> b (l.1)" line; the tests match whole lines
        env={"PYTHONPATH": str(root), "COLUMNS": "200"},
    )


def test_the_contracts_are_kept() -> None:
    result = lint_imports(REPO_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 9 kept, 0 broken." in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "reported"),
    [
        ("webhook/queues.py", "import pulumi", "batchplane.webhook.queues -> pulumi (l.1)"),
        (
            "targets/gke/node_pools.py",
            "import batchplane.targets.openshift.machines",
            "batchplane.targets.gke.node_pools -> batchplane.targets.openshift.machines (l.1)",
        ),
        (
            "config/kueue.py",
            "import batchplane.stack.load",
            "batchplane.config.kueue -> batchplane.stack.load (l.1)",
        ),
        (
            "targets/kind/config.py",
            "import batchplane.components.batch_cluster",
            "batchplane.targets.kind.config -> batchplane.components.batch_cluster (l.1)",
        ),
        (
            "graph/model.py",
            "import batchplane.cli.common",
            "batchplane.graph.model -> batchplane.cli.common (l.1)",
        ),
        (
            "frameworks/rayjob.py",
            "import batchplane.accounting.workload",
            "batchplane.frameworks.rayjob -> batchplane.accounting.workload (l.1)",
        ),
        (
            "webhook/policy.py",
            "import batchplane.stack.load",
            "batchplane.webhook.policy -> batchplane.stack.load (l.1)",
        ),
        (
            "components/quota_webhook/manifests.py",
            "import pulumi_kubernetes",
            "batchplane.components.quota_webhook.manifests -> pulumi_kubernetes (l.1)",
        ),
        ("cli/common.py", "import batchplane.cli.check", "No cycles are allowed in batchplane.cli."),
        (
            "explain/sentences.py",
            "import batchplane.stack.load",
            "batchplane.explain.sentences -> batchplane.stack.load (l.1)",
        ),
    ],
    ids=[
        "pulumi-in-webhook",
        "platform-imports-platform",
        "config-imports-stack",
        "target-imports-program",
        "library-imports-cli",
        "registry-imports-batchplane",
        "webhook-imports-stack",
        "webhook-rendering-imports-pulumi",
        "cli-module-cycle",
        "sentences-import-stack",
    ],
)
def test_a_forbidden_import_breaks_the_build(tmp_path: Path, module: str, line: str, reported: str) -> None:
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copytree(
        REPO_ROOT / "batchplane", copy / "batchplane", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO_ROOT / "pyproject.toml", copy / "pyproject.toml")
    path = copy / "batchplane" / module
    path.write_text(f"{line}  # a forbidden import\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    result = lint_imports(copy)
    assert result.returncode == 1
    assert reported in result.stdout

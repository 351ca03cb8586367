"""Pulumi's own install path (issues #22, #30): what the uv toolchain installs from a clean copy runs the program.

``Pulumi.yaml`` declares ``runtime.options: {toolchain: uv, virtualenv: .venv}``. ``pulumi install`` (and
``pulumi new`` / the first ``pulumi up`` when .venv is missing) then does this, transcribed from
``InstallDependencies`` and ``uvCommand`` in pulumi/pulumi ``sdk/python/toolchain/uv.go``
(https://github.com/pulumi/pulumi/blob/008a315303507297fd13aea17efd6516379cd4ec/sdk/python/toolchain/uv.go):
with a ``uv.lock`` found searching up from the project directory, it runs ``uv sync`` there with
``UV_PROJECT_ENVIRONMENT=<absolute virtualenv path>`` (``virtualenv`` relative to the project root). No
requirements.txt is read: only when neither ``uv.lock`` nor ``pyproject.toml`` exists does it ``uv init`` and
``uv add -r requirements.txt``.

The test repeats that on a copy of the repository's files (``git ls-files``: no .venv, no build output), then runs
the real ``__main__.py`` under the SDK's mock engine (``batchplane.offline``) with that venv's python.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow


def clean_copy(dest: Path) -> Path:
    """The repository's files as a fresh clone has them (tracked plus new, not ignored ones)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        source = REPO_ROOT / rel
        if source.is_file():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


def activated(venv: Path) -> dict[str, str]:
    """The environment ``ActivateVirtualEnv`` gives the program: VIRTUAL_ENV set, its bin first on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH", "VIRTUAL_ENV")}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")


def pulumi_uv_install(project: Path, *extra: str) -> Path:
    """uv.go's ``InstallDependencies`` for ``virtualenv: .venv`` with a uv.lock: ``uv sync``; returns the venv."""
    assert UV is not None, "uv is a dev dependency (pyproject.toml `dev` extra)"
    venv = (project / ".venv").resolve()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH", "VIRTUAL_ENV")}
    env["UV_PROJECT_ENVIRONMENT"] = str(venv)
    env["UV_PYTHON_DOWNLOADS"] = "never"  # the machine's python3, as on a developer's machine
    done = subprocess.run(
        [UV, "sync", *extra], cwd=project, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return venv


#: Run by the toolchain's python from the project directory: the real program under the mock engine.
RUN_PROGRAM = """
import json, sys
from pathlib import Path
import batchplane
from batchplane.offline import read_stack_file, run_program
run = run_program(Path("."), "kind", read_stack_file(Path("templates/Pulumi.kind.yaml")))
print(json.dumps({"package": batchplane.__file__, "types": sorted({r.type for r in run.resources})}))
"""


def run_program_with(venv: Path, project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "python"), "-c", RUN_PROGRAM],
        cwd=project,
        env=activated(venv),
        capture_output=True,
        text=True,
        check=False,
    )


def installed(venv: Path) -> set[str]:
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "freeze"]
        if (venv / "bin" / "pip").exists()
        else [str(UV), "pip", "list", "--format", "freeze"],
        env=activated(venv),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.lower()
    return {line.split("==")[0] for line in listed.splitlines() if "==" in line}


def test_the_uv_toolchain_installs_what_the_program_needs_and_no_dev_tool_from_a_clean_copy(
    tmp_path: Path,
) -> None:
    import json

    project = clean_copy(tmp_path / "project")
    venv = pulumi_uv_install(project)
    done = run_program_with(venv, project)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert Path(result["package"]).is_relative_to(project)  # the editable install of this copy
    assert {"batchplane:cluster:BatchCluster", "batchplane:admission:QuotaWebhook"} <= set(result["types"])
    assert "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue" in result["types"]
    packages = installed(venv)
    assert {"pulumi", "pulumi-kubernetes", "pulumi-policy", "typer"} <= packages
    assert packages & {"pytest", "hypothesis", "mypy", "ruff", "import-linter"} == set()


def test_without_the_default_group_uv_sync_leaves_a_venv_the_program_cannot_run_in(tmp_path: Path) -> None:
    """Why pyproject.toml sets ``default-groups = ["run"]``: a bare ``uv sync`` installs only the core package."""
    project = clean_copy(tmp_path / "project")
    venv = pulumi_uv_install(project, "--no-default-groups")
    packages = installed(venv)
    assert "batchplane" in packages and "pulumi" not in packages
    done = run_program_with(venv, project)
    assert done.returncode != 0
    assert "ModuleNotFoundError: No module named" in done.stderr

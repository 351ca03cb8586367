"""Pulumi's own install path (issue #22): what the pip toolchain installs from a clean copy runs the program.

``Pulumi.yaml`` declares ``runtime.options: {toolchain: pip, virtualenv: .venv}``. ``pulumi install`` (and
``pulumi new`` / the first ``pulumi up`` when .venv is missing) then does exactly this, transcribed from
``InstallDependencies`` in pulumi/pulumi ``sdk/python/toolchain/pip.go``
(https://github.com/pulumi/pulumi/blob/01ba6bcc239f50446aeb12fc237afe94f6e938ab/sdk/python/toolchain/pip.go):

1. ``python3 -m venv <project>/.venv`` (``CommandPath``: ``$PULUMI_PYTHON_CMD``, else ``python3``, else ``python``);
2. ``.venv/bin/python -m pip install --upgrade pip setuptools wheel`` in the project directory, the venv activated;
3. "If ``requirements.txt`` doesn't exist, exit early"; else ``.venv/bin/python -m pip install -r requirements.txt``.

The test repeats those steps on a copy of the repository's files (``git ls-files``: no .venv, no build output),
then runs the real ``__main__.py`` under the SDK's mock engine (``batchplane.offline``) with that venv's python.
"""

from __future__ import annotations

import os
import shutil
import subprocess
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
    """The environment ``ActivateVirtualEnv`` gives pip: VIRTUAL_ENV set, its bin first on PATH, no PYTHONHOME."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH", "VIRTUAL_ENV")}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def pulumi_pip_install(project: Path) -> Path:
    """pip.go's ``InstallDependencies`` for ``virtualenv: .venv``; returns the venv."""
    venv = (project / ".venv").resolve()
    python3 = os.environ.get("PULUMI_PYTHON_CMD") or shutil.which("python3") or shutil.which("python")
    assert python3 is not None
    subprocess.run([python3, "-m", "venv", str(venv)], check=True, capture_output=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install"]
    for args in (["--upgrade", "pip", "setuptools", "wheel"], ["-r", "requirements.txt"]):
        if args[0] == "-r" and not (project / "requirements.txt").exists():
            break  # "If `requirements.txt` doesn't exist, exit early."
        done = subprocess.run(
            [*pip, *args], cwd=project, env=activated(venv), capture_output=True, text=True, check=False
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


def test_the_pip_toolchain_installs_what_the_program_needs_from_a_clean_copy(tmp_path: Path) -> None:
    import json

    project = clean_copy(tmp_path / "project")
    venv = pulumi_pip_install(project)
    done = run_program_with(venv, project)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert Path(result["package"]).is_relative_to(project)  # `-e .` of this copy, not the developer's venv
    assert {"batchplane:cluster:BatchCluster", "batchplane:admission:QuotaWebhook"} <= set(result["types"])
    assert "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue" in result["types"]


def test_without_requirements_txt_the_toolchain_leaves_a_venv_the_program_cannot_run_in(
    tmp_path: Path,
) -> None:
    """What issue #22 found: the toolchain creates .venv, upgrades pip and stops, so the program fails."""
    project = clean_copy(tmp_path / "project")
    (project / "requirements.txt").unlink()
    venv = pulumi_pip_install(project)
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "freeze"],
        cwd=tmp_path,
        env=activated(venv),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.lower()
    assert "batchplane" not in installed and "pulumi" not in installed
    done = run_program_with(venv, project)
    assert done.returncode != 0
    # The program's directory is on sys.path, so batchplane's source is found; its dependencies are not.
    assert "ModuleNotFoundError: No module named" in done.stderr

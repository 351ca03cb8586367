"""Paths and checks shared by the kind end-to-end test and the offline checks of its manifests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

E2E_DIR = Path(__file__).resolve().parent
MANIFESTS = E2E_DIR / "manifests"
KIND_CONFIG = E2E_DIR / "kind-config.yaml"
SMALL_JOBS = ("rayjob-small.yaml", "pytorchjob-small.yaml")
NEVER_FITS = "rayjob-never-fits.yaml"
TOOLS = ("docker", "kind", "kubectl", "pulumi")


def missing_tools() -> str | None:
    """Why the kind end-to-end test cannot run here, or None when it can.

    It needs ``docker`` with a working engine (``docker info`` succeeds), ``kind``, ``kubectl`` and the
    ``pulumi`` CLI on PATH.
    """
    absent = [tool for tool in TOOLS if shutil.which(tool) is None]
    if absent:
        return (
            f"kind e2e needs {', '.join(absent)} on PATH (docker with a running engine, kind, kubectl, "
            "the pulumi CLI); see docs/onboarding.md, `make e2e-kind`"
        )
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return "kind e2e needs a running Docker engine: `docker info` did not answer within 60 s"
    if info.returncode != 0:
        lines = (info.stderr or info.stdout).strip().splitlines()
        detail = lines[-1] if lines else f"exit code {info.returncode}"
        return f"kind e2e needs a running Docker engine: `docker info` failed: {detail}"
    return None

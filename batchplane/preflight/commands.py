"""Running the local tools preflight asks (``docker``, ``kind``): without a shell, bounded in time, never raising.

Shared by :mod:`batchplane.preflight.docker` and :mod:`batchplane.targets.kind.preflight`.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

TIMEOUT_SECONDS = 20.0


@dataclass(frozen=True)
class Run:
    """A finished command: exit status and output (stdout, then stderr)."""

    returncode: int
    output: str


def run(args: list[str]) -> Run:
    """Run an executable found on ``PATH`` without a shell; exit 127 when it is missing, 124 on timeout."""
    exe = shutil.which(args[0])
    if exe is None:
        return Run(127, f"{args[0]}: not found on PATH")
    try:
        done = subprocess.run(
            [exe, *args[1:]], capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False
        )
    except subprocess.TimeoutExpired:
        return Run(124, f"{' '.join(args)}: no answer in {TIMEOUT_SECONDS:g} s")
    return Run(done.returncode, (done.stdout + done.stderr).strip())

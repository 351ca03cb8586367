"""Benchmark: how long `batchplane` takes to start, per command (issue #37), in fresh processes.

Run: .venv/bin/python benchmarks/cli_startup_bench.py [--runs 7] [--tree DIR] [--no-bytecode]
(results recorded in docs/performance.md, "CLI start-up")

Each command runs ``--runs`` times as a new process (``subprocess.run``); wall time by ``time.perf_counter``, CPU
time (user + sys) of the child by ``os.wait4``. ``--tree DIR`` runs another checkout of the package (e.g. ``git
archive`` of an older commit unpacked in DIR) with this venv: ``PYTHONPATH=DIR``, working directory DIR.

Bytecode: by default every module's ``.pyc`` is written to a throw-away ``PYTHONPYCACHEPREFIX`` by one warm-up run,
as an installed package runs from its second start on. ``--no-bytecode`` measures with ``PYTHONDONTWRITEBYTECODE=1``
and no cache (every module compiled from source at every start, as in a read-only or bytecode-less install).

Targets (issue #37, this 2-core machine): ``batchplane --help`` ≤ 0.3 s, offline ``explain`` of one manifest ≤ 0.7 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BATCHPLANE = Path(sys.executable).parent / "batchplane"

#: One Job of 3 pods in the kind template's team-a namespace, on its default LocalQueue (JSON is YAML).
MANIFEST = json.dumps(
    {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "sample-job",
            "namespace": "team-a",
            "labels": {"kueue.x-k8s.io/queue-name": "default"},
        },
        "spec": {
            "parallelism": 3,
            "completions": 3,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "main", "image": "busybox:1.36", "resources": {"requests": {"cpu": "1"}}}
                    ],
                }
            },
        },
    }
)


def commands(manifest: Path) -> list[tuple[str, list[str]]]:
    """(label, argv) of every measured command."""
    return [
        ("python -c pass (the interpreter alone)", [sys.executable, "-c", "pass"]),
        ("python -c 'import batchplane.cli'", [sys.executable, "-c", "import batchplane.cli"]),
        ("batchplane --help", [str(BATCHPLANE), "--help"]),
        ("batchplane explain --help", [str(BATCHPLANE), "explain", "--help"]),
        (
            "batchplane explain JOB.yaml --stack kind",
            [str(BATCHPLANE), "explain", str(manifest), "--stack", "kind"],
        ),
        ("batchplane requests JOB.yaml", [str(BATCHPLANE), "requests", str(manifest)]),
        ("batchplane validate --stack kind", [str(BATCHPLANE), "validate", "--stack", "kind"]),
    ]


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run; raises when the command fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {stderr}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--tree", type=Path, default=None, help="another checkout to measure (PYTHONPATH=DIR)"
    )
    parser.add_argument("--no-bytecode", action="store_true", help="PYTHONDONTWRITEBYTECODE=1, no .pyc cache")
    args = parser.parse_args()
    tree = (args.tree or REPO).resolve()
    with tempfile.TemporaryDirectory(prefix="bp-startup-") as tmp:
        manifest = Path(tmp) / "job.yaml"
        manifest.write_text(MANIFEST, encoding="utf-8")
        env = {
            k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
        }
        if args.tree is not None:
            env["PYTHONPATH"] = str(tree)
        if args.no_bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        print(f"tree {tree}; bytecode {'none' if args.no_bytecode else 'cached'}; runs {args.runs}")
        print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
        print("| command | wall min | wall median | CPU (user + sys) min |\n| --- | ---: | ---: | ---: |")
        for label, argv in commands(manifest):
            if not args.no_bytecode:
                run_once(argv, env, tree)  # warm-up: writes the .pyc files
            runs = [run_once(argv, env, tree) for _ in range(args.runs)]
            walls = [w for w, _ in runs]
            print(
                f"| `{label}` | {min(walls):.2f} s | {statistics.median(walls):.2f} s | "
                f"{min(c for _, c in runs):.2f} s |",
                flush=True,
            )
        print(f"load average at end: {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()

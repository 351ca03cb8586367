"""Soak: 60 s of mixed real reviews (GPU RayJob, PyTorchJob, Job) at 16 connections over TLS keep-alive.

Samples the server's RSS every 5 s and reports errors (non-200 answers, socket errors) and RSS growth.
Usage::

    .venv/bin/python benchmarks/webhook_soak.py [--duration 60] [--connections 16]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

from _common import Server, write_bodies
from webhook_load import LUA


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=60)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument(
        "--compiled",
        type=Path,
        help="run the server from a `webhook/compile.py --out` directory (as the image does)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bodies = write_bodies(work / "bodies")
        server = Server(work, args.compiled.resolve() if args.compiled else None)
        try:
            # warm-up so the first sample is not the import-time footprint
            subprocess.run(["wrk", "-t1", "-c4", "-d3s", "-s", str(LUA), f"{server.url}/validate"], check=True,
                           capture_output=True, env={**os.environ, "BODIES": ":".join(map(str, bodies.values()))})  # fmt: skip
            samples = [(0.0, server.rss_kib())]
            proc = subprocess.Popen(
                ["wrk", "-t1", f"-c{args.connections}", f"-d{args.duration}s", "--latency", "-s", str(LUA),
                 f"{server.url}/validate"],
                stdout=subprocess.PIPE, text=True, env={**os.environ, "BODIES": ":".join(map(str, bodies.values()))},
            )  # fmt: skip
            start = time.monotonic()
            while proc.poll() is None:
                time.sleep(5)
                samples.append((time.monotonic() - start, server.rss_kib()))
            out = proc.stdout.read() if proc.stdout else ""
            samples.append((time.monotonic() - start, server.rss_kib()))
        finally:
            server.stop()
    print(out)
    print("RSS samples (s, MiB):", ", ".join(f"{t:.0f}:{kib / 1024:.1f}" for t, kib in samples))
    growth = (samples[-1][1] - samples[0][1]) / 1024
    late = (samples[-1][1] - samples[len(samples) // 2][1]) / 1024
    print(f"RSS growth over the soak: {growth:+.1f} MiB (second half: {late:+.1f} MiB)")


if __name__ == "__main__":
    main()

"""Load benchmark: requests/s and p50/p99 over TLS keep-alive at 1/16/64 connections.

For each real review (a GPU RayJob, a PyTorchJob, a Job from shared/samples, judged by ``/validate``
against the gke-dws stack's policy) and for the trivial handler ``/noop`` (parse the review, allow
it) on the same server in the same run, runs ``wrk -t1 -c<N> -d<D>s --latency`` with
``post_review.lua`` against ``python -m batchplane.webhook serve`` on 127.0.0.1, and reports the
ratio real/trivial and the server's RSS. Usage::

    .venv/bin/python benchmarks/webhook_load.py [--duration 5] [--connections 1,16,64] [--churn 128] [--json out.json]

After the runs, ``--churn N`` opens N new keep-alive connections in waves of 16 (each a 1 s wrk run of RayJob
reviews that closes its connections at the end) and reports the server's RSS every 128 connections and 2 s after.

Needs ``wrk`` (Debian: ``apt-get install -y wrk``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import Server, write_bodies

LUA = Path(__file__).with_name("post_review.lua")


def wrk(url: str, bodies: list[Path], connections: int, duration: int) -> dict[str, Any]:
    """Run wrk once; returns req/s, p50/p99 (ms), request count and non-200/socket errors."""
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--latency", "-s", str(LUA), url],
        check=True, capture_output=True, text=True, env={**os.environ, "BODIES": ":".join(map(str, bodies))},
    ).stdout  # fmt: skip
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    p50 = int(re.search(r"p50_us=(\d+)", out).group(1)) / 1000  # type: ignore[union-attr]
    p99 = int(re.search(r"p99_us=(\d+)", out).group(1)) / 1000  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return {
        "rps": rps, "p50_ms": p50, "p99_ms": p99, "requests": total,
        "non_2xx": int(non2xx.group(1)) if non2xx else 0,
        "socket_errors": sum(int(x) for x in sock.groups()) if sock else 0,
    }  # fmt: skip


def churn(url: str, body: Path, connections: int, wave: int = 16) -> int:
    """Open ``connections`` new keep-alive connections, ``wave`` at a time (wrk closes each wave's at its end)."""
    opened = 0
    while opened < connections:
        n = min(wave, connections - opened)
        wrk(f"{url}/validate", [body], n, 1)
        opened += n
    return opened


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--connections", default="1,16,64")
    parser.add_argument("--churn", type=int, default=128, help="new connections after the runs (0: none)")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--compiled",
        type=Path,
        help="run the server from a `webhook/compile.py --out` directory (as the image does)",
    )
    args = parser.parse_args()
    conns = [int(c) for c in args.connections.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bodies = write_bodies(work / "bodies")
        server = Server(work, args.compiled.resolve() if args.compiled else None)
        results: dict[str, Any] = {"rss_kib_start": server.rss_kib(), "runs": []}
        try:
            for c in conns:
                for label, path in bodies.items():
                    # The trivial handler gets the same body as the real review, in the same run.
                    trivial = wrk(f"{server.url}/noop", [path], c, args.duration)
                    results["runs"].append(
                        {"handler": "trivial", "review": label, "connections": c, **trivial}
                    )
                    real = wrk(f"{server.url}/validate", [path], c, args.duration)
                    real["ratio_to_trivial"] = round(real["rps"] / trivial["rps"], 3)
                    results["runs"].append({"handler": "validate", "review": label, "connections": c, **real})
                    print(f"c={c:>2} {label:<11} {real['rps']:>8.0f} req/s  p50 {real['p50_ms']:.2f} ms  "
                          f"p99 {real['p99_ms']:.2f} ms  ratio {real['ratio_to_trivial']:.2f}  "
                          f"(trivial {trivial['rps']:.0f} req/s, p50 {trivial['p50_ms']:.2f} ms, p99 {trivial['p99_ms']:.2f} ms)  "
                          f"errors {real['non_2xx'] + real['socket_errors']}", flush=True)  # fmt: skip
            results["rss_kib_end"] = server.rss_kib()
            if args.churn:
                results["churn"] = []  # (new connections so far, RSS KiB 1 s after), every 128
                opened = 0
                while opened < args.churn:
                    opened += churn(server.url, bodies["gpu-rayjob"], min(128, args.churn - opened))
                    time.sleep(1)
                    results["churn"].append((opened, server.rss_kib()))
                time.sleep(2)
                results["churn_connections"] = opened
                results["rss_kib_after_churn"] = server.rss_kib()
        finally:
            server.stop()
    print(
        f"RSS: {results['rss_kib_start'] / 1024:.1f} MiB at start, {results['rss_kib_end'] / 1024:.1f} MiB after the runs"
    )
    if args.churn:
        steps = ", ".join(f"{n}: {kib / 1024:.1f}" for n, kib in results["churn"])
        print(f"RSS during churn (new connections: MiB): {steps}")
        print(
            f"RSS 2 s after {results['churn_connections']} new connections (churn): "
            f"{results['rss_kib_after_churn'] / 1024:.1f} MiB"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

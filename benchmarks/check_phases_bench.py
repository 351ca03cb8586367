"""Benchmark: where `batchplane check --stack NAME` spends its time (issue #40's "PR check slow"), in one process.

Run: .venv/bin/python benchmarks/check_phases_bench.py [--stack kind]   (results in docs/performance.md)

Phases, as ``batchplane/cli/check.py`` runs them: importing what the command runs with (stack loading, the offline
engine and with it the Pulumi SDKs), loading the stack, running the program under the mock engine, and the policy
pack (``python -u -m pulumi.policy`` started as the Pulumi CLI starts it, ``Analyze`` per resource). The pack
process runs with ``PYTHONPROFILEIMPORTTIME=1``: the sum of its top-level imports is printed as its import time.
Wall time by ``time.perf_counter``; CPU of this process by ``time.process_time``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
_TOP_IMPORT = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| [^ ]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", default="kind")
    args = parser.parse_args()
    print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
    marks: list[tuple[str, float, float]] = []
    started, cpu = time.perf_counter(), time.process_time()

    def mark(label: str) -> None:
        nonlocal started, cpu
        marks.append((label, time.perf_counter() - started, time.process_time() - cpu))
        started, cpu = time.perf_counter(), time.process_time()

    from batchplane.cli.check import _run_pack, _run_program
    from batchplane.offline.engine import run_program  # noqa: F401 - what _run_program imports
    from batchplane.offline.stackfile import encode_config, read_project
    from batchplane.offline.stackfile import read_stack_file as read_config
    from batchplane.policyrun import run_policy_pack  # noqa: F401 - what _run_pack imports
    from batchplane.stack import load_stack_file

    mark("imports (stack loading, offline engine, Pulumi SDKs, policy runner)")
    path = REPO / "templates" / f"Pulumi.{args.stack}.yaml"
    project = read_project(REPO)
    raw = read_config(path)
    load_stack_file(path, args.stack)
    mark("load and validate the stack")
    resources = _run_program(REPO, args.stack, raw)
    mark(f"run the program offline ({len(resources)} resources)")
    encoded, _ = encode_config(project.name, {**project.config_defaults, **raw})
    os.environ["PYTHONPROFILEIMPORTTIME"] = "1"
    report = _run_pack(REPO / "policies", resources, project.name, args.stack, encoded, None)
    del os.environ["PYTHONPROFILEIMPORTTIME"]
    mark(f"policy pack ({len(report.policies)} policies; process start, Analyze, AnalyzeStack)")
    pack_imports = sum(
        int(m.group(1))
        for line in report.logs
        if (m := _TOP_IMPORT.match(getattr(line, "message", str(line))))
    )
    print("| phase | wall | CPU of this process |\n| --- | ---: | ---: |")
    for label, wall, used in marks:
        print(f"| {label} | {wall:.2f} s | {used:.2f} s |")
    print(f"| total | {sum(w for _, w, _ in marks):.2f} s | {sum(c for _, _, c in marks):.2f} s |")
    print(
        f"policy pack process: its imports (PYTHONPROFILEIMPORTTIME, top level summed) {pack_imports / 1e6:.2f} s"
    )
    print(f"load average at end: {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()

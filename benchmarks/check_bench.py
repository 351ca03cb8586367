"""Benchmark: the phases of ``batchplane check --stack NAME`` (load, program, policy pack and the pack's own
start / configure / Analyze / AnalyzeStack timings), called in-process the way the command calls them.

Run: .venv/bin/python benchmarks/check_bench.py gke-prod-dws [more stacks]   (results in docs/performance.md)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(names: list[str]) -> None:
    began = time.monotonic()
    from batchplane.offline.engine import run_program
    from batchplane.offline.stackfile import encode_config, read_project, read_stack_file
    from batchplane.policyrun import run_policy_pack
    from batchplane.stack import load_stack_file
    from batchplane.stack.layout import find_stack_file

    imports = time.monotonic() - began
    for name in names:
        path = find_stack_file(REPO, name)
        assert path is not None, f"no stack file for {name}"
        mark = time.monotonic()
        project, raw = read_project(REPO), read_stack_file(path)
        load_stack_file(path, name)
        load = time.monotonic() - mark
        mark = time.monotonic()
        resources = list(run_program(REPO, name, raw).resources)
        program = time.monotonic() - mark
        encoded, _ = encode_config(project.name, {**project.config_defaults, **raw})
        mark = time.monotonic()
        report = run_policy_pack(
            REPO / "policies", resources, project=project.name, stack=name, config=encoded
        )
        pack = time.monotonic() - mark
        phases = " ".join(f"{k}={v:.2f}s" for k, v in report.timings.items())
        print(
            f"{name}: imports {imports:.2f}s load {load:.2f}s program {program:.2f}s pack {pack:.2f}s "
            f"({len(report.policies)} policies, {len(resources)} resources; pack phases {phases})"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or ["gke-prod-dws"])

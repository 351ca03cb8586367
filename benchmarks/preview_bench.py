"""Benchmark: validation and offline preview time for every template and for generated large stacks.

Run: .venv/bin/python benchmarks/preview_bench.py   (results recorded in docs/performance.md)

Each preview runs the real __main__.py under the mock engine in this process (the first run also
pays the imports of pulumi, pulumi_kubernetes and pulumi_gcp; it is reported separately).
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from batchplane.offline import read_stack_file, run_program  # noqa: E402
from batchplane.stack import load_stack  # noqa: E402


def generated(local_queues: int) -> dict[str, Any]:
    """One ClusterQueue shared by `local_queues` namespaces, one LocalQueue each."""
    return {
        "batchplane:target": {"kind": "kind"},
        "batchplane:kueue": {
            "resourceFlavors": [{"name": "default-flavor"}],
            "clusterQueues": [
                {
                    "name": "shared",
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu", "memory"],
                            "flavors": [
                                {
                                    "name": "default-flavor",
                                    "resources": [
                                        {"name": "cpu", "nominalQuota": 1000},
                                        {"name": "memory", "nominalQuota": "4Ti"},
                                    ],
                                }
                            ],
                        }
                    ],
                }
            ],
            "localQueues": [
                {"name": "default", "namespace": f"team-{i:04d}", "clusterQueue": "shared", "default": True}
                for i in range(local_queues)
            ],
        },
    }


def generated_teams(teams: int) -> dict[str, Any]:
    """`teams` teams via the shorthand: a ClusterQueue, LocalQueue and namespace each, one cohort."""
    return {
        "batchplane:target": {"kind": "kind"},
        "batchplane:kueue": {"resourceFlavors": [{"name": "default-flavor"}]},
        "batchplane:teams": {
            "members": [
                {"name": f"team-{i:04d}", "quotas": {"default-flavor": {"cpu": 4, "memory": "16Gi"}}}
                for i in range(teams)
            ]
        },
    }


def timed(label: str, config: dict[str, Any], stack: str) -> None:
    started = time.perf_counter()
    load_stack(config, stack)
    validated = time.perf_counter()
    run = run_program(REPO, stack, config)
    done = time.perf_counter()
    print(
        f"{label:<34} resources {len(run.resources):>5}  validate {validated - started:6.3f} s  "
        f"preview {done - validated:6.2f} s"
    )


def main() -> None:
    warm = time.perf_counter()
    run_program(REPO, "kind", read_stack_file(REPO / "templates" / "Pulumi.kind.yaml"))
    print(f"first preview (kind, includes SDK imports): {time.perf_counter() - warm:.2f} s")
    for path in sorted((REPO / "templates").glob("Pulumi.*.yaml")):
        name = path.name[len("Pulumi.") : -len(".yaml")]
        timed(f"template {name}", read_stack_file(path), name)
    timed("generated: 1000 LocalQueues", generated(1000), "gen-1000-lq")
    timed("generated: 1000 teams (shorthand)", generated_teams(1000), "gen-1000-teams")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()

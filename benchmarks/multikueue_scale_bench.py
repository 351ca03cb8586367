"""Benchmark: MultiKueue at scale — validation, offline preview and render for W declared GKE worker clusters ×
T teams (each worker a BatchCluster with its own DWS pool; the manager's webhook policy embeds every worker's).

Run: .venv/bin/python benchmarks/multikueue_scale_bench.py [--quick]   (results recorded in docs/performance.md)

Every cell is measured in this one process, after a warm-up run that pays the imports (pulumi, pulumi_kubernetes,
pulumi_gcp). Linearity is judged on µs per declared resource, which should stay flat as W and T grow.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from batchplane.components.quota_webhook.manifests import COMPRESS_ABOVE, compressed_policy  # noqa: E402
from batchplane.components.quota_webhook.policy import render_policy  # noqa: E402
from batchplane.offline import run_program  # noqa: E402
from batchplane.offline.render import render_resources  # noqa: E402
from batchplane.stack import load_stack  # noqa: E402
from batchplane.webhook.policy import policy_json  # noqa: E402

REGIONS = ("us-east4", "europe-west4", "asia-southeast1", "us-central1", "us-west1", "europe-west1",
           "asia-northeast1", "us-east1", "europe-west2", "australia-southeast1")  # fmt: skip
ZONES = {"us-east4": "ac", "europe-west4": "ab", "asia-southeast1": "ab", "us-central1": "ab", "us-west1": "ab",
         "europe-west1": "bc", "asia-northeast1": "ac", "us-east1": "bc", "europe-west2": "ab",
         "australia-southeast1": "ab"}  # fmt: skip


def teams(count: int, gpus: int) -> dict[str, Any]:
    return {
        "cohortName": "ml",
        "members": [
            {
                "name": f"team-{i:03d}",
                "quotas": {
                    "default-flavor": {"cpu": 1, "memory": "2Gi", "nvidia.com/gpu": 0},
                    "l4": {"cpu": 4 * gpus, "memory": f"{16 * gpus}Gi", "nvidia.com/gpu": gpus},
                },
            }
            for i in range(count)
        ],
    }


def config(workers: int, team_count: int) -> dict[str, Any]:
    """A manager (CPU only) and `workers` GKE workers with a queued L4 pool sized to `team_count` × 1 GPU."""
    worker_list = []
    for index in range(workers):
        region = REGIONS[index]
        worker_list.append(
            {
                "name": f"w{index:02d}-{region}",
                "target": {
                    "kind": "gke",
                    "region": region,
                    "clusterName": f"bp-{index:02d}",
                    "systemPool": {"machineType": "e2-standard-4", "minNodes": 1, "maxNodes": 3},
                    "gpuPools": [
                        {
                            "name": "l4",
                            "provisioning": "queued",
                            "machineType": "g2-standard-4",
                            "nodeLocations": [f"{region}-{z}" for z in ZONES[region]],
                            "maxNodes": team_count,
                        }
                    ],
                },
                "teams": teams(team_count, 1),
            }
        )
    return {
        "gcp:project": "bench-project",
        "batchplane:target": {
            "kind": "gke",
            "region": "us-central1",
            "clusterName": "bp-manager",
            "systemPool": {"machineType": "e2-standard-4", "minNodes": 1, "maxNodes": 3},
        },
        "batchplane:operators": {
            "certManager": {"version": "v1.21.1"},
            "kuberay": {"version": "1.7.0"},
            "training": {"kind": "none"},
            "kueue": {"version": "0.19.2"},
        },
        "batchplane:kueue": {
            "resourceFlavors": [
                {"name": "default-flavor"},
                {
                    "name": "l4",
                    "nodeLabels": {"cloud.google.com/gke-nodepool": "l4"},
                    "tolerations": [
                        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                        {
                            "key": "cloud.google.com/gke-queued",
                            "operator": "Equal",
                            "value": "true",
                            "effect": "NoSchedule",
                        },
                    ],
                },
            ]
        },
        "batchplane:teams": teams(team_count, workers),
        "batchplane:multiKueue": {"workers": worker_list},
    }


def validate_time(workers: int, team_count: int) -> float:
    """Best of 3 ``load_stack`` runs, seconds (measured before any program run: a process that has run the
    program carries a large heap whose garbage collections would be billed to validation)."""
    cfg = config(workers, team_count)
    best = float("inf")
    for _ in range(3):
        gc.collect()
        start = time.perf_counter()
        load_stack(cfg, "bench")
        best = min(best, time.perf_counter() - start)
    return best


def measure(workers: int, team_count: int) -> dict[str, Any]:
    cfg = config(workers, team_count)
    stack = load_stack(cfg, "bench")
    text = policy_json(render_policy(stack))
    policy_bytes = len(text.encode())
    shipped_bytes = len(compressed_policy(text)) if policy_bytes > COMPRESS_ABOVE else policy_bytes
    gc.collect()
    start = time.perf_counter()
    run = run_program(REPO, "bench", cfg)
    preview_s = time.perf_counter() - start
    start = time.perf_counter()
    full = run_program(REPO, "bench", cfg, preview=False)
    rendering = render_resources(full.resources)
    render_s = time.perf_counter() - start
    n = len(run.resources)
    return {
        "workers": workers,
        "teams": team_count,
        "resources": n,
        "preview_s": preview_s,
        "render_s": render_s,
        "objects": len(rendering.objects),
        "us_per_resource": preview_s / n * 1e6,
        "policy_bytes": policy_bytes,
        "shipped_bytes": shipped_bytes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="only the small cells")
    args = parser.parse_args()
    cells = [(1, 10), (2, 10), (5, 10), (10, 10), (10, 50), (10, 100), (1, 100), (5, 100)]
    if args.quick:
        cells = cells[:3]
    validation = {cell: validate_time(*cell) for cell in cells}
    measure(1, 2)  # warm-up: imports
    print(
        "| workers | teams | resources | validate | preview | render (run + YAML) | µs/resource (preview) "
        "| manager policy JSON | as shipped |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for workers, team_count in cells:
        r = measure(workers, team_count)
        print(
            f"| {r['workers']} | {r['teams']} | {r['resources']:,} | {validation[(workers, team_count)] * 1000:,.0f} ms | "
            f"{r['preview_s']:.2f} s | {r['render_s']:.2f} s | {r['us_per_resource']:,.0f} | "
            f"{r['policy_bytes'] / 1024:,.0f} KiB | {r['shipped_bytes'] / 1024:,.0f} KiB |",
            flush=True,
        )


if __name__ == "__main__":
    main()

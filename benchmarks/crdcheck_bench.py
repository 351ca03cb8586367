"""Benchmark: load the shared CRDs and validate objects with tests.support.crdcheck.

Run: .venv/bin/python benchmarks/crdcheck_bench.py   (prints seconds per phase; results in docs/performance.md)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the checker is test support (tests/support/crdcheck), not in the package

from tests.support.crdcheck import CrdCatalog  # noqa: E402

SHARED = REPO / ".." / "shared"


def main() -> None:
    started = time.perf_counter()
    catalog = CrdCatalog.load(SHARED / "crds")
    loaded = time.perf_counter()
    objects = [
        doc
        for folder in ("kuberay", "training-operator", "appwrapper")
        for path in sorted((SHARED / "samples" / folder).glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if isinstance(doc, dict)
        and str(doc.get("apiVersion", "")).startswith(("ray.io/", "kubeflow.org/", "workload.codeflare.dev/"))
    ]
    for obj in objects:
        catalog.validate(obj, default_namespace="default")
    first = time.perf_counter()
    for obj in objects:
        catalog.validate(obj, default_namespace="default")
    second = time.perf_counter()
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "1"}]}],
                }
            ],
        },
    }
    for _ in range(300):
        catalog.validate(cq)
    done = time.perf_counter()
    print(f"catalog load: {loaded - started:.2f} s")
    print(
        f"first validation of {len(objects)} operator samples (parses the big CRDs): {first - loaded:.2f} s"
    )
    print(f"repeat validation of the same {len(objects)}: {second - first:.2f} s")
    print(f"300 ClusterQueues: {done - second:.2f} s")


if __name__ == "__main__":
    main()

"""The decision hot path leaves no garbage: no reference cycles per review, so no cycle collections under load."""

from __future__ import annotations

import gc
import subprocess
import sys

from batchplane.webhook.decisions import Decider
from tests.conftest import REPO_ROOT
from tests.webhook.conftest import labeled, one_queue, sample

REVIEWS = 500


def test_reviews_of_multi_podset_workloads_create_no_reference_cycles() -> None:
    policy = one_queue(
        {"cpu": 64, "memory": "256Gi", "nvidia.com/gpu": 8},
        kueue_extra={"resourceFlavors": [{"name": "f"}, {"name": "g"}]},
    )
    decider = Decider(policy)
    rayjob = labeled(sample("kuberay/ray-job.pytorch-image-classifier.yaml"), "lq", "team-a")
    decider.validate(rayjob, "team-a", "CREATE")  # warm caches outside the measurement
    gc.collect()
    gc.disable()
    try:
        for _ in range(REVIEWS):
            decision = decider.validate(rayjob, "team-a", "CREATE")
        assert gc.collect() == 0  # nothing unreachable that only the cycle collector could free
    finally:
        gc.enable()
    assert decision.reason


def test_the_webhook_process_does_not_import_the_kubernetes_client() -> None:
    code = (
        "import sys; import batchplane.webhook.app, batchplane.webhook.server, batchplane.webhook.command; "
        "print(sorted(m for m in sys.modules if m == 'kubernetes' or m.startswith('kubernetes.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"

"""A GPU on a Ray head on a GKE queued-provisioning (DWS) queue: GKE rejects the request (docs/gke.md "Limits")."""

from __future__ import annotations

from typing import Any

from batchplane.webhook.decisions import Decider
from tests.explain.test_sentences import rayjob
from tests.webhook.conftest import stack_policy


def _with_head_gpus(gpus: int) -> dict[str, Any]:
    job = rayjob(1, 8)
    head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    if gpus:
        head["resources"]["requests"]["nvidia.com/gpu"] = gpus
        head["resources"].setdefault("limits", {})["nvidia.com/gpu"] = gpus
    return job


def test_a_gpu_head_beside_gpu_workers_on_the_queued_flavor_is_refused_saying_make_it_cpu_only() -> None:
    decider = Decider(stack_policy("gke-prod-dws"))
    decision = decider.validate(_with_head_gpus(8), "team-a")
    assert (decision.allowed, decision.reason) == (False, "unmergeable-podsets"), decision.message
    assert decision.message.startswith(
        "never runs: this RayJob's head pod asks for nvidia.com/gpu, so it joins the workers in the one GKE "
        "ProvisioningRequest of AdmissionCheck h100-dws, and GKE accepts a single pod group per request — make the "
        "head CPU-only (drop its nvidia.com/gpu request) or give it exactly the workers' requests."
    )
    assert decider.validate(_with_head_gpus(0), "team-a").allowed

"""A pod is judged against what a node offers pods (its allocatable), not the machine's capacity (issue #37)."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.diff.decisions import job_shape
from batchplane.webhook.decisions import Decider
from tests.webhook.conftest import stack_policy


@pytest.fixture(scope="module")
def gke_dev() -> Decider:
    return Decider(stack_policy("gke-dev"))


def _job(cpu: str, memory: str) -> dict[str, Any]:
    """One pod asking ``cpu``, ``memory`` and one L4 in team ml's queue (diff's probe Job, requests replaced)."""
    job = job_shape("ml", "default", 1)
    container = job["spec"]["template"]["spec"]["containers"][0]
    container["resources"]["requests"].update({"cpu": cpu, "memory": memory})
    return job


def test_a_pod_asking_a_whole_g2_standard_4_never_runs_and_the_sentence_names_allocatable(
    gke_dev: Decider,
) -> None:
    decision = gke_dev.validate(_job("4", "16Gi"), "ml")
    assert (decision.allowed, decision.reason) == (False, "larger-than-any-node"), decision.message
    assert decision.message.startswith(
        "never runs: one pod asks for 4 CPUs, but the largest node flavor l4-flex runs on (g2-standard-4) has "
        "3920m CPU allocatable, less what its DaemonSets request — ask for at most 3920m CPU per pod and use more "
        "pods"
    ), decision.message


def test_a_pod_within_the_g2_standard_4_allocatable_is_admitted(gke_dev: Decider) -> None:
    decision = gke_dev.validate(_job("3920m", "13Gi"), "ml")
    assert decision.allowed, decision.message


def test_memory_above_allocatable_but_within_capacity_never_runs(gke_dev: Decider) -> None:
    decision = gke_dev.validate(_job("2", "15Gi"), "ml")
    assert (decision.allowed, decision.reason) == (False, "larger-than-any-node"), decision.message
    assert "allocatable" in decision.message, decision.message

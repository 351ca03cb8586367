"""An unlabelled job is judged in the queue the cluster's mutating webhooks give it: Kueue's LocalQueue defaulting
(a LocalQueue named `default`, always on at Kueue v0.19.2) or the quota webhook's own /mutate default — so `explain`,
the webhook end to end (mutate, then validate) and the cluster give one answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.webhook.decisions import Decider
from tests.explain.workloads import workload
from tests.webhook.conftest import stack_policy


def _apply(obj: dict[str, Any], patch: Any) -> dict[str, Any]:
    """RFC 6902 ``add`` operations (all /mutate writes) applied to a copy of ``obj``."""
    out = json.loads(json.dumps(obj))
    for op in patch:
        assert op["op"] == "add"
        *parents, last = [t.replace("~1", "/").replace("~0", "~") for t in op["path"].split("/")[1:]]
        target = out
        for token in parents:
            target = target[token]
        target[last] = op["value"]
    return out


def _unlabelled_job(namespace: str, gpus: str, pods: int) -> dict[str, Any]:
    job = workload("batch/job", namespace, "x", {"cpu": "1", "nvidia.com/gpu": gpus})
    del job["metadata"]["labels"]
    job["spec"]["parallelism"] = job["spec"]["completions"] = pods
    return job


@pytest.mark.parametrize(
    ("template", "namespace", "queue"),
    [("gke-prod-dws", "team-a", "default"), ("openshift-ai-2", "test", "local-queue-test")],
)
def test_an_unlabelled_job_that_never_fits_its_defaulted_queue_is_refused_by_explain(
    tmp_path: Path, template: str, namespace: str, queue: str
) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(json.dumps(_unlabelled_job(namespace, "16", 2)))
    result = CliRunner().invoke(app, ["explain", "--stack", template, str(manifest)])
    assert result.exit_code == 1, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith(f'Job "{namespace}/job-x": never runs'), result.stdout
    assert f"LocalQueue {queue} →" in result.stdout


@pytest.mark.parametrize(("template", "namespace"), [("gke-prod-dws", "team-a"), ("openshift-ai-2", "test")])
def test_validate_of_the_unlabelled_job_equals_validate_after_mutate(template: str, namespace: str) -> None:
    decider = Decider(stack_policy(template))
    job = _unlabelled_job(namespace, "16", 2)
    mutated = decider.mutate(job, namespace)
    after = _apply(job, mutated.patch)
    if mutated.reason == "kueue-defaults":  # Kueue's own mutating webhook sets the label
        after = {**job, "metadata": {**job["metadata"], "labels": {"kueue.x-k8s.io/queue-name": "default"}}}
    before, then = decider.validate(job, namespace), decider.validate(after, namespace)
    assert (before.allowed, before.reason) == (then.allowed, then.reason) == (False, "never-admissible")
    assert before.message == then.message


def test_a_small_unlabelled_job_is_admitted_in_the_default_queue(tmp_path: Path) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(json.dumps(_unlabelled_job("team-a", "1", 1)))
    result = CliRunner().invoke(app, ["explain", "--stack", "gke-prod-dws", str(manifest)])
    assert result.exit_code == 0, result.output
    assert "admitted on" in result.stdout.splitlines()[0], result.stdout

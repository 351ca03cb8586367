"""Requests against limits, judged by the API server's own rule (kubernetes pkg/apis/core/validation/validation.go
validateResourceRequirements): a job it would refuse is never reported as admitted."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from batchplane.accounting.validity import resource_requirement_problems
from batchplane.cli import app
from tests.explain.workloads import workload


def _job(resources: dict[str, dict[str, str]]) -> dict[str, object]:
    job = workload("batch/job", "team-a", "default", {"cpu": "1"})
    job["spec"]["template"]["spec"]["containers"][0]["resources"] = resources
    return job


def test_a_cpu_request_above_its_limit_is_refused_in_the_api_servers_words() -> None:
    assert resource_requirement_problems(_job({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})) == [
        'spec.template.spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu '
        "limit of 1"
    ]


def test_a_gpu_request_must_equal_its_limit_and_a_cpu_request_below_its_limit_is_fine() -> None:
    problems = resource_requirement_problems(
        _job(
            {
                "requests": {"cpu": "500m", "nvidia.com/gpu": "1"},
                "limits": {"cpu": "1", "nvidia.com/gpu": "2"},
            }
        )
    )
    assert problems == [
        'spec.template.spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu '
        "limit of 2"
    ]


def test_equal_quantities_in_other_units_and_requests_without_limits_pass() -> None:
    assert (
        resource_requirement_problems(
            _job({"requests": {"cpu": "1000m", "memory": "1Gi"}, "limits": {"cpu": "1"}})
        )
        == []
    )


def test_explain_says_the_api_server_refuses_it_and_exits_1(tmp_path: Path) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(json.dumps(_job({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})))
    result = CliRunner().invoke(app, ["explain", "--stack", "gke-prod-dws", str(manifest)])
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[0].startswith(
        'Job "team-a/job-x": never runs: the API server refuses it'
    )


def test_a_runtime_class_the_stack_does_not_declare_is_named_in_a_webhook_warning_unless_overhead_is_given() -> (
    None
):
    from batchplane.webhook.decisions import Decider
    from tests.webhook.conftest import stack_policy

    decider = Decider(stack_policy("gke-prod-dws"))
    job = _job({"requests": {"cpu": "1"}})
    job["spec"]["template"]["spec"]["runtimeClassName"] = "kata"
    decision = decider.validate(job, "team-a")
    assert decision.allowed and decision.warnings == (
        'PodSet "main" runs with RuntimeClass "kata", which this stack does not declare: Kueue adds its pod overhead '
        "to each pod's requests, and that overhead is not counted here",
    )
    job["spec"]["template"]["spec"]["overhead"] = {"cpu": "250m"}
    assert decider.validate(job, "team-a").warnings == ()

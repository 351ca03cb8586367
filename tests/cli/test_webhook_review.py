"""`batchplane webhook review`: the AdmissionReview the API server would send, accepted by the webhook's own parser,
and — sent with `--url` to the real server over TLS on loopback — answered as the offline judgement answers it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.webhook.review import parse_review
from tests.cli.manifests import job
from tests.webhook.conftest import running_server, stack_policy, write_cert

RAYJOB = """\
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: ray}
spec:
  entrypoint: python main.py
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers: [{name: head, image: rayproject/ray:2.9.0, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
"""


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_the_printed_review_is_what_the_api_server_sends_and_the_webhook_parses(
    runner: CliRunner, tmp_path: Path
) -> None:
    manifest = tmp_path / "ray.yaml"
    manifest.write_text(RAYJOB, encoding="utf-8")
    result = runner.invoke(app, ["webhook", "review", str(manifest), "-n", "team-b"])
    assert result.exit_code == 0, result.output
    review = json.loads(result.stdout)
    request = review["request"]
    assert (review["apiVersion"], review["kind"]) == ("admission.k8s.io/v1", "AdmissionReview")
    assert request["kind"] == request["requestKind"] == {"group": "ray.io", "version": "v1", "kind": "RayJob"}
    assert request["resource"] == {"group": "ray.io", "version": "v1", "resource": "rayjobs"}
    assert (request["name"], request["namespace"], request["operation"]) == ("ray", "team-b", "CREATE")
    assert request["object"]["metadata"] == {"name": "ray", "namespace": "team-b"}
    assert "oldObject" not in request and request["userInfo"]["username"]
    assert result.stderr == (
        f"batchplane: {manifest}: document 2 (ConfigMap) is not a kind the quota webhook reviews: skipped\n"
    )
    parsed = parse_review(result.stdout.encode())
    assert (parsed.uid, parsed.operation, parsed.namespace) == (request["uid"], "CREATE", "team-b")


def test_update_sends_the_old_object_and_needs_it(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "new.yaml").write_text(job("1"), encoding="utf-8")
    (tmp_path / "old.yaml").write_text(job("1", parallelism=1), encoding="utf-8")
    new, old = str(tmp_path / "new.yaml"), str(tmp_path / "old.yaml")
    result = runner.invoke(app, ["webhook", "review", new, "--operation", "UPDATE", "--old", old])
    assert result.exit_code == 0, result.output
    request = json.loads(result.stdout)["request"]
    assert request["operation"] == "UPDATE" and request["options"]["kind"] == "UpdateOptions"
    assert request["oldObject"]["spec"]["parallelism"] == 1
    missing = runner.invoke(app, ["webhook", "review", new, "--operation", "UPDATE"])
    assert missing.exit_code == 2
    assert "--old OLD.yaml goes with --operation UPDATE" in missing.stderr


def test_insecure_is_refused_for_a_host_that_is_not_loopback(runner: CliRunner) -> None:
    result = runner.invoke(
        app, ["webhook", "review", "-", "--url", "https://webhook.example.com", "--insecure"], input=job("1")
    )
    assert result.exit_code == 2
    assert result.stderr == (
        "batchplane: --insecure is for a loopback test only, not webhook.example.com: give --ca-file\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize(("cpu", "allowed"), [("1", True), ("2", False)])
def test_the_review_sent_over_tls_gets_the_offline_judgement(
    runner: CliRunner, tmp_path: Path, cpu: str, allowed: bool
) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(job(cpu, name="train"), encoding="utf-8")
    offline = runner.invoke(app, ["webhook", "review", str(manifest), "--stack", "kind"])
    assert offline.exit_code == (0 if allowed else 1), offline.output
    offline_lines = offline.stderr.splitlines()
    assert offline_lines[0] == f"Job team-a/train (offline, stack kind): {'allowed' if allowed else 'denied'}"
    cert, key = write_cert(tmp_path / "tls", "webhook")
    with running_server(stack_policy("kind"), cert, key) as port:
        url = f"https://127.0.0.1:{port}"
        sent = runner.invoke(
            app, ["webhook", "review", str(manifest), "--stack", "kind", "--url", url, "--ca-file", str(cert)]
        )
        insecure = runner.invoke(
            app,
            ["webhook", "review", "-", "--url", url + "/validate", "--insecure"],
            input=job(cpu, name="train"),
        )
    assert sent.exit_code == insecure.exit_code == offline.exit_code, sent.output
    answer = sent.stdout.splitlines()
    assert answer[0] == f"Job team-a/train ({url}): {'allowed' if allowed else 'denied'}"
    assert answer[1:] == offline_lines[1:]  # the same reason and warnings; no "differs" note
    assert insecure.stdout.splitlines()[1:] == offline_lines[1:]
    if not allowed:
        assert answer[1].startswith("  reason: never runs: ")

"""`serve --dev`: a throwaway certificate, loopback, a curl line that gets a decision (issue #31)."""

from __future__ import annotations

import json
import re
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from batchplane.webhook.dev import sample_review
from batchplane.webhook.policy import policy_json
from tests.webhook.conftest import REPO_ROOT, stack_policy


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_serve_dev_prints_a_curl_line_whose_review_gets_a_decision_over_the_written_ca(
    tmp_path: Path,
) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(policy_json(stack_policy("kind")))
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "batchplane.webhook",
            "serve",
            "--dev",
            "--policy",
            str(policy),
            "--port",
            str(port),
        ],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline(), proc.stdout.readline(), proc.stdout.readline()]
        curl = lines[2].strip()
        match = re.fullmatch(
            r"curl --cacert (\S+) -H 'Content-Type: application/json' --data @(\S+) (https://127\.0\.0\.1:\d+)/validate",
            curl,
        )
        assert match, lines
        ca, review, base = Path(match[1]), Path(match[2]), match[3]
        assert base == f"https://127.0.0.1:{port}"
        with httpx.Client(verify=ssl.create_default_context(cafile=str(ca)), timeout=5) as client:
            deadline = time.monotonic() + 30
            while True:
                try:
                    answer = client.post(
                        f"{base}/validate",
                        content=review.read_bytes(),
                        headers={"Content-Type": "application/json"},
                    )
                    break
                except httpx.ConnectError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
        body = answer.json()
        assert answer.status_code == 200
        assert body["response"]["uid"] == json.loads(review.read_text())["request"]["uid"]
        assert body["response"]["allowed"] is True  # 1 CPU in team-a's default queue of the kind stack
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_serve_binds_loopback_unless_told_otherwise() -> None:
    from batchplane.webhook.command import DEFAULT_HOST
    from batchplane.webhook.server import DEFAULT_HOST as SERVER_DEFAULT

    assert DEFAULT_HOST == SERVER_DEFAULT == "127.0.0.1"


@pytest.mark.parametrize("extra", [["--dev", "--cert-file", "x"], []])
def test_dev_and_certificate_files_are_exclusive_and_one_is_needed(tmp_path: Path, extra: list[str]) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(policy_json(stack_policy("kind")))
    done = subprocess.run(
        [sys.executable, "-m", "batchplane.webhook", "serve", "--policy", str(policy), *extra],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "give --cert-file and --key-file, or --dev" in done.stderr


def test_the_sample_review_uses_the_first_tenant_namespace_and_its_queue() -> None:
    review = sample_review(stack_policy("gke-prod-dws"))
    obj = review["request"]["object"]
    assert (review["request"]["namespace"], obj["metadata"]["labels"]) == (
        "team-a",
        {"kueue.x-k8s.io/queue-name": "default"},
    )

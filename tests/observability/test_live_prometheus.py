"""A real Prometheus (Debian's package) on loopback scrapes a running quota webhook under a short load of
AdmissionReviews and evaluates the generated recording and alert rules: the refusal counter and the latency histogram
arrive with the labels the rules and dashboards select on, and every generated rule evaluates without error."""

from __future__ import annotations

import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from batchplane.config.observability import AlertsConfig
from batchplane.observability.alerts import AlertInputs, WebhookInputs, rule_file, rule_groups
from batchplane.observability.metrics import TARGET_LABELS, known_metric
from tests.webhook.conftest import job, one_queue, review, running_server, write_cert

REVIEWS = 60  # the load: 40 refused (8 CPUs on a 4-CPU queue), 20 admitted
DEADLINE_SECONDS = 60.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@contextmanager
def _prometheus(binary: Path, directory: Path, webhook_port: int, ca: Path) -> Iterator[str]:
    """A Prometheus scraping the webhook every second with the generated rules; yields its base URL."""
    inputs = AlertInputs(
        alerts=AlertsConfig(),
        kueue_namespace="kueue-system",
        cluster_queues=("team-a",),
        provisioning_queues=("team-a",),
        gpu_resources=("nvidia.com/gpu",),
        webhook=WebhookInputs("batchplane-system", "batchplane-quota-webhook", 3, "Fail"),
    )
    rules = rule_file(rule_groups(inputs))
    # Each generated group sets its own 1m interval, which overrides the global one: evaluated every second here,
    # the test waits for no evaluation phase (it waited 0-60 s for the first one); the expressions are the generated
    # ones unchanged.
    for group in rules["groups"]:
        group["interval"] = "1s"
    (directory / "rules.yaml").write_text(yaml.safe_dump(rules), encoding="utf-8")
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(directory / "rules.yaml")],
        "scrape_configs": [
            {
                "job_name": "batchplane-quota-webhook",
                "scheme": "https",
                "tls_config": {"ca_file": str(ca), "server_name": "localhost"},
                "static_configs": [{"targets": [f"127.0.0.1:{webhook_port}"]}],
            }
        ],
    }
    (directory / "prometheus.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    port = _free_port()
    log = (directory / "prometheus.log").open("wb")
    process = subprocess.Popen(
        [
            str(binary),
            f"--config.file={directory / 'prometheus.yml'}",
            f"--storage.tsdb.path={directory / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def _query(client: httpx.Client, base: str, expr: str) -> list[dict[str, Any]]:
    answer = client.get(f"{base}/api/v1/query", params={"query": expr}, timeout=5).json()
    assert answer["status"] == "success", answer
    result: list[dict[str, Any]] = answer["data"]["result"]
    return result


def _until(check: Any, what: str) -> Any:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        try:
            value = check()
            if value:
                return value
        except (httpx.HTTPError, KeyError):
            pass
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def test_prometheus_scrapes_the_webhook_and_evaluates_the_generated_rules(
    prometheus_binary: Path, tmp_path: Path
) -> None:
    cert, key = write_cert(tmp_path / "tls", "localhost")
    policy = one_queue({"cpu": 4}, default=True)
    with (
        running_server(policy, cert, key) as webhook_port,
        _prometheus(prometheus_binary, tmp_path, webhook_port, cert) as base,
        httpx.Client(verify=ssl.create_default_context(cafile=str(cert))) as webhook,
        httpx.Client() as client,
    ):
        _until(lambda: client.get(f"{base}/-/ready", timeout=2).status_code == 200, "Prometheus ready")

        def load(first: int, last: int) -> None:
            for i in range(first, last):
                cpu = "8" if i % 3 else "1"
                answer = webhook.post(
                    f"https://127.0.0.1:{webhook_port}/validate",
                    json=review(job(requests={"cpu": cpu}), uid=f"u{i}"),
                    timeout=5,
                ).json()
                assert answer["response"]["allowed"] is (cpu == "1")

        # two halves, a scrape between them: the counters rise between samples (a rate needs that)
        load(0, REVIEWS // 2)
        _until(
            lambda: _query(
                client, base, 'batchplane_webhook_reviews_total{decision="denied",dry_run="false"}'
            ),
            "the first half scraped",
        )
        load(REVIEWS // 2, REVIEWS)
        denied = _until(
            lambda: [
                s
                for s in _query(
                    client, base, 'batchplane_webhook_reviews_total{decision="denied",dry_run="false"}'
                )
                if float(s["value"][1]) >= REVIEWS * 2 // 3
            ],
            "the refusal counter",
        )
        assert {s["metric"]["reason"] for s in denied} == {"never-admissible"}
        buckets = _until(
            lambda: _query(client, base, 'batchplane_webhook_review_seconds_bucket{endpoint="validate"}'),
            "histogram",
        )
        assert {s["metric"]["le"] for s in buckets} >= {"0.005", "+Inf"}
        for series in [*denied, *buckets]:
            name = series["metric"]["__name__"]
            family = known_metric(name)
            assert family is not None, name
            assert set(series["metric"]) - {"__name__"} <= family.series_labels(name) | TARGET_LABELS, series
        # the recording rules the dashboards read, evaluated by this Prometheus from the scraped series
        recorded = _until(
            lambda: _query(
                client,
                base,
                'endpoint_decision_reason:batchplane_webhook_reviews:rate5m{decision="denied"} > 0',
            ),
            "the recorded review rate",
        )
        assert recorded[0]["metric"]["reason"] == "never-admissible" and float(recorded[0]["value"][1]) > 0
        p99 = _until(
            lambda: _query(client, base, "endpoint:batchplane_webhook_review_seconds:p99_5m > 0"),
            "recorded p99",
        )
        assert 0 < float(p99[0]["value"][1]) < 3

        # every generated rule loaded and evaluates (Kueue's read no series here: they are empty, not errors)
        def evaluated() -> list[dict[str, Any]]:
            groups = client.get(f"{base}/api/v1/rules", timeout=5).json()["data"]["groups"]
            done = [
                g for g in groups if all(r.get("lastEvaluation", "").startswith("20") for r in g["rules"])
            ]
            return done if len(done) == len(groups) == 2 else []  # both groups (evaluated independently)

        groups = _until(
            evaluated,
            "rule evaluation",
        )  # fmt: skip
        assert {g["name"] for g in groups} == {"batchplane-kueue", "batchplane-webhook"}
        assert [r["name"] for g in groups for r in g["rules"] if r["health"] != "ok"] == []
        # 40 of 60 reviews refused: above the 0.5 refusal ratio, the alert is pending (its `for` is 15m)
        refusing = _until(
            lambda: [a for a in client.get(f"{base}/api/v1/alerts", timeout=5).json()["data"]["alerts"]
                     if a["labels"]["alertname"] == "BatchplaneWebhookRefusing"],
            "the refusal alert",
        )  # fmt: skip
        assert refusing[0]["state"] == "pending"


@pytest.fixture(autouse=True)
def _bounded() -> Iterator[None]:
    started = time.monotonic()
    yield
    assert time.monotonic() - started < 4 * DEADLINE_SECONDS

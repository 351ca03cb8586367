"""The dashboards' queries against a real Prometheus (Debian's package) scraping a running quota webhook under load:
the webhook dashboard's refusal and latency panels return the series they are meant to draw, and every query of
every template's dashboards (both dialects) is accepted and evaluated by Prometheus itself."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest

from batchplane.observability.dashboards import dashboard_specs, grafana_dashboard
from batchplane.stack import load_stack_file
from tests.conftest import TEMPLATE_NAMES, TEMPLATES_DIR
from tests.observability.test_dashboards import grafana_queries
from tests.observability.test_live_prometheus import _prometheus, _query, _until
from tests.webhook.conftest import job, one_queue, review, running_server, write_cert

pytestmark = pytest.mark.slow

REVIEWS = 30  # 20 refused (8 CPUs on a 4-CPU queue), 10 admitted


def _evaluate(client: httpx.Client, base: str, expr: str) -> dict[str, object]:
    answer: dict[str, object] = client.get(f"{base}/api/v1/query", params={"query": expr}, timeout=5).json()
    return answer


def test_the_webhook_dashboard_draws_refusals_and_latency_and_prometheus_accepts_every_query(
    prometheus_binary: Path, tmp_path: Path
) -> None:
    cert, key = write_cert(tmp_path / "tls", "localhost")
    kind = load_stack_file(TEMPLATES_DIR / "Pulumi.kind.yaml", "kind")
    webhook_spec = next(s for s in dashboard_specs(kind) if s.kind == "webhook")
    panels = {p.title: p for p in webhook_spec.panels}
    with (
        running_server(one_queue({"cpu": 4}, default=True), cert, key) as webhook_port,
        _prometheus(prometheus_binary, tmp_path, webhook_port, cert) as base,
        httpx.Client(verify=ssl.create_default_context(cafile=str(cert))) as webhook,
        httpx.Client() as client,
    ):
        _until(lambda: client.get(f"{base}/-/ready", timeout=2).status_code == 200, "Prometheus ready")

        def load(first: int, last: int) -> None:
            for i in range(first, last):
                cpu = "8" if i % 3 else "1"
                webhook.post(
                    f"https://127.0.0.1:{webhook_port}/validate",
                    json=review(job(requests={"cpu": cpu}), uid=f"u{i}"),
                    timeout=5,
                )

        load(0, REVIEWS // 2)
        _until(lambda: _query(client, base, "batchplane_webhook_reviews_total"), "the first half scraped")
        load(REVIEWS // 2, REVIEWS)

        def panel(title: str, index: int = 0) -> str:
            return panels[title].queries[index].expr.replace("$__rate_interval", "1m")

        refusals = _until(
            lambda: [
                s for s in _query(client, base, panel("Refusals by reason")) if float(s["value"][1]) > 0
            ],
            "the refusals panel",
        )
        assert [s["metric"] for s in refusals] == [{"reason": "never-admissible"}]
        decisions = _until(
            lambda: (
                {
                    s["metric"]["decision"]
                    for s in _query(client, base, panel("Reviews by decision"))
                    if float(s["value"][1]) > 0
                }
                >= {"allowed", "denied"}
            ),
            "the decisions panel",
        )
        assert decisions
        latency = panels["Review latency vs timeoutSeconds"]
        p50, p99, timeout = (
            _until(lambda q=q: _query(client, base, q.expr.replace("$__rate_interval", "1m")), q.legend)
            for q in latency.queries
        )
        assert 0 < float(p50[0]["value"][1]) <= float(p99[0]["value"][1]) < float(timeout[0]["value"][1]) == 3

        # Prometheus parses and evaluates every query of every template's dashboards (Kueue's select nothing here)
        refused = []
        for name in TEMPLATE_NAMES:
            stack = load_stack_file(TEMPLATES_DIR / f"Pulumi.{name}.yaml", name)
            queries = [q for spec in dashboard_specs(stack) for q in grafana_queries(grafana_dashboard(spec))]
            queries += [
                (f"{spec.key} {p.title}", q.expr)
                for spec in dashboard_specs(stack, "cloud-monitoring")
                for p in spec.panels
                for q in p.queries
            ]
            for where, expr in queries:
                answer = _evaluate(client, base, expr)
                if answer["status"] != "success":
                    refused.append(f"{name} {where}: {answer.get('error')}")
        assert refused == []

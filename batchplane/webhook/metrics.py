"""Prometheus metrics of the webhook server (prometheus-client), on a registry of its own.

Each app gets its own :class:`~prometheus_client.CollectorRegistry`, so several servers (tests,
benchmarks) can live in one process. Exposed at ``/metrics`` in the text format:

* ``batchplane_webhook_reviews_total{endpoint, kind, decision, reason, dry_run}`` — reviews
  answered; ``decision`` is ``allowed``/``denied``/``patched``, ``reason`` one of the bounded
  reasons of :mod:`batchplane.webhook.decisions`; dry-run reviews are counted under
  ``dry_run="true"`` (they are reviews too, but have no effect on the cluster);
* ``batchplane_webhook_review_seconds{endpoint}`` — latency histogram of reviews (parse → response);
* ``batchplane_webhook_bad_requests_total{endpoint}`` — malformed bodies answered with HTTP 400;
* ``batchplane_webhook_certificate_reloads_total{result}`` — serving-certificate reloads
  (``ok``/``error``).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

#: Latency buckets (seconds): the API server's timeout is ≤ 5 s; reviews take well under 10 ms.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
CONTENT_TYPE = CONTENT_TYPE_LATEST


class WebhookMetrics:
    """The webhook's collectors on a private registry.

    Attributes:
        registry: the registry ``/metrics`` renders.
        reviews: counter of answered reviews.
        latency: review latency histogram.
        bad_requests: counter of HTTP 400 answers.
        certificate_reloads: counter of certificate reloads by result.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.reviews = Counter(
            "batchplane_webhook_reviews",
            "AdmissionReviews answered, by endpoint, object kind, decision and reason.",
            ("endpoint", "kind", "decision", "reason", "dry_run"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "batchplane_webhook_review_seconds",
            "Time to answer one AdmissionReview (parse, decide, encode), in seconds.",
            ("endpoint",),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.bad_requests = Counter(
            "batchplane_webhook_bad_requests",
            "Request bodies that were not AdmissionReview v1 (answered with HTTP 400).",
            ("endpoint",),
            registry=self.registry,
        )
        self.disconnects = Counter(
            "batchplane_webhook_client_disconnects",
            "Requests whose client went away before the whole body arrived (nothing was answered).",
            ("endpoint",),
            registry=self.registry,
        )
        self.event_loop = Gauge(
            "batchplane_webhook_event_loop_info",
            "The asyncio event loop implementation serving requests (1 for the one in use).",
            ("loop",),
            registry=self.registry,
        )
        self.certificate_reloads = Counter(
            "batchplane_webhook_certificate_reloads",
            "Serving certificate reloads after the files changed, by result.",
            ("result",),
            registry=self.registry,
        )
        self._reviews: dict[tuple[str, str, str, str, str], Counter] = {}
        self._latency: dict[str, Histogram] = {}

    def count_review(
        self, endpoint: str, kind: str, decision: str, reason: str, dry_run: str, seconds: float
    ) -> None:
        """Count one answered review and observe its latency. The labelled children are looked up once per label
        set and kept (every label is from a bounded set): ``labels()`` costs more than the increment itself."""
        key = (endpoint, kind, decision, reason, dry_run)
        child = self._reviews.get(key)
        if child is None:
            child = self._reviews[key] = self.reviews.labels(*key)
        child.inc()
        timer = self._latency.get(endpoint)
        if timer is None:
            timer = self._latency[endpoint] = self.latency.labels(endpoint)
        timer.observe(seconds)

    def render(self) -> bytes:
        """The registry in the Prometheus text exposition format."""
        return generate_latest(self.registry)

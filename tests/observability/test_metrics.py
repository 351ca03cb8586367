"""The metric catalog: Kueue v0.19.2's families as transcribed, the webhook's read from its registry."""

from __future__ import annotations

import re

import pytest
from prometheus_client.parser import text_string_to_metric_families

from batchplane.observability.metrics import (
    ALL_METRICS,
    KUEUE_METRICS,
    WEBHOOK_METRICS,
    known_metric,
)
from batchplane.webhook.app import create_app
from tests.webhook.conftest import AppClient, job, one_queue, review

NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def test_every_name_and_label_is_a_valid_prometheus_identifier() -> None:
    for family in ALL_METRICS.values():
        assert NAME.match(family.name), family.name
        for label in family.labels:
            assert re.match(r"^[a-zA-Z_][a-zA-Z0-9_]*$", label) and not label.startswith("__"), (
                family.name,
                label,
            )
        assert len(set(family.labels)) == len(family.labels), family.name


def test_kueue_counters_end_in_total_and_every_kueue_family_carries_replica_role_except_build_info() -> None:
    for family in KUEUE_METRICS.values():
        assert (family.type == "counter") == family.name.endswith("_total"), family.name
        assert family.name.startswith(("kueue_", "multikueue_")), family.name
        assert family.source.startswith("metrics.go:"), family.name
        if family.name != "kueue_build_info":
            assert "replica_role" in family.labels, family.name


def test_the_families_alerts_and_dashboards_rely_on_have_kueue_0_19_2_label_names() -> None:
    assert KUEUE_METRICS["kueue_pending_workloads"].labels == ("cluster_queue", "status", "replica_role")
    assert KUEUE_METRICS["kueue_cluster_queue_status"].labels == ("cluster_queue", "status", "replica_role")
    for resource_metric in ("resource_usage", "nominal_quota", "borrowing_limit", "lending_limit"):
        family = KUEUE_METRICS[f"kueue_cluster_queue_{resource_metric}"]
        assert family.labels == ("cohort", "cluster_queue", "flavor", "resource", "replica_role")
        assert family.requires == "Configuration metrics.enableClusterQueueResources: true"
    assert KUEUE_METRICS["kueue_admission_wait_time_seconds"].type == "histogram"
    assert "multikueue_workloads_dispatched_total" in KUEUE_METRICS
    assert len(KUEUE_METRICS) == 60


@pytest.mark.parametrize(
    ("series", "family"),
    [
        ("kueue_admission_wait_time_seconds_bucket", "kueue_admission_wait_time_seconds"),
        ("kueue_admission_wait_time_seconds_count", "kueue_admission_wait_time_seconds"),
        ("batchplane_webhook_review_seconds_sum", "batchplane_webhook_review_seconds"),
        ("batchplane_webhook_reviews_total", "batchplane_webhook_reviews_total"),
        ("kueue_pending_workloads", "kueue_pending_workloads"),
        ("kueue_pending_workloads_bucket", None),  # a gauge has no buckets
        ("kueue_admission_wait_time", None),
        ("batchplane_webhook_reviews", None),  # the exposed name ends in _total
        ("kueue_provisioning_requests_total", None),  # Kueue 0.19.2 exports no ProvisioningRequest metric
    ],
)
def test_known_metric_resolves_histogram_series_and_refuses_unknown_names(
    series: str, family: str | None
) -> None:
    got = known_metric(series)
    assert (got.name if got else None) == family


def test_the_webhook_catalog_is_what_its_metrics_endpoint_exposes() -> None:
    client = AppClient(create_app(one_queue({"cpu": 4}, default=True)))
    client.post("/validate", json=review(job(requests={"cpu": "8"}), uid="a"))
    client.post("/mutate", json=review(job(requests={"cpu": "1"}), uid="b"))
    client.post("/validate", content=b"nope")
    exposed = client.get("/metrics").text
    seen: set[str] = set()
    for family in text_string_to_metric_families(exposed):
        for sample in family.samples:
            if sample.name.endswith("_created"):
                continue  # prometheus-client's creation timestamps, not queried
            known = known_metric(sample.name)
            assert known is not None and known.name in WEBHOOK_METRICS, sample.name
            assert set(sample.labels) <= known.series_labels(sample.name), (sample.name, sample.labels)
            seen.add(known.name)
    assert {
        "batchplane_webhook_reviews_total",
        "batchplane_webhook_review_seconds",
        "batchplane_webhook_bad_requests_total",
    } <= seen
    assert WEBHOOK_METRICS["batchplane_webhook_reviews_total"].labels == (
        "endpoint",
        "kind",
        "decision",
        "reason",
        "dry_run",
    )

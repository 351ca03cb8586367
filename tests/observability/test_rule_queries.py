"""Every generated alert and recording rule of every template parses and names known metrics and labels — the same
check the dashboards pass (tests/support/promql.py), with the recording rules' own series added to the catalog."""

from __future__ import annotations

import pytest

from batchplane.observability.alerts import alert_inputs, rule_groups
from tests.conftest import TEMPLATE_NAMES
from tests.support.promql import Catalog, promql_problems, result_labels
from tests.support.stacks import template


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_generated_rule_parses_and_names_known_metrics_and_labels(name: str) -> None:
    rules = [rule for group in rule_groups(alert_inputs(template(name))) for rule in group.rules]
    assert rules
    catalog = Catalog(recorded={r.name: result_labels(r.expr) for r in rules if r.recording})
    problems = [f"{rule.name}: {p}" for rule in rules for p in promql_problems(rule.expr, catalog)]
    assert problems == []


def test_a_recorded_series_is_known_with_its_by_labels_only() -> None:
    expr = "sum by (cluster_queue, le) (rate(kueue_admission_wait_time_seconds_bucket[1h]))"
    labels = result_labels(f"histogram_quantile(0.95, {expr})")
    assert labels == {"cluster_queue"}
    catalog = Catalog(recorded={"cluster_queue:wait:p95": labels})
    assert promql_problems('cluster_queue:wait:p95{cluster_queue="a"}', catalog) == []
    assert promql_problems('cluster_queue:wait:p95{flavor="a"}', catalog) == [
        "cluster_queue:wait:p95 has no label 'flavor'"
    ]
    assert promql_problems("cluster_queue:wait:p95") == ["unknown metric 'cluster_queue:wait:p95'"]

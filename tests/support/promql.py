"""Check generated PromQL against the metric catalog with a maintained parser (test support, not shipped).

The parser is ``promql-parser`` (PyPI; Python bindings of GreptimeTeam's Rust ``promql-parser`` crate, which
declares compatibility with Prometheus v2.45 PromQL). :func:`promql_problems` parses one expression, walks its AST
and reports:

* a parse error;
* a vector or matrix selector whose metric name is not in the catalog (a histogram's ``_bucket``/``_sum``/``_count``
  resolve to the family: :func:`batchplane.observability.metrics.known_metric`) nor a recorded series;
* a label matcher whose label name the selected family does not carry (its own labels, ``le`` on buckets, or a label
  the scrape adds: :data:`batchplane.observability.metrics.TARGET_LABELS`);
* a grouping label (``by``/``without``, ``on``/``ignoring``, ``group_left``/``group_right``) that no selector of the
  expression carries.

Grafana's template variables are substituted first (:func:`grafana_to_promql`), as Grafana does before it sends a
query: ``$__rate_interval`` → ``5m``, ``$cluster_queue`` → the regex of the variable's values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import promql_parser

from batchplane.observability.metrics import TARGET_LABELS, MetricFamily, known_metric

#: Grafana's built-in interval variables and what the check substitutes for them.
GRAFANA_INTERVALS = {"__rate_interval": "5m", "__interval": "1m", "__range": "1h"}
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


def grafana_to_promql(expr: str, variables: Mapping[str, str]) -> str:
    """``expr`` with Grafana's ``$name`` / ``${name}`` replaced by ``variables`` or an interval; an unknown variable
    is left in place, so the parse fails on it.

    Args:
        expr: a Grafana panel or variable query.
        variables: template variable name → the text Grafana would substitute (a regex of values for a multi-value
            variable inside ``=~``).
    """

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return {**GRAFANA_INTERVALS, **variables}.get(name, match.group(0))

    return _VARIABLE.sub(replace, expr)


@dataclass(frozen=True)
class Catalog:
    """What queries may name.

    Attributes:
        resolve: series name → its family, or ``None`` (default: :func:`known_metric`).
        recorded: recording-rule series name → the labels it carries.
        target_labels: labels every scraped series may carry (default: :data:`TARGET_LABELS`).
    """

    resolve: Callable[[str], MetricFamily | None] = known_metric
    recorded: Mapping[str, frozenset[str]] = field(default_factory=dict)
    target_labels: frozenset[str] = TARGET_LABELS

    def labels_of(self, series: str) -> frozenset[str] | None:
        """The label names a series may carry, or ``None`` when the series is unknown."""
        if series in self.recorded:
            return self.recorded[series] | self.target_labels
        family = self.resolve(series)
        if family is None:
            return None
        return family.series_labels(series) | self.target_labels


def _selector_name(node: promql_parser.VectorSelector) -> str | None:
    if node.name is not None:
        return node.name
    for matcher in node.matchers.matchers:
        if matcher.name == "__name__" and str(matcher.op).endswith("Equal") and "Not" not in str(matcher.op):
            return matcher.value
    return None


def promql_problems(expr: str, catalog: Catalog | None = None) -> list[str]:
    """Every problem of one PromQL expression against ``catalog`` (empty when it parses and names only known
    metrics and labels). See the module docstring for what is checked."""
    catalog = catalog or Catalog()
    try:
        tree = promql_parser.parse(expr)
    except ValueError as exc:
        return [f"does not parse: {exc}"]
    problems: list[str] = []
    carried: set[str] = set()
    grouping: list[tuple[str, list[str]]] = []

    def visit(node: promql_parser.Expr) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            name = _selector_name(node)
            if name is None:
                problems.append(f"selector {node} names no metric")
                return
            labels = catalog.labels_of(name)
            if labels is None:
                problems.append(f"unknown metric {name!r}")
                return
            carried.update(labels)
            matchers = list(node.matchers.matchers) + [
                m for group in node.matchers.or_matchers for m in group
            ]
            for matcher in matchers:
                if matcher.name != "__name__" and matcher.name not in labels:
                    problems.append(f"{name} has no label {matcher.name!r}")
        elif isinstance(node, promql_parser.AggregateExpr) and node.modifier is not None:
            grouping.append((f"aggregation {node.modifier.type}", list(node.modifier.labels)))
        elif isinstance(node, promql_parser.BinaryExpr) and node.modifier is not None:
            if node.modifier.matching is not None:
                grouping.append(("vector matching", list(node.modifier.matching.labels)))
            grouping.append(("group modifier", list(node.modifier.group_labels or [])))

    promql_parser.walk(tree, pre_visit=visit)
    for where, labels in grouping:
        problems += [
            f"{where} on {label!r}, which no selector carries" for label in labels if label not in carried
        ]
    return problems


def result_labels(expr: str, catalog: Catalog | None = None) -> frozenset[str]:
    """The label names a recording rule's series carry: the ``by`` labels of its outermost aggregation (through
    ``histogram_quantile`` and binary operators' left side), else every label its selectors carry.

    Raises:
        ValueError: ``expr`` does not parse.
    """
    catalog = catalog or Catalog()
    node: promql_parser.Expr = promql_parser.parse(expr)
    while True:
        if isinstance(node, promql_parser.ParenExpr):
            node = node.expr
        elif isinstance(node, promql_parser.BinaryExpr):
            node = node.lhs
        elif isinstance(node, promql_parser.Call) and node.func.name == "histogram_quantile":
            node = node.args[1]
        else:
            break
    modifier = node.modifier if isinstance(node, promql_parser.AggregateExpr) else None
    if modifier is not None and str(modifier.type).endswith("By"):
        return frozenset(modifier.labels) - {"le"}
    carried: set[str] = set()

    def visit(inner: promql_parser.Expr) -> None:
        if isinstance(inner, promql_parser.VectorSelector) and (name := _selector_name(inner)) is not None:
            carried.update(catalog.labels_of(name) or ())

    promql_parser.walk(node, pre_visit=visit)
    return frozenset(carried)

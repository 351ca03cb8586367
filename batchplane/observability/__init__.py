"""Observability as code (issue #32): the metric catalog, scrape objects, alert rules and their tests' inputs.

* :mod:`~batchplane.observability.metrics` — every metric family Kueue v0.19.2 and the quota webhook export
  (name, type, label names, help), the one list queries and rules are checked against;
* :mod:`~batchplane.observability.scrape` — the scrape objects per platform (``PodMonitoring`` on GKE,
  ``ServiceMonitor`` elsewhere), pure builders;
* :mod:`~batchplane.observability.alerts` — the alert and recording rules generated from the stack, rendered as a
  Prometheus rule file, a ``PrometheusRule`` or Managed Prometheus ``Rules``.

Nothing here imports Pulumi; :mod:`batchplane.components.observability` declares the objects.
"""

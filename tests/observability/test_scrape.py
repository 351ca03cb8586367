"""The scrape objects per platform: what each monitor selects exists in what the stack (or Kueue's chart) declares,
credentials precede the monitors that name them, and the Red Hat build of Kueue's own ServiceMonitor is respected."""

from __future__ import annotations

from typing import Any

from batchplane.components.quota_webhook.manifests import service, webhook_deployment
from batchplane.observability.scrape import READER_NAME, rule_objects, scrape_inputs, scrape_objects
from batchplane.offline import read_stack_file
from batchplane.stack import Stack, load_stack, load_stack_file
from tests.conftest import STACKS_DIR


def _template(name: str) -> Stack:
    return load_stack_file(STACKS_DIR / f"Pulumi.{name}.yaml", name)


def _objects(stack: Stack) -> list[dict[str, Any]]:
    inputs = scrape_inputs(stack)
    assert inputs is not None
    return scrape_objects(inputs) + rule_objects(inputs)


def _by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_the_webhook_service_monitor_selects_the_service_and_its_named_metrics_port() -> None:
    stack = _template("kind")
    svc = service(webhook_deployment(stack))
    [monitor] = [
        m
        for m in _by_kind(_objects(stack), "ServiceMonitor")
        if m["metadata"]["namespace"] == svc["metadata"]["namespace"]
    ]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in svc["spec"]["ports"]} and endpoint["port"] == "metrics"
    assert (
        endpoint["tlsConfig"]["serverName"] == f"{svc['metadata']['name']}.{svc['metadata']['namespace']}.svc"
    )


def test_kueue_is_scraped_with_a_token_bound_to_the_charts_metrics_reader_and_credentials_come_first() -> (
    None
):
    objects = _objects(_template("gke-dev"))
    kinds = [o["kind"] for o in objects]
    assert kinds.index("Secret") < kinds.index("PodMonitoring")
    [binding] = _by_kind(objects, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == "kueue-metrics-reader"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": READER_NAME, "namespace": "kueue-system"}
    ]
    [role_binding] = _by_kind(objects, "RoleBinding")  # Managed Prometheus's collector reads the token
    assert role_binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "collector", "namespace": "gmp-system"}
    ]
    kueue = next(
        m for m in _by_kind(objects, "PodMonitoring") if m["metadata"]["namespace"] == "kueue-system"
    )
    auth = kueue["spec"]["endpoints"][0]["authorization"]["credentials"]["secret"]
    assert auth["name"] == _by_kind(objects, "Secret")[0]["metadata"]["name"]
    [rules] = _by_kind(objects, "ClusterRules")
    assert [g["name"] for g in rules["spec"]["groups"]] == ["batchplane-kueue", "batchplane-webhook"]


def test_the_red_hat_build_of_kueue_declares_its_own_kueue_scrape() -> None:
    objects = _objects(_template("openshift-ai"))
    assert [o["metadata"]["namespace"] for o in _by_kind(objects, "ServiceMonitor")] == ["batchplane-system"]
    assert not _by_kind(objects, "ClusterRoleBinding")
    assert {o["metadata"]["namespace"] for o in _by_kind(objects, "PrometheusRule")} == {
        "openshift-kueue-operator",
        "batchplane-system",
    }


def test_monitor_labels_reach_every_service_monitor_and_prometheus_rule() -> None:
    config = read_stack_file(STACKS_DIR / "Pulumi.kind.yaml")
    stack = load_stack({**config, "batchplane:observability": {"monitorLabels": {"release": "prom"}}}, "kind")
    labelled = [o for o in _objects(stack) if o["kind"] in ("ServiceMonitor", "PrometheusRule")]
    assert len(labelled) == 4 and all(o["metadata"]["labels"]["release"] == "prom" for o in labelled)


def test_no_objects_without_observability() -> None:
    config = read_stack_file(STACKS_DIR / "Pulumi.gke-dev.yaml")
    assert (
        scrape_inputs(load_stack({**config, "batchplane:observability": {"enabled": False}}, "gke-dev"))
        is None
    )

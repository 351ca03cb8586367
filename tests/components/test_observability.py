"""Observability under the mock engine: every template declares its platform's scrape objects and rules after what
they scrape; kube-prometheus-stack is installed only when asked for; ``prometheus: none`` declares nothing."""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

import pytest

from batchplane.config.observability import KUBE_PROMETHEUS_STACK_VERSIONS
from batchplane.offline import ProgramRun, read_stack_file, run_program
from batchplane.offline.model import RecordedResource
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES, TEMPLATES_DIR

TOKEN = "batchplane:observability:Observability"
MONITORING = "kubernetes:monitoring."


@cache
def _run(template: str, **observability: Any) -> ProgramRun:
    config = read_stack_file(TEMPLATES_DIR / f"Pulumi.{template}.yaml")
    if observability:
        config = {**config, "batchplane:observability": dict(observability)}
    return run_program(REPO_ROOT, template, config, preview=True)


def _kinds(run: ProgramRun) -> Counter[str]:
    return Counter(r.type.rsplit(":", 1)[-1] for r in run.resources if r.type.startswith(MONITORING))


def _subtree(run: ProgramRun, root: RecordedResource) -> list[RecordedResource]:
    children = {r.urn for r in run.resources if r.parent == root.urn}
    return [r for r in run.resources if r.urn in children]


EXPECTED = {
    "gke-dev": {"PodMonitoring": 2, "ClusterRules": 1},
    "gke-dws": {"PodMonitoring": 2, "ClusterRules": 1},
    "gke-multiregion-dws": {"PodMonitoring": 2, "ClusterRules": 1},
    "gke-prod-dws": {"PodMonitoring": 2, "ClusterRules": 1},
    "gke-a3-mega-tas": {"PodMonitoring": 2, "ClusterRules": 1},
    "kind": {"ServiceMonitor": 2, "PrometheusRule": 2},
    "openshift-ai": {"ServiceMonitor": 1, "PrometheusRule": 2},  # the Red Hat build of Kueue declares Kueue's
    "openshift-ai-2": {"ServiceMonitor": 2, "PrometheusRule": 2},
    "openshift-ai-gpu": {"ServiceMonitor": 1, "PrometheusRule": 2},
}


def test_the_expectations_cover_every_template() -> None:
    assert sorted(EXPECTED) == sorted(TEMPLATE_NAMES)


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_every_template_declares_its_platforms_scrape_objects_and_rules_after_kueue_and_the_webhook(
    template: str,
) -> None:
    run = _run(template)
    cluster = run.get("batchplane:cluster:BatchCluster", "batchplane")
    manager = [c for c in run.of_type(TOKEN) if c.parent == cluster.urn]
    assert len(manager) == 1
    children = _subtree(run, manager[0])
    assert (
        Counter(c.type.rsplit(":", 1)[-1] for c in children if c.type.startswith(MONITORING))
        == EXPECTED[template]
    )
    # every cluster of the program (MultiKueue workers too) has its own, and nothing else declares monitoring objects
    clusters = run.of_type("batchplane:cluster:BatchCluster")
    assert len(run.of_type(TOKEN)) == len(clusters)
    owned = {c.urn for o in run.of_type(TOKEN) for c in run.children(o.urn)}
    assert {r.urn for r in run.resources if r.type.startswith(MONITORING)} <= owned
    webhook = next(r for r in run.of_type("batchplane:admission:QuotaWebhook") if r.parent == cluster.urn)
    webhook_children = {r.urn for r in run.children(webhook.urn)}
    for child in children:
        assert set(child.dependencies) & webhook_children, (
            child.name
        )  # after the webhook (its namespace, Service)
        assert child.provider is not None and "kubernetes" in child.provider


def test_kube_prometheus_stack_is_installed_pinned_only_when_asked_and_selects_every_monitor() -> None:
    assert not _run("kind").of_type("kubernetes:helm.sh/v3:Release") or all(
        "kube-prometheus-stack" not in r.inputs["chart"]
        for r in _run("kind").of_type("kubernetes:helm.sh/v3:Release")
    )
    run = _run("kind", prometheus="kube-prometheus-stack")
    release = next(
        r
        for r in run.of_type("kubernetes:helm.sh/v3:Release")
        if r.inputs["chart"] == "kube-prometheus-stack"
    )
    assert release.inputs["version"] == KUBE_PROMETHEUS_STACK_VERSIONS[0]
    assert release.inputs["repositoryOpts"]["repo"] == "https://prometheus-community.github.io/helm-charts"
    spec = release.inputs["values"]["prometheus"]["prometheusSpec"]
    assert (
        spec["serviceMonitorSelectorNilUsesHelmValues"] is False
        and spec["ruleSelectorNilUsesHelmValues"] is False
    )
    monitors = [r for r in run.resources if r.type.startswith(MONITORING)]
    assert monitors and all(release.urn in r.dependencies for r in monitors)


def test_prometheus_none_declares_no_monitoring_object() -> None:
    run = _run("kind", prometheus="none")
    assert _kinds(run) == Counter() and run.of_type(TOKEN) == []

"""``batchplane:observability`` in a whole stack: its rules against the rest of the stack (all errors at once) and
the Kueue Configuration it switches the ClusterQueue resource metrics on in."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.offline import read_stack_file
from batchplane.stack import Stack, load_stack
from tests.conftest import STACKS_DIR


def _load(template: str, **sections: Any) -> Stack:
    config = read_stack_file(STACKS_DIR / f"Pulumi.{template}.yaml")
    return load_stack({**config, **{f"batchplane:{k}": v for k, v in sections.items()}}, template)


def test_an_override_for_an_unknown_cluster_queue_and_a_prometheus_choice_on_gke_are_both_reported() -> None:
    with pytest.raises(ConfigValidationError) as caught:
        _load(
            "gke-dev",
            observability={"prometheus": "kube-prometheus-stack", "alerts": {"clusterQueues": {"nope": {}}}},
        )
    issues = {(i.path, i.message) for i in caught.value.issues if i.severity == "error"}
    assert issues == {
        (
            "batchplane:observability.prometheus",
            "target kind gke collects metrics with managed-prometheus: remove observability.prometheus (it chooses "
            "the Prometheus on kind and existing clusters)",
        ),
        (
            "batchplane:observability.alerts.clusterQueues.nope",
            '"nope" is not a ClusterQueue of this stack (declared: ml)',
        ),
    }


@pytest.mark.parametrize(
    ("bad", "path"),
    [
        ({"scrapeInterval": "soon"}, "batchplane:observability.scrapeInterval"),
        (
            {"alerts": {"webhook": {"refusalRatio": 1.5}}},
            "batchplane:observability.alerts.webhook.refusalRatio",
        ),
        (
            {"kubePrometheusStack": {"version": "70.0.0"}},
            "batchplane:observability.kubePrometheusStack.version",
        ),
        (
            {"alerts": {"queues": {"pendingTooLong": "0m"}}},
            "batchplane:observability.alerts.queues.pendingTooLong",
        ),
        ({"alert": {}}, "batchplane:observability.alert"),
    ],
)
def test_bad_observability_values_name_their_key(bad: dict[str, Any], path: str) -> None:
    with pytest.raises(ConfigValidationError) as caught:
        _load("kind", observability=bad)
    assert [i.path for i in caught.value.issues if i.severity == "error"] == [path]


def _cq_resources(stack: Stack) -> bool:
    assert stack.config.operators is not None
    return stack.config.operators.kueue.configuration.metrics.enable_cluster_queue_resources


def test_cluster_queue_resource_metrics_follow_observability_unless_set() -> None:
    assert _cq_resources(_load("kind")) is True
    assert _cq_resources(_load("kind", observability={"enabled": False})) is False
    config = read_stack_file(STACKS_DIR / "Pulumi.kind.yaml")
    ops = config["batchplane:operators"]
    kueue = {**ops.get("kueue", {}), "configuration": {"metrics": {"enableClusterQueueResources": False}}}
    explicit = load_stack({**config, "batchplane:operators": {**ops, "kueue": kueue}}, "kind")
    assert _cq_resources(explicit) is False

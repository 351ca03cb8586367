"""A priority class the stack does not declare is warned about (Kueue builds no Workload while it is missing)."""

from __future__ import annotations

from typing import Any

import yaml

from batchplane.explain.offline import OfflineExplainer, render_text
from batchplane.stack import load_stack
from batchplane.webhook.decisions import Decider
from tests.conftest import REPO_ROOT

KIND = yaml.safe_load((REPO_ROOT / "templates" / "Pulumi.kind.yaml").read_text())["config"]
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


def _stack(classes: list[str]) -> Any:
    raw = dict(KIND)
    kueue = dict(raw["batchplane:kueue"])
    kueue["workloadPriorityClasses"] = [{"name": n, "value": 100 * (i + 1)} for i, n in enumerate(classes)]
    raw["batchplane:kueue"] = kueue
    return load_stack(raw, "test")


def _explainer(classes: list[str]) -> OfflineExplainer:
    return OfflineExplainer(_stack(classes))


def _pytorchjob(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "containers": [{"name": "main", "image": "python:3.12", "resources": {"requests": {"cpu": "1"}}}]
    }
    pod.update(spec.pop("pod", {}))
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {
            "name": "train",
            "namespace": "team-a",
            "labels": {"kueue.x-k8s.io/queue-name": "default", **(labels or {})},
        },
        "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": pod}}}, **spec},
    }


def _decider(classes: list[str]) -> Decider:
    return _explainer(classes).decider


def test_the_policy_document_carries_the_declared_workload_priority_classes() -> None:
    assert _decider(["low", "high"]).policy.kueue.workload_priority_classes == ["high", "low"]


def test_an_undeclared_workload_priority_class_label_is_warned_naming_the_declared_ones() -> None:
    decision = _decider(["low", "high"]).validate(_pytorchjob({PRIORITY_LABEL: "urgent"}), "team-a")
    assert decision.allowed
    (warning,) = [w for w in decision.warnings if "urgent" in w]
    assert warning.startswith(
        'WorkloadPriorityClass "urgent" (kueue.x-k8s.io/priority-class) is not declared'
    )
    assert "declared WorkloadPriorityClasses: high, low" in warning


def test_a_declared_workload_priority_class_gets_no_warning() -> None:
    decision = _decider(["high"]).validate(_pytorchjob({PRIORITY_LABEL: "high"}), "team-a")
    assert decision.allowed and not decision.warnings, decision.warnings


def test_an_undeclared_pod_priority_class_name_is_warned() -> None:
    decision = _decider(["high"]).validate(_pytorchjob(pod={"priorityClassName": "urgent"}), "team-a")
    assert any(
        w.startswith('PriorityClass "urgent" (priorityClassName) is not declared') for w in decision.warnings
    )


def test_the_frameworks_own_priority_class_field_is_warned_too() -> None:
    obj = _pytorchjob(runPolicy={"schedulingPolicy": {"priorityClass": "urgent"}})
    decision = _decider(["high"]).validate(obj, "team-a")
    assert any('PriorityClass "urgent"' in w for w in decision.warnings), decision.warnings


def test_a_priority_class_every_cluster_has_gets_no_warning() -> None:
    obj = _pytorchjob(pod={"priorityClassName": "system-cluster-critical"})
    assert not _decider([]).validate(obj, "team-a").warnings


def test_explain_prints_the_undeclared_priority_class_line() -> None:
    explainer = _explainer(["high"])
    text = render_text([explainer.explain(_pytorchjob({PRIORITY_LABEL: "urgent"}))])
    assert '  warning: WorkloadPriorityClass "urgent"' in text, text
    assert "declared WorkloadPriorityClasses: high" in text

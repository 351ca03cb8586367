"""MCAD AppWrapper → v1beta2: MCAD's own GLUE example in both API versions, accounting as Kueue accounts the
result, the custompodresources disagreement warnings and every field that cannot be converted."""

from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from batchplane.accounting import workload_requests
from batchplane.appwrapper import ConversionError, convert
from tests.conftest import SHARED
from tests.support.crdcheck import CrdCatalog

MCAD = SHARED / "reference" / "mcad"
#: MCAD's repository copy (workload.codeflare.dev/v1beta1, worker 1 GPU) and the walkthrough's (mcad.ibm.com, 2 GPU).
GLUE = MCAD / "aw-kuberay-glue.yaml"
GLUE_BLOG = MCAD / "aw-kuberay-glue.mcad-ibm-com.yaml"


def load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


@pytest.mark.parametrize(
    "path", [GLUE, GLUE_BLOG], ids=["workload-codeflare-dev-v1beta1", "mcad-ibm-com-v1beta1"]
)
def test_glue_example_converts_to_a_v1beta2_appwrapper_the_crds_accept(
    path: Path, catalog: CrdCatalog
) -> None:
    result = convert(load(path), queue_name="team-a-queue")
    aw = result.appwrapper
    assert aw["apiVersion"] == "workload.codeflare.dev/v1beta2"
    assert aw["metadata"] == {
        "name": "raycluster-glue",
        "namespace": "default",
        "labels": {"kueue.x-k8s.io/queue-name": "team-a-queue"},
    }
    [component] = aw["spec"]["components"]
    assert component["podSets"] == [
        {"path": "template.spec.headGroupSpec.template", "replicas": 1},
        {"path": "template.spec.workerGroupSpecs[0].template", "replicas": 1},
    ]
    assert component["template"]["apiVersion"] == "ray.io/v1"
    assert component["template"]["kind"] == "RayCluster"
    assert catalog.validate(aw) == []
    wrapped = {**component["template"], "metadata": {"name": "glue-cluster", "namespace": "default"}}
    assert catalog.validate(wrapped) == []
    assert any("ray.io/v1alpha1 rewritten to ray.io/v1" in w for w in result.warnings)
    assert any(w.startswith("spec.priority: 9 dropped") for w in result.warnings)


def test_repository_glue_example_accounts_the_wrapped_pods_and_warns_the_gpu_disagreement() -> None:
    result = convert(load(GLUE), queue_name="q")
    workload = workload_requests(result.appwrapper)
    assert [(ps.name, ps.count) for ps in workload.pod_sets] == [
        ("raycluster-glue-0", 1),
        ("raycluster-glue-1", 1),
    ]
    assert workload.total == {"cpu": Decimal(6), "memory": Decimal(32 * 10**9), "nvidia.com/gpu": Decimal(1)}
    [disagreement] = [w for w in result.warnings if w.startswith("custompodresources")]
    assert "nvidia.com/gpu 2 vs 1" in disagreement
    assert "cpu" not in disagreement.split(":", 1)[1]


def test_walkthrough_glue_example_agrees_in_total_but_warns_the_pod_shapes() -> None:
    result = convert(load(GLUE_BLOG), queue_name="q")
    assert workload_requests(result.appwrapper).total["nvidia.com/gpu"] == 2
    [shape] = [w for w in result.warnings if w.startswith("custompodresources")]
    assert "not their shape" in shape
    assert "2 × {cpu=3 memory=16G nvidia.com/gpu=1} declared" in shape


def test_explicit_pod_sets_account_as_kueue_accounts_the_inferred_ones() -> None:
    """The converter writes the PodSets the AppWrapper defaulting webhook would infer: same Kueue accounting."""
    aw = convert(load(GLUE), queue_name="q").appwrapper
    inferred = copy.deepcopy(aw)
    del inferred["spec"]["components"][0]["podSets"]
    explicit, implicit = workload_requests(aw), workload_requests(inferred)
    assert [(p.name, p.count, p.stored) for p in explicit.pod_sets] == [
        (p.name, p.count, p.stored) for p in implicit.pod_sets
    ]


def test_matching_custompodresources_give_no_disagreement_warning() -> None:
    obj = load(GLUE)
    obj["spec"]["resources"]["GenericItems"][0]["custompodresources"] = [
        {"replicas": 1, "requests": {"cpu": 2, "memory": "16G", "nvidia.com/gpu": 0}},
        {"replicas": 1, "requests": {"cpu": 4, "memory": "16G"}, "limits": {"nvidia.com/gpu": 1}},
    ]
    result = convert(obj, queue_name="q", priority_class="high")
    assert not [w for w in result.warnings if "custompodresources" in w]
    assert result.appwrapper["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "high"


def test_every_unconvertible_field_is_named_at_once() -> None:
    obj = load(GLUE)
    spec = obj["spec"]
    spec["service"] = {"spec": {"ports": [{"port": 8265}]}}
    spec["selector"] = {"matchLabels": {"a": "b"}}
    spec["schedulingSpec"] = {"minAvailable": 1, "nodeSelector": {"zone": "a"}, "dispatchingWindow": {"x": 1}}
    spec["resources"]["Items"] = [{"replicas": 1, "type": "Pod", "template": {}}]
    spec["resources"]["GenericItems"][0]["bogus"] = True
    spec["resources"]["GenericItems"][0]["generictemplate"]["metadata"]["namespace"] = "elsewhere"
    with pytest.raises(ConversionError) as info:
        convert(obj)
    fields = sorted(problem.split(":", 1)[0] for problem in info.value.problems)
    assert fields == [
        "spec.resources.GenericItems[0].bogus",
        "spec.resources.GenericItems[0].generictemplate.metadata.namespace",
        "spec.resources.Items",
        "spec.schedulingSpec.dispatchingWindow",
        "spec.schedulingSpec.minAvailable",
        "spec.schedulingSpec.nodeSelector",
        "spec.selector",
        "spec.service",
    ]


def test_min_available_of_every_pod_and_a_dispatch_limit_convert() -> None:
    obj = load(GLUE)
    obj["spec"]["schedulingSpec"] = {
        "minAvailable": 2,
        "dispatchDuration": {"limit": 3600},
        "requeuing": {"timeInSeconds": 300, "growthType": "exponential"},
    }
    result = convert(obj, queue_name="q")
    assert result.appwrapper["metadata"]["labels"]["kueue.x-k8s.io/max-exec-time-seconds"] == "3600"
    assert any(w.startswith("spec.schedulingSpec.requeuing: dropped") for w in result.warnings)


def test_a_kind_without_pods_but_with_reserved_pods_cannot_be_converted() -> None:
    obj = load(GLUE)
    obj["spec"]["resources"]["GenericItems"][0]["generictemplate"] = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "t"},
        "spec": {"size": 3},
    }
    with pytest.raises(ConversionError, match=r"GenericItems\[0\]\.generictemplate: no pod template found"):
        convert(obj)


def test_missing_queue_label_is_warned() -> None:
    result = convert(load(GLUE))
    assert "labels" not in result.appwrapper["metadata"]
    assert any(w.startswith("metadata.labels.kueue.x-k8s.io/queue-name: not set") for w in result.warnings)


def _deployment(name: str, replicas: int, cpu: int, gpu: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "i",
                            "resources": {"requests": {"cpu": cpu, "nvidia.com/gpu": gpu}},
                        }
                    ]
                },
            },
        },
    }


ITEM = st.tuples(st.integers(0, 4), st.integers(1, 8), st.integers(0, 4), st.integers(-1, 1))


@settings(max_examples=60, deadline=None)
@given(st.lists(ITEM, min_size=1, max_size=4))
def test_disagreement_warned_exactly_when_declared_gpus_differ(
    items: list[tuple[int, int, int, int]],
) -> None:
    """Deployments with GPU requests; custompodresources declare each pod with ``gpu + skew`` GPUs."""
    generic = []
    for index, (replicas, cpu, gpu, skew) in enumerate(items):
        declared = max(gpu + skew, 0)
        generic.append(
            {
                "replicas": 1,
                "generictemplate": _deployment(f"d{index}", replicas, cpu, gpu),
                "custompodresources": [
                    {"replicas": replicas, "requests": {"cpu": cpu, "nvidia.com/gpu": declared}}
                ],
            }
        )
    obj = {
        "apiVersion": "workload.codeflare.dev/v1beta1",
        "kind": "AppWrapper",
        "metadata": {"name": "gen", "namespace": "team-a"},
        "spec": {"resources": {"GenericItems": generic}},
    }
    result = convert(obj, queue_name="q")
    declared_gpus = sum(r * max(g + s, 0) for r, _, g, s in items)
    real_gpus = sum(r * g for r, _, g, _ in items)
    total = workload_requests(result.appwrapper).total
    assert total.get("nvidia.com/gpu", 0) == real_gpus
    assert total.get("cpu", 0) == sum(r * c for r, c, _, _ in items)
    disagreements = [w for w in result.warnings if w.startswith("custompodresources disagree")]
    assert bool(disagreements) == (declared_gpus != real_gpus)

"""Per-pod requests: overhead, LimitRange defaults, limits→requests, PodRequests, options, rounding.

Expected values are the worked examples of ``shared/docs/kueue-accounting.md`` §1 (which cite the
upstream tests) or computed by hand in the comments.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from batchplane.accounting import (
    AccountingError,
    ResourceOptions,
    ResourceTransformation,
    workload_requests,
)
from tests.accounting.conftest import Gi, Mi, batch_job, container, pod_template


def per_pod(template: dict[str, Any], **kwargs: Any) -> dict[str, Decimal]:
    """Per-pod requests of a one-pod batch Job in namespace team-a running ``template``."""
    return workload_requests(batch_job(template), **kwargs).pod_sets[0].per_pod


def cpu(value: str) -> dict[str, Any]:
    return {"cpu": value}


# §1.4 worked examples (component-helpers v0.36.2 TestPodResourceRequests); cpu in cores.
POD_REQUESTS_CASES = [
    ("init-4-container-1", pod_template(container(cpu("1")), init=(container(cpu("4")),)), {"cpu": 4}),
    (
        "init-2-containers-2-and-3",
        pod_template(container(cpu("2")), container(cpu("3")), init=(container(cpu("2")),)),
        {"cpu": 5},
    ),
    (
        "init-2-containers-2-and-3-plus-overhead",
        pod_template(
            container(cpu("2")),
            container(cpu("3")),
            init=(container(cpu("2")),),
            overhead={"cpu": "1", "memory": "1Gi"},
        ),
        {"cpu": 6, "memory": Gi},
    ),
    (
        "sidecar-1-container-1",
        pod_template(container(cpu("1")), init=(container(cpu("1"), sidecar=True),)),
        {"cpu": 2},
    ),
    (
        "init-5-then-sidecars-1-2-3-container-1",
        pod_template(
            container(cpu("1")),
            init=(
                container(cpu("5")),
                container(cpu("1"), sidecar=True),
                container(cpu("2"), sidecar=True),
                container(cpu("3"), sidecar=True),
            ),
        ),
        {"cpu": 7},  # max(5, 1 + 2 + 3 + 1)
    ),
    (
        "init-5-sidecars-1-2-init-5-sidecar-3-container-1",
        pod_template(
            container(cpu("1")),
            init=(
                container(cpu("5")),
                container(cpu("1"), sidecar=True),
                container(cpu("2"), sidecar=True),
                container(cpu("5")),
                container(cpu("3"), sidecar=True),
            ),
        ),
        {"cpu": 8},  # second init runs beside sidecars 1 and 2: 5 + 1 + 2
    ),
    (
        "sidecar-10-init-200-container-100",
        pod_template(container(cpu("100")), init=(container(cpu("10"), sidecar=True), container(cpu("200")))),
        {"cpu": 210},
    ),
]


@pytest.mark.parametrize(
    ("template", "exp_per_pod"), [c[1:] for c in POD_REQUESTS_CASES], ids=[c[0] for c in POD_REQUESTS_CASES]
)
def test_pod_requests_match_component_helpers_examples(
    template: dict[str, Any], exp_per_pod: dict[str, int]
) -> None:
    assert per_pod(template) == {k: Decimal(v) for k, v in exp_per_pod.items()}


RUNTIME_CLASS = {
    "apiVersion": "node.k8s.io/v1",
    "kind": "RuntimeClass",
    "metadata": {"name": "kata"},
    "handler": "kata",
    "overhead": {"podFixed": {"cpu": "1"}},
}

OVERHEAD_CASES = [
    # workload_controller_test.go:189-298: request 1 + RuntimeClass overhead 1 = 2.
    ("runtime-class-overhead-is-added", {"runtimeClassName": "kata"}, {"cpu": 2}),
    # ... and a RuntimeClass that does not exist contributes nothing.
    ("missing-runtime-class-adds-nothing", {"runtimeClassName": "gvisor"}, {"cpu": 1}),
    # An overhead already in the template is kept, not checked against the RuntimeClass.
    (
        "template-overhead-is-kept",
        {"runtimeClassName": "kata", "overhead": {"cpu": "250m"}},
        {"cpu": Decimal("1.25")},
    ),
]


@pytest.mark.parametrize(
    ("spec", "exp_per_pod"), [c[1:] for c in OVERHEAD_CASES], ids=[c[0] for c in OVERHEAD_CASES]
)
def test_runtime_class_overhead_applies_only_without_template_overhead(
    spec: dict[str, Any], exp_per_pod: dict[str, Any]
) -> None:
    template = pod_template(container(cpu("1")), **spec)
    assert per_pod(template, runtime_classes=[RUNTIME_CLASS]) == {
        k: Decimal(v) for k, v in exp_per_pod.items()
    }


def limit_range(name: str, *items: dict[str, Any], namespace: str = "team-a") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"limits": list(items)},
    }


LIMIT_RANGE_CASES = [
    (
        "default-request-fills-missing-requests",
        [
            limit_range(
                "lr", {"type": "Container", "default": {"cpu": "2"}, "defaultRequest": {"cpu": "500m"}}
            )
        ],
        pod_template(container()),
        {"cpu": Decimal("0.5")},
    ),
    (
        # Kueue fills defaultRequest before copying limits to requests, so the LimitRange wins.
        "default-request-beats-the-containers-own-limit",
        [limit_range("lr", {"type": "Container", "defaultRequest": {"cpu": "500m"}})],
        pod_template(container(limits={"cpu": "3"})),
        {"cpu": Decimal("0.5")},
    ),
    (
        # API-server defaulting of the LimitRange: defaultRequest ← default.
        "default-alone-becomes-the-request",
        [limit_range("lr", {"type": "Container", "default": {"memory": "1Gi"}})],
        pod_template(container(cpu("1"))),
        {"cpu": Decimal(1), "memory": Decimal(Gi)},
    ),
    (
        # API-server defaulting: default ← max, then defaultRequest ← default.
        "max-alone-becomes-default-and-request",
        [limit_range("lr", {"type": "Container", "max": {"cpu": "4"}})],
        pod_template(container()),
        {"cpu": Decimal(4)},
    ),
    (
        "min-alone-becomes-the-request",
        [limit_range("lr", {"type": "Container", "min": {"cpu": "100m"}})],
        pod_template(container()),
        {"cpu": Decimal("0.1")},
    ),
    (
        "explicit-request-is-kept",
        [limit_range("lr", {"type": "Container", "defaultRequest": {"cpu": "500m"}})],
        pod_template(container(cpu("2"))),
        {"cpu": Decimal(2)},
    ),
    (
        "limit-range-of-other-namespace-is-ignored",
        [limit_range("lr", {"type": "Container", "defaultRequest": {"cpu": "500m"}}, namespace="team-b")],
        pod_template(container()),
        {},
    ),
    (
        "first-limit-range-by-name-wins",
        [
            limit_range("b-late", {"type": "Container", "defaultRequest": {"cpu": "2"}}),
            limit_range("a-early", {"type": "Container", "defaultRequest": {"cpu": "1"}}),
        ],
        pod_template(container()),
        {"cpu": Decimal(1)},
    ),
    (
        "init-containers-get-defaults-too",
        [limit_range("lr", {"type": "Container", "defaultRequest": {"cpu": "1"}})],
        pod_template(container(cpu("1")), init=(container(),)),
        {"cpu": Decimal(1)},  # max(init 1, container 1)
    ),
    (
        # resources_test.go:261-299: a Pod item never adds to a template without pod-level resources.
        "pod-item-ignored-without-pod-level-resources",
        [limit_range("lr", {"type": "Pod", "defaultRequest": {"cpu": "3"}})],
        pod_template(container(cpu("1"))),
        {"cpu": Decimal(1)},
    ),
    (
        "pod-item-fills-pod-level-resources",
        [limit_range("lr", {"type": "Pod", "defaultRequest": {"cpu": "3"}})],
        pod_template(container(cpu("1")), resources={"limits": {"memory": "1Gi"}}),
        {"cpu": Decimal(3), "memory": Decimal(Gi)},
    ),
]


@pytest.mark.parametrize(
    ("limit_ranges", "template", "exp_per_pod"),
    [c[1:] for c in LIMIT_RANGE_CASES],
    ids=[c[0] for c in LIMIT_RANGE_CASES],
)
def test_limit_range_defaults_follow_kueue(
    limit_ranges: list[dict[str, Any]], template: dict[str, Any], exp_per_pod: dict[str, Decimal]
) -> None:
    assert per_pod(template, limit_ranges=limit_ranges) == exp_per_pod


LIMITS_CASES = [
    (
        "limit-becomes-missing-request",
        container(limits={"nvidia.com/gpu": "1"}),
        {"nvidia.com/gpu": Decimal(1)},
    ),
    (
        "explicit-request-is-not-raised-to-limit",
        container({"cpu": "1"}, {"cpu": "2", "memory": "1Gi"}),
        {"cpu": Decimal(1), "memory": Decimal(Gi)},
    ),
]


@pytest.mark.parametrize(
    ("one", "exp_per_pod"), [c[1:] for c in LIMITS_CASES], ids=[c[0] for c in LIMITS_CASES]
)
def test_limits_fill_only_missing_requests(one: dict[str, Any], exp_per_pod: dict[str, Decimal]) -> None:
    assert per_pod(pod_template(one)) == exp_per_pod


POD_LEVEL_CASES = [
    (
        "pod-level-cpu-replaces-container-sum",
        {"requests": {"cpu": "4"}},
        {"cpu": Decimal(4), "memory": Decimal(2 * Gi), "nvidia.com/gpu": Decimal(2)},
    ),
    (
        "pod-level-memory-limit-becomes-request",
        {"limits": {"memory": "8Gi"}},
        {"cpu": Decimal(2), "memory": Decimal(8 * Gi), "nvidia.com/gpu": Decimal(2)},
    ),
    (
        # Only cpu, memory and hugepages-* are pod-level resources; a GPU keeps the container sum.
        "pod-level-extended-resource-is-ignored",
        {"requests": {"nvidia.com/gpu": "8"}},
        {"cpu": Decimal(2), "memory": Decimal(2 * Gi), "nvidia.com/gpu": Decimal(2)},
    ),
]


@pytest.mark.parametrize(
    ("resources", "exp_per_pod"), [c[1:] for c in POD_LEVEL_CASES], ids=[c[0] for c in POD_LEVEL_CASES]
)
def test_pod_level_resources_replace_supported_resources(
    resources: dict[str, Any], exp_per_pod: dict[str, Decimal]
) -> None:
    one = container({"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"})
    assert per_pod(pod_template(one, dict(one, name="d"), resources=resources)) == exp_per_pod


GPU_TRANSFORM = ResourceTransformation(
    input="nvidia.com/gpu",
    outputs={"example.com/accelerator-memory": Decimal(40 * 1024), "example.com/credits": Decimal(100)},
)

OPTIONS_CASES = [
    (
        "exclude-prefix-drops-resource",
        ResourceOptions(exclude_resource_prefixes=("example.com/",)),
        {"cpu": "1", "example.com/foo": "3"},
        {"cpu": Decimal(1)},
    ),
    (
        # pkg/workload/workload_test.go:608-715: nvidia.com/gpu 1 with Retain.
        "retain-transformation-keeps-input",
        ResourceOptions(transformations=(GPU_TRANSFORM,)),
        {"nvidia.com/gpu": "1"},
        {
            "example.com/accelerator-memory": Decimal(40 * 1024),
            "example.com/credits": Decimal(100),
            "nvidia.com/gpu": 1,
        },
    ),
    (
        "replace-transformation-drops-input",
        ResourceOptions(
            transformations=(ResourceTransformation("nvidia.com/gpu", GPU_TRANSFORM.outputs, "Replace"),)
        ),
        {"nvidia.com/gpu": "2"},
        {"example.com/accelerator-memory": Decimal(80 * 1024), "example.com/credits": Decimal(200)},
    ),
    (
        # 30 cores per vGPU × 2 vGPUs = 60.
        "multiply-by-scales-the-input",
        ResourceOptions(
            transformations=(
                ResourceTransformation(
                    "nvidia.com/vgpucores",
                    {"nvidia.com/total-vgpucores": Decimal(1)},
                    "Replace",
                    "nvidia.com/vgpu",
                ),
            )
        ),
        {"nvidia.com/vgpucores": "30", "nvidia.com/vgpu": "2"},
        {"nvidia.com/total-vgpucores": Decimal(60), "nvidia.com/vgpu": Decimal(2)},
    ),
    (
        # Upstream keeps the multiplied quantity when the strategy is Retain.
        "multiply-by-with-retain-keeps-multiplied-input",
        ResourceOptions(
            transformations=(
                ResourceTransformation(
                    "example.com/a", {"example.com/b": Decimal(1)}, "Retain", "example.com/n"
                ),
            )
        ),
        {"example.com/a": "3", "example.com/n": "2"},
        {"example.com/a": Decimal(6), "example.com/b": Decimal(6), "example.com/n": Decimal(2)},
    ),
    (
        # Outputs multiply the input's integer value rounded up: 500m → 1.
        "transformation-rounds-input-up",
        ResourceOptions(
            transformations=(ResourceTransformation("cpu", {"example.com/credits": Decimal(10)}),)
        ),
        {"cpu": "500m"},
        {"cpu": Decimal("0.5"), "example.com/credits": Decimal(10)},
    ),
    (
        "outputs-of-two-inputs-are-summed",
        ResourceOptions(
            transformations=(
                ResourceTransformation("example.com/x", {"example.com/credits": Decimal(10)}, "Replace"),
                ResourceTransformation("example.com/y", {"example.com/credits": Decimal(5)}, "Replace"),
            )
        ),
        {"example.com/x": "1", "example.com/y": "2"},
        {"example.com/credits": Decimal(20)},
    ),
    (
        "exclusion-runs-before-transformation",
        ResourceOptions(exclude_resource_prefixes=("nvidia.com/",), transformations=(GPU_TRANSFORM,)),
        {"nvidia.com/gpu": "1"},
        {},
    ),
]


@pytest.mark.parametrize(
    ("options", "requests", "exp_per_pod"), [c[1:] for c in OPTIONS_CASES], ids=[c[0] for c in OPTIONS_CASES]
)
def test_configuration_resources_exclude_then_transform(
    options: ResourceOptions, requests: dict[str, str], exp_per_pod: dict[str, Decimal]
) -> None:
    assert per_pod(pod_template(container(requests)), options=options) == exp_per_pod


ROUNDING_CASES = [
    ("cpu-rounds-up-to-millicore", {"cpu": "0.0001"}, {"cpu": Decimal("0.001")}),
    ("memory-rounds-up-to-byte", {"memory": "1.5"}, {"memory": Decimal(2)}),
    ("decimal-suffix-memory-is-exact", {"memory": "2G"}, {"memory": Decimal(2_000_000_000)}),
    ("zero-request-is-kept", {"cpu": "0"}, {"cpu": Decimal(0)}),
    ("binary-suffix-memory-is-exact", {"memory": "256Mi"}, {"memory": Decimal(256 * Mi)}),
]


@pytest.mark.parametrize(
    ("requests", "exp_per_pod"), [c[1:] for c in ROUNDING_CASES], ids=[c[0] for c in ROUNDING_CASES]
)
def test_requests_are_rounded_like_kueue_stores_them(
    requests: dict[str, str], exp_per_pod: dict[str, Decimal]
) -> None:
    assert per_pod(pod_template(container(requests))) == exp_per_pod


ERROR_CASES = [
    (
        "bad-quantity",
        batch_job(pod_template(container({"cpu": "lots"}))),
        'Job "job": spec.template.spec.containers[0].resources.requests[cpu]: '
        '"lots" is not a Kubernetes quantity',
    ),
    (
        "containers-not-a-list",
        batch_job({"spec": {"containers": {"name": "x"}}}),
        'Job "job": spec.template.spec.containers: must be a list',
    ),
    (
        "bad-overhead",
        batch_job(pod_template(container(), overhead={"cpu": True})),
        'Job "job": spec.template.spec.overhead[cpu]: True is not a Kubernetes quantity',
    ),
]


@pytest.mark.parametrize(
    ("obj", "exp_message"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES]
)
def test_malformed_template_raises_accounting_error_naming_field(
    obj: dict[str, Any], exp_message: str
) -> None:
    with pytest.raises(AccountingError) as excinfo:
        workload_requests(obj)
    assert str(excinfo.value) == exp_message


def test_malformed_limit_range_names_the_limit_range() -> None:
    bad = limit_range("defaults", {"type": "Container", "defaultRequest": {"cpu": "x"}})
    with pytest.raises(AccountingError) as excinfo:
        per_pod(pod_template(container()), limit_ranges=[bad])
    assert (
        str(excinfo.value)
        == 'LimitRange "defaults": spec.limits[0].defaultRequest[cpu]: "x" is not a Kubernetes quantity'
    )

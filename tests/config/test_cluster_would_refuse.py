"""Configs that validate but that the cluster or the cloud would refuse are errors at their key (#11, item 7)."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from batchplane.targets.gke.machines import accelerator_attach_problem
from tests.config.factories import with_changes
from tests.gke.conftest import gke_with

GPU = "target__gpuPools__0__"
GPU_PATH = "batchplane:target.gpuPools[0]"
OPS = {"certManager": {"version": "v1.21.1"}, "kueue": {"version": "0.19.2"}}


def errors(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    return [str(i) for i in caught.value.errors]


REFUSED = [
    pytest.param(with_changes(webhook={"namespace": "kube-system"}), ['batchplane:webhook.namespace: "kube-system" is a system or operator namespace; run the webhook in its own namespace (default batchplane-system)'], id="webhook-in-kube-system"),
    pytest.param(with_changes(operators=OPS, webhook={"namespace": "kueue-system"}), ['batchplane:webhook.namespace: "kueue-system" is where operators.kueue is installed; its release already creates that Namespace: run the webhook in its own namespace'], id="webhook-in-kueue-release-namespace"),
    pytest.param(with_changes(operators={**OPS, "certManager": {"version": "v1.21.1", "namespace": "infra"}}, webhook={"namespace": "infra"}), ['batchplane:webhook.namespace: "infra" is where operators.certManager is installed; its release already creates that Namespace: run the webhook in its own namespace'], id="webhook-in-custom-operator-namespace"),
    pytest.param(with_changes(kueue__resourceFlavors__0__tolerations=[{"key": "k", "operator": "Exists", "value": ""}]), ["batchplane:kueue.resourceFlavors[0].tolerations[0].value: value must be empty when operator is Exists"], id="exists-with-empty-value"),
    pytest.param(with_changes(webhook={"namespaces": [{"name": "ml", "limits": {"maxWorkloadRequests": {"cpu": "-4"}}}]}), ['batchplane:webhook.namespaces[0].limits.maxWorkloadRequests.cpu: "-4" must not be negative'], id="negative-namespace-limit"),
    pytest.param(with_changes(kueue__localQueues__0__fairSharing={"weight": "-1"}), ['batchplane:kueue.localQueues[0].fairSharing.weight: "-1" must be greater than or equal to 0'], id="negative-localqueue-weight"),
    pytest.param(gke_with(**{GPU + "machineType": "e2-standard-8", GPU + "accelerator": {"type": "nvidia-tesla-t4", "count": 1}}), [f"{GPU_PATH}.accelerator: cannot be attached to machine type e2-standard-8: nvidia-tesla-t4 attaches only to N1 machine types (n1-standard-*, n1-highmem-*, n1-highcpu-*)"], id="t4-on-e2"),
    pytest.param(gke_with(**{GPU + "machineType": "n1-standard-8", GPU + "accelerator": {"type": "nvidia-h100-80gb", "count": 3}}), [f"{GPU_PATH}.accelerator: cannot be attached to machine type n1-standard-8: nvidia-h100-80gb comes only with A3 machine types"], id="h100-on-n1"),
    pytest.param(gke_with(**{GPU + "machineType": "n1-standard-96", GPU + "accelerator": {"type": "nvidia-tesla-t4", "count": 1}}), [f"{GPU_PATH}.accelerator: cannot be attached to machine type n1-standard-96: 1 × nvidia-tesla-t4 allows at most 48 vCPUs; n1-standard-96 has 96"], id="t4-too-many-vcpus"),
    pytest.param(gke_with(target__project="My_Project"), ['batchplane:target.project: "My_Project" is not a Google Cloud project ID: 6 to 30 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen'], id="bad-project-id"),
    pytest.param({**with_changes(), "gcp:project": "1abc-def"}, ['gcp:project: "1abc-def" is not a Google Cloud project ID: 6 to 30 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen'], id="bad-gcp-project-config"),
]  # fmt: skip


@pytest.mark.parametrize(("config", "want"), REFUSED)
def test_what_the_cluster_or_cloud_would_refuse_is_an_error_at_its_key(
    config: dict[str, Any], want: list[str]
) -> None:
    assert [e for e in errors(config) if e.split(":", 2)[:2] == want[0].split(":", 2)[:2]] == want


@pytest.mark.parametrize(
    ("machine", "accelerator", "count", "ok"),
    [
        ("n1-standard-4", "nvidia-tesla-t4", 1, True),
        ("n1-highmem-96", "nvidia-tesla-t4", 4, True),
        ("n1-standard-8", "nvidia-tesla-t4", 3, False),
        ("n1-standard-32", "nvidia-tesla-v100", 2, False),
        ("n1-standard-32", "nvidia-tesla-v100", 4, True),
        ("g2-standard-4", "nvidia-l4", 1, True),
        ("a3-highgpu-8g", "nvidia-h100-80gb", 8, True),
        ("n2-standard-8", "nvidia-l4", 1, False),
        ("n2-standard-8", "some-future-gpu", 1, True),
    ],
    ids=[
        "t4",
        "t4x4-96",
        "t4x3",
        "v100x2-32vcpu",
        "v100x4-32vcpu",
        "l4-g2",
        "h100-a3",
        "l4-n2",
        "unknown-type",
    ],
)
def test_attach_rules_follow_the_compute_engine_tables(
    machine: str, accelerator: str, count: int, ok: bool
) -> None:
    assert (accelerator_attach_problem(machine, accelerator, count) is None) is ok


@pytest.mark.parametrize("project", ["my-project-1", "abcdef", "a" * 30, "example.com:my-project"])
def test_valid_project_ids_pass(project: str) -> None:
    load_stack(gke_with(target__project=project))


def test_namespace_annotations_over_256_kib_in_total_are_refused() -> None:
    big = {f"a{i}": "x" * 100_000 for i in range(3)}
    (error,) = errors(with_changes(kueue__namespaces=[{"name": "team-a", "annotations": big}]))
    assert error == (
        "batchplane:kueue.namespaces[0].annotations: annotations total 300006 bytes; Kubernetes allows at most "
        "262144 (256 KiB) of keys and values per object"
    )
    load_stack(with_changes(kueue__namespaces=[{"name": "team-a", "annotations": {"a": "x" * 262_143}}]))

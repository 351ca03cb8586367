"""Every real manifest in shared/samples/{kuberay,training-operator,appwrapper} is accounted or skipped.

The exact expectations below were computed by hand from the YAML (see the comments), not by
running the code under test.
"""

from __future__ import annotations

import contextlib
import copy
import decimal
import json
from decimal import Decimal
from typing import Any

import pytest

from batchplane.accounting import is_known_non_workload, is_workload, report_json, workload_requests
from tests.accounting.conftest import SAMPLE_DIRS, SAMPLES, Gi, Mi, load_documents, sample

ALL_DOCUMENTS = [
    (f"{path.parent.name}/{path.name}", index, document)
    for directory in SAMPLE_DIRS
    for path in sorted((SAMPLES / directory).glob("*.yaml"))
    for index, document in enumerate(load_documents(path))
]


def test_sample_directories_are_present() -> None:
    assert len(ALL_DOCUMENTS) >= 50, f"expected the shared samples at {SAMPLES}"


@pytest.mark.parametrize(
    "document", [d for _, _, d in ALL_DOCUMENTS], ids=[f"{name}#{index}" for name, index, _ in ALL_DOCUMENTS]
)
def test_every_sample_document_is_accounted_or_recognised_as_non_workload(document: dict[str, Any]) -> None:
    if is_workload(document):
        report = report_json(workload_requests(document))
        assert report["podSets"], "a sample workload yields at least one pod set"
        json.dumps(report)  # JSON-ready
    else:
        assert is_known_non_workload(document), f"{document.get('kind')} is neither a workload nor known"


@pytest.mark.parametrize(
    "document", [d for _, _, d in ALL_DOCUMENTS], ids=[f"{name}#{index}" for name, index, _ in ALL_DOCUMENTS]
)
def test_accounting_never_changes_the_object_it_reads(document: dict[str, Any]) -> None:
    """Templates are copied only where Kueue's accounting changes them; the reviewed object stays as sent."""
    if not is_workload(document):
        return
    # The GCS fault-tolerance path raises the head's requests and SidecarMode adds the submitter to the head,
    # both in a copy of the head's template.
    for ft, sidecar in ((None, False), ("true", False), (None, True)):
        obj = copy.deepcopy(document)
        if ft:
            obj.setdefault("metadata", {}).setdefault("annotations", {})["ray.io/ft-enabled"] = ft
        if sidecar and obj.get("kind") == "RayJob":
            obj["spec"]["submissionMode"] = "SidecarMode"
        before = copy.deepcopy(obj)
        with contextlib.suppress(ValueError):
            workload_requests(obj)
        assert obj == before


def test_samples_skip_exactly_the_bundled_configmaps_and_secret() -> None:
    skipped = sorted((name, d["kind"]) for name, _, d in ALL_DOCUMENTS if not is_workload(d))
    assert skipped == [
        ("kuberay/ray-cluster-label-selector.yaml", "ConfigMap"),
        ("kuberay/ray-cluster.autoscaler-v2.yaml", "ConfigMap"),
        ("kuberay/ray-cluster.autoscaler.yaml", "ConfigMap"),
        ("kuberay/ray-cluster.fluentbit.yaml", "ConfigMap"),
        ("kuberay/ray-cluster.heterogeneous.yaml", "ConfigMap"),
        ("kuberay/ray-cluster.tls.yaml", "ConfigMap"),
        ("kuberay/ray-cluster.tls.yaml", "Secret"),
        ("kuberay/ray-job.batch-inference.yaml", "ConfigMap"),
        ("kuberay/ray-job.light-weight-submitter.yaml", "ConfigMap"),
        ("kuberay/ray-job.sample.yaml", "ConfigMap"),
    ]


D = Decimal
SUBMITTER = {"cpu": D("0.5"), "memory": D(200 * Mi)}  # KubeRay's default submitter requests

SAMPLE_CASES: list[tuple[str, str, int, list[tuple[str, int, dict[str, Decimal]]], dict[str, Decimal]]] = [
    (
        # head requests 1 cpu / 2G; small-group replicas 1 × (1 cpu, 1G).
        "kueue-ray-cluster-sample",
        "kuberay/kueue-ray-cluster-sample.yaml",
        0,
        [
            ("head", 1, {"cpu": D(1), "memory": D(2_000_000_000)}),
            ("small-group", 1, {"cpu": D(1), "memory": D(1_000_000_000)}),
        ],
        {"cpu": D(2), "memory": D(3_000_000_000)},
    ),
    (
        # head 1 cpu; 1 worker × 1 cpu; submissionMode omitted → K8sJobMode → default submitter.
        "kueue-ray-job-sample",
        "kuberay/kueue-ray-job-sample.yaml",
        0,
        [("head", 1, {"cpu": D(1)}), ("small-group", 1, {"cpu": D(1)}), ("submitter", 1, SUBMITTER)],
        {"cpu": D("2.5"), "memory": D(200 * Mi)},
    ),
    (
        # enableInTreeAutoscaling without autoscalerOptions.resources → autoscaler 500m/512Mi on the head.
        "kueue-ray-job-autoscaling-sample",
        "kuberay/kueue-ray-job-autoscaling-sample.yaml",
        0,
        [
            ("head", 1, {"cpu": D("1.5"), "memory": D(512 * Mi)}),
            ("small-group", 1, {"cpu": D(1)}),
            ("submitter", 1, SUBMITTER),
        ],
        {"cpu": D(3), "memory": D(712 * Mi)},
    ),
    (
        # head 1 cpu/2Gi + autoscaler 500m/512Mi from autoscalerOptions; small-group replicas 0.
        "ray-cluster-autoscaler",
        "kuberay/ray-cluster.autoscaler.yaml",
        0,
        [
            ("head", 1, {"cpu": D("1.5"), "memory": D(2560 * Mi)}),
            ("small-group", 0, {"cpu": D(1), "memory": D(Gi)}),
        ],
        {"cpu": D("1.5"), "memory": D(2560 * Mi)},
    ),
    (
        # head 8 cpu/40G; tpu-group replicas 1 × numOfHosts 4 = 4 pods × (24 cpu, 4 TPU, 200G).
        "ray-cluster-tpu-multihost",
        "kuberay/ray-cluster.tpu-v6e-16-multihost.yaml",
        0,
        [
            ("head", 1, {"cpu": D(8), "memory": D(40_000_000_000)}),
            ("tpu-group", 4, {"cpu": D(24), "google.com/tpu": D(4), "memory": D(200_000_000_000)}),
        ],
        {"cpu": D(104), "google.com/tpu": D(16), "memory": D(840_000_000_000)},
    ),
    (
        # document 1 (document 0 is a ConfigMap): head 200m; 3 × 200m; 1 × 1000m.
        "ray-cluster-heterogeneous",
        "kuberay/ray-cluster.heterogeneous.yaml",
        1,
        [
            ("head", 1, {"cpu": D("0.2")}),
            ("small-group", 3, {"cpu": D("0.2")}),
            ("medium-group", 1, {"cpu": D(1)}),
        ],
        {"cpu": D("1.8")},
    ),
    (
        # two head containers summed: ray-head 1/2Gi + fluentbit 100m/128Mi.
        "ray-cluster-fluentbit",
        "kuberay/ray-cluster.fluentbit.yaml",
        0,
        [("head", 1, {"cpu": D("1.1"), "memory": D(2176 * Mi)})],
        {"cpu": D("1.1"), "memory": D(2176 * Mi)},
    ),
    (
        # head 1 cpu/8G; gpu-group 4 × (1 cpu, 8G, 1 GPU); default submitter.
        "ray-job-pytorch-image-classifier",
        "kuberay/ray-job.pytorch-image-classifier.yaml",
        0,
        [
            ("head", 1, {"cpu": D(1), "memory": D(8_000_000_000)}),
            ("gpu-group", 4, {"cpu": D(1), "memory": D(8_000_000_000), "nvidia.com/gpu": D(1)}),
            ("submitter", 1, SUBMITTER),
        ],
        {"cpu": D("5.5"), "memory": D(40_000_000_000 + 200 * Mi), "nvidia.com/gpu": D(4)},
    ),
    (
        # custom submitterPodTemplate without resources: the submitter requests nothing.
        "ray-job-light-weight-submitter",
        "kuberay/ray-job.light-weight-submitter.yaml",
        0,
        [
            ("head", 1, {"cpu": D(1), "memory": D(2 * Gi)}),
            ("small-group", 1, {"cpu": D(1), "memory": D(Gi)}),
            ("submitter", 1, {}),
        ],
        {"cpu": D(2), "memory": D(3 * Gi)},
    ),
    (
        # RayService: head 2 cpu/8Gi/32Gi ephemeral; gpu-group 4 × (6 cpu, 24Gi, 1 GPU, 24Gi ephemeral).
        "ray-service-high-throughput-llm",
        "kuberay/ray-service.high-throughput-llm.yaml",
        0,
        [
            ("head", 1, {"cpu": D(2), "ephemeral-storage": D(32 * Gi), "memory": D(8 * Gi)}),
            (
                "gpu-group",
                4,
                {"cpu": D(6), "ephemeral-storage": D(24 * Gi), "memory": D(24 * Gi), "nvidia.com/gpu": D(1)},
            ),
        ],
        {"cpu": D(26), "ephemeral-storage": D(128 * Gi), "memory": D(104 * Gi), "nvidia.com/gpu": D(4)},
    ),
    (
        # Master 1 and Worker 1, each 1 cpu / 200Mi.
        "kueue-sample-pytorchjob",
        "training-operator/kueue-sample-pytorchjob.yaml",
        0,
        [
            ("master", 1, {"cpu": D(1), "memory": D(200 * Mi)}),
            ("worker", 1, {"cpu": D(1), "memory": D(200 * Mi)}),
        ],
        {"cpu": D(2), "memory": D(400 * Mi)},
    ),
    (
        # GPU limits only: the limit becomes the request.
        "pytorch-job-mnist-nccl",
        "training-operator/pytorch_job_mnist_nccl.yaml",
        0,
        [("master", 1, {"nvidia.com/gpu": D(1)}), ("worker", 1, {"nvidia.com/gpu": D(1)})],
        {"nvidia.com/gpu": D(2)},
    ),
    (
        # no resources at all: counts only.
        "pytorch-job-sendrecv",
        "training-operator/pytorch_job_sendrecv.yaml",
        0,
        [("master", 1, {}), ("worker", 3, {})],
        {},
    ),
    (
        # inferred: Master 1 × 1 cpu, Worker 2 × 1 cpu.
        "wrapped-pytorch-job",
        "appwrapper/wrapped-pytorch-job.yaml",
        0,
        [("sample-pytorch-job-0", 1, {"cpu": D(1)}), ("sample-pytorch-job-1", 2, {"cpu": D(1)})],
        {"cpu": D(3)},
    ),
    (
        # inferred JobSet: workers 2 replicas × min(2, 2) = 4 × 100m; driver 1 × 100m.
        "wrapped-jobset",
        "appwrapper/wrapped-jobset.yaml",
        0,
        [("sample-jobset-0", 4, {"cpu": D("0.1")}), ("sample-jobset-1", 1, {"cpu": D("0.1")})],
        {"cpu": D("0.5")},
    ),
    (
        # declared podSets: leader 2 × 100m, workers 3 × 200m.
        "kueue-appwrapper-leaderworkerset-sample",
        "appwrapper/kueue-appwrapper-leaderworkerset-sample.yaml",
        0,
        [
            ("sample-appwrapper-lws-0", 2, {"cpu": D("0.1")}),
            ("sample-appwrapper-lws-1", 3, {"cpu": D("0.2")}),
        ],
        {"cpu": D("0.8")},
    ),
    (
        # inferred Job: parallelism omitted → 1; 1 cpu and 4 GPUs.
        "wrapped-gpu-job",
        "appwrapper/wrapped-gpu-job.yaml",
        0,
        [("sample-gpu-job-0", 1, {"cpu": D(1), "nvidia.com/gpu": D(4)})],
        {"cpu": D(1), "nvidia.com/gpu": D(4)},
    ),
]


@pytest.mark.parametrize(
    ("relative", "index", "exp_pod_sets", "exp_total"),
    [c[1:] for c in SAMPLE_CASES],
    ids=[c[0] for c in SAMPLE_CASES],
)
def test_sample_requests_match_hand_computation(
    relative: str,
    index: int,
    exp_pod_sets: list[tuple[str, int, dict[str, Decimal]]],
    exp_total: dict[str, Decimal],
) -> None:
    workload = workload_requests(sample(relative, index))
    assert [(ps.name, ps.count, ps.per_pod) for ps in workload.pod_sets] == exp_pod_sets
    assert workload.total == exp_total


def test_sample_queue_label_is_reported() -> None:
    workload = workload_requests(sample("kuberay/kueue-ray-job-sample.yaml"))
    assert (workload.kind, workload.name, workload.queue_name) == ("RayJob", "rayjob-sample", "user-queue")


def test_generated_name_sample_reports_generate_name() -> None:
    assert workload_requests(sample("kuberay/ray-job.kueue-toy-sample.yaml")).name == "rayjob-sample-"


def _reports_in_context(documents: list[dict[str, Any]], prec: int) -> list[Any]:
    out: list[Any] = []
    with decimal.localcontext() as ctx:
        ctx.prec = prec
        for document in documents:
            try:
                workload = workload_requests(document)
            except ValueError as exc:
                out.append(str(exc))
                continue
            out.append(report_json(workload))
            out.append([ps.per_pod for ps in workload.pod_sets])
    return out


def test_results_do_not_depend_on_the_callers_decimal_context() -> None:
    """Every Decimal step enters the accounting's own exact context: a caller running with 3 digits of precision
    gets the same answers, for every sample (GCS fault tolerance and SidecarMode variants too) and for templates
    the integer path hands to the Decimal path (sub-nano quantities)."""
    documents: list[dict[str, Any]] = []
    for _, _, document in ALL_DOCUMENTS:
        if not is_workload(document):
            continue
        documents.append(document)
        variant = copy.deepcopy(document)
        variant.setdefault("metadata", {}).setdefault("annotations", {})["ray.io/ft-enabled"] = "true"
        if variant.get("kind") == "RayJob":
            variant["spec"]["submissionMode"] = "SidecarMode"
        documents.append(variant)
    sub_nano = {"cpu": "1.0000000000001", "memory": "123456789012.5", "example.com/foo": "1e-30"}
    documents.append(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j"},
            "spec": {"template": {"spec": {"containers": [{"resources": {"requests": sub_nano}}]}}},
        }
    )
    assert _reports_in_context(documents, 3) == _reports_in_context(documents, 80)

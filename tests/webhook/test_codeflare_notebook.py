"""From a workbench notebook to a queue, end to end offline: the RayCluster the CodeFlare SDK generates for
``cluster.up()`` (codeflare-sdk v0.38.2, tests/webhook/samples/codeflare-sdk/SOURCES.md), sent by the API server to
the real webhook server (uvicorn over TLS) with the ``openshift-ai`` template's policy, from the workbench's data
science project ``team-a``: the default LocalQueue label is defaulted, the cluster is accounted as Kueue accounts
it, and one too large for the ClusterQueue is refused naming the quota (docs/openshift-notebooks.md)."""

from __future__ import annotations

import base64
import copy
import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from batchplane.accounting import workload_requests
from tests.webhook.conftest import QUEUE_LABEL, labeled, review, running_server, stack_policy, write_cert

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).parent / "samples" / "codeflare-sdk" / "ray_cluster_kueue.yaml"
WORKBENCH_PROJECT = "team-a"


def sdk_cluster(queue: str | None, gpus_per_worker: int = 0) -> dict[str, Any]:
    """The SDK's RayCluster in the workbench's project; ``gpus_per_worker`` as
    ``ClusterConfiguration(worker_extended_resource_requests={"nvidia.com/gpu": n})`` sets it (requests, limits
    and ``num-gpus``)."""
    obj = yaml.safe_load(SAMPLE.read_text(encoding="utf-8"))
    if gpus_per_worker:
        worker = obj["spec"]["workerGroupSpecs"][0]
        worker["rayStartParams"]["num-gpus"] = str(gpus_per_worker)
        for kind in ("requests", "limits"):
            worker["template"]["spec"]["containers"][0]["resources"][kind]["nvidia.com/gpu"] = gpus_per_worker
    return labeled(copy.deepcopy(obj), queue, WORKBENCH_PROJECT)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    cert, key = write_cert(tmp_path_factory.mktemp("tls"), "webhook")
    with (
        running_server(stack_policy("openshift-ai"), cert, key) as port,
        httpx.Client(
            base_url=f"https://127.0.0.1:{port}", verify=ssl.create_default_context(cafile=str(cert))
        ) as c,
    ):
        yield c


def ray_review(obj: dict[str, Any]) -> dict[str, Any]:
    body = review(obj, namespace=WORKBENCH_PROJECT)
    body["request"]["resource"]["resource"] = "rayclusters"
    return body


def test_sdk_cluster_without_a_queue_gets_the_projects_default_local_queue(client: httpx.Client) -> None:
    answer = client.post("/mutate", json=ray_review(sdk_cluster(None))).json()["response"]
    assert answer["allowed"] is True
    assert json.loads(base64.b64decode(answer["patch"])) == [
        {"op": "add", "path": "/metadata/labels/kueue.x-k8s.io~1queue-name", "value": "team-a-queue"}
    ]  # the SDK's own labels (ray.io/cluster, controller-tools.k8s.io) are kept


def test_sdk_cluster_within_the_quota_is_allowed_and_accounted_as_kueue_does(client: httpx.Client) -> None:
    obj = sdk_cluster("team-a-queue")
    answer = client.post("/validate", json=ray_review(obj)).json()["response"]
    assert answer["allowed"] is True
    workload = workload_requests(obj)
    assert [(p.name, p.count) for p in workload.pod_sets] == [
        ("head", 1),
        ("small-group-unit-test-cluster-kueue", 2),
    ]
    assert {k: str(v) for k, v in workload.total.items()} == {"cpu": "7", "memory": "15000000000"}


def test_sdk_cluster_larger_than_the_cluster_queue_is_refused_naming_the_quota(client: httpx.Client) -> None:
    answer = client.post("/validate", json=ray_review(sdk_cluster("team-a-queue", gpus_per_worker=3))).json()[
        "response"
    ]
    assert answer["allowed"] is False
    message = answer["status"]["message"]
    assert message.startswith(
        "never runs: cluster-queue can get at most 5 GPUs on default-flavor (5 of its own, no cohort to borrow "
        "from); this RayCluster asks for 6 GPUs (2 workers × 3) — ask for at most 1 worker of 3 GPUs. "
        'RayCluster "team-a/unit-test-cluster-kueue": can never be admitted by ClusterQueue'
    )
    assert '"cluster-queue"' in message
    assert "nvidia.com/gpu 6" in message
    assert "nvidia.com/gpu 5" in message


def test_defaulted_then_too_large_is_refused_after_the_label_is_defaulted(client: httpx.Client) -> None:
    """The API server runs the mutating webhook, then the validating one on the mutated object."""
    obj = sdk_cluster(None, gpus_per_worker=3)
    answer = client.post("/mutate", json=ray_review(obj)).json()["response"]
    [op] = json.loads(base64.b64decode(answer["patch"]))
    assert op["path"] == "/metadata/labels/kueue.x-k8s.io~1queue-name"
    obj["metadata"]["labels"][QUEUE_LABEL] = op["value"]
    refused = client.post("/validate", json=ray_review(obj)).json()["response"]
    assert refused["allowed"] is False
    assert "team-a-queue" in refused["status"]["message"]

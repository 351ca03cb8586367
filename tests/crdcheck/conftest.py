"""Shared fixtures for the CRD checker tests: the catalog of real upstream CRDs and object builders."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support import fastyaml

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
SAMPLES = SHARED / "samples"
KUEUE = "kueue.x-k8s.io/v1beta2"


def sample_objects(folder: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``("<file>#<n> <Kind>/<name>", object)`` for each YAML document in shared/samples/<folder>."""
    for path in sorted((SAMPLES / folder).glob("*.yaml")):
        for index, document in enumerate(fastyaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if isinstance(document, dict):
                name = document.get("metadata", {}).get("name") or document["metadata"].get("generateName")
                yield f"{path.name}#{index} {document['kind']}/{name}", document


def cluster_queue(**spec: Any) -> dict[str, Any]:
    """A valid v1beta2 ClusterQueue (one cpu/memory flavor), with ``spec`` keys replaced by ``spec``."""
    base: dict[str, Any] = {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory"],
                "flavors": [
                    {
                        "name": "default-flavor",
                        "resources": [
                            {"name": "cpu", "nominalQuota": 9},
                            {"name": "memory", "nominalQuota": "36Gi"},
                        ],
                    }
                ],
            }
        ],
    }
    base.update(copy.deepcopy(spec))
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": "cluster-queue"}, "spec": base}


def resource_flavor(**spec: Any) -> dict[str, Any]:
    """A v1beta2 ResourceFlavor named ``gpu`` with the given ``spec``."""
    return {
        "apiVersion": KUEUE,
        "kind": "ResourceFlavor",
        "metadata": {"name": "gpu"},
        "spec": copy.deepcopy(spec),
    }


def local_queue(cluster_queue_name: str = "cluster-queue", **spec: Any) -> dict[str, Any]:
    """A v1beta2 LocalQueue ``user-queue`` in namespace ``team-a`` pointing at ``cluster_queue_name``."""
    return {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": "user-queue", "namespace": "team-a"},
        "spec": {"clusterQueue": cluster_queue_name, **spec},
    }


def provisioning_request_config(**spec: Any) -> dict[str, Any]:
    """A v1beta2 ProvisioningRequestConfig ``prov-config`` (class check-capacity) with extra ``spec`` keys."""
    return {
        "apiVersion": KUEUE,
        "kind": "ProvisioningRequestConfig",
        "metadata": {"name": "prov-config"},
        "spec": {"provisioningClassName": "check-capacity.autoscaling.x-k8s.io", **copy.deepcopy(spec)},
    }


def messages(issues: list[Any]) -> list[tuple[str, str, str]]:
    """Issues as ``(path, message, kind)`` tuples, for exact comparisons."""
    return [(i.path, i.message, i.kind) for i in issues]

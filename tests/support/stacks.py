"""Shared test helpers (issue #40: one copy instead of one per test module): the shipped templates loaded once per
process, and the CRD catalog of ``../shared/crds`` loaded once (the ``catalog`` fixture of tests/conftest.py)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from batchplane.stack import Stack, load_stack_file
from tests.conftest import SHARED, template_path

if TYPE_CHECKING:
    from tests.support.crdcheck import CrdCatalog


@functools.cache
def template(name: str) -> Stack:
    """The shipped template ``templates/Pulumi.<name>.yaml``, loaded and validated once (a Stack is immutable)."""
    return load_stack_file(template_path(name), name)


@functools.cache
def shared_crd_catalog() -> CrdCatalog:
    """Every CRD under ``../shared/crds`` (Kueue, KubeRay, Training Operator, AppWrapper, cert-manager, the OpenShift
    operators, Managed Prometheus, the Prometheus Operator and the Grafana Operator: SOURCES.md there)."""
    from tests.support.crdcheck import CrdCatalog

    return CrdCatalog.load(SHARED / "crds")


def one_pool_kueue(
    pool: str, *, cpu: int, memory: str, gpus: int, pool_cpu: int, pool_memory: str
) -> dict[str, Any]:
    """``batchplane:kueue`` of the platform tests' small stacks (tests/gke, tests/openshift): ClusterQueue ``cq``
    with an empty ``default-flavor`` (``cpu`` cores, ``memory``, no GPUs) for CPU-only pods and the GPU pool's
    derived flavor ``pool`` (``pool_cpu`` cores, ``pool_memory``, ``gpus`` nvidia.com/gpu); LocalQueue ``lq`` in
    ``team-a``."""

    def quotas(cpu: int, memory: str, gpus: int) -> list[dict[str, Any]]:
        return [
            {"name": "cpu", "nominalQuota": cpu},
            {"name": "memory", "nominalQuota": memory},
            {"name": "nvidia.com/gpu", "nominalQuota": gpus},
        ]

    group = {
        "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
        "flavors": [
            {"name": "default-flavor", "resources": quotas(cpu, memory, 0)},
            {"name": pool, "resources": quotas(pool_cpu, pool_memory, gpus)},
        ],
    }
    return {
        "resourceFlavors": [{"name": "default-flavor"}],
        "clusterQueues": [{"name": "cq", "resourceGroups": [group]}],
        "localQueues": [{"name": "lq", "namespace": "team-a", "clusterQueue": "cq"}],
    }

"""GKE node pools as :class:`~batchplane.backed_pools.BackedPool` objects (pure, no Pulumi).

What GKE puts on a GPU pool's nodes, with sources:

* label ``cloud.google.com/gke-nodepool: <pool>`` on every node (GKE); the derived flavor selects
  the pool with it, as the DWS samples do (``GoogleCloudPlatform/ai-on-gke:.../dws-examples/job.yaml``);
* label ``cloud.google.com/gke-accelerator: <type>`` on GPU nodes, ``cloud.google.com/gke-spot:
  "true"`` on Spot nodes, ``cloud.google.com/gke-flex-start: "true"`` on flex-start nodes (GKE docs;
  cluster-toolkit "consumption options" guide);
* taint ``nvidia.com/gpu=present:NoSchedule`` on GPU nodes. GKE adds it when the cluster has non-GPU
  pools; Batchplane also declares it on every GPU pool (as cluster-toolkit's ``gke-node-pool``
  ``gpu_taint`` does) so it is there regardless;
* taint ``cloud.google.com/gke-queued=true:NoSchedule`` on queued-provisioning nodes, applied by GKE
  (cluster-toolkit ``gke-node-pool/main.tf``: "GKE automatically applies the taint"; the GKE API
  shows ``{"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NO_SCHEDULE"}``; Kueue
  issue samples tolerate it with ``operator: Equal, value: "true"``).
"""

from __future__ import annotations

from decimal import Decimal

from batchplane.backed_pools import (
    GPU_RESOURCE,
    KUEUE_RETRY_DEFAULTS,
    BackedPool,
    NodeTaint,
    ProvisioningSpec,
)
from batchplane.config.rules import KeyPath
from batchplane.node_allocatable import gke_allocatable
from batchplane.targets.gke.config import QUEUED_PROVISIONING_CLASS, GkeTarget, GpuPool, topology_problems
from batchplane.targets.gke.machines import MACHINE_SHAPES
from batchplane.targets.gke.rules import node_pool_max_nodes
from batchplane.wellknown import GKE_NODEPOOL_LABEL

NODEPOOL_LABEL = GKE_NODEPOOL_LABEL
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
SPOT_LABEL = "cloud.google.com/gke-spot"
FLEX_START_LABEL = "cloud.google.com/gke-flex-start"
GPU_TAINT = NodeTaint(GPU_RESOURCE, "present", "NoSchedule")
"""The GPU taint Batchplane declares on every GPU pool (and GKE adds by itself)."""
QUEUED_TAINT = NodeTaint("cloud.google.com/gke-queued", "true", "NoSchedule")
"""The taint GKE puts on queued-provisioning nodes."""

GIB = Decimal(2**30)


def node_labels(pool: GpuPool) -> dict[str, str]:
    """Every label the pool's nodes are known to carry: GKE's and the configured ones."""
    labels = {NODEPOOL_LABEL: pool.name}
    accelerator = pool.resolved_accelerator()
    if accelerator is not None:
        labels[ACCELERATOR_LABEL] = accelerator.type
    if pool.provisioning == "spot":
        labels[SPOT_LABEL] = "true"
    if pool.provisioning == "flex-start":
        labels[FLEX_START_LABEL] = "true"
    labels.update(pool.labels)
    return labels


def node_taints(pool: GpuPool) -> tuple[NodeTaint, ...]:
    """Every taint the pool's nodes carry: the GPU taint, GKE's queued taint, the configured ones."""
    taints = [GPU_TAINT]
    if pool.is_queued():
        taints.append(QUEUED_TAINT)
    taints += [NodeTaint(t.key, t.value, t.effect) for t in pool.taints]
    return tuple(taints)


def max_nodes(pool: GpuPool) -> tuple[int | None, str]:
    """The most nodes the pool can have over all its zones, and how that was computed
    (:func:`batchplane.targets.gke.rules.node_pool_max_nodes`, which the policy pack asks too)."""
    per_zone = pool.autoscaling_limits == "per-zone"
    known = node_pool_max_nodes(
        node_count=pool.node_count,
        max_node_count=pool.max_nodes if pool.node_count is None and per_zone else None,
        total_max_node_count=pool.max_nodes if pool.node_count is None and not per_zone else None,
        zones=len(pool.node_locations),
    )
    return known if known is not None else (None, "")


def min_nodes(pool: GpuPool) -> int:
    """The fewest nodes the pool keeps over all its zones: the static size, or the autoscaling minimum (per zone
    under ``autoscalingLimits: per-zone``, as :func:`max_nodes`)."""
    zones = len(pool.node_locations)
    if pool.node_count is not None:
        return pool.node_count * zones
    return pool.min_nodes * zones if pool.autoscaling_limits == "per-zone" else pool.min_nodes


def machine_resources(machine_type: str) -> dict[str, Decimal]:
    """``cpu`` (vCPUs) and ``memory`` (bytes) of one node of ``machine_type`` from
    :data:`~batchplane.targets.gke.machines.MACHINE_SHAPES`; empty when the type is not there."""
    shape = MACHINE_SHAPES.get(machine_type)
    if shape is None:
        return {}
    return {"cpu": Decimal(shape.vcpus), "memory": Decimal(shape.memory_gib) * GIB}


def per_node(pool: GpuPool) -> dict[str, Decimal]:
    """GPUs per node (when the accelerator is known) and vCPUs/memory (when the machine type is)."""
    out: dict[str, Decimal] = {}
    accelerator = pool.resolved_accelerator()
    if accelerator is not None:
        out[GPU_RESOURCE] = Decimal(accelerator.count)
    out.update(machine_resources(pool.machine_type))
    return out


def provisioning_spec(pool: GpuPool) -> ProvisioningSpec | None:
    """The ProvisioningRequestConfig a queued pool needs; None for other pools.

    ``managedResources: [nvidia.com/gpu]`` keeps CPU-only PodSets (a RayJob's head, the submitter)
    out of the request, and ``podSetMergePolicy: IdenticalWorkloadSchedulingRequirements`` merges
    identical GPU PodSets, because GKE accepts one PodSet per ProvisioningRequest (docs/gke.md).
    """
    if not pool.is_queued():
        return None
    settings = pool.provisioning_request
    parameters: dict[str, str] = {}
    retry = KUEUE_RETRY_DEFAULTS
    merge: str | None = "IdenticalWorkloadSchedulingRequirements"
    if settings is not None:
        if settings.max_run_duration_seconds is not None:
            parameters["maxRunDurationSeconds"] = str(settings.max_run_duration_seconds)
        retry = settings.retry_strategy or retry
        merge = settings.pod_set_merge_policy
    return ProvisioningSpec(
        class_name=QUEUED_PROVISIONING_CLASS,
        managed_resources=(GPU_RESOURCE,),
        parameters=parameters,
        retry_strategy=retry,
        pod_set_merge_policy=merge,
    )


def gke_backed_pools(target: GkeTarget, base: str = "batchplane:target") -> list[BackedPool]:
    """One :class:`BackedPool` per GPU pool of the target, in config order."""
    out: list[BackedPool] = []
    for i, pool in enumerate(target.gpu_pools):
        path = KeyPath(f"{base}.gpuPools[{i}]")
        count, note = max_nodes(pool)
        size_key = "nodeCount" if pool.node_count is not None else "maxNodes"
        out.append(
            BackedPool(
                name=pool.name,
                kind="GKE node pool",
                path=path,
                flavor_name=pool.resolved_flavor_name(),
                selector=(NODEPOOL_LABEL, pool.name),
                labels=node_labels(pool),
                taints=node_taints(pool),
                max_nodes=count,
                max_nodes_note=note,
                max_nodes_path=path.key(size_key),
                per_node=per_node(pool),
                allocatable=gke_allocatable(per_node(pool)),
                provisioning=provisioning_spec(pool),
                min_nodes=min_nodes(pool),
                machine=pool.machine_type,
                topology=_topology(pool),
            )
        )
    return out


def _topology(pool: GpuPool) -> tuple[str, tuple[str, ...]] | None:
    """The pool's Topology when it can be declared (:func:`~batchplane.targets.gke.config.topology_problems`
    reports the others at the pool's key), else None."""
    resolved = pool.resolved_topology()
    if resolved is None or topology_problems(pool):
        return None
    return resolved.name, resolved.levels

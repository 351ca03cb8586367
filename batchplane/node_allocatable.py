"""What one node offers pods (its *allocatable*) from its machine capacity, per platform.

A node's allocatable is its capacity less what the kubelet reserves for the system and its hard eviction threshold;
the kube-scheduler places a pod only where its requests fit allocatable
(https://kubernetes.io/docs/tasks/administer-cluster/reserve-compute-resources/). Pure arithmetic: CPU in cores,
memory in bytes, both :class:`~decimal.Decimal`; other resources (GPUs) pass through unchanged.

* :func:`gke_allocatable` — GKE Standard's documented reservation tiers.
* :func:`openshift_allocatable` — OpenShift's default ``system-reserved`` and the kubelet's eviction threshold.

Neither counts the DaemonSets that run on every node (GKE's GPU device plugin, logging and metrics agents; on
OpenShift the GPU operator's device plugin, DCGM exporter …): their requests come out of allocatable too, and the
stack does not know them, so messages name that margin instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_FLOOR, Decimal

__all__ = [
    "EVICTION_HARD_MEMORY",
    "OPENSHIFT_SYSTEM_RESERVED",
    "gke_allocatable",
    "gke_reserved_cpu",
    "gke_reserved_memory",
    "openshift_allocatable",
]

MIB = Decimal(2**20)
GIB = Decimal(2**30)
MILLI = Decimal("0.001")

#: The kubelet's default hard eviction threshold ``memory.available<100Mi`` (GKE sets the same; OpenShift's kubelet
#: config does not override it): https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/
EVICTION_HARD_MEMORY = 100 * MIB

#: (width of the tier in GiB, share reserved) — GKE's memory tiers, the last one unbounded.
_GKE_MEMORY_TIERS: tuple[tuple[Decimal | None, Decimal], ...] = (
    (Decimal(4), Decimal("0.25")),
    (Decimal(4), Decimal("0.20")),
    (Decimal(8), Decimal("0.10")),
    (Decimal(112), Decimal("0.06")),
    (None, Decimal("0.02")),
)
#: (width of the tier in cores, share reserved) — GKE's CPU tiers, the last one unbounded.
_GKE_CPU_TIERS: tuple[tuple[Decimal | None, Decimal], ...] = (
    (Decimal(1), Decimal("0.06")),
    (Decimal(1), Decimal("0.01")),
    (Decimal(2), Decimal("0.005")),
    (None, Decimal("0.0025")),
)

#: OpenShift's default ``system-reserved`` (cores, bytes): machine-config-operator writes
#: ``SYSTEM_RESERVED_CPU=500m`` and ``SYSTEM_RESERVED_MEMORY=1Gi`` to ``/etc/node-sizing-enabled.env``
#: (``DefaultAutoSizingEnvContent``, openshift/machine-config-operator ``pkg/controller/kubelet-config``; enhancement
#: ``enhancements/machine-config/dynamic-system-reserved-calc.md``), which the kubelet unit passes as
#: ``--system-reserved``.
OPENSHIFT_SYSTEM_RESERVED: dict[str, Decimal] = {"cpu": Decimal("0.5"), "memory": GIB}


def _floor(amount: Decimal, step: Decimal) -> Decimal:
    """``amount`` rounded down to a whole number of ``step`` (what a pod can request), never below zero."""
    return max(Decimal(0), (amount / step).to_integral_value(rounding=ROUND_FLOOR) * step)


def _tiered(total: Decimal, tiers: tuple[tuple[Decimal | None, Decimal], ...]) -> Decimal:
    reserved = Decimal(0)
    left = total
    for width, share in tiers:
        part = left if width is None else min(left, width)
        reserved += part * share
        left -= part
        if left <= 0:
            break
    return reserved


def gke_reserved_memory(memory_bytes: Decimal) -> Decimal:
    """Bytes GKE reserves for the system on a node of ``memory_bytes``: 255 MiB below 1 GiB, else 25% of the first
    4 GiB, 20% of the next 4 GiB, 10% of the next 8 GiB, 6% of the next 112 GiB and 2% of the rest (the eviction
    threshold is not included). Source: "Plan GKE Standard node sizes", section "Memory and CPU reservations",
    https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes#memory_cpu (GKE's "GB" there is GiB)."""
    if memory_bytes < GIB:
        return 255 * MIB
    return _tiered(memory_bytes / GIB, _GKE_MEMORY_TIERS) * GIB


def gke_reserved_cpu(cores: Decimal) -> Decimal:
    """Cores GKE reserves on a node of ``cores`` vCPUs: 6% of the first core, 1% of the next, 0.5% of the next 2,
    0.25% of every core above 4. Source: as :func:`gke_reserved_memory`."""
    return _tiered(cores, _GKE_CPU_TIERS)


def gke_allocatable(capacity: Mapping[str, Decimal]) -> dict[str, Decimal]:
    """A GKE Standard node's allocatable from its capacity (``cpu`` cores, ``memory`` bytes, other resources
    unchanged): CPU less :func:`gke_reserved_cpu`; memory less :func:`gke_reserved_memory` and the 100 MiB eviction
    threshold (:data:`EVICTION_HARD_MEMORY`), rounded down to whole millicores and bytes, never below zero. ``g2-standard-4`` (4 cores, 16 GiB): 3.92 cores,
    16 GiB − 2.6 GiB − 100 MiB ≈ 13.3 GiB. Source:
    https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes#memory_cpu"""
    out = dict(capacity)
    if "cpu" in out:
        out["cpu"] = _floor(out["cpu"] - gke_reserved_cpu(out["cpu"]), MILLI)
    if "memory" in out:
        mem = out["memory"]
        out["memory"] = _floor(mem - gke_reserved_memory(mem) - EVICTION_HARD_MEMORY, Decimal(1))
    return out


def openshift_allocatable(capacity: Mapping[str, Decimal]) -> dict[str, Decimal]:
    """An OpenShift worker's allocatable from its capacity (``cpu`` cores, ``memory`` bytes, other resources
    unchanged): less the default ``system-reserved`` (:data:`OPENSHIFT_SYSTEM_RESERVED`: 500m CPU, 1 GiB memory)
    and, for memory, the 100 MiB eviction threshold; never below zero. A cluster whose KubeletConfig sets
    ``autoSizingReserved: true`` reserves by node size instead (more on large nodes), so real allocatable can be
    lower than this."""
    out = dict(capacity)
    if "cpu" in out:
        out["cpu"] = max(Decimal(0), out["cpu"] - OPENSHIFT_SYSTEM_RESERVED["cpu"])
    if "memory" in out:
        out["memory"] = max(
            Decimal(0), out["memory"] - OPENSHIFT_SYSTEM_RESERVED["memory"] - EVICTION_HARD_MEMORY
        )
    return out

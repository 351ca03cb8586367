"""Compute Engine machine types Batchplane knows: attached GPUs, vCPUs and memory per node.

Two tables, both plain data:

* :data:`FIXED_GPU_MACHINES` — the accelerator-optimized families whose machine type fixes the GPU
  model and count (A2, A3, A4, G2). GKE still wants ``guest_accelerators`` declared for them; the
  stack config may omit the accelerator (it is filled in from this table) and, when given, must
  match it. Sources: Compute Engine "Accelerator-optimized machine family" and "GPU machine types"
  (cloud.google.com/compute/docs/accelerator-optimized-machines, /compute/docs/gpus), and the same
  table in GoogleCloudPlatform/cluster-toolkit ``modules/compute/gke-node-pool/gpu_definition.tf``
  (``accelerator_machines``).
* :data:`MACHINE_SHAPES` — vCPUs and memory of the machine types used in the stack templates and
  the fixed-GPU families, for the plan-time capacity check. Memory is the Compute Engine
  ``memoryMb`` figure, which is binary (``g2-standard-4`` = 16384 MiB = 16 GiB). Sources: the
  accelerator-optimized page above ("The A3 machine series ... 208 vCPUs, and 1,872 GB of memory")
  and "General-purpose machine family" (cloud.google.com/compute/docs/general-purpose-machines).
  These are node *capacity*; GKE reserves part of each node for system daemons, so allocatable is
  lower (cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Machine-type prefixes whose GPU model and count are fixed by the machine type.
FIXED_GPU_FAMILIES: tuple[str, ...] = ("a2-", "a3-", "a4-", "g2-")


@dataclass(frozen=True)
class FixedGpu:
    """The GPUs a fixed-GPU machine type comes with.

    Attributes:
        accelerator_type: the Compute Engine accelerator type (``nvidia-l4``), as GKE's
            ``guest_accelerators[].type`` and the ``cloud.google.com/gke-accelerator`` node label.
        count: GPUs per node.
    """

    accelerator_type: str
    count: int


@dataclass(frozen=True)
class MachineShape:
    """vCPUs and memory of one machine type (node capacity).

    Attributes:
        vcpus: virtual CPUs (Kubernetes CPU cores).
        memory_gib: memory in GiB (Compute Engine ``memoryMb`` / 1024).
    """

    vcpus: int
    memory_gib: int


FIXED_GPU_MACHINES: dict[str, FixedGpu] = {
    # A2 Standard (A100 40GB)
    "a2-highgpu-1g": FixedGpu("nvidia-tesla-a100", 1),
    "a2-highgpu-2g": FixedGpu("nvidia-tesla-a100", 2),
    "a2-highgpu-4g": FixedGpu("nvidia-tesla-a100", 4),
    "a2-highgpu-8g": FixedGpu("nvidia-tesla-a100", 8),
    "a2-megagpu-16g": FixedGpu("nvidia-tesla-a100", 16),
    # A2 Ultra (A100 80GB)
    "a2-ultragpu-1g": FixedGpu("nvidia-a100-80gb", 1),
    "a2-ultragpu-2g": FixedGpu("nvidia-a100-80gb", 2),
    "a2-ultragpu-4g": FixedGpu("nvidia-a100-80gb", 4),
    "a2-ultragpu-8g": FixedGpu("nvidia-a100-80gb", 8),
    # A3 High / Mega / Ultra (H100 80GB, H100 Mega, H200)
    "a3-highgpu-1g": FixedGpu("nvidia-h100-80gb", 1),
    "a3-highgpu-2g": FixedGpu("nvidia-h100-80gb", 2),
    "a3-highgpu-4g": FixedGpu("nvidia-h100-80gb", 4),
    "a3-highgpu-8g": FixedGpu("nvidia-h100-80gb", 8),
    "a3-megagpu-8g": FixedGpu("nvidia-h100-mega-80gb", 8),
    "a3-ultragpu-8g": FixedGpu("nvidia-h200-141gb", 8),
    # A4 (B200)
    "a4-highgpu-8g": FixedGpu("nvidia-b200", 8),
    # G2 (L4)
    "g2-standard-4": FixedGpu("nvidia-l4", 1),
    "g2-standard-8": FixedGpu("nvidia-l4", 1),
    "g2-standard-12": FixedGpu("nvidia-l4", 1),
    "g2-standard-16": FixedGpu("nvidia-l4", 1),
    "g2-standard-24": FixedGpu("nvidia-l4", 2),
    "g2-standard-32": FixedGpu("nvidia-l4", 1),
    "g2-standard-48": FixedGpu("nvidia-l4", 4),
    "g2-standard-96": FixedGpu("nvidia-l4", 8),
}
"""Machine type → its fixed GPUs (type and count per node)."""

MACHINE_SHAPES: dict[str, MachineShape] = {
    "a2-highgpu-1g": MachineShape(12, 85),
    "a2-highgpu-2g": MachineShape(24, 170),
    "a2-highgpu-4g": MachineShape(48, 340),
    "a2-highgpu-8g": MachineShape(96, 680),
    "a2-megagpu-16g": MachineShape(96, 1360),
    "a2-ultragpu-1g": MachineShape(12, 170),
    "a2-ultragpu-2g": MachineShape(24, 340),
    "a2-ultragpu-4g": MachineShape(48, 680),
    "a2-ultragpu-8g": MachineShape(96, 1360),
    "a3-highgpu-1g": MachineShape(26, 234),
    "a3-highgpu-2g": MachineShape(52, 468),
    "a3-highgpu-4g": MachineShape(104, 936),
    "a3-highgpu-8g": MachineShape(208, 1872),
    "a3-megagpu-8g": MachineShape(208, 1872),
    "a3-ultragpu-8g": MachineShape(224, 2952),
    "a4-highgpu-8g": MachineShape(224, 3968),
    "g2-standard-4": MachineShape(4, 16),
    "g2-standard-8": MachineShape(8, 32),
    "g2-standard-12": MachineShape(12, 48),
    "g2-standard-16": MachineShape(16, 64),
    "g2-standard-24": MachineShape(24, 96),
    "g2-standard-32": MachineShape(32, 128),
    "g2-standard-48": MachineShape(48, 192),
    "g2-standard-96": MachineShape(96, 384),
    "n1-standard-4": MachineShape(4, 15),
    "n1-standard-8": MachineShape(8, 30),
    "e2-standard-2": MachineShape(2, 8),
    "e2-standard-4": MachineShape(4, 16),
    "e2-standard-8": MachineShape(8, 32),
    "e2-standard-16": MachineShape(16, 64),
    "n2-standard-4": MachineShape(4, 16),
    "n2-standard-8": MachineShape(8, 32),
}
"""Machine type → vCPUs and memory (GiB), for the types the templates use and the fixed-GPU families."""


LOCAL_SSD_GB: dict[str, int] = {
    # A2 Ultra: 1, 2, 4, 8 local SSD disks of 375 GB
    "a2-ultragpu-1g": 375,
    "a2-ultragpu-2g": 750,
    "a2-ultragpu-4g": 1500,
    "a2-ultragpu-8g": 3000,
    # A3 High: 2, 4, 8, 16 disks; A3 Mega: 16; A3 Ultra and A4: 32
    "a3-highgpu-1g": 750,
    "a3-highgpu-2g": 1500,
    "a3-highgpu-4g": 3000,
    "a3-highgpu-8g": 6000,
    "a3-megagpu-8g": 6000,
    "a3-ultragpu-8g": 12000,
    "a4-highgpu-8g": 12000,
}
"""Machine type → the local SSD (GB, 375 GB disks) it is created with, whether or not the node uses it; it counts
against the region's local SSD quota. Source: Compute Engine "Accelerator-optimized machine family", the "Attached
Local SSD (GiB)" column of each series' table (cloud.google.com/compute/docs/accelerator-optimized-machines)."""


def is_fixed_gpu_family(machine_type: str) -> bool:
    """True when ``machine_type`` belongs to a family whose machine type fixes the GPUs (a2/a3/a4/g2)."""
    return machine_type.startswith(FIXED_GPU_FAMILIES)


@dataclass(frozen=True)
class AttachableGpu:
    """A GPU attached to general-purpose N1 machines (``guest_accelerators`` on ``n1-*``).

    Attributes:
        max_vcpus: GPUs per VM → the most vCPUs an N1 machine type may have with that many GPUs; the counts
            listed are the only ones allowed.
    """

    max_vcpus: dict[int, int]


#: GPUs that attach to N1 machine types, with the allowed GPU counts and the vCPU ceiling per count.
#: Source: Compute Engine "GPU machine types", section "N1 general-purpose machine family"
#: (cloud.google.com/compute/docs/gpus#n1-gpus). P100's 4-GPU ceiling is 96 vCPUs in the zones that offer
#: it (64 in others): the larger figure is used so that Batchplane is never stricter than Compute Engine.
N1_ATTACHABLE_GPUS: dict[str, AttachableGpu] = {
    "nvidia-tesla-t4": AttachableGpu({1: 48, 2: 48, 4: 96}),
    "nvidia-tesla-p4": AttachableGpu({1: 24, 2: 48, 4: 96}),
    "nvidia-tesla-v100": AttachableGpu({1: 12, 2: 24, 4: 48, 8: 96}),
    "nvidia-tesla-p100": AttachableGpu({1: 16, 2: 32, 4: 96}),
}


def n1_vcpus(machine_type: str) -> int | None:
    """vCPUs of a predefined N1 machine type (``n1-standard-8`` → 8), or None for other names."""
    prefix, _, count = machine_type.rpartition("-")
    if prefix in ("n1-standard", "n1-highmem", "n1-highcpu") and count.isdigit():
        return int(count)
    return None


def accelerator_attach_problem(machine_type: str, accelerator_type: str, count: int) -> str | None:
    """Why Compute Engine would refuse ``count`` × ``accelerator_type`` on ``machine_type``, or None.

    Only facts in the tables above are checked: an accelerator that comes with a fixed-GPU family (L4 with
    G2, A100 with A2, H100/H200/B200 with A3/A4) on any other machine type; an N1 GPU on a non-N1 machine
    type, in a count N1 does not offer, or on more vCPUs than that count allows. Unknown accelerator types
    pass (GKE reports them).
    """
    families = sorted(
        {
            name.split("-", 1)[0]
            for name, gpu in FIXED_GPU_MACHINES.items()
            if gpu.accelerator_type == accelerator_type
        }
    )
    if families and not machine_type.startswith(tuple(f"{f}-" for f in families)):
        return f"{accelerator_type} comes only with {'/'.join(f.upper() for f in families)} machine types"
    attachable = N1_ATTACHABLE_GPUS.get(accelerator_type)
    if attachable is None:
        return None
    if not machine_type.startswith("n1-"):
        return f"{accelerator_type} attaches only to N1 machine types (n1-standard-*, n1-highmem-*, n1-highcpu-*)"
    if count not in attachable.max_vcpus:
        allowed = ", ".join(str(c) for c in attachable.max_vcpus)
        return f"{accelerator_type} attaches to N1 machines in counts of {allowed}, not {count}"
    vcpus = n1_vcpus(machine_type)
    if vcpus is not None and vcpus > attachable.max_vcpus[count]:
        return (
            f"{count} × {accelerator_type} allows at most {attachable.max_vcpus[count]} vCPUs; "
            f"{machine_type} has {vcpus}"
        )
    return None

"""Amazon EC2 GPU instance types: GPUs, vCPUs and memory per instance (for OpenShift GPU MachineSets).

Figures are from the AWS "Accelerated computing instance specifications" page
(https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html, the ``g4dn``, ``g5``, ``g6``,
``g6e``, ``p3``, ``p4d``/``p4de`` and ``p5`` tables: GPUs, vCPUs, memory in GiB), cross-checked against
several public instance tables. They feed the derived ResourceFlavor's capacity check (GPUs, CPU
cores, memory bytes per machine), the ClusterAutoscaler's ``resourceLimits`` and the
``cluster-api/accelerator`` label. An instance type missing here is still accepted when the pool
states its ``accelerator`` (then CPU and memory are unknown and not checked).

``accelerator_label`` is Batchplane's value for the ``cluster-api/accelerator`` MachineSet label and
the ClusterAutoscaler ``resourceLimits.gpus[].type`` (OpenShift docs "Labeling GPU machine sets for
the cluster autoscaler": any alphanumeric value, the same in both places, e.g. ``nvidia-t4``,
``nvidia-a10g``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InstanceShape:
    """What one EC2 GPU instance has.

    Attributes:
        accelerator_label: GPU type label, e.g. ``nvidia-a10g``.
        gpu: the GPU product, for messages and docs, e.g. ``NVIDIA A10G``.
        gpus: GPUs per instance.
        vcpus: vCPUs per instance (Kubernetes CPU cores).
        memory_gib: memory per instance, GiB.
    """

    accelerator_label: str
    gpu: str
    gpus: int
    vcpus: int
    memory_gib: int


def _family(
    label: str, gpu: str, sizes: dict[str, tuple[int, int, int]], prefix: str
) -> dict[str, InstanceShape]:
    return {
        f"{prefix}.{size}": InstanceShape(label, gpu, gpus, vcpus, mem)
        for size, (gpus, vcpus, mem) in sizes.items()
    }


_G_SIZES = {  # g5 and g6: (GPUs, vCPUs, GiB)
    "xlarge": (1, 4, 16),
    "2xlarge": (1, 8, 32),
    "4xlarge": (1, 16, 64),
    "8xlarge": (1, 32, 128),
    "12xlarge": (4, 48, 192),
    "16xlarge": (1, 64, 256),
    "24xlarge": (4, 96, 384),
    "48xlarge": (8, 192, 768),
}

INSTANCE_SHAPES: dict[str, InstanceShape] = {
    **_family(
        "nvidia-t4",
        "NVIDIA T4",
        {
            "xlarge": (1, 4, 16),
            "2xlarge": (1, 8, 32),
            "4xlarge": (1, 16, 64),
            "8xlarge": (1, 32, 128),
            "12xlarge": (4, 48, 192),
            "16xlarge": (1, 64, 256),
            "metal": (8, 96, 384),
        },
        "g4dn",
    ),
    **_family("nvidia-a10g", "NVIDIA A10G", _G_SIZES, "g5"),
    **_family("nvidia-l4", "NVIDIA L4", _G_SIZES, "g6"),
    **_family(
        "nvidia-l40s",
        "NVIDIA L40S",
        {
            "xlarge": (1, 4, 32),
            "2xlarge": (1, 8, 64),
            "4xlarge": (1, 16, 128),
            "8xlarge": (1, 32, 256),
            "12xlarge": (4, 48, 384),
            "16xlarge": (1, 64, 512),
            "24xlarge": (4, 96, 768),
            "48xlarge": (8, 192, 1536),
        },
        "g6e",
    ),
    **_family(
        "nvidia-v100",
        "NVIDIA V100",
        {"2xlarge": (1, 8, 61), "8xlarge": (4, 32, 244), "16xlarge": (8, 64, 488)},
        "p3",
    ),
    "p4d.24xlarge": InstanceShape("nvidia-a100", "NVIDIA A100 40GB", 8, 96, 1152),
    "p4de.24xlarge": InstanceShape("nvidia-a100-80gb", "NVIDIA A100 80GB", 8, 96, 1152),
    "p5.48xlarge": InstanceShape("nvidia-h100", "NVIDIA H100", 8, 192, 2048),
}
"""EC2 instance type → :class:`InstanceShape`, for the GPU families above."""

GPU_INSTANCE_PREFIXES = ("g4dn.", "g5.", "g6.", "g6e.", "p3.", "p4d.", "p4de.", "p5.")
"""Families in :data:`INSTANCE_SHAPES`: an unknown size of one of them is reported as a typo."""

"""OpenShiftGpuCapacity: GPU MachineSets that the Cluster Autoscaler scales from zero.

Declares, as ``apiextensions.CustomResource``s through the stack's (upserting) Kubernetes provider:
the cluster-wide ``ClusterAutoscaler`` ``default`` (``autoscaling.openshift.io/v1``), then per GPU pool
a ``machine.openshift.io/v1beta1`` MachineSet in ``openshift-machine-api`` and its
``MachineAutoscaler`` (``autoscaling.openshift.io/v1beta1``), which depends on the MachineSet it
targets. Objects come from :func:`batchplane.targets.openshift.machines.gpu_capacity_plan`.

The autoscaler owns a MachineSet's ``spec.replicas`` once it runs, so the MachineSet ignores changes
to it (``ignore_changes``): ``pulumi up`` never scales a pool back to its initial replica count.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

import pulumi

from batchplane.kubernetes_object import KubernetesObject

TYPE_TOKEN = "batchplane:openshift:GpuCapacity"


class OpenShiftGpuCapacityArgs(TypedDict):
    """Inputs of :class:`OpenShiftGpuCapacity`."""

    pools: list[str]
    """Required. Pool names, in config order (child resource names derive from them)."""
    machine_sets: list[dict[str, Any]]
    """Required. One MachineSet object per pool, same order."""
    machine_autoscalers: list[dict[str, Any]]
    """Required. One MachineAutoscaler object per pool, same order."""
    cluster_autoscaler: NotRequired[dict[str, Any] | None]
    """The ClusterAutoscaler ``default`` object, or None when the cluster admin owns it. Defaults to None."""


def _custom(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> KubernetesObject:
    return KubernetesObject(name, obj, opts=opts)


class OpenShiftGpuCapacity(pulumi.ComponentResource):
    """The GPU MachineSets, their MachineAutoscalers and the ClusterAutoscaler of an OpenShift stack.

    Attributes:
        cluster_autoscaler: the ClusterAutoscaler, or None.
        machine_sets: MachineSet resources by pool name.
        machine_autoscalers: MachineAutoscaler resources by pool name.
    """

    cluster_autoscaler: pulumi.Resource | None
    machine_sets: dict[str, pulumi.Resource]
    machine_autoscalers: dict[str, pulumi.Resource]

    def __init__(
        self, name: str, args: OpenShiftGpuCapacityArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        self.cluster_autoscaler = None
        cluster = args.get("cluster_autoscaler")
        if cluster is not None:
            self.cluster_autoscaler = _custom(
                f"{name}-cluster-autoscaler", cluster, pulumi.ResourceOptions(parent=self)
            )
        self.machine_sets = {}
        self.machine_autoscalers = {}
        for pool, machine_set, autoscaler in zip(
            args["pools"], args["machine_sets"], args["machine_autoscalers"], strict=True
        ):
            ms = _custom(
                f"{name}-{pool}-machineset",
                machine_set,
                pulumi.ResourceOptions(parent=self, ignore_changes=["spec.replicas"]),
            )
            deps: list[pulumi.Resource] = [ms]
            if self.cluster_autoscaler is not None:
                deps.append(self.cluster_autoscaler)
            self.machine_sets[pool] = ms
            self.machine_autoscalers[pool] = _custom(
                f"{name}-{pool}-machineautoscaler",
                autoscaler,
                pulumi.ResourceOptions(parent=self, depends_on=deps),
            )
        self.register_outputs({})

"""OpenShiftGpuCapacity: GPU MachineSets that the Cluster Autoscaler scales from zero.

Declares, as ``apiextensions.CustomResource``s through the stack's (upserting) Kubernetes provider:
the cluster-wide ``ClusterAutoscaler`` ``default`` (``autoscaling.openshift.io/v1``), then per GPU pool
a ``machine.openshift.io/v1beta1`` MachineSet in ``openshift-machine-api`` and its
``MachineAutoscaler`` (``autoscaling.openshift.io/v1beta1``), which depends on the MachineSet it
targets. Objects come from :func:`batchplane.targets.openshift.machines.gpu_capacity_plan`. An AWS pool that copies a
worker MachineSet gets a ``machineset-source`` lookup first
(:class:`~batchplane.targets.openshift.machine_lookup.MachineSetSourceLookup`); its MachineSet's ``providerSpec`` is
:func:`~batchplane.targets.openshift.machines.copied_provider_spec` of what the lookup found.

The autoscaler owns a MachineSet's ``spec.replicas`` once it runs, so the MachineSet ignores changes
to it (``ignore_changes``): ``pulumi up`` never scales a pool back to its initial replica count.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NotRequired, TypedDict

import pulumi

from batchplane.kubernetes_object import KubernetesObject
from batchplane.targets.openshift.machine_lookup import MachineSetSourceLookup
from batchplane.targets.openshift.machines import MachineSetSource, copied_provider_spec

#: The key of the offline placeholder (:data:`batchplane.offline.mocks.NOT_CHECKED_OFFLINE`; not imported: the offline
#: engine sits above the program).
NOT_CHECKED_OFFLINE = "batchplane.dev/not-checked-offline"

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
    sources: NotRequired[list[MachineSetSource | None]]
    """Per pool, same order: the worker MachineSet its ``providerSpec`` is copied from at deploy time
    (:func:`~batchplane.targets.openshift.machines.machine_set_sources`), or None. Defaults to none."""
    context: NotRequired[pulumi.Input[str | None]]
    """The provider's kubeconfig context, for the lookups. Defaults to none (the current context)."""
    kubeconfig: NotRequired[pulumi.Input[str | None]]
    """The provider's kubeconfig (content or path), for the lookups. Defaults to none."""


def _custom(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> KubernetesObject:
    return KubernetesObject(name, obj, opts=opts)


def _copied(source: MachineSetSource, spec: Any) -> dict[str, Any]:
    return copied_provider_spec(spec if isinstance(spec, dict) else {}, source.infrastructure_id, source.aws)


def _with_provider_spec(machine_set: dict[str, Any], value: pulumi.Output[dict[str, Any]]) -> dict[str, Any]:
    """``machine_set`` with ``spec.template.spec.providerSpec.value`` set to ``value``."""
    template = machine_set["spec"]["template"]
    return {
        **machine_set,
        "spec": {
            **machine_set["spec"],
            "template": {**template, "spec": {**template["spec"], "providerSpec": {"value": value}}},
        },
    }


def _note_offline(source: MachineSetSource, checked: Any) -> None:
    """Offline (the mock engine's lookup answers ``checked: false``) say what was not looked up, never a verdict."""
    if checked is False:
        which = source.explicit or f"the first worker MachineSet in {source.zone}"
        pulumi.log.info(
            f'GPU pool "{source.pool}": the providerSpec copied from {which} is not checked offline (the rendered '
            f"MachineSet carries a {NOT_CHECKED_OFFLINE} placeholder): run batchplane preflight"
        )


class OpenShiftGpuCapacity(pulumi.ComponentResource):
    """The GPU MachineSets, their MachineAutoscalers and the ClusterAutoscaler of an OpenShift stack.

    Attributes:
        cluster_autoscaler: the ClusterAutoscaler, or None.
        machine_sets: MachineSet resources by pool name.
        machine_autoscalers: MachineAutoscaler resources by pool name.
        sources: the deploy-time ``machineset-source`` lookups by pool name (AWS pools that copy a worker
            MachineSet).
    """

    cluster_autoscaler: pulumi.Resource | None
    machine_sets: dict[str, pulumi.Resource]
    machine_autoscalers: dict[str, pulumi.Resource]
    sources: dict[str, MachineSetSourceLookup]

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
        self.sources = {}
        sources = args.get("sources") or [None] * len(args["pools"])
        for pool, machine_set, autoscaler, source in zip(
            args["pools"], args["machine_sets"], args["machine_autoscalers"], sources, strict=True
        ):
            if source is not None:
                lookup = MachineSetSourceLookup(
                    f"{name}-{pool}-machineset-source",
                    pool=pool,
                    zone=source.zone,
                    infrastructure_id=source.infrastructure_id,
                    source_machine_set=source.explicit,
                    context=args.get("context"),
                    kubeconfig=args.get("kubeconfig"),
                    opts=pulumi.ResourceOptions(parent=self),
                )
                self.sources[pool] = lookup
                lookup.checked.apply(partial(_note_offline, source))
                machine_set = _with_provider_spec(
                    machine_set,
                    lookup.providerSpec.apply(partial(_copied, source)),
                )
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

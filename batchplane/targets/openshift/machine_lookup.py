"""The deploy-time lookup of the worker MachineSet a GPU pool copies (a Pulumi dynamic resource).

``MachineSetSourceLookup`` (``pulumi-python:dynamic:Resource``, input ``gate: machineset-source``) lists the
``machine.openshift.io/v1beta1`` MachineSets of ``openshift-machine-api`` through the stack's own connection (the
provider's kubeconfig and context, as every readiness gate) when ``pulumi up`` creates it, picks the one the pool
copies (:func:`batchplane.targets.openshift.machines.choose_worker_machine_set`) and outputs its name
(``machineSet``), its ``providerSpec`` and ``checked: true``; without one it fails, naming the zone and the
MachineSets it saw, before any MachineSet is created. Its inputs change (zone, explicit MachineSet) → it looks again.
During ``pulumi preview`` nothing is read; under the offline engine the mock answers a placeholder with
``checked: false`` (:data:`batchplane.offline.mocks.NOT_CHECKED_OFFLINE`).

Imports Pulumi at module import: only :mod:`batchplane.targets.openshift.gpu_capacity` imports it.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi.dynamic

from batchplane.targets.openshift.machines import MACHINE_API_NAMESPACE, MACHINE_API_VERSION

#: Inputs that do not trigger a new lookup when they change.
_NOT_COMPARED = frozenset({"kubeconfig", "__provider", "machineSet", "providerSpec", "checked"})


def lookup_outputs(props: dict[str, Any], client: Any) -> dict[str, Any]:
    """The lookup's outputs for ``props`` (``zone``, ``infrastructureId``, ``sourceMachineSet``) with a
    :class:`~batchplane.operators.readiness.ClusterClient`.

    Raises:
        batchplane.operators.readiness.GateError: no MachineSet to copy (the message says why), or the MachineSets
            cannot be listed.
    """
    from batchplane.operators.readiness import ClusterApiError, GateError
    from batchplane.targets.openshift.machines import choose_worker_machine_set

    try:
        items = client.list(MACHINE_API_VERSION, "machinesets", MACHINE_API_NAMESPACE)
    except ClusterApiError as exc:
        raise GateError(f"cannot list the MachineSets of {MACHINE_API_NAMESPACE}: {exc}") from exc
    choice = choose_worker_machine_set(
        items,
        str(props["zone"]),
        props.get("infrastructureId") or None,
        props.get("sourceMachineSet") or None,
    )
    if choice.problem is not None:
        raise GateError(f'GPU pool "{props.get("pool")}": {choice.problem}')
    outs = {k: v for k, v in props.items() if k not in {"kubeconfig", "__provider"}}
    outs.update({"machineSet": choice.name, "providerSpec": choice.provider_spec, "checked": True})
    return outs


class MachineSetSourceProvider(pulumi.dynamic.ResourceProvider):
    """Dynamic provider: create/update look the MachineSet up; delete does nothing."""

    def _run(self, props: dict[str, Any]) -> dict[str, Any]:
        from batchplane.operators.readiness import KubernetesClusterClient

        client = KubernetesClusterClient(props.get("kubeconfig") or None, props.get("context") or None)
        return lookup_outputs(props, client)

    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        """Look up; the id names the pool and zone."""
        return pulumi.dynamic.CreateResult(
            id_=f"machineset-source/{props['pool']}/{props['zone']}", outs=self._run(props)
        )

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        """Changed when the zone, the explicit MachineSet or the infrastructure ID differ; never replaces."""
        keys = (set(olds) | set(news)) - _NOT_COMPARED
        changed = sorted(k for k in keys if k in news and olds.get(k) != news.get(k))
        return pulumi.dynamic.DiffResult(changes=bool(changed), replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        """Look up again."""
        return pulumi.dynamic.UpdateResult(outs=self._run(news))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """Nothing to delete."""


class MachineSetSourceLookup(pulumi.dynamic.Resource):
    """The worker MachineSet a GPU pool copies, looked up when ``pulumi up`` runs.

    Args:
        name: the resource name.
        pool: the pool's name (for messages).
        zone: the pool's availability zone.
        infrastructure_id: the cluster's infrastructure ID.
        source_machine_set: ``aws.sourceMachineSet``, or None (the first worker MachineSet of the zone).
        context: the provider's kubeconfig context.
        kubeconfig: the provider's kubeconfig (content or path), stored as a secret; None for the default.
        opts: resource options.

    Attributes:
        machineSet: the copied MachineSet's name (``""`` offline).
        providerSpec: its ``spec.template.spec.providerSpec.value`` (offline: the placeholder).
        checked: true when read from the cluster, false offline.
    """

    machineSet: pulumi.Output[Any]
    providerSpec: pulumi.Output[Any]
    checked: pulumi.Output[Any]

    def __init__(
        self,
        name: str,
        *,
        pool: str,
        zone: str,
        infrastructure_id: str,
        source_machine_set: str | None,
        context: pulumi.Input[str | None],
        kubeconfig: pulumi.Input[str | None] | None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props: dict[str, Any] = {
            "gate": "machineset-source",
            "pool": pool,
            "zone": zone,
            "infrastructureId": infrastructure_id,
            "sourceMachineSet": source_machine_set,
            "context": context,
            "kubeconfig": None if kubeconfig is None else pulumi.Output.secret(kubeconfig),
            "machineSet": None,
            "providerSpec": None,
            "checked": None,
        }
        super().__init__(MachineSetSourceProvider(), name, props, opts)

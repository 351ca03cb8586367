"""MultiKueueWorkerAccess: what the manager's Kueue needs on a declared worker, and the kubeconfig it yields.

Children (``parent=self``, named ``<name>-<role>``), through the worker's Kubernetes provider, after the worker's
Kueue readiness gate (Kueue's namespace exists then): the ServiceAccount, ClusterRole and ClusterRoleBinding of
:func:`batchplane.multikueue.worker.worker_access_objects`, the ``kubernetes.io/service-account-token`` Secret,
and a :class:`~batchplane.operators.readiness_gate.ReadinessGate` that waits until the token controller has
filled that Secret and outputs the token and the cluster CA as secrets. :attr:`MultiKueueWorkerAccess.kubeconfig`
is the kubeconfig (secret) the manager stores under the key ``kubeconfig`` of its MultiKueueCluster's Secret.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NotRequired, TypedDict

import pulumi
import yaml

from batchplane.kubernetes_object import KubernetesObject
from batchplane.multikueue.worker import SERVICE_ACCOUNT, worker_access_objects, worker_kubeconfig
from batchplane.operators.readiness_gate import ReadinessGate

TYPE_TOKEN = "batchplane:multikueue:WorkerAccess"

_ROLES = {"ServiceAccount": "sa", "ClusterRole": "role", "ClusterRoleBinding": "binding", "Secret": "token"}


class MultiKueueWorkerAccessArgs(TypedDict):
    """Inputs of :class:`MultiKueueWorkerAccess`."""

    worker: str
    """Required. The worker's name (the MultiKueueCluster's; names the kubeconfig's cluster and context)."""
    kueue_namespace: str
    """Required. Kueue's namespace on the worker (``kueue-system`` unless ``operators.kueue.namespace``)."""
    frameworks: Sequence[str]
    """Required. The Kueue integrations the worker enables: the ClusterRole covers the kinds MultiKueue
    dispatches among them."""
    server: pulumi.Input[str]
    """Required. The https URL at which the manager reaches the worker's API server."""
    context: pulumi.Input[str | None]
    """Required (``None`` = current context). The worker provider's kubeconfig context, for the token gate."""
    kubeconfig: NotRequired[pulumi.Input[str | None]]
    """The worker provider's kubeconfig (content or path), for the token gate. Defaults to none."""
    depends_on: NotRequired[list[pulumi.Resource]]
    """What the objects wait for: the worker's Kueue readiness gate. Defaults to none."""
    timeout_seconds: NotRequired[int]
    """How long the token gate waits, seconds. Defaults to 120."""


class MultiKueueWorkerAccess(pulumi.ComponentResource):
    """The manager's access to one declared worker.

    Attributes:
        resources: the ServiceAccount, ClusterRole, ClusterRoleBinding and token Secret by kind.
        token_gate: the gate that waits for the token and outputs it.
        kubeconfig: the manager's kubeconfig for this worker (secret).
    """

    resources: dict[str, pulumi.Resource]
    token_gate: ReadinessGate
    kubeconfig: pulumi.Output[str]

    def __init__(
        self, name: str, args: MultiKueueWorkerAccessArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        namespace = args["kueue_namespace"]
        before = list(args.get("depends_on", []))
        self.resources = {}
        for obj in worker_access_objects(namespace, args["frameworks"]):
            deps = before + list(self.resources.values())[-1:]
            self.resources[obj["kind"]] = KubernetesObject(
                f"{name}-{_ROLES[obj['kind']]}",
                obj,
                opts=pulumi.ResourceOptions(parent=self, depends_on=deps),
            )
        self.token_gate = ReadinessGate(
            f"{name}-token-ready",
            {
                "gate": "service-account-token",
                "namespace": namespace,
                "secret": SERVICE_ACCOUNT,
                "timeout_seconds": args.get("timeout_seconds", 120),
                "interval_seconds": 2,
                "context": args["context"],
                "kubeconfig": args.get("kubeconfig"),
            },
            pulumi.ResourceOptions(parent=self, depends_on=[self.resources["Secret"]]),
        )
        worker = args["worker"]
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(args["server"], self.token_gate.caData, self.token_gate.token).apply(
                lambda parts: yaml.safe_dump(
                    worker_kubeconfig(worker, str(parts[0]), str(parts[1]), str(parts[2])), sort_keys=False
                )
            )
        )
        self.register_outputs({"kubeconfig": self.kubeconfig})

"""OpenShiftOperators: stage 2 on OpenShift — OLM installs gated on their CSVs, then the operators' CRs.

For each operator (cert-manager Operator for Red Hat OpenShift → Red Hat build of Kueue → Red Hat
OpenShift AI): a Namespace, an OperatorGroup and a Subscription (``apiextensions.CustomResource``s),
then a CSV :class:`~batchplane.operators.readiness_gate.ReadinessGate` that waits for the Subscription's CSV to
reach ``Succeeded`` — OLM installs CRDs asynchronously, so they do not exist at preview time and the
operators' CRs must wait (https://github.com/pulumi/pulumi-kubernetes/issues/3176). Each install depends on the
previous gate.
Then the ``Kueue`` CR (when Batchplane owns it) and the DataScienceCluster, and finally a Kueue
webhook gate (dry-run ResourceFlavor create) that Kueue objects depend on. Other operands (the GPU
prerequisites' ``NodeFeatureDiscovery`` and ``ClusterPolicy``) follow their own operator's CSV gate.
No Helm.

Give this component a provider with ``upsert_existing_objects=True``: operators and OpenShift AI
pre-create some of these objects (namespaces, the ``Kueue`` CR).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from batchplane.kubernetes_object import KubernetesObject
from batchplane.operators.readiness_gate import ReadinessGate, ReadinessGateArgs
from batchplane.targets.openshift.olm import OpenShiftPlan

TYPE_TOKEN = "batchplane:openshift_operators:OpenShiftOperators"


class OpenShiftOperatorsArgs(TypedDict):
    """Inputs of :class:`OpenShiftOperators`."""

    plan: OpenShiftPlan
    """Required. From :func:`batchplane.operators.openshift_plan`."""
    context: pulumi.Input[str | None]
    """Required. The provider's kubeconfig context, for the gates."""
    timeout_seconds: int
    """Required. Each gate's timeout, seconds."""
    interval_seconds: int
    """Required. Seconds between a gate's checks."""
    resource_flavor_api_version: str
    """Required. apiVersion of the Kueue webhook gate's dry-run ResourceFlavor (the stack's Kueue API version)."""
    kubeconfig: NotRequired[pulumi.Input[str | None]]
    """The provider's kubeconfig (content or path), for the gates. Defaults to none."""


def _awaited_version(spec: dict[str, Any]) -> str:
    """What the CSV gate awaits, as its ``version`` input: the channel, and the pinned CSV when there is one
    (bumping ``startingCsv`` re-runs the gate, which then approves the upgrade's InstallPlan)."""
    channel = str(spec["channel"])
    return f"{channel}@{spec['startingCSV']}" if spec.get("startingCSV") else channel


def _custom(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> KubernetesObject:
    return KubernetesObject(name, obj, opts=opts)


class OpenShiftOperators(pulumi.ComponentResource):
    """OLM installs, CSV gates, the ``Kueue`` CR, the DataScienceCluster and the Kueue webhook gate.

    Attributes:
        subscriptions: Subscription resources by role (``cert-manager``, ``kueue``, ``openshift-ai``).
        csv_gates: CSV gates by role.
        kueue_cr: the ``Kueue`` CR, or ``None`` when OpenShift AI manages it.
        data_science_cluster: the DataScienceCluster, or ``None`` without OpenShift AI.
        operands: other operator CRs by role (``nfd-instance``, ``cluster-policy``).
        kueue_ready: what Kueue objects must depend on (the Kueue webhook gate, and the ``Kueue`` CR's frameworks
            patch when there is one).
        kueue_cr_patch: the server-side apply of the ``Kueue`` CR's frameworks where OpenShift AI 3.x creates the CR
            (``kubernetes:kueue.openshift.io/v1:KueuePatch``), or ``None``.
        appwrapper: the AppWrapper controller's release manifest (after the Kueue webhook gate), or ``None``.
    """

    subscriptions: dict[str, pulumi.Resource]
    csv_gates: dict[str, ReadinessGate]
    kueue_cr: pulumi.Resource | None
    data_science_cluster: pulumi.Resource | None
    operands: dict[str, pulumi.Resource]
    kueue_ready: list[pulumi.Resource]
    kueue_cr_patch: pulumi.Resource | None
    appwrapper: pulumi.Resource | None

    def __init__(
        self, name: str, args: OpenShiftOperatorsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        plan = args["plan"]
        self.subscriptions = {}
        self.csv_gates = {}

        def child(deps: Sequence[pulumi.Resource]) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(parent=self, depends_on=list(deps))

        def gate(role: str, extra: dict[str, Any], deps: Sequence[pulumi.Resource]) -> ReadinessGate:
            gate_args: ReadinessGateArgs = {
                "timeout_seconds": args["timeout_seconds"],
                "interval_seconds": args["interval_seconds"],
                "context": args["context"],
                "kubeconfig": args.get("kubeconfig"),
                **extra,  # type: ignore[typeddict-item]
            }
            return ReadinessGate(f"{name}-{role}", gate_args, child(deps))

        previous: Sequence[pulumi.Resource] = []
        for install in plan.installs:
            prefix = f"{name}-{install.role}"
            ns = k8s.core.v1.Namespace(
                f"{prefix}-namespace", metadata=install.namespace["metadata"], opts=child(previous)
            )
            og = _custom(f"{prefix}-operatorgroup", install.operator_group, child([ns]))
            sub = _custom(f"{prefix}-subscription", install.subscription, child([ns, og, *previous]))
            self.subscriptions[install.role] = sub
            csv_gate = gate(
                f"{install.role}-csv-ready",
                {
                    "gate": "olm-csv",
                    "namespace": install.namespace_name,
                    "subscription": install.subscription_name,
                    "approve_csv": install.approve_csv,
                    "version": _awaited_version(install.subscription["spec"]),
                },
                [sub],
            )
            self.csv_gates[install.role] = csv_gate
            previous = [csv_gate]

        kueue_csv: list[pulumi.Resource] = [self.csv_gates["kueue"]] if "kueue" in self.csv_gates else []
        self.kueue_cr = None
        if plan.kueue_cr is not None:
            self.kueue_cr = _custom(f"{name}-kueue-cr", plan.kueue_cr, child(kueue_csv))
        self.data_science_cluster = None
        if plan.data_science_cluster is not None:
            deps: list[pulumi.Resource] = [self.csv_gates["openshift-ai"], *kueue_csv]
            if self.kueue_cr is not None:
                deps.append(self.kueue_cr)
            self.data_science_cluster = _custom(f"{name}-dsc", plan.data_science_cluster, child(deps))
        serving: list[pulumi.Resource] = [
            r for r in (self.kueue_cr, self.data_science_cluster) if r is not None
        ]
        webhook_gate = gate(
            "kueue-ready",
            {
                "gate": "kueue-webhook",
                "namespace": plan.kueue_namespace,
                "service": None,
                "resource_flavor_api_version": args["resource_flavor_api_version"],
            },
            serving or kueue_csv,
        )
        self.kueue_ready = [webhook_gate]
        self.kueue_cr_patch = None
        if (
            plan.kueue_cr_patch is not None
        ):  # OpenShift AI 3.x created the CR: own its frameworks (server-side apply)
            patch = plan.kueue_cr_patch
            self.kueue_cr_patch = k8s.apiextensions.CustomResourcePatch(
                f"{name}-kueue-cr-frameworks",
                api_version=patch["apiVersion"],
                kind=patch["kind"],
                metadata=patch["metadata"],
                spec=patch["spec"],
                opts=child([webhook_gate]),  # the Red Hat build of Kueue serves: the CR exists
            )
            self.kueue_ready.append(self.kueue_cr_patch)
        self.appwrapper = None
        if plan.appwrapper_source is not None:
            self.appwrapper = k8s.yaml.v2.ConfigFile(
                f"{name}-appwrapper", file=plan.appwrapper_source, opts=child([webhook_gate])
            )
        self.operands = {
            operand.role: _custom(
                f"{name}-{operand.role}", operand.obj, child([self.csv_gates[operand.after]])
            )
            for operand in plan.operands
        }
        self.register_outputs({})

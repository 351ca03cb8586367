"""OpenShiftOperators: stage 2 on OpenShift — OLM installs gated on their CSVs, then the operators' CRs.

For each operator (cert-manager Operator for Red Hat OpenShift → Red Hat build of Kueue → Red Hat
OpenShift AI): an ``olm-namespace`` lookup of what already runs in its namespace
(:mod:`batchplane.operators.olm_lookup`: an existing OperatorGroup is reused — the stack declares it under its
name and spec, so no second group makes OLM fail the CSVs with ``TooManyOperatorGroups`` —, an existing
Subscription of the package adopted by name, one of another channel or package refused unless ``adopt: true``),
then a Namespace, an OperatorGroup and a Subscription (``apiextensions.CustomResource``s),
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
from functools import partial
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from batchplane.kubernetes_object import KubernetesObject
from batchplane.operators.readiness import OlmCatalog
from batchplane.operators.readiness_gate import ReadinessGate, ReadinessGateArgs
from batchplane.targets.openshift.olm import OlmInstall, OpenShiftPlan

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


def _awaited_version(spec: dict[str, Any], target: str | None = None) -> str:
    """What the CSV gate awaits, as its ``version`` input: the channel, and the target CSV (else the pinned
    ``startingCSV``) when there is one (setting ``targetCsv`` re-runs the gate, which then approves the upgrade's
    InstallPlans step by step)."""
    channel = str(spec["channel"])
    csv = target or spec.get("startingCSV")
    return f"{channel}@{csv}" if csv else channel


def namespace_lookup_args(install: OlmInstall) -> dict[str, Any]:
    """The ``olm-namespace`` lookup gate's inputs for one install: what the stack would declare in its namespace."""
    spec = install.subscription["spec"]
    return {
        "gate": "olm-namespace",
        "namespace": install.namespace_name,
        "lookup": {
            "package": str(spec["name"]),
            "channel": str(spec["channel"]),
            "stackOperatorGroup": str(install.operator_group["metadata"]["name"]),
            "stackOperatorGroupSpec": dict(install.operator_group.get("spec") or {}),
            "stackSubscription": install.subscription_name,
            "adopt": install.adopt,
        },
    }


def _or(planned: Any, found: Any) -> Any:
    """What the lookup found, or the stack's own ``planned`` value while it has found nothing yet (``None``)."""
    return planned if found is None or found == "" else found


def _note_offline(install: OlmInstall, checked: Any) -> None:
    """Offline (the mock engine's lookups answer ``checked: false``) say what was not looked up, never a verdict."""
    if checked is False:
        pulumi.log.info(
            f"OperatorGroup and Subscription in namespace {install.namespace_name} not checked offline (the stack's "
            "own are rendered; an existing OperatorGroup is reused and a Subscription of another channel refused at "
            "deploy time): run batchplane preflight"
        )


def olm_catalog(spec: dict[str, Any]) -> OlmCatalog:
    """The package, channel and CatalogSource of a Subscription ``spec``."""
    return OlmCatalog(
        str(spec["name"]), str(spec["channel"]), str(spec["source"]), str(spec["sourceNamespace"])
    )


def _custom(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> KubernetesObject:
    return KubernetesObject(name, obj, opts=opts)


class OpenShiftOperators(pulumi.ComponentResource):
    """OLM installs, CSV gates, the ``Kueue`` CR, the DataScienceCluster and the Kueue webhook gate.

    Attributes:
        subscriptions: Subscription resources by role (``cert-manager``, ``kueue``, ``openshift-ai``).
        csv_gates: CSV gates by role.
        namespace_lookups: the ``olm-namespace`` lookups by role: the OperatorGroup and Subscription already in the
            operator's namespace, read at deploy time before anything there changes.
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
    namespace_lookups: dict[str, ReadinessGate]
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
        self.namespace_lookups = {}
        for install in plan.installs:
            prefix = f"{name}-{install.role}"
            lookup = gate(f"{install.role}-olm-lookup", namespace_lookup_args(install), previous)
            self.namespace_lookups[install.role] = lookup
            lookup.checked.apply(partial(_note_offline, install))
            ns = k8s.core.v1.Namespace(
                f"{prefix}-namespace", metadata=install.namespace["metadata"], opts=child([*previous, lookup])
            )
            group = install.operator_group
            # until the lookup has answered (a preview of its first run) the stack's own name and spec stand in
            og = _custom(
                f"{prefix}-operatorgroup",
                {
                    **group,
                    "metadata": {
                        **group["metadata"],
                        "name": lookup.operatorGroup.apply(partial(_or, group["metadata"]["name"])),
                    },
                    "spec": lookup.operatorGroupSpec.apply(partial(_or, group.get("spec") or {})),
                },
                child([ns]),
            )
            subscription_name: pulumi.Output[str] = lookup.subscription.apply(
                partial(_or, install.subscription_name)
            )
            sub_obj = install.subscription
            sub = _custom(
                f"{prefix}-subscription",
                {**sub_obj, "metadata": {**sub_obj["metadata"], "name": subscription_name}},
                child([ns, og, *previous]),
            )
            self.subscriptions[install.role] = sub
            csv_gate = gate(
                f"{install.role}-csv-ready",
                {
                    "gate": "olm-csv",
                    "namespace": install.namespace_name,
                    "subscription": subscription_name,
                    "approve_csv": install.approve_csv,
                    "catalog": olm_catalog(install.subscription["spec"]),
                    "version": _awaited_version(install.subscription["spec"], install.approve_csv),
                },
                [sub],
            )
            self.csv_gates[install.role] = csv_gate
            previous = [csv_gate]

        kueue_csv: list[pulumi.Resource] = [self.csv_gates["kueue"]] if "kueue" in self.csv_gates else []
        self.kueue_cr = None
        if plan.kueue_cr is not None:
            self.kueue_cr = _custom(f"{name}-kueue-cr", plan.kueue_cr, child(kueue_csv))
        self.operands = {
            operand.role: _custom(
                f"{name}-{operand.role}", operand.obj, child([self.csv_gates[operand.after]])
            )
            for operand in plan.operands
        }
        self.data_science_cluster = None
        if plan.data_science_cluster is not None:
            deps: list[pulumi.Resource] = [self.csv_gates["openshift-ai"], *kueue_csv]
            if self.kueue_cr is not None:
                deps.append(self.kueue_cr)
            deps += [self.operands[o.role] for o in plan.operands if o.before_dsc]
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
        self.register_outputs({})

"""The ``openshift`` target → OLM objects, the DataScienceCluster and the Red Hat build of Kueue's CR.

Each operator is a Namespace + OperatorGroup (``operators.coreos.com/v1``) + Subscription
(``operators.coreos.com/v1alpha1``), with names, namespaces and install modes from
shared/docs/platforms.md §4.1; the DataScienceCluster and the ``Kueue`` CR follow §4.2–4.3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from batchplane.config.openshift import OlmSubscription, OpenShiftTarget, rhbok_frameworks

Object = dict[str, Any]
MANAGED_BY = {"app.kubernetes.io/managed-by": "batchplane"}


@dataclass(frozen=True)
class OlmInstall:
    """One operator installed by OLM.

    Attributes:
        role: ``cert-manager``, ``kueue`` or ``openshift-ai`` (used in resource names).
        namespace: the operator's Namespace object.
        operator_group: its OperatorGroup object.
        subscription: its Subscription object.
    """

    role: str
    namespace: Object
    operator_group: Object
    subscription: Object

    @property
    def subscription_name(self) -> str:
        """The Subscription's name (the CSV gate reads its ``status.installedCSV``)."""
        return str(self.subscription["metadata"]["name"])

    @property
    def namespace_name(self) -> str:
        """The operator's namespace."""
        return str(self.namespace["metadata"]["name"])


@dataclass(frozen=True)
class OpenShiftPlan:
    """Everything the OpenShift target declares, in order: OLM installs (each gated on its CSV),
    then the ``Kueue`` CR (when Batchplane owns it) and the DataScienceCluster.

    Attributes:
        installs: cert-manager, kueue, then openshift-ai (when configured).
        kueue_cr: the ``kueue.openshift.io/v1`` ``Kueue`` CR, or ``None`` when OpenShift AI manages it.
        data_science_cluster: the DataScienceCluster, or ``None`` without OpenShift AI.
    """

    installs: list[OlmInstall]
    kueue_cr: Object | None
    data_science_cluster: Object | None


def _install(
    role: str,
    namespace: str,
    group: str,
    package: str,
    sub: OlmSubscription,
    group_spec: Object | None = None,
) -> OlmInstall:
    ns = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": namespace, "labels": dict(MANAGED_BY)},
    }
    og = {
        "apiVersion": "operators.coreos.com/v1",
        "kind": "OperatorGroup",
        "metadata": {"name": group, "namespace": namespace, "labels": dict(MANAGED_BY)},
        "spec": dict(group_spec or {}),
    }
    spec: Object = {
        "channel": sub.channel,
        "installPlanApproval": sub.approval,
        "name": package,
        "source": sub.source,
        "sourceNamespace": sub.source_namespace,
    }
    if sub.starting_csv:
        spec["startingCSV"] = sub.starting_csv
    subscription = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": package, "namespace": namespace, "labels": dict(MANAGED_BY)},
        "spec": spec,
    }
    return OlmInstall(role, ns, og, subscription)


def kueue_cr(target: OpenShiftTarget) -> Object:
    """The singleton ``Kueue`` CR (``metadata.name`` must be ``cluster``) with the derived frameworks."""
    config: Object = {"integrations": {"frameworks": rhbok_frameworks(target)}}
    if target.kueue.label_policy is not None:
        config["workloadManagement"] = {"labelPolicy": target.kueue.label_policy}
    return {
        "apiVersion": "kueue.openshift.io/v1",
        "kind": "Kueue",
        "metadata": {"name": "cluster", "labels": dict(MANAGED_BY)},
        "spec": {"managementState": "Managed", "config": config},
    }


def data_science_cluster(target: OpenShiftTarget) -> Object | None:
    """The DataScienceCluster: v1 (RHOAI 2.x) or v2 (3.x); kueue ``Unmanaged`` (RHBoK provides Kueue)."""
    ai = target.openshift_ai
    if ai is None:
        return None
    components: Object = {"kueue": {"managementState": "Unmanaged"}}
    for name, managed in ai.component_states().items():
        components[name] = {"managementState": "Managed" if managed else "Removed"}
    version = "v1" if ai.release == "2.x" else "v2"
    return {
        "apiVersion": f"datasciencecluster.opendatahub.io/{version}",
        "kind": "DataScienceCluster",
        "metadata": {"name": ai.data_science_cluster_name, "labels": dict(MANAGED_BY)},
        "spec": {"components": dict(sorted(components.items()))},
    }


def openshift_plan(target: OpenShiftTarget) -> OpenShiftPlan:
    """The OLM installs, ``Kueue`` CR and DataScienceCluster of an ``openshift`` target."""
    installs = [
        _install(
            "cert-manager",
            "cert-manager-operator",
            "openshift-cert-manager-operator",
            "openshift-cert-manager-operator",
            target.cert_manager,
        ),
        _install(
            "kueue", "openshift-kueue-operator", "openshift-kueue-operator", "kueue-operator", target.kueue
        ),
    ]
    if target.openshift_ai is not None:
        installs.append(
            _install(
                "openshift-ai", "redhat-ods-operator", "rhods-operator", "rhods-operator", target.openshift_ai
            )
        )
    return OpenShiftPlan(
        installs, kueue_cr(target) if target.creates_kueue_cr() else None, data_science_cluster(target)
    )

"""The ``openshift`` target → OLM objects, the DataScienceCluster and the Red Hat build of Kueue's CR.

Each operator is a Namespace + OperatorGroup (``operators.coreos.com/v1``) + Subscription
(``operators.coreos.com/v1alpha1``), with names, namespaces and install modes from the operators' CSVs
(https://github.com/opendatahub-io/opendatahub-operator ``config/rhoai/manifests/bases/``,
https://github.com/openshift/kueue-operator ``bundle/manifests/``); the DataScienceCluster and the ``Kueue`` CR
follow their CRDs (opendatahub-operator ``api/datasciencecluster/``, kueue-operator
``bundle/manifests/kueue.openshift.io_kueues.yaml``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from batchplane.frameworks import appwrapper
from batchplane.operators.installs import appwrapper_source
from batchplane.targets.openshift.config import (
    RHBOK_FRAMEWORKS,
    OlmSubscription,
    OpenShiftTarget,
    rhbok_frameworks,
)
from batchplane.targets.openshift.dsc import (
    JOBSET_NAMESPACE,
    JOBSET_PACKAGE,
    jobset_operator_cr,
    needs_jobset_operator,
    render_components,
)

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
        approve_csv: the target CSV (``targetCsv``, else ``startingCsv``) the CSV gate approves InstallPlans up to,
            one step at a time along the channel (``Manual`` approval), or ``None`` (``Automatic``, or ``Manual``
            left to a person).
        adopt: ``adopt`` of the subscription settings: take over an existing Subscription of another package or
            channel.
        target_key: the settings key :attr:`approve_csv` comes from (``targetCsv`` or ``startingCsv``), or ``None``.
    """

    role: str
    namespace: Object
    operator_group: Object
    subscription: Object
    approve_csv: str | None = None
    adopt: bool = False
    target_key: str | None = None

    @property
    def subscription_name(self) -> str:
        """The Subscription's name (the CSV gate reads its ``status.installedCSV``)."""
        return str(self.subscription["metadata"]["name"])

    @property
    def namespace_name(self) -> str:
        """The operator's namespace."""
        return str(self.namespace["metadata"]["name"])


@dataclass(frozen=True)
class Operand:
    """A CR of an OLM-installed operator, declared once that operator's CSV gate passes.

    Attributes:
        role: resource-name role, e.g. ``nfd-instance``, ``cluster-policy``.
        after: the :attr:`OlmInstall.role` whose CSV gate it waits for.
        obj: the object.
        before_dsc: the DataScienceCluster waits for it (the ``JobSetOperator`` its trainer looks for).
    """

    role: str
    after: str
    obj: Object
    before_dsc: bool = False


@dataclass(frozen=True)
class OpenShiftPlan:
    """Everything the OpenShift target declares, in order: OLM installs (each gated on its CSV),
    then the ``Kueue`` CR (when Batchplane owns it), the DataScienceCluster and other operands.

    Attributes:
        installs: cert-manager, kueue, jobset-operator (trainer Managed on OpenShift AI 3.2+), openshift-ai (when
            configured), then nfd and gpu-operator
            (when ``gpuOperator.install``).
        kueue_cr: the ``kueue.openshift.io/v1`` ``Kueue`` CR, or ``None`` when OpenShift AI manages it.
        data_science_cluster: the DataScienceCluster, or ``None`` without OpenShift AI.
        operands: the ``JobSetOperator`` ``cluster`` (with the JobSet Operator), the ``NodeFeatureDiscovery`` and
            ``ClusterPolicy`` CRs (when ``gpuOperator.install``).
        kueue_namespace: where Kueue runs: ``openshift-kueue-operator`` (the Red Hat build of Kueue) or
            ``redhat-ods-applications`` (Kueue embedded in OpenShift AI 2.x).
        appwrapper_source: URL of the AppWrapper release ``install.yaml`` (``target.appwrapper``), or ``None``.
        kueue_cr_patch: the ``Kueue`` CR fields applied server-side where OpenShift AI 3.x creates the CR
            (:func:`kueue_cr_patch`), or ``None`` (Batchplane creates the CR, or Kueue is embedded).
    """

    installs: list[OlmInstall]
    kueue_cr: Object | None
    data_science_cluster: Object | None
    operands: list[Operand] = field(default_factory=list)
    kueue_namespace: str = "openshift-kueue-operator"
    appwrapper_source: str | None = None
    kueue_cr_patch: Object | None = None


def _install(
    role: str,
    namespace: str,
    group: str,
    package: str,
    sub: OlmSubscription,
    group_spec: Object | None = None,
    environment: str = "dev",
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
        "installPlanApproval": sub.effective_approval(environment),
        "name": package,
        "source": sub.source,
        "sourceNamespace": sub.source_namespace,
    }
    starting = sub.starting_csv or sub.approved_csv(
        environment
    )  # a first install goes straight to the target
    if starting:
        spec["startingCSV"] = starting
    subscription = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": package, "namespace": namespace, "labels": dict(MANAGED_BY)},
        "spec": spec,
    }
    approve = sub.approved_csv(environment)
    key = None if approve is None else ("targetCsv" if sub.target_csv else "startingCsv")
    return OlmInstall(role, ns, og, subscription, approve, sub.adopt, key)


def kueue_cr_frameworks(target: OpenShiftTarget) -> list[str]:
    """The ``Kueue`` CR's ``spec.config.integrations.frameworks`` the stack needs: the derived ones
    (:func:`~batchplane.targets.openshift.config.rhbok_frameworks`) and ``AppWrapper`` with ``target.appwrapper``,
    in CRD enum order."""
    frameworks = rhbok_frameworks(target)
    name = appwrapper.FRAMEWORK.rhbok_name
    if target.appwrapper.enabled and name not in frameworks:
        frameworks = [n for n in RHBOK_FRAMEWORKS if n in {*frameworks, name}]
    return frameworks


#: Server-side apply of the ``Kueue`` CR's frameworks where OpenShift AI 3.x creates the CR: ``pulumi.com/patchForce``
#: takes ownership of conflicting fields (pulumi-kubernetes "Server-Side Apply" docs), and ``frameworks`` is a
#: ``listType: set`` (openshift/kueue-operator ``release-1.4`` CRD), so the CR's other frameworks stay.
PATCH_FORCE_ANNOTATION = "pulumi.com/patchForce"


def kueue_cr_patch(target: OpenShiftTarget) -> Object:
    """The ``Kueue`` CR ``cluster`` fields the stack owns where OpenShift AI 3.x creates the CR (once, never updating
    it: opendatahub-operator ``v3.5.0`` ``kueue_config.go`` ``createKueueCR``): only
    ``spec.config.integrations.frameworks`` (:func:`kueue_cr_frameworks`), applied server-side with
    :data:`PATCH_FORCE_ANNOTATION`."""
    return {
        "apiVersion": "kueue.openshift.io/v1",
        "kind": "Kueue",
        "metadata": {"name": "cluster", "annotations": {PATCH_FORCE_ANNOTATION: "true"}},
        "spec": {"config": {"integrations": {"frameworks": kueue_cr_frameworks(target)}}},
    }


def kueue_cr(target: OpenShiftTarget) -> Object:
    """The singleton ``Kueue`` CR (``metadata.name`` must be ``cluster``) with the derived frameworks."""
    config: Object = {"integrations": {"frameworks": kueue_cr_frameworks(target)}}
    if target.kueue.label_policy is not None:
        config["workloadManagement"] = {"labelPolicy": target.kueue.label_policy}
    return {
        "apiVersion": "kueue.openshift.io/v1",
        "kind": "Kueue",
        "metadata": {"name": "cluster", "labels": dict(MANAGED_BY)},
        "spec": {"managementState": "Managed", "config": config},
    }


def data_science_cluster(target: OpenShiftTarget) -> Object | None:
    """The DataScienceCluster: v1 (RHOAI 2.x) or v2 (3.x), every component (:func:`render_components`:
    RHOAI's sample of the release overlaid with the stack's settings; kueue ``Unmanaged`` unless set)."""
    ai = target.openshift_ai
    if ai is None:
        return None
    components = render_components(ai.components, ai.release, ai.minor_release())
    version = "v1" if ai.release == "2.x" else "v2"
    return {
        "apiVersion": f"datasciencecluster.opendatahub.io/{version}",
        "kind": "DataScienceCluster",
        "metadata": {"name": ai.data_science_cluster_name, "labels": dict(MANAGED_BY)},
        "spec": {"components": components},
    }


NFD_NAMESPACE = "openshift-nfd"
GPU_OPERATOR_NAMESPACE = "nvidia-gpu-operator"

DEFAULT_NFD_SPEC: Object = {
    "workerConfig": {
        "configData": (
            "core:\n  sleepInterval: 60s\n"
            "sources:\n  pci:\n    deviceClassWhitelist:\n"
            '      - "0200"\n      - "03"\n      - "12"\n'
            "    deviceLabelFields:\n      - vendor\n"
        )
    }
}
"""``NodeFeatureDiscovery`` spec: label nodes with PCI network (0200), display (03) and processing
accelerator (12) devices by vendor — NVIDIA GPUs give ``feature.node.kubernetes.io/pci-10de.present``,
which the GPU Operator selects. The operator picks the operand image (OpenShift ≥ 4.17)."""

DEFAULT_CLUSTER_POLICY_SPEC: Object = {
    "operator": {"defaultRuntime": "crio", "use_ocp_driver_toolkit": True, "initContainer": {}},
    "daemonsets": {"updateStrategy": "RollingUpdate"},
    "driver": {"enabled": True},
    "toolkit": {"enabled": True},
    "devicePlugin": {"enabled": True},
    "dcgm": {"enabled": True},
    "dcgmExporter": {"enabled": True, "serviceMonitor": {"enabled": True}},
    "gfd": {"enabled": True},
    "migManager": {"enabled": True},
    "nodeStatusExporter": {"enabled": True},
    "validator": {"plugin": {"env": [{"name": "WITH_WORKLOAD", "value": "false"}]}},
}
"""``ClusterPolicy`` spec, after the fields of the ClusterPolicy example in the OpenShift 4.19
"Hardware accelerators" docs (``defaultRuntime: crio``, ``use_ocp_driver_toolkit: true``; DCGM exporter
with a ServiceMonitor). NVIDIA creates it from the CSV's ``alm-examples``, which is authoritative;
override with ``gpuOperator.clusterPolicy``."""


def gpu_operator_installs(
    target: OpenShiftTarget, environment: str = "dev"
) -> tuple[list[OlmInstall], list[Operand]]:
    """Node Feature Discovery and the NVIDIA GPU Operator (namespaced OperatorGroups) and their CRs:
    ``NodeFeatureDiscovery`` ``nfd-instance`` (``nfd.openshift.io/v1``) and ``ClusterPolicy``
    ``gpu-cluster-policy`` (``nvidia.com/v1``, cluster-scoped). Empty unless ``gpuOperator.install``."""
    gpu = target.gpu_operator
    if not gpu.install:
        return [], []
    installs = [
        _install(
            "nfd",
            NFD_NAMESPACE,
            NFD_NAMESPACE,
            "nfd",
            gpu.nfd,
            {"targetNamespaces": [NFD_NAMESPACE]},
            environment,
        ),
        _install(
            "gpu-operator",
            GPU_OPERATOR_NAMESPACE,
            "nvidia-gpu-operator-group",
            "gpu-operator-certified",
            gpu.nvidia,
            {"targetNamespaces": [GPU_OPERATOR_NAMESPACE]},
            environment,
        ),
    ]
    nfd = {
        "apiVersion": "nfd.openshift.io/v1",
        "kind": "NodeFeatureDiscovery",
        "metadata": {"name": "nfd-instance", "namespace": NFD_NAMESPACE, "labels": dict(MANAGED_BY)},
        "spec": gpu.node_feature_discovery if gpu.node_feature_discovery is not None else DEFAULT_NFD_SPEC,
    }
    policy = {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "gpu-cluster-policy", "labels": dict(MANAGED_BY)},
        "spec": gpu.cluster_policy if gpu.cluster_policy is not None else DEFAULT_CLUSTER_POLICY_SPEC,
    }
    return installs, [Operand("nfd-instance", "nfd", nfd), Operand("cluster-policy", "gpu-operator", policy)]


def openshift_plan(target: OpenShiftTarget, environment: str = "dev") -> OpenShiftPlan:
    """The OLM installs, ``Kueue`` CR, DataScienceCluster and GPU operands of an ``openshift`` target;
    ``environment`` (``batchplane:environment``) sets the default ``installPlanApproval`` (``Manual`` in
    ``production``)."""
    installs = [
        _install(
            "cert-manager",
            "cert-manager-operator",
            "openshift-cert-manager-operator",
            "openshift-cert-manager-operator",
            target.cert_manager,
            environment=environment,
        ),
    ]
    if target.installs_rhbok():
        installs.append(
            _install(
                "kueue",
                "openshift-kueue-operator",
                "openshift-kueue-operator",
                "kueue-operator",
                target.kueue,
                environment=environment,
            )
        )
    operands: list[Operand] = []
    ai = target.openshift_ai
    if (
        ai is not None
        and ai.job_set_operator is not None
        and needs_jobset_operator(ai.components, ai.release, ai.minor_release())
    ):
        installs.append(
            _install(
                "jobset-operator",
                JOBSET_NAMESPACE,
                JOBSET_NAMESPACE,
                JOBSET_PACKAGE,
                ai.job_set_operator,
                {"targetNamespaces": [JOBSET_NAMESPACE]},
                environment,
            )
        )
        operands.append(
            Operand("jobset-operator-cr", "jobset-operator", jobset_operator_cr(), before_dsc=True)
        )
    if target.openshift_ai is not None:
        installs.append(
            _install(
                "openshift-ai",
                "redhat-ods-operator",
                "rhods-operator",
                "rhods-operator",
                target.openshift_ai,
                environment=environment,
            )
        )
    gpu_installs, gpu_operands = gpu_operator_installs(target, environment)
    return OpenShiftPlan(
        [*installs, *gpu_installs],
        kueue_cr(target) if target.creates_kueue_cr() else None,
        data_science_cluster(target),
        [*operands, *gpu_operands],
        "openshift-kueue-operator" if target.installs_rhbok() else "redhat-ods-applications",
        appwrapper_source(target.appwrapper.version) if target.appwrapper.enabled else None,
        kueue_cr_patch(target) if target.installs_rhbok() and not target.creates_kueue_cr() else None,
    )

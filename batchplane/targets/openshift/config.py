"""The ``openshift`` target: an OpenShift cluster whose operators come from OLM, with Red Hat OpenShift AI.

``target: {kind: openshift, context: ..., certManager: ..., kueue: ..., openshiftAi: ...}`` installs,
each through Namespace + OperatorGroup + Subscription (shared/docs/platforms.md §4.1), in the order
Red Hat documents: the cert-manager Operator for Red Hat OpenShift → the Red Hat build of Kueue
(RHBoK) → Red Hat OpenShift AI (RHOAI) → a DataScienceCluster. No Helm on OpenShift.

The DataScienceCluster is ``datasciencecluster.opendatahub.io/v1`` for RHOAI 2.x (components
codeflare, ray, trainingoperator; kueue ``Unmanaged`` = use RHBoK) or ``v2`` for 3.x (ray, trainer;
no codeflare; kueue ``Unmanaged``), platforms.md §4.3. The RHBoK ``Kueue`` CR (``kueue.openshift.io/v1``,
singleton ``cluster``) is created by Batchplane unless OpenShift AI 3.x creates it itself.

Tenant namespaces are labelled ``kueue.openshift.io/managed=true`` (RHBoK's opt-in webhook
mechanism) by :func:`label_managed_namespaces`, through ``NamespaceSpec.labels``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from batchplane.config.base import ConfigModel, DnsLabel, DnsSubdomain
from batchplane.config.kueue import NamespaceSpec
from batchplane.config.operators import ReadinessGateSettings
from batchplane.config.rules import ExpandedKueue, KeyPath, Located
from batchplane.errors import ConfigIssue
from batchplane.frameworks import KUEUE_INTEGRATION_OF_RHBOK, RHBOK_NAMES
from batchplane.targets.openshift.gpu import (
    ClusterAutoscalerSettings,
    FeatureSet,
    OpenShiftGpuPool,
    OpenShiftVersion,
)
from batchplane.wellknown import BUILTIN_NAMESPACES

KUEUE_MANAGED_LABEL = "kueue.openshift.io/managed"
"""Namespace label that opts a namespace into the Red Hat build of Kueue's webhooks."""

RHBOK_FRAMEWORKS: tuple[str, ...] = RHBOK_NAMES
"""``spec.config.integrations.frameworks`` names of the RHBoK ``Kueue`` CR, in its CRD enum order (the
job-framework registry's :data:`batchplane.frameworks.RHBOK_NAMES`)."""
if TYPE_CHECKING:
    RhbokFramework = str
else:
    RhbokFramework = Literal[RHBOK_NAMES]  # the CRD enum, checked by pydantic and listed in the JSON schema

RHBOK_INTEGRATIONS: dict[str, str] = KUEUE_INTEGRATION_OF_RHBOK
"""RHBoK ``Kueue`` CR framework name → the upstream Kueue integration it enables (Kueue Configuration
``integrations.frameworks``; the operator translates one into the other)."""

Channel = Annotated[str, Field(min_length=1, max_length=253, pattern=r"^[A-Za-z0-9][-A-Za-z0-9_.]*$")]


class OlmSubscription(ConfigModel):
    """Subscription settings shared by every OLM install (``operators.coreos.com/v1alpha1`` Subscription)."""

    channel: Channel
    """Update channel (``spec.channel``)."""
    approval: Literal["Automatic", "Manual"] = "Automatic"
    """``spec.installPlanApproval``. ``Manual`` stops at each InstallPlan until someone approves it (the
    CSV gate then waits, and its timeout message says so). Defaults to ``Automatic``."""
    starting_csv: DnsSubdomain | None = None
    """``spec.startingCSV``: pin the first installed CSV, e.g. ``kueue-operator.v1.4.0``. Defaults to the channel head."""
    source: DnsSubdomain = "redhat-operators"
    """CatalogSource name (``spec.source``). Defaults to ``redhat-operators``."""
    source_namespace: DnsLabel = "openshift-marketplace"
    """CatalogSource namespace (``spec.sourceNamespace``). Defaults to ``openshift-marketplace``."""


class CertManagerOperator(OlmSubscription):
    """The cert-manager Operator for Red Hat OpenShift (package ``openshift-cert-manager-operator``,
    namespace ``cert-manager-operator``; RHBoK needs it first)."""

    channel: Channel = "stable-v1"
    """Update channel. Defaults to ``stable-v1``."""


class RedHatKueue(OlmSubscription):
    """The Red Hat build of Kueue (package ``kueue-operator``, namespace ``openshift-kueue-operator``)."""

    channel: Channel = "stable-v1.4"
    """Update channel. Defaults to ``stable-v1.4`` (what OpenShift AI's e2e tests subscribe)."""
    create_kueue_cr: bool | None = None
    """Create the ``kueue.openshift.io/v1`` ``Kueue`` CR named ``cluster``. Omitted: yes, unless OpenShift
    AI 3.x is installed (its operator creates and reconciles that CR when its kueue component is
    ``Unmanaged``)."""
    frameworks: list[RhbokFramework] = []
    """Frameworks for the ``Kueue`` CR in addition to the derived ones (``BatchJob`` plus one per
    OpenShift AI component). Defaults to none."""
    label_policy: Literal["QueueName", "None"] | None = None
    """``spec.config.workloadManagement.labelPolicy``: ``QueueName`` manages only jobs with a queue label,
    ``None`` manages every job in managed namespaces. Omitted: the operator's default."""


class OpenShiftAIComponents(ConfigModel):
    """Which DataScienceCluster components are ``Managed`` (others ``Removed``); omitted = release default."""

    ray: bool | None = None
    """KubeRay (RayCluster/RayJob). Default: Managed."""
    codeflare: bool | None = None
    """CodeFlare operator + AppWrapper (DSC v1 / RHOAI 2.x only). Default: Managed on 2.x."""
    training_operator: bool | None = None
    """Kubeflow Training Operator v1 (PyTorchJob). Default: Managed on 2.x, Removed on 3.x (obsolete in 3.6)."""
    trainer: bool | None = None
    """Kubeflow Trainer v2 (TrainJob; DSC v2 / RHOAI 3.x only). Default: Managed on 3.x."""


class OpenShiftAI(OlmSubscription):
    """Red Hat OpenShift AI (package ``rhods-operator``, namespace ``redhat-ods-operator``) and its DataScienceCluster."""

    channel: Channel = "stable"
    """Update channel (``stable``, ``fast``, ``stable-X.Y``, ``stable-3.x``, ``eus-X.Y``). Defaults to ``stable``."""
    release: Literal["2.x", "3.x"] = "3.x"
    """Release line the channel delivers; selects the DataScienceCluster API (v1 for 2.x, v2 for 3.x).
    Defaults to ``3.x``."""
    data_science_cluster_name: DnsSubdomain = "default-dsc"
    """DataScienceCluster name. Defaults to ``default-dsc``."""
    components: OpenShiftAIComponents = OpenShiftAIComponents()
    """Distributed-workloads components. Defaults to the release's defaults."""

    def component_states(self) -> dict[str, bool]:
        """The DSC component → Managed map for the release (``kueue`` is always ``Unmanaged``, not listed)."""
        c = self.components
        if self.release == "2.x":
            return {
                "codeflare": _default(c.codeflare, True),
                "ray": _default(c.ray, True),
                "trainingoperator": _default(c.training_operator, True),
            }
        return {
            "ray": _default(c.ray, True),
            "trainer": _default(c.trainer, True),
            "trainingoperator": _default(c.training_operator, False),
        }


def _default(value: bool | None, default: bool) -> bool:
    return default if value is None else value


class NfdOperator(OlmSubscription):
    """The Node Feature Discovery Operator (package ``nfd``, namespace ``openshift-nfd``, catalog
    ``redhat-operators``): labels nodes with their PCI devices, which the NVIDIA GPU Operator needs."""

    channel: Channel = "stable"
    """Update channel. Defaults to ``stable``."""


class NvidiaGpuOperator(OlmSubscription):
    """The NVIDIA GPU Operator (package ``gpu-operator-certified``, namespace ``nvidia-gpu-operator``,
    catalog ``certified-operators``; NVIDIA "Installing the NVIDIA GPU Operator on OpenShift")."""

    channel: Channel = "v26.3"
    """Update channel (``vXX.Y``; ``oc get packagemanifest gpu-operator-certified -n openshift-marketplace
    -o jsonpath='{.status.defaultChannel}'``). Defaults to ``v26.3``, the default channel NVIDIA's docs name."""
    source: DnsSubdomain = "certified-operators"
    """CatalogSource name. Defaults to ``certified-operators``."""


class GpuOperator(ConfigModel):
    """The GPU node prerequisites: Node Feature Discovery and the NVIDIA GPU Operator, through OLM."""

    install: bool = False
    """Install both (Namespace + OperatorGroup + Subscription each, gated on their CSVs) and create their
    ``NodeFeatureDiscovery`` and ``ClusterPolicy`` CRs. Defaults to false (installed by the cluster admin)."""
    nfd: NfdOperator = NfdOperator()
    """The Node Feature Discovery Operator subscription. Defaults to channel ``stable``."""
    nvidia: NvidiaGpuOperator = NvidiaGpuOperator()
    """The NVIDIA GPU Operator subscription. Defaults to channel ``v26.3``."""
    node_feature_discovery: dict[str, Any] | None = None
    """``spec`` of the ``NodeFeatureDiscovery`` ``nfd-instance``. Defaults to a worker config labelling PCI
    display/network/processing devices by vendor (the operator picks the operand image, OpenShift ≥ 4.17)."""
    cluster_policy: dict[str, Any] | None = None
    """``spec`` of the ``ClusterPolicy`` ``gpu-cluster-policy`` (an empty spec fails to deploy). Defaults
    to Batchplane's, which enables the driver (via the OpenShift Driver Toolkit), toolkit, device
    plugin, DCGM, DCGM exporter, GPU feature discovery, MIG manager and node status exporter; the
    operator CSV's ``alm-examples`` is the authoritative default (docs/openshift.md)."""


class OpenShiftTarget(ConfigModel):
    """An OpenShift cluster reached through a kubeconfig context (``oc login`` writes one)."""

    kind: Literal["openshift"]
    """Required tag: ``openshift``."""
    context: Annotated[str, Field(min_length=1)]
    """Required. The kubeconfig context to use."""
    kubeconfig: str | None = None
    """Path to a kubeconfig file. Defaults to ``$KUBECONFIG`` or ``~/.kube/config``."""
    cert_manager: CertManagerOperator = CertManagerOperator()
    """The cert-manager Operator for Red Hat OpenShift. Always installed (RHBoK needs it)."""
    kueue: RedHatKueue = RedHatKueue()
    """The Red Hat build of Kueue. Always installed."""
    openshift_ai: OpenShiftAI | None = OpenShiftAI()
    """Red Hat OpenShift AI and its DataScienceCluster. ``null`` installs only cert-manager and RHBoK.
    Defaults to RHOAI 3.x on channel ``stable``."""
    csv_gate: ReadinessGateSettings = ReadinessGateSettings(timeout_seconds=900, interval_seconds=10)
    """How long each CSV gate waits for its operator's ClusterServiceVersion to reach ``Succeeded``
    (and the Kueue webhook gate for RHBoK's webhook). Defaults to 900 s, checked every 10 s."""
    infrastructure_id: (
        Annotated[str, Field(min_length=1, max_length=27, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")] | None
    ) = None
    """The cluster's infrastructure ID (``oc get infrastructure cluster -o
    jsonpath='{.status.infrastructureName}'``): MachineSet names, the ``cluster-api-cluster`` label and
    AWS filter names derive from it. Required for ``aws`` GPU pools; template pools read it from the
    template's labels when not given. Defaults to none."""
    openshift_version: OpenShiftVersion | None = None
    """The cluster's OpenShift version (``4.19`` or ``4.19.3``), checked against the ProvisioningRequest
    floor (4.19) when a GPU pool uses ProvisioningRequests. Defaults to none (a warning says the floor
    cannot be checked at plan time)."""
    feature_set: FeatureSet | None = None
    """The cluster's ``FeatureGate`` ``cluster`` ``spec.featureSet``, as set by the cluster admin
    (Batchplane never changes it: a NoUpgrade feature set cannot be undone and blocks upgrades). GPU
    pools with ProvisioningRequests need the ``ProvisioningRequestAvailable`` gate: ``DevPreviewNoUpgrade``,
    or ``CustomNoUpgrade`` listing it. Defaults to none (a warning says it cannot be checked)."""
    gpu_pools: list[OpenShiftGpuPool] = []
    """Autoscaled GPU MachineSets (docs/openshift.md). Defaults to none."""
    cluster_autoscaler: ClusterAutoscalerSettings = ClusterAutoscalerSettings()
    """The ``ClusterAutoscaler`` ``default``, declared when there are GPU pools. Defaults to
    ``ClusterAutoscalerSettings()`` (GPU limits derived from the pools; no cores/memory limits)."""
    gpu_operator: GpuOperator = GpuOperator()
    """Node Feature Discovery and the NVIDIA GPU Operator via OLM. Defaults to not installed."""

    def kube_context(self) -> str:
        """The kubeconfig context the Kubernetes provider uses."""
        return self.context

    def creates_kueue_cr(self) -> bool:
        """Whether Batchplane declares the ``Kueue`` CR (see :attr:`RedHatKueue.create_kueue_cr`)."""
        if self.kueue.create_kueue_cr is not None:
            return self.kueue.create_kueue_cr
        return self.openshift_ai is None or self.openshift_ai.release == "2.x"


def rhbok_frameworks(target: OpenShiftTarget) -> list[str]:
    """The ``Kueue`` CR's frameworks: ``BatchJob``, those implied by the managed DSC components
    (ray → RayJob/RayCluster/RayService, codeflare → AppWrapper, trainingoperator → PyTorchJob,
    trainer → TrainJob/JobSet) and the configured additions, in CRD enum order."""
    names: set[str] = {"BatchJob", *target.kueue.frameworks}
    if target.openshift_ai is not None:
        states = target.openshift_ai.component_states()
        implied = {
            "ray": ("RayJob", "RayCluster", "RayService"),
            "codeflare": ("AppWrapper",),
            "trainingoperator": ("PyTorchJob",),
            "trainer": ("TrainJob", "JobSet"),
        }
        for component, managed in states.items():
            if managed:
                names.update(implied[component])
    return [n for n in RHBOK_FRAMEWORKS if n in names]


def label_managed_namespaces(k: ExpandedKueue) -> None:
    """Add ``kueue.openshift.io/managed=true`` to every tenant namespace (in place).

    Declared namespaces (``kueue.namespaces``) get the label merged into their ``labels``; LocalQueue
    namespaces not declared are added to ``k.namespaces`` with the label (created unless built-in), so
    the Kueue builders emit it and namespace-selector rules see it.
    """
    declared = {ns.obj.name for ns in k.namespaces}
    for i, ns in enumerate(k.namespaces):
        labels = {**ns.obj.labels, KUEUE_MANAGED_LABEL: "true"}
        k.namespaces[i] = Located(ns.obj.model_copy(update={"labels": labels}), ns.path)
    for lq in k.local_queues:
        name = lq.obj.namespace
        if name not in declared:
            declared.add(name)
            spec = NamespaceSpec(
                name=name, create=name not in BUILTIN_NAMESPACES, labels={KUEUE_MANAGED_LABEL: "true"}
            )
            k.namespaces.append(
                Located(spec, KeyPath("batchplane:target", f'namespace "{name}" of an OpenShift stack'))
            )


def check_openshift(target: OpenShiftTarget, k: ExpandedKueue) -> list[ConfigIssue]:
    """Rules of the ``openshift`` target that span fields: DSC components per release, framework
    duplicates, and warnings for tenant namespaces the stack cannot label."""
    issues: list[ConfigIssue] = []
    base = "batchplane:target"
    ai = target.openshift_ai
    if ai is not None:
        c = ai.components
        path = f"{base}.openshiftAi.components"
        if ai.release == "3.x" and c.codeflare:
            issues.append(
                ConfigIssue(
                    f"{path}.codeflare",
                    "DataScienceCluster v2 (OpenShift AI 3.x) has no codeflare "
                    "component; AppWrapper users stay on 2.x",
                )
            )
        if ai.release == "2.x" and c.trainer:
            issues.append(
                ConfigIssue(
                    f"{path}.trainer",
                    "Trainer v2 is a DataScienceCluster v2 component (OpenShift AI 3.x); set release: 3.x",
                )
            )
        if ai.release == "3.x" and c.training_operator:
            issues.append(
                ConfigIssue(
                    f"{path}.trainingOperator",
                    "the v1 Training Operator is obsolete in OpenShift "
                    "AI 3.6 (it may stay Managed only if it already is); move to trainer",
                    "warning",
                )
            )
    if target.kueue.create_kueue_cr and ai is not None and ai.release == "3.x":
        issues.append(
            ConfigIssue(
                f"{base}.kueue.createKueueCr",
                "OpenShift AI 3.x creates and reconciles the Kueue CR "
                "itself (kueue component Unmanaged); set createKueueCr: false or omit it",
            )
        )
    seen: set[str] = set()
    for i, name in enumerate(target.kueue.frameworks):
        if name in seen:
            issues.append(ConfigIssue(f"{base}.kueue.frameworks[{i}]", f'duplicate framework "{name}"'))
        seen.add(name)
    for ns in k.namespaces:
        if not ns.obj.create:
            issues.append(
                ConfigIssue(
                    str(ns.path),
                    f'namespace "{ns.obj.name}" is not created by the stack, so it is '
                    f"not labelled {KUEUE_MANAGED_LABEL}=true; label it yourself or the Red Hat "
                    "build of Kueue ignores its jobs",
                    "warning",
                )
            )
    return issues

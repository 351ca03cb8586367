"""The ``openshift`` target: an OpenShift cluster whose operators come from OLM, with Red Hat OpenShift AI.

``target: {kind: openshift, context: ..., certManager: ..., kueue: ..., openshiftAi: ...}`` installs,
each through Namespace + OperatorGroup + Subscription (https://olm.operatorframework.io/docs/), in the order
Red Hat documents: the cert-manager Operator for Red Hat OpenShift → the Red Hat build of Kueue
(RHBoK) → Red Hat OpenShift AI (RHOAI) → a DataScienceCluster. No Helm on OpenShift.

The DataScienceCluster is ``datasciencecluster.opendatahub.io/v1`` for RHOAI 2.x (components
codeflare, ray, trainingoperator; kueue ``Unmanaged`` = use RHBoK) or ``v2`` for 3.x (ray, trainer;
no codeflare; kueue ``Unmanaged``), per the CRDs of https://github.com/opendatahub-io/opendatahub-operator
(``api/datasciencecluster/``). The RHBoK ``Kueue`` CR (``kueue.openshift.io/v1``,
singleton ``cluster``) is created by Batchplane unless OpenShift AI 3.x creates it itself.

Tenant namespaces are labelled ``kueue.openshift.io/managed=true`` (RHBoK's opt-in webhook
mechanism) by :func:`label_managed_namespaces`, through ``NamespaceSpec.labels``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, model_validator

from batchplane.config.base import ConfigModel, DnsLabel, DnsSubdomain
from batchplane.config.kueue import NamespaceSpec
from batchplane.config.operators import AppWrapperInstall, ReadinessGateSettings
from batchplane.config.rules import ExpandedKueue, KeyPath, Located
from batchplane.errors import ConfigIssue
from batchplane.frameworks import (
    BY_NAME,
    INTEGRATIONS_OF_OPERATOR,
    KUEUE_INTEGRATION_OF_RHBOK,
    RHBOK_NAMES,
    batch_job,
)
from batchplane.targets.openshift.dsc import (
    DSC_COMPONENT_OPERATORS,
    JOBSET_CHANNEL,
    DataScienceClusterComponents,
    check_components,
    check_default_queues,
    check_jobset_operator,
    check_release_components,
    managed,
    needs_jobset_operator,
    render_components,
)
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
    approval: Literal["Automatic", "Manual"] | None = None
    """``spec.installPlanApproval``. ``Manual`` with a ``targetCsv`` (or a ``startingCsv``): the CSV gate approves
    the first install's InstallPlan, then each upgrade InstallPlan whose CSV is on the channel's path to the target,
    one step at a time, and refuses any other (a new CSV in the channel never upgrades the operator under a running
    platform; set ``targetCsv`` to upgrade). ``Manual`` without either waits for a person to approve (the gate's
    timeout message says so). ``Automatic``: OLM installs and upgrades along the channel. Defaults to ``Manual``
    when ``batchplane:environment`` is ``production`` (then ``targetCsv`` or ``startingCsv`` is required), else
    ``Automatic``."""
    starting_csv: DnsSubdomain | None = None
    """``spec.startingCSV``: the CSV to install (and, with ``Manual`` approval, the only one approved), as the
    package's CSV names it (``oc get packagemanifest <package> -n openshift-marketplace``). Defaults to the
    channel head."""

    target_csv: DnsSubdomain | None = None
    """Under ``Manual`` approval: the CSV the CSV gate brings the operator to. OLM ignores ``startingCSV`` once the
    operator is installed and proposes one upgrade at a time (the CSV that replaces or skips the installed one), so
    the gate approves each InstallPlan whose single CSV is on the channel's path from the installed CSV to this one
    (it replaces or skips the installed CSV, and its version, from the channel's PackageManifest entries, is not
    beyond the target's) and nothing else. Rendered as ``spec.startingCSV`` when ``startingCsv`` is not set.
    Defaults to ``startingCsv``."""
    adopt: bool = False
    """Take over a Subscription that already exists in the operator's namespace (installed from the web console or
    by another tool) although its package or channel differs from the stack's: ``pulumi up`` then moves it to the
    stack's channel. Without it the deploy-time namespace lookup (and ``batchplane preflight``) refuses such a
    Subscription before anything changes. Defaults to false."""

    def effective_approval(self, environment: str) -> Literal["Automatic", "Manual"]:
        """``approval``, or its default for ``environment`` (``Manual`` in ``production``)."""
        if self.approval is not None:
            return self.approval
        return "Manual" if environment == "production" else "Automatic"

    def approved_csv(self, environment: str) -> str | None:
        """The CSV the gate brings the operator to: ``targetCsv`` (else ``startingCsv``) under ``Manual`` approval,
        else none."""
        if self.effective_approval(environment) != "Manual":
            return None
        return self.target_csv or self.starting_csv

    source: DnsSubdomain = "redhat-operators"
    """CatalogSource name (``spec.source``). Defaults to ``redhat-operators``."""
    source_namespace: DnsLabel = "openshift-marketplace"
    """CatalogSource namespace (``spec.sourceNamespace``). Defaults to ``openshift-marketplace``."""


class CertManagerOperator(OlmSubscription):
    """The cert-manager Operator for Red Hat OpenShift (package ``openshift-cert-manager-operator``,
    namespace ``cert-manager-operator``; RHBoK needs it first)."""

    channel: Channel = "stable-v1"
    """Update channel. Defaults to ``stable-v1``."""
    starting_csv: DnsSubdomain | None = None
    """``spec.startingCSV``, e.g. ``cert-manager-operator.v1.18.0``. Defaults to the channel head."""


#: The upstream Kueue each Red Hat build of Kueue minor release is built from, from the release branches of
#: https://github.com/openshift/kueue-operator (the ``upstream/kueue/src`` submodule, on kubernetes-sigs/kueue's
#: release branch named in ``.gitmodules``; ``README.md``'s version table): 1.0 = 0.11 (README, branch
#: ``release-1.0``), 1.1 = 0.12 (``release-0.12``, v0.12.10), 1.2 = 0.14 (``release-0.14``, v0.14.8+), 1.3 = 0.16
#: (``release-0.16``, v0.16.6+). 1.4 is on ``release-0.18``, and its 1.4.0 bundles were built both before the fix
#: (v0.18.1+) and after it (v0.18.2+ to v0.18.4+), so only the minor is known; 1.4.1 (the ``stable-v1.4`` head) is
#: built from v0.18.5+.
RHBOK_KUEUE_VERSIONS: dict[str, str] = {
    "1.0": "0.11",
    "1.1": "0.12",
    "1.2": "0.14",
    "1.3": "0.16",
    "1.4": "0.18",
}
#: Red Hat build of Kueue CSVs whose upstream Kueue is pinned to a patch release (see :data:`RHBOK_KUEUE_VERSIONS`).
RHBOK_CSV_KUEUE_VERSIONS: dict[str, str] = {"1.4.1": "0.18.5"}
#: The newest upstream Kueue OpenShift AI 2.x embeds (DSC ``kueue: Managed``): the ``rhoai-2.22`` to ``rhoai-2.25``
#: branches of https://github.com/red-hat-data-services/kueue are Kueue 0.11 (older 2.x releases embed 0.6-0.10; the
#: opendatahub-operator's ``get_all_manifests.sh`` pins ``opendatahub-io:kueue:v0.10.1-odh-2`` up to v2.33.0). Every
#: one of them matches node affinity on the resource group's label keys.
EMBEDDED_KUEUE_VERSION = "0.11"


def rhbok_kueue_version(channel: str, csv: str | None) -> str | None:
    """The upstream Kueue version a Red Hat build of Kueue install runs, or ``None`` when unknown.

    Args:
        channel: the subscription's channel (``stable-v1.X``); the channel head decides unless ``csv`` is given.
        csv: the CSV installed and kept (``kueue-operator.v1.X.Y``: ``startingCsv`` under ``Manual`` approval), or
            ``None``.

    Returns:
        ``0.16`` for channel ``stable-v1.3``, ``0.18.5`` for ``stable-v1.4`` (its head, 1.4.1), ``0.18`` for CSV
        ``kueue-operator.v1.4.0``; ``None`` for another channel or CSV (``alpha``, a future ``stable-v1.5``).
    """
    if csv is not None:
        release = csv.removeprefix("kueue-operator.v")
        parts = release.split(".")
        if release == csv or len(parts) != 3:
            return None
        return RHBOK_CSV_KUEUE_VERSIONS.get(release) or RHBOK_KUEUE_VERSIONS.get(".".join(parts[:2]))
    minor = channel.removeprefix("stable-v")
    if minor == channel:
        return None
    newest = max(
        (v for v in RHBOK_CSV_KUEUE_VERSIONS if v.rsplit(".", 1)[0] == minor),
        key=lambda v: int(v.rsplit(".", 1)[1]),
        default=None,
    )
    return RHBOK_CSV_KUEUE_VERSIONS[newest] if newest is not None else RHBOK_KUEUE_VERSIONS.get(minor)


#: The first Kueue that serves ``kueue.x-k8s.io/v1beta2`` (kubernetes-sigs/kueue v0.15.0 added the version); the Red Hat
#: build of Kueue 1.0-1.2 (Kueue 0.11-0.14) ships CRDs with ``v1beta1`` only (openshift/kueue-operator ``release-1.2``
#: ``bindata/assets/kueue-operator/crds/``).
V1BETA2_SINCE = (0, 15)


def serves_v1beta2(kueue_version: str) -> bool:
    """Whether a Kueue version (``0.14``, ``0.18.5``) serves ``kueue.x-k8s.io/v1beta2`` (≥ :data:`V1BETA2_SINCE`)."""
    major, minor = (int(part) for part in kueue_version.split(".")[:2])
    return (major, minor) >= V1BETA2_SINCE


def check_kueue_api_version(target: OpenShiftTarget, k: ExpandedKueue, environment: str) -> list[ConfigIssue]:
    """An explicit ``kueue.apiVersion: kueue.x-k8s.io/v1beta2`` where the cluster's Kueue serves only v1beta1: an
    error naming both keys (a defaulted apiVersion follows the Kueue version:
    :meth:`~batchplane.targets.openshift.platform.OpenShiftPlatform.default_kueue_api_version`)."""
    if k.api_version == "kueue.x-k8s.io/v1beta1" or not target.installs_rhbok():
        return []  # embedded Kueue: check_embedded_kueue says it
    kueue = target.kueue
    csv = kueue.approved_csv(environment)
    version = rhbok_kueue_version(kueue.channel, csv)
    if version is None or serves_v1beta2(version):
        return []
    key, value = ("startingCsv", csv) if csv else ("channel", kueue.channel)
    return [
        ConfigIssue(
            "batchplane:kueue.apiVersion",
            f"the Red Hat build of Kueue of target.kueue.{key} ({value}) runs Kueue {version}, which "
            f"serves kueue.x-k8s.io/v1beta1 only, not {k.api_version}: remove kueue.apiVersion (it then follows the "
            "Kueue version) or set it to kueue.x-k8s.io/v1beta1, or subscribe target.kueue.channel stable-v1.3 or later",
        )
    ]


class RedHatKueue(OlmSubscription):
    """The Red Hat build of Kueue (package ``kueue-operator``, namespace ``openshift-kueue-operator``)."""

    channel: Channel = "stable-v1.4"
    """Update channel. Defaults to ``stable-v1.4`` (what OpenShift AI's e2e tests subscribe)."""
    starting_csv: DnsSubdomain | None = None
    """``spec.startingCSV``, e.g. ``kueue-operator.v1.4.1``. Defaults to the channel head."""
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


class JobSetOperator(OlmSubscription):
    """The JobSet Operator (package ``job-set``, namespace ``openshift-jobset-operator``, catalog ``redhat-operators``),
    which OpenShift AI 3.2+ needs for a Managed trainer (:data:`~batchplane.targets.openshift.dsc.JOBSET_OPERATOR_SINCE`)."""

    channel: Channel = JOBSET_CHANNEL
    """Update channel. Defaults to ``stable-v1.0`` (opendatahub-operator ``v3.5.0`` ``opendatahub-io/opendatahub-operator:tests/e2e/helper_test.go`` L67)."""


class OpenShiftAI(OlmSubscription):
    """Red Hat OpenShift AI (package ``rhods-operator``, namespace ``redhat-ods-operator``) and its DataScienceCluster."""

    channel: Channel = "stable-3.x"
    """Update channel (``stable-3.x``, ``fast-3.x``, ``stable``, ``fast``, ``stable-X.Y``, ``eus-X.Y``). Defaults to the
    release's: ``stable-3.x`` for ``3.x`` and ``stable`` for ``2.x`` (the ``stable`` channel's head is a 2.x release,
    which has no DataScienceCluster v2). A channel of the other release line is an error."""
    starting_csv: DnsSubdomain | None = None
    """``spec.startingCSV``, e.g. ``rhods-operator.3.5.0`` (3.x) or ``rhods-operator.2.25.0`` (2.x). Defaults to
    the channel head."""

    @model_validator(mode="before")
    @classmethod
    def _channel_follows_release(cls, data: Any) -> Any:
        if isinstance(data, dict) and "channel" not in data:
            release = data.get("release", "3.x")
            return {**data, "channel": "stable" if release == "2.x" else "stable-3.x"}
        return data

    release: Literal["2.x", "3.x"] = "3.x"
    """Release line the channel delivers; selects the DataScienceCluster API (v1 for 2.x, v2 for 3.x).
    Defaults to ``3.x``."""
    data_science_cluster_name: DnsSubdomain = "default-dsc"
    """DataScienceCluster name. Defaults to ``default-dsc``."""
    components: DataScienceClusterComponents = DataScienceClusterComponents()
    """Every DataScienceCluster component (``true``/``false`` or an object with ``managementState`` and its
    settings; batchplane/targets/openshift/dsc.py). Defaults to RHOAI's sample DSC of the release with kueue
    ``Unmanaged``."""

    job_set_operator: JobSetOperator | None = JobSetOperator()
    """The JobSet Operator and its ``JobSetOperator`` ``cluster``, installed before the DataScienceCluster when trainer
    is Managed on OpenShift AI 3.2+ (else not rendered). ``null``: not installed by the stack (then trainer Managed on
    3.2+ is an error). Defaults to channel ``stable-v1.0``."""

    def component_states(self) -> dict[str, bool]:
        """The distributed-workloads DSC components of the release → Managed (codeflare, ray, trainingoperator
        on 2.x; ray, trainer, trainingoperator on 3.x)."""
        states = managed(self.components, self.release, self.minor_release())
        names = (
            ("codeflare", "ray", "trainingoperator")
            if self.release == "2.x"
            else ("ray", "trainer", "trainingoperator")
        )
        return {name: states.get(name) == "Managed" for name in names}

    def minor_release(self) -> str | None:
        """The OpenShift AI minor release the subscription installs (``2.16``) when the channel names one
        (``eus-2.16``, ``stable-2.16``, ``fast-3.4``) or a ``startingCsv`` (``rhods-operator.2.16.2``) is kept by
        ``Manual`` approval; ``None`` for a channel that follows a release line (``stable``, ``stable-3.x``)."""
        if (version := self._channel_release()) is not None:
            return version
        if self.starting_csv and self.approval == "Manual":
            parts = self.starting_csv.removeprefix("rhods-operator.").removeprefix("v").split(".")
            if len(parts) >= 2 and all(p.isdigit() for p in parts[:2]):
                return ".".join(parts[:2])
        return None

    def _channel_release(self) -> str | None:
        """``X.Y`` of a channel named after one release (``eus-2.16``), else ``None``."""
        prefix, _, version = self.channel.rpartition("-")
        parts = version.split(".")
        return version if prefix and len(parts) == 2 and all(p.isdigit() for p in parts) else None

    def minor_key(self) -> Literal["channel", "startingCsv"]:
        """The key under ``openshiftAi`` that selects :meth:`minor_release`: the channel when it names a release,
        else ``startingCsv``."""
        return (
            "channel" if self._channel_release() is not None or self.starting_csv is None else "startingCsv"
        )

    def minor_source(self) -> str:
        """:meth:`minor_key` and its value, for messages (``target.openshiftAi.channel eus-2.16``)."""
        value = self.channel if self.minor_key() == "channel" else self.starting_csv
        return f"target.openshiftAi.{self.minor_key()} {value}"

    def embedded_kueue(self) -> bool:
        """Whether the DSC's kueue component is ``Managed`` (Kueue embedded in RHOAI 2.x)."""
        return self.components.kueue is not None and self.components.kueue.management_state == "Managed"


class NfdOperator(OlmSubscription):
    """The Node Feature Discovery Operator (package ``nfd``, namespace ``openshift-nfd``, catalog
    ``redhat-operators``): labels nodes with their PCI devices, which the NVIDIA GPU Operator needs."""

    channel: Channel = "stable"
    """Update channel. Defaults to ``stable``."""
    starting_csv: DnsSubdomain | None = None
    """``spec.startingCSV``: the ``nfd`` CSV of your OpenShift minor (``oc get packagemanifest nfd -n
    openshift-marketplace -o jsonpath='{.status.channels[0].currentCSV}'``). Defaults to the channel head."""


class NvidiaGpuOperator(OlmSubscription):
    """The NVIDIA GPU Operator (package ``gpu-operator-certified``, namespace ``nvidia-gpu-operator``,
    catalog ``certified-operators``; NVIDIA "Installing the NVIDIA GPU Operator on OpenShift")."""

    channel: Channel = "v26.3"
    """Update channel (``vXX.Y``; ``oc get packagemanifest gpu-operator-certified -n openshift-marketplace
    -o jsonpath='{.status.defaultChannel}'``). Defaults to ``v26.3``, the default channel NVIDIA's docs name."""
    source: DnsSubdomain = "certified-operators"
    """CatalogSource name. Defaults to ``certified-operators``."""
    starting_csv: DnsSubdomain | None = None
    """``spec.startingCSV``, e.g. ``gpu-operator-certified.v26.3.0``. Defaults to the channel head."""


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
    """The cluster's OpenShift version (``4.21``, ``4.21.3``, ``5.0``), checked against the ProvisioningRequest
    floor (4.21) when a GPU pool uses ProvisioningRequests. Defaults to none (a warning says the floor
    cannot be checked at plan time)."""
    feature_set: FeatureSet | None = None
    """The cluster's ``FeatureGate`` ``cluster`` ``spec.featureSet``, as set by the cluster admin
    (Batchplane never changes it: a NoUpgrade feature set cannot be undone and blocks upgrades). GPU
    pools with ProvisioningRequests need ``DevPreviewNoUpgrade`` (the ``ProvisioningRequestAvailable`` gate, and
    the ProvisioningRequest CRD is annotated for that set only; ``CustomNoUpgrade`` is refused). Defaults to none (a
    warning says it cannot be checked)."""
    allow_no_upgrade_feature_set: bool = False
    """Accept that the stack depends on a ``NoUpgrade`` feature set (``featureSet`` ``TechPreviewNoUpgrade``,
    ``DevPreviewNoUpgrade`` or ``CustomNoUpgrade``): turning one on "CANNOT BE UNDONE and PREVENTS UPGRADES"
    (openshift/api ``config/v1/types_feature.go``), so a stack that names one without this key is an error, and a
    ``production`` stack is refused either way. Defaults to false."""
    gpu_pools: list[OpenShiftGpuPool] = []
    """Autoscaled GPU MachineSets (docs/openshift.md). Defaults to none."""
    cluster_autoscaler: ClusterAutoscalerSettings = ClusterAutoscalerSettings()
    """The ``ClusterAutoscaler`` ``default``, declared when there are GPU pools. Defaults to
    ``ClusterAutoscalerSettings()`` (GPU limits derived from the pools; no cores/memory limits)."""
    gpu_operator: GpuOperator = GpuOperator()
    """Node Feature Discovery and the NVIDIA GPU Operator via OLM. Defaults to not installed."""
    appwrapper: AppWrapperInstall = AppWrapperInstall()
    """The AppWrapper controller (``workload.codeflare.dev/v1beta2``), the successor of MCAD's AppWrapper
    (convert MCAD's with ``batchplane appwrapper convert``; docs/appwrapper.md), from its release
    ``install.yaml`` after the Kueue webhook gate; ``AppWrapper`` is added to the ``Kueue`` CR's frameworks. On
    OpenShift AI 2.x the DSC's ``codeflare`` component runs it instead. Defaults to not installed."""

    def kube_context(self) -> str:
        """The kubeconfig context the Kubernetes provider uses."""
        return self.context

    def installs_rhbok(self) -> bool:
        """Whether the Red Hat build of Kueue is installed: yes, unless the DSC embeds Kueue (2.x ``kueue: Managed``)."""
        return self.openshift_ai is None or not self.openshift_ai.embedded_kueue()

    def creates_kueue_cr(self) -> bool:
        """Whether Batchplane declares the ``Kueue`` CR (see :attr:`RedHatKueue.create_kueue_cr`); never with
        embedded Kueue."""
        if not self.installs_rhbok():
            return False
        if self.kueue.create_kueue_cr is not None:
            return self.kueue.create_kueue_cr
        return self.openshift_ai is None or self.openshift_ai.release == "2.x"


def _rhbok_names_of(integrations: Iterable[str]) -> list[str]:
    """The RHBoK names of Kueue integrations (those the ``Kueue`` CR can name)."""
    return [rhbok for name in integrations if (rhbok := BY_NAME[name].rhbok_name) is not None]


def rhbok_frameworks(target: OpenShiftTarget) -> list[str]:
    """The ``Kueue`` CR's frameworks: ``BatchJob``, those implied by the managed DSC components (each component's
    job operator, :data:`DSC_COMPONENT_OPERATORS`, and the integrations that operator serves,
    :data:`batchplane.frameworks.INTEGRATIONS_OF_OPERATOR`: ray → RayJob/RayCluster/RayService, codeflare →
    AppWrapper, trainingoperator → PyTorchJob, trainer → TrainJob/JobSet) and the configured additions, in CRD enum
    order."""
    names: set[str] = {*_rhbok_names_of([batch_job.FRAMEWORK.name]), *target.kueue.frameworks}
    if target.openshift_ai is not None:
        for component, managed in target.openshift_ai.component_states().items():
            if managed:
                names.update(_rhbok_names_of(INTEGRATIONS_OF_OPERATOR[DSC_COMPONENT_OPERATORS[component]]))
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


def subscriptions(target: OpenShiftTarget) -> list[tuple[str, OlmSubscription]]:
    """``(config key, subscription)`` of every OLM install the target declares."""
    subs: list[tuple[str, OlmSubscription]] = [("certManager", target.cert_manager)]
    if target.installs_rhbok():
        subs.append(("kueue", target.kueue))
    if target.openshift_ai is not None:
        subs.append(("openshiftAi", target.openshift_ai))
        ai = target.openshift_ai
        if ai.job_set_operator is not None and needs_jobset_operator(
            ai.components, ai.release, ai.minor_release()
        ):
            subs.append(("openshiftAi.jobSetOperator", ai.job_set_operator))
    if target.gpu_operator.install:
        subs += [
            ("gpuOperator.nfd", target.gpu_operator.nfd),
            ("gpuOperator.nvidia", target.gpu_operator.nvidia),
        ]
    return subs


def check_approval(target: OpenShiftTarget, environment: str) -> list[ConfigIssue]:
    """``Manual`` approval without a pinned ``startingCsv``: an error when ``Manual`` is the production
    default (pin the CSV, or choose ``Automatic``), a warning when set explicitly (a person must approve)."""
    issues = []
    for key, sub in subscriptions(target):
        if sub.effective_approval(environment) != "Manual" or sub.starting_csv or sub.target_csv:
            if sub.target_csv and sub.effective_approval(environment) != "Manual":
                issues.append(
                    ConfigIssue(
                        f"batchplane:target.{key}.targetCsv",
                        "has no effect with approval: Automatic (OLM follows the channel); set approval: Manual "
                        "to have the CSV gate approve the upgrades to it",
                        "warning",
                    )
                )
            continue
        path = f"batchplane:target.{key}"
        if sub.approval is None:
            issues.append(
                ConfigIssue(
                    f"{path}.startingCsv",
                    "production Subscriptions default to installPlanApproval Manual, and Batchplane approves only "
                    "the InstallPlan of a pinned CSV: set startingCsv (oc get packagemanifest ... "
                    "-n openshift-marketplace), or approval: Automatic to follow the channel",
                )
            )
        else:
            issues.append(
                ConfigIssue(
                    f"{path}.approval",
                    "Manual approval without startingCsv: Batchplane approves no InstallPlan, so the CSV gate "
                    "waits (up to csvGate.timeoutSeconds) for a person to approve each one; pin startingCsv to "
                    "have exactly that CSV approved",
                    "warning",
                )
            )
    return issues


RHOAI2_QUOTA_DOCS = (
    'OpenShift AI 2.x "Configuring quota management for distributed workloads": "supports only a single cluster '
    'queue per cluster (that is, homogenous clusters), and only empty resource flavors"'
)


def check_embedded_kueue(k: ExpandedKueue) -> list[ConfigIssue]:
    """The rules of Kueue embedded in OpenShift AI 2.x (DSC v1 ``kueue: Managed``): its Kueue (0.6–0.10 in RHOAI
    2.10–2.19) serves ``kueue.x-k8s.io/v1beta1`` only (an error otherwise), and Red Hat supports one ClusterQueue
    per cluster and only empty ResourceFlavors (:data:`RHOAI2_QUOTA_DOCS`; warnings)."""
    issues: list[ConfigIssue] = []
    if k.api_version != "kueue.x-k8s.io/v1beta1":
        issues.append(
            ConfigIssue(
                "batchplane:kueue.apiVersion",
                "Kueue embedded in OpenShift AI 2.x serves kueue.x-k8s.io/v1beta1 only; set apiVersion: "
                "kueue.x-k8s.io/v1beta1 (or use the Red Hat build of Kueue: kueue managementState Unmanaged)",
            )
        )
    for extra in k.cluster_queues[1:]:
        issues.append(
            ConfigIssue(
                str(extra.path),
                f'ClusterQueue "{extra.obj.name}" is one more than the single ClusterQueue per cluster that '
                f"{RHOAI2_QUOTA_DOCS} (the teams shorthand makes one per team)",
                "warning",
            )
        )
    for flavor in k.resource_flavors:
        f = flavor.obj
        if f.node_labels or f.node_taints or f.tolerations:
            issues.append(
                ConfigIssue(
                    str(flavor.path),
                    f'ResourceFlavor "{f.name}" has nodeLabels, nodeTaints or tolerations; {RHOAI2_QUOTA_DOCS}',
                    "warning",
                )
            )
    return issues


def release_channel_problem(release: str, channel: str) -> str | None:
    """Why ``channel`` cannot deliver the OpenShift AI ``release`` line, or None.

    RHOAI 3.x comes from the ``…-3.x`` channels (``stable-3.x``, ``fast-3.x``, ``stable-3.Y``); the ``stable``, ``fast``
    and ``…-2.Y`` channels deliver 2.x, whose operator has no DataScienceCluster v2, so the install would fail after
    the CSV gate while validation passed.

    Args:
        release: ``openshiftAi.release`` (``2.x`` or ``3.x``).
        channel: ``openshiftAi.channel``.

    Returns:
        A message naming both keys, or None when they agree.
    """
    three = "-3." in channel
    if release == "3.x" and not three:
        return (
            f'"{channel}" delivers OpenShift AI 2.x, not openshiftAi.release 3.x (its DataScienceCluster v2 would be '
            "refused after the operator installs): use stable-3.x (or fast-3.x), or set release: 2.x"
        )
    if release == "2.x" and three:
        return (
            f'"{channel}" delivers OpenShift AI 3.x, not openshiftAi.release 2.x: use stable, fast or eus-2.Y, or '
            "set release: 3.x"
        )
    return None


NO_UPGRADE_FEATURE_SETS = ("TechPreviewNoUpgrade", "DevPreviewNoUpgrade", "CustomNoUpgrade")
"""Feature sets that cannot be undone and prevent upgrades (openshift/api ``release-4.19`` ``config/v1/types_feature.go``
L43-L54)."""


def check_feature_set(target: OpenShiftTarget, environment: str) -> list[ConfigIssue]:
    """A ``NoUpgrade`` ``featureSet`` is irreversible and blocks upgrades: refused on ``production`` stacks (naming
    ``featureSet``), else an error unless ``allowNoUpgradeFeatureSet: true`` accepts it (naming that key)."""
    if target.feature_set not in NO_UPGRADE_FEATURE_SETS:
        return []
    cost = f"featureSet {target.feature_set} cannot be undone and prevents upgrades of the cluster"
    if environment == "production":
        return [
            ConfigIssue(
                "batchplane:target.featureSet",
                f"{cost}: a production stack cannot depend on it (drop the GPU pools' ProvisioningRequests: "
                "provisioning: none, or use a non-production cluster)",
            )
        ]
    if not target.allow_no_upgrade_feature_set:
        return [
            ConfigIssue(
                "batchplane:target.allowNoUpgradeFeatureSet",
                f"{cost}; set allowNoUpgradeFeatureSet: true to accept that for this cluster (docs/openshift.md)",
            )
        ]
    return []


def check_serving_prerequisites(ai: OpenShiftAI, path: str) -> list[ConfigIssue]:
    """OpenShift AI 2.x KServe in ``Serverless`` mode (its sample's default: ``serving`` Managed) needs the OpenShift
    Serverless and OpenShift Service Mesh operators, which the stack does not install (rhods-operator ``rhoai-2.16``
    ``apis/datasciencecluster/v1/datasciencecluster_types.go``: "Require OpenShift Serverless and OpenShift Service
    Mesh Operators to be installed before enable component"); without them the DataScienceCluster never reports
    Ready. A warning naming the key; distributed workloads need neither KServe nor ModelMesh."""
    if ai.release != "2.x":
        return []
    kserve = render_components(ai.components, ai.release, ai.minor_release()).get("kserve", {})
    serving = (kserve.get("serving") or {}).get("managementState", "Managed")
    raw = kserve.get("defaultDeploymentMode") == "RawDeployment"
    if kserve.get("managementState") != "Managed" or serving != "Managed" or raw:
        return []
    return [
        ConfigIssue(
            f"{path}.kserve",
            "KServe with Knative serving (Serverless mode) needs the OpenShift Serverless and OpenShift Service Mesh "
            "operators, which this stack does not install: the DataScienceCluster stays not Ready until they are. "
            "Set kserve: false (distributed workloads do not need it) or install both first",
            "warning",
        )
    ]


def check_openshift(target: OpenShiftTarget, k: ExpandedKueue, environment: str = "dev") -> list[ConfigIssue]:
    """Rules of the ``openshift`` target that span fields: DSC components per release, InstallPlan approval
    (:func:`check_approval`), framework duplicates, and warnings for tenant namespaces the stack cannot label."""
    issues: list[ConfigIssue] = check_approval(target, environment) + check_kueue_api_version(
        target, k, environment
    )
    issues += check_feature_set(target, environment)
    base = "batchplane:target"
    ai = target.openshift_ai
    if ai is not None and (why := release_channel_problem(ai.release, ai.channel)) is not None:
        issues.append(ConfigIssue(f"{base}.openshiftAi.channel", why))
    if ai is not None:
        path = f"{base}.openshiftAi.components"
        issues.extend(check_components(ai.components, ai.release, path))
        issues.extend(check_release_components(ai.components, ai.minor_release(), ai.minor_source(), path))
        source_key = f"{base}.openshiftAi.{ai.minor_key()}"
        issues.extend(
            check_default_queues(ai.components, ai.minor_release(), source_key, ai.minor_source(), path)
        )
        issues.extend(check_serving_prerequisites(ai, path))
        issues.extend(
            check_jobset_operator(
                ai.components, ai.release, ai.minor_release(), ai.job_set_operator is not None, path
            )
        )
        if (
            ai.release == "3.x"
            and ai.components.training_operator is not None
            and ai.components.training_operator.management_state == "Managed"
        ):
            issues.append(
                ConfigIssue(
                    f"{path}.trainingOperator",
                    "the v1 Training Operator is obsolete in OpenShift "
                    "AI 3.6 (it may stay Managed only if it already is); move to trainer",
                    "warning",
                )
            )
        if ai.embedded_kueue() and "kueue" in target.model_fields_set:
            issues.append(
                ConfigIssue(
                    f"{base}.kueue",
                    "the DataScienceCluster's kueue component is Managed (Kueue embedded in OpenShift AI 2.x, "
                    "namespace redhat-ods-applications); the Red Hat build of Kueue would be a second Kueue — "
                    "remove target.kueue or set kueue.managementState: Unmanaged",
                )
            )
    if ai is not None and ai.embedded_kueue():
        issues += check_embedded_kueue(k)
    if target.appwrapper.enabled and ai is not None and ai.component_states().get("codeflare"):
        issues.append(
            ConfigIssue(
                f"{base}.appwrapper.enabled",
                "the DataScienceCluster's codeflare component already runs the AppWrapper controller (OpenShift AI "
                "2.x); set codeflare: false to install AppWrapper yourself, or leave appwrapper disabled",
            )
        )
    if target.appwrapper.enabled and not target.installs_rhbok():
        issues.append(
            ConfigIssue(
                f"{base}.appwrapper.enabled",
                "Kueue is embedded in OpenShift AI 2.x here (no Kueue CR), so Batchplane cannot add the AppWrapper "
                "framework: add workload.codeflare.dev/appwrapper to the embedded Kueue's integrations yourself or "
                "AppWrappers are not queued",
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

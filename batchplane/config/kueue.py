"""The ``batchplane:kueue`` section: every Kueue object a stack declares, typed.

Field names and meanings mirror the Kueue v0.19.2 API (``kueue.x-k8s.io/v1beta2``, the storage
version; see ``apis/kueue/v1beta2/*_types.go`` at https://github.com/kubernetes-sigs/kueue/tree/v0.19.2).
Per-field syntax (names, quantities, enums, list sizes) is checked here by pydantic; rules that span fields or
objects (Kueue's CEL rules and validating webhooks, cross-references) live in
:mod:`batchplane.config.rules`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from batchplane.config.base import (
    Annotations,
    ConfigModel,
    DnsLabel,
    DnsSubdomain,
    Int32,
    LabelValue,
    NonNegativeInt32,
    QualifiedName,
    Quantity,
)
from batchplane.wellknown import PROVISIONING_CONTROLLER

KueueApiVersion = Literal["kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1"]
KUEUE_V1BETA2: KueueApiVersion = "kueue.x-k8s.io/v1beta2"
KUEUE_V1BETA1: KueueApiVersion = "kueue.x-k8s.io/v1beta1"

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
StopPolicy = Literal["None", "Hold", "HoldAndDrain"]


class Taint(ConfigModel):
    """A node taint a ResourceFlavor's nodes carry (``corev1.Taint``)."""

    key: QualifiedName
    """Required. Taint key, e.g. ``nvidia.com/gpu``."""
    value: LabelValue | None = None
    """Optional taint value; defaults to none (empty)."""
    effect: TaintEffect
    """Required. ``NoSchedule``, ``PreferNoSchedule`` or ``NoExecute``."""


class Toleration(ConfigModel):
    """A toleration Kueue adds to admitted pods (``corev1.Toleration``).

    CEL rules of the ResourceFlavor CRD (checked in :mod:`batchplane.config.rules`): an empty key
    needs operator ``Exists``; ``Exists`` takes no value; ``tolerationSeconds`` needs ``NoExecute``.
    """

    key: str | None = None
    """Taint key to tolerate; omitted (empty) means every key, which requires ``operator: Exists``."""
    operator: Literal["Equal", "Exists"] | None = None
    """``Equal`` or ``Exists``; defaults to ``Equal`` (Kubernetes' default) when omitted."""
    value: str | None = None
    """Taint value to match with ``Equal``; must be omitted with ``Exists``."""
    effect: TaintEffect | None = None
    """Effect to match; omitted matches all effects."""
    toleration_seconds: int | None = None
    """Only with effect ``NoExecute``: how long the pod stays bound after the taint appears (seconds)."""


class ResourceFlavor(ConfigModel):
    """A Kueue ResourceFlavor (cluster-scoped): a kind of node that quota is accounted against."""

    name: DnsSubdomain
    """Required. Object name, referenced from ClusterQueue ``resourceGroups[].flavors[].name``."""
    node_labels: Annotated[dict[QualifiedName, LabelValue], Field(max_length=8)] = {}
    """Labels that select this flavor's nodes; Kueue injects them as a nodeSelector into admitted
    pods. At most 8. Defaults to none (the flavor matches any node — an "empty" flavor)."""
    node_taints: Annotated[list[Taint], Field(max_length=8)] = []
    """Taints the flavor's nodes carry; a workload must tolerate them to use the flavor. At most 8,
    unique by (key, effect). Defaults to none."""
    tolerations: Annotated[list[Toleration], Field(max_length=8)] = []
    """Tolerations Kueue adds to admitted pods. At most 8. Defaults to none."""
    topology_name: DnsSubdomain | None = None
    """Name of a Topology (``batchplane:kueue.topologies``) for topology-aware scheduling; requires
    at least one node label. Defaults to none (no TAS)."""


class TopologyLevel(ConfigModel):
    """One level of a Topology, from the widest domain to the narrowest."""

    node_label: Annotated[QualifiedName, Field(max_length=316)]
    """Required. The node label naming this level's domain, e.g. ``cloud.google.com/gce-topology-block``."""


class Topology(ConfigModel):
    """A Kueue Topology (TAS): ordered node-label levels; ``kubernetes.io/hostname`` only last."""

    name: DnsSubdomain
    """Required. Object name, referenced from ResourceFlavor ``topologyName``."""
    levels: Annotated[list[TopologyLevel], Field(min_length=1, max_length=16)]
    """Required. 1–16 unique levels."""


class ResourceQuota(ConfigModel):
    """Quota of one resource in one flavor (``ResourceQuota`` in Kueue)."""

    name: QualifiedName
    """Required. Resource name; must equal the matching ``coveredResources`` entry (same order)."""
    nominal_quota: Quantity
    """Required. Quantity guaranteed to the queue (CPU cores, memory bytes, device count); ≥ 0."""
    borrowing_limit: Quantity | None = None
    """Maximum this queue may borrow from its cohort above nominal. Only with a cohort. Omitted
    means unlimited (everything the cohort can lend)."""
    lending_limit: Quantity | None = None
    """Maximum of the nominal quota other cohort members may borrow; ≤ nominalQuota (ClusterQueue).
    Only with a cohort. Omitted means all unused nominal quota can be lent."""


class FlavorQuotas(ConfigModel):
    """A flavor's quotas inside a resource group."""

    name: DnsSubdomain
    """Required. The ResourceFlavor these quotas are for."""
    resources: Annotated[list[ResourceQuota], Field(min_length=1, max_length=64)]
    """Required. 1–64 quotas, one per covered resource, in the same order as ``coveredResources``."""


class ResourceGroup(ConfigModel):
    """Resources whose quotas are assigned together, flavor by flavor (Kueue ``ResourceGroup``)."""

    covered_resources: Annotated[list[QualifiedName], Field(min_length=1, max_length=64)]
    """Required. 1–64 resource names (``cpu``, ``memory``, ``nvidia.com/gpu`` ...)."""
    flavors: Annotated[list[FlavorQuotas], Field(min_length=1, max_length=64)]
    """Required. 1–64 flavors, tried in order when assigning a workload."""


class FairSharing(ConfigModel):
    """Fair-sharing weight (``FairSharing`` in Kueue)."""

    weight: Quantity | None = None
    """Share weight; defaults to 1 in Kueue. 0 means the queue only borrows when nobody else wants to."""


class BorrowWithinCohort(ConfigModel):
    """Preemption while borrowing (``BorrowWithinCohort``)."""

    policy: Literal["Never", "LowerPriority"] | None = None
    """``Never`` (Kueue's default) or ``LowerPriority``; needs reclaimWithinCohort ≠ Never."""
    max_priority_threshold: Int32 | None = None
    """Only workloads with priority ≤ this may be preempted while borrowing; omitted = no threshold."""


class Preemption(ConfigModel):
    """ClusterQueue preemption policy (``ClusterQueuePreemption``). Omitted fields keep Kueue's defaults."""

    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] | None = None
    """Preempt cohort workloads that borrow this queue's nominal quota. Kueue default: ``Never``."""
    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] | None = None
    """Preempt workloads of this queue for a higher-priority one. Kueue default: ``Never``."""
    borrow_within_cohort: BorrowWithinCohort | None = None
    """Preempt while borrowing. Kueue default: policy ``Never``."""


class FlavorFungibility(ConfigModel):
    """How Kueue moves on to the next flavor (``FlavorFungibility``). Omitted fields keep Kueue's defaults."""

    when_can_borrow: Literal["MayStopSearch", "TryNextFlavor"] | None = None
    """Kueue default ``MayStopSearch``: admit by borrowing in this flavor rather than try the next."""
    when_can_preempt: Literal["MayStopSearch", "TryNextFlavor"] | None = None
    """Kueue default ``TryNextFlavor``: try the next flavor before preempting in this one."""
    preference: Literal["BorrowingOverPreemption", "PreemptionOverBorrowing"] | None = None
    """Only when both of the above are ``TryNextFlavor``. Omitted = Kueue's built-in order."""


class AdmissionCheckRef(ConfigModel):
    """An admission check a ClusterQueue requires, optionally only for some of its flavors."""

    name: Annotated[str, Field(min_length=1, max_length=316)]
    """Required. Name of an AdmissionCheck in ``batchplane:kueue.admissionChecks``."""
    on_flavors: Annotated[list[DnsSubdomain], Field(max_length=64)] = []
    """Flavors of this ClusterQueue the check applies to; defaults to none = all flavors."""


def _name_to_ref(value: object) -> object:
    """Accept a bare admission-check name as ``{name: <value>}``."""
    return {"name": value} if isinstance(value, str) else value


class LabelSelectorRequirement(ConfigModel):
    """One ``matchExpressions`` entry of a LabelSelector."""

    key: QualifiedName
    """Required. The label key."""
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    """Required. ``In``/``NotIn`` need values; ``Exists``/``DoesNotExist`` take none."""
    values: list[LabelValue] = []
    """Label values for ``In``/``NotIn``."""


class LabelSelector(ConfigModel):
    """A Kubernetes LabelSelector (matchLabels AND matchExpressions). ``{}`` selects everything."""

    match_labels: dict[QualifiedName, LabelValue] = {}
    """Labels that must all be present with these values."""
    match_expressions: list[LabelSelectorRequirement] = []
    """Requirements that must all hold."""


class ClusterQueue(ConfigModel):
    """A Kueue ClusterQueue (cluster-scoped): a pool of quota that LocalQueues submit into."""

    name: DnsSubdomain
    """Required. Object name, referenced from LocalQueue ``clusterQueue``."""
    cohort_name: DnsSubdomain | None = None
    """Cohort to share (borrow/lend) quota in; a Cohort object is optional. Emitted as ``cohortName``
    (v1beta2) or ``cohort`` (v1beta1). Defaults to none (no sharing)."""
    namespace_selector: LabelSelector | None = None
    """Namespaces whose LocalQueues may use this queue. **Defaults to ``{}`` (all namespaces)**.
    Note: in Kueue itself an omitted selector matches no namespace; Batchplane always emits one."""
    queueing_strategy: Literal["StrictFIFO", "BestEffortFIFO"] | None = None
    """Kueue default ``BestEffortFIFO`` (a workload that does not fit does not block smaller ones)."""
    resource_groups: Annotated[list[ResourceGroup], Field(max_length=16)] = []
    """Quota per flavor and resource; at most 16 groups. Defaults to none (the queue admits nothing)."""
    preemption: Preemption | None = None
    """Preemption policy; defaults to Kueue's (no preemption)."""
    flavor_fungibility: FlavorFungibility | None = None
    """Flavor fungibility; defaults to Kueue's."""
    admission_checks: Annotated[
        list[Annotated[AdmissionCheckRef, BeforeValidator(_name_to_ref)]], Field(max_length=64)
    ] = []
    """Admission checks workloads must pass before admission (names, or ``{name, onFlavors}``);
    emitted as ``admissionChecksStrategy``. Defaults to none."""
    fair_sharing: FairSharing | None = None
    """Fair-sharing weight; defaults to Kueue's (1)."""
    stop_policy: StopPolicy | None = None
    """``Hold`` stops new admissions; ``HoldAndDrain`` also evicts admitted ones. Kueue default ``None``."""

    def flavor_names(self) -> list[str]:
        """Every flavor named in this queue's resource groups, in order."""
        return [f.name for g in self.resource_groups for f in g.flavors]


class Cohort(ConfigModel):
    """A Kueue Cohort object (cluster-scoped): optional; adds quota and a parent to a cohort."""

    name: DnsSubdomain
    """Required. The cohort name ClusterQueues reference in ``cohortName``."""
    parent_name: DnsSubdomain | None = None
    """Parent cohort for hierarchical cohorts. Defaults to none (a root cohort)."""
    resource_groups: Annotated[list[ResourceGroup], Field(max_length=16)] = []
    """Quota owned by the cohort itself, lendable to its members. Borrowing/lending limits only with
    a parent. Defaults to none."""
    fair_sharing: FairSharing | None = None
    """Fair-sharing weight of this cohort within its parent. Defaults to Kueue's (1)."""


class LocalQueue(ConfigModel):
    """A Kueue LocalQueue (namespaced): what a job names in its ``kueue.x-k8s.io/queue-name`` label."""

    name: DnsSubdomain
    """Required. Also a label value (≤ 63 characters), because jobs reference it by label."""
    namespace: DnsLabel
    """Required. The namespace; created by the stack unless listed in ``namespaces`` with ``create: false``
    or it is a built-in namespace (``default``, ``kube-*``)."""
    cluster_queue: DnsSubdomain
    """Required. The ClusterQueue it submits to (immutable in Kueue)."""
    default: bool = False
    """Mark as the namespace's default queue with the annotation ``kueue.x-k8s.io/default-queue: "true"``
    (the OpenShift AI / CodeFlare SDK convention, also read by Batchplane's webhook). Kueue itself
    ignores the annotation and defaults to a LocalQueue *named* ``default`` — see
    ``batchplane:kueue.namedDefaultQueues``. At most one per namespace. Defaults to false."""
    stop_policy: StopPolicy | None = None
    """``Hold``/``HoldAndDrain`` as on ClusterQueue. Kueue default ``None``."""
    fair_sharing: FairSharing | None = None
    """Weight for admission fair sharing. Kueue default 1."""


class AdmissionCheckParameters(ConfigModel):
    """Reference to a parameters object of an AdmissionCheck (``AdmissionCheckParametersReference``)."""

    api_group: Annotated[DnsSubdomain, Field(min_length=1, max_length=253)]
    """Required. e.g. ``kueue.x-k8s.io``."""
    kind: Annotated[str, Field(min_length=1, max_length=63, pattern=r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$")]
    """Required. e.g. ``ProvisioningRequestConfig``."""
    name: DnsLabel
    """Required. The parameters object's name."""


class AdmissionCheck(ConfigModel):
    """A Kueue AdmissionCheck (cluster-scoped).

    For the ProvisioningRequest check write ``provisioningRequestConfig: <name>``: Batchplane fills
    ``controllerName: kueue.x-k8s.io/provisioning-request`` and the parameters reference.
    """

    name: DnsSubdomain
    """Required. Referenced from ClusterQueue ``admissionChecks``."""
    controller_name: Annotated[str, Field(min_length=1, max_length=253)] | None = None
    """The controller that runs the check. Defaults to ``kueue.x-k8s.io/provisioning-request`` when
    ``provisioningRequestConfig`` is given; required otherwise."""
    parameters: AdmissionCheckParameters | None = None
    """Parameters object reference. Defaults to none, or to the ProvisioningRequestConfig given below."""
    provisioning_request_config: DnsLabel | None = None
    """Shorthand: name of a ProvisioningRequestConfig in this stack; sets controllerName and parameters."""

    @model_validator(mode="after")
    def _one_way_to_say_it(self) -> AdmissionCheck:
        if self.provisioning_request_config is not None and self.parameters is not None:
            raise ValueError("give either provisioningRequestConfig or parameters, not both")
        if self.provisioning_request_config is None and self.controller_name is None:
            raise ValueError("controllerName is required (or give provisioningRequestConfig)")
        return self

    def resolved_controller_name(self) -> str:
        """controllerName as emitted (defaults for the provisioning shorthand)."""
        return self.controller_name or PROVISIONING_CONTROLLER

    def resolved_parameters(self) -> AdmissionCheckParameters | None:
        """The parameters reference as emitted (filled in for the provisioning shorthand)."""
        if self.provisioning_request_config is not None:
            return AdmissionCheckParameters(
                api_group="kueue.x-k8s.io",
                kind="ProvisioningRequestConfig",
                name=self.provisioning_request_config,
            )
        return self.parameters


class RetryStrategy(ConfigModel):
    """Retries of failed ProvisioningRequests (``ProvisioningRequestRetryStrategy``)."""

    backoff_limit_count: NonNegativeInt32 | None = None
    """Retries before the workload is deactivated; 0 disables retries. Kueue default 3."""
    backoff_base_seconds: NonNegativeInt32 | None = None
    """Base of the exponential backoff (seconds). Kueue default 60."""
    backoff_max_seconds: NonNegativeInt32 | None = None
    """Cap of the backoff (seconds). Kueue default 1800."""


class NodeSelectorUpdate(ConfigModel):
    """A nodeSelector entry added to admitted pods from the provisioning class details."""

    key: Annotated[QualifiedName, Field(max_length=317)]
    """Required. Node label key to set."""
    value_from_provisioning_class_detail: Annotated[str, Field(min_length=1, max_length=32768)]
    """Required. Key in the ProvisioningRequest's ``provisioningClassDetails`` holding the value."""


class PodSetUpdates(ConfigModel):
    """Updates applied to admitted pods (``ProvisioningRequestPodSetUpdates``)."""

    node_selector: Annotated[list[NodeSelectorUpdate], Field(max_length=8)] = []
    """At most 8, unique by key."""


class ProvisioningRequestConfig(ConfigModel):
    """A Kueue ProvisioningRequestConfig (cluster-scoped): how the provisioning admission check asks
    the cluster autoscaler for nodes (``provisioningrequestconfig_types.go``)."""

    name: DnsLabel
    """Required. Referenced from an AdmissionCheck's parameters."""
    provisioning_class_name: Annotated[DnsSubdomain, Field(min_length=1, max_length=253)]
    """Required. e.g. ``queued-provisioning.gke.io`` (GKE DWS),
    ``best-effort-atomic-scale-up.autoscaling.x-k8s.io``, ``check-capacity.autoscaling.x-k8s.io``."""
    parameters: Annotated[dict[str, Annotated[str, Field(max_length=255)]], Field(max_length=100)] = {}
    """ProvisioningRequest parameters (e.g. ``maxRunDurationSeconds``); at most 100, values ≤ 255 chars.
    Job annotations ``provreq.kueue.x-k8s.io/<key>`` override them. Defaults to none."""
    managed_resources: Annotated[list[QualifiedName], Field(max_length=100)] = []
    """Only PodSets requesting one of these resources are provisioned. Defaults to none = all."""
    retry_strategy: RetryStrategy | None = None
    """Retry policy; defaults to Kueue's (3 retries, 60 s base, 1800 s max)."""
    pod_set_updates: PodSetUpdates | None = None
    """nodeSelector updates for admitted pods. Defaults to none."""
    pod_set_merge_policy: (
        Literal["IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements"] | None
    ) = None
    """Merge PodSets into one ProvisioningRequest PodSet when they match (needed where the provisioner
    accepts one PodSet only, e.g. GKE DWS). Defaults to none (one PodSet per PodSet)."""


class WorkloadPriorityClass(ConfigModel):
    """A Kueue WorkloadPriorityClass (cluster-scoped): jobs pick it with ``kueue.x-k8s.io/priority-class``."""

    name: DnsSubdomain
    """Required. The label value jobs use."""
    value: Int32
    """Required. Priority; higher is admitted (and preempts) first."""
    description: Annotated[str, Field(max_length=2048)] | None = None
    """Free text; at most 2048 characters. Defaults to none."""


class NamespaceSpec(ConfigModel):
    """A tenant namespace the stack manages (or only references, with ``create: false``)."""

    name: DnsLabel
    """Required. Namespace name."""
    create: bool = True
    """Whether the stack creates the namespace. Defaults to true; built-in namespaces
    (``default``, ``kube-system``, ``kube-public``, ``kube-node-lease``) are never created."""
    labels: Annotated[dict[QualifiedName, LabelValue], Field(max_length=64)] = {}
    """Extra labels on the namespace (e.g. for ClusterQueue namespaceSelectors). Defaults to none."""
    annotations: Annotations = {}
    """Extra annotations on the namespace. Defaults to none."""


class KueueConfig(ConfigModel):
    """``batchplane:kueue``: the Kueue objects of the stack. Every list defaults to empty."""

    api_version: KueueApiVersion = KUEUE_V1BETA2
    """Emitted API version. Default ``kueue.x-k8s.io/v1beta2`` (storage version, Kueue ≥ 0.15 /
    Red Hat build of Kueue ≥ 1.3), or ``v1beta1`` where the target's Kueue serves only that (OpenShift: the Red Hat
    build of Kueue 1.0-1.2, OpenShift AI 2.x's embedded Kueue; an explicit ``v1beta2`` there is an error). ``v1beta1`` for older Kueue: ClusterQueue ``cohortName`` is
    emitted as ``cohort``; everything else keeps its shape (the v0.19.2 CRDs serve both versions:
    ``apis/kueue/v1beta1/clusterqueue_types.go`` at https://github.com/kubernetes-sigs/kueue/tree/v0.19.2)."""
    named_default_queues: bool = False
    """When true, every namespace whose default LocalQueue (``default: true``) is not named
    ``default`` also gets a LocalQueue named ``default`` on the same ClusterQueue, so Kueue's own
    defaulting (jobs without a queue label go to the LocalQueue named ``default``) applies too.
    Defaults to false: only the annotation (read by the CodeFlare SDK and Batchplane's webhook)."""
    resource_flavors: list[ResourceFlavor] = []
    """ResourceFlavors. Defaults to none."""
    topologies: list[Topology] = []
    """Topologies for topology-aware scheduling. Defaults to none."""
    cohorts: list[Cohort] = []
    """Cohort objects (only needed for hierarchy or cohort-owned quota). Defaults to none."""
    cluster_queues: list[ClusterQueue] = []
    """ClusterQueues. Defaults to none."""
    local_queues: list[LocalQueue] = []
    """LocalQueues. Defaults to none."""
    admission_checks: list[AdmissionCheck] = []
    """AdmissionChecks. Defaults to none."""
    provisioning_request_configs: list[ProvisioningRequestConfig] = []
    """ProvisioningRequestConfigs. Defaults to none."""
    workload_priority_classes: list[WorkloadPriorityClass] = []
    """WorkloadPriorityClasses. Defaults to none."""
    namespaces: list[NamespaceSpec] = []
    """Tenant namespaces with extra labels/annotations, or ``create: false`` for existing ones. LocalQueue
    namespaces not listed here are created with default settings. Defaults to none."""

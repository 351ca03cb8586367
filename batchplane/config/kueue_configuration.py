"""The typed Kueue manager Configuration (``config.kueue.x-k8s.io/v1beta2``) and its feature gates.

Mirrors ``apis/config/v1beta2/configuration_types.go`` of Kueue v0.19.2
(https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/apis/config/v1beta2/configuration_types.go)
for the fields a platform sets: ``manageJobsWithoutQueueName``, ``managedJobsNamespaceSelector``,
``waitForPodsReady``, ``integrations``, ``fairSharing``, ``admissionFairSharing``, ``resources``,
``metrics``, ``featureGates`` and ``objectRetentionPolicies``. The fields Kueue's Helm chart fills
in (health, webhook port, leader election, client connection) are written by
:func:`batchplane.operators.installs.kueue_configuration_document` with the chart's own values.

Pure pydantic, no Pulumi: the quota webhook and the accounting code read ``resources``
(``excludeResourcePrefixes``, ``transformations``) from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from batchplane.config.base import ConfigModel, QualifiedName, Quantity
from batchplane.config.kueue import LabelSelector
from batchplane.frameworks import KUEUE_INTEGRATIONS

KUEUE_CONFIG_API_VERSION = "config.kueue.x-k8s.io/v1beta2"
"""apiVersion of the manager Configuration (Kueue ≥ 0.15)."""

KUEUE_FRAMEWORKS: tuple[str, ...] = KUEUE_INTEGRATIONS
"""Every ``integrations.frameworks`` name Kueue v0.19.2 accepts, in the order of its API docs
(``apis/config/v1beta2/configuration_types.go`` Integrations.Frameworks): the job-framework registry's
:data:`batchplane.frameworks.KUEUE_INTEGRATIONS`."""


# --- feature gates ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FeatureGate:
    """One Kueue feature gate of a release.

    Attributes:
        name: the gate name, e.g. ``TopologyAwareScheduling``.
        stage: ``alpha``, ``beta``, ``ga`` or ``deprecated`` (Kubernetes' ``featuregate.PreRelease``).
        default: whether the gate is on when not set (most beta gates are on, alpha and deprecated ones off, but
            not all: each gate's default is its own, as Kueue declares it).
        locked: ``LockToDefault`` (GA gates, and some deprecated ones): setting the other value makes the manager
            exit.
    """

    name: str
    stage: Literal["alpha", "beta", "ga", "deprecated"]
    default: bool
    locked: bool = False


def _gates(
    stage: Literal["alpha", "beta", "ga", "deprecated"], default: bool, names: str, *, locked: bool = False
) -> dict[str, FeatureGate]:
    return {n: FeatureGate(n, stage, default, locked=locked) for n in names.split()}


#: Feature gates of Kueue v0.19.2: every entry of ``defaultVersionedFeatureGates`` in
#: https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/features/kube_features.go (line 646 on), each with the
#: stage, default and lock of its newest versioned spec. A gate not listed is unknown to that release: the manager
#: exits with ``unrecognized feature gate``.
KUEUE_FEATURE_GATES: dict[str, dict[str, FeatureGate]] = {
    "0.19.2": {
        **_gates(
            "beta",
            True,
            """
            AdmissionFairSharing AdmissionGatedBy AssignQueueLabelsForPods CleanupProvisioningRequestsOnEviction
            DeferRayServiceFinalizationForRedisCleanup ElasticJobsViaWorkloadSlices
            FairSharingPreemptWithinNominal FairSharingPrioritizeNonBorrowing FinishOrphanedWorkloads
            FlavorFungibility FlavorFungibilityPreserveScanProgress KueueDRAIntegration
            KueueDRAIntegrationExtendedResource KueueDRAIntegrationPartitionableDevices
            KueueDRARejectWorkloadsWhenDRADisabled LWSImmutableGroupSize LocalQueueMetrics
            MetricForWorkloadCreationLatency MetricsForCohorts MultiKueue MultiKueueAdaptersForCustomJobs
            MultiKueueIncrementalDispatcherConfig MultiKueueIncrementalDispatcherRespectConfigOrder
            MultiKueueRemoteSpecSync PartialAdmission PodIntegrationValidateGroupOwner
            PrioritySortingWithinCohort QuotaCheckStrategy ReclaimablePods RemoveFinalizersWithStrictPatch
            SchedulingEquivalenceHashing SkipAncestorCheckForDeletedWorkloads
            SkipReassignmentForPodOwnedWorkloads TASAssignmentsEncodingByHostnamePrefix TASCacheNodeMatchResults
            TASCachingRemainingResources TASFailedNodeReplacement TASFailedNodeReplacementFailFast
            TASHandleOverlappingFlavors TASMultiLayerTopology TASProfileMixed
            TASRecomputeAssignmentWithinSchedulingCycle TASReplaceNodeOnNodeTaints
            TASReplaceNodeOnPodTermination TASValidateWorkloadSliceSize TLSOptions TopologyAwareScheduling
            ValidateRayAndSparkJobUpdates VectorizedResourceRequests VisibilityOnDemand
            WorkloadIdentifierAnnotations WorkloadValidateResourcesAreNonNegative
            WorkloadValidationForPodSetMetadata
            """,
        ),
        **_gates("beta", False, "UnadmittedWorkloadsExplicitStatus UnadmittedWorkloadsObservability"),
        **_gates(
            "alpha",
            False,
            """
            ConcurrentAdmission CustomMetricLabels DisableWaitForPodsReady ElasticJobsViaWorkloadSlicesWithTAS
            FailureRecoveryPolicy FastQuotaReleaseInPodIntegration KueueDRAIntegrationConsumableCapacity
            MultiKueueClusterProfile MultiKueueKubeConfigPathValidation MultiKueueManagerQuotaAutomation
            MultiKueueOrchestratedPreemption PrioritizePreemptorWorkloads PriorityBoost
            RecomputeAssignmentUponPreemptionTargetsOverlap RejectUpdatesToCQWithInvalidOnFlavors
            SchedulerLibraryIntegration SchedulerLongRequeueInterval SchedulerTimestampPreemptionBuffer
            ShortWorkloadNames SparkApplicationIntegration TASBalancedPlacement TASCacheTopologyTree
            TASRespectNodeAffinityPreferred WorkloadPriorityClassDefaulting WorkloadRequestUseMergePatch
            """,
        ),
        **_gates(
            "ga",
            True,
            """
            HierarchicalCohorts ManagedJobsNamespaceSelectorAlwaysRespected
            MultiKueueRedoAdmissionOnEvictionInWorker MultiKueueWaitForWorkloadAdmitted ObjectRetentionPolicies
            PropagateBatchJobLabelsToWorkload SkipFinalizersForPodsSuspendedByParent
            """,
            locked=True,
        ),
        **_gates("deprecated", False, "TASReplaceNodeDueToNotReadyOverFixedTime"),
        **_gates("deprecated", False, "MultiKueueAllowInsecureKubeconfigs", locked=True),
    }
}

#: Gates removed before a release, with the Kueue version that removed them (``pkg/features/kube_features.go``
#: at https://github.com/kubernetes-sigs/kueue/tree/v0.14.0 and at v0.19.2):
#: passing one makes the manager exit with ``unrecognized feature gate``.
KUEUE_REMOVED_FEATURE_GATES: dict[str, tuple[str, str]] = {
    "ProvisioningACC": ("0.15", "ProvisioningRequest support is always on"),
    "LocalQueueDefaulting": ("0.19", "a LocalQueue named default is always the namespace's default"),
}


def feature_gate_problem(version: str, name: str, enabled: bool) -> str | None:
    """Why Kueue ``version`` would refuse to start with gate ``name`` set to ``enabled``, or ``None``.

    Args:
        version: a supported Kueue version (a key of :data:`KUEUE_FEATURE_GATES`).
        name: the gate name as written.
        enabled: the value it is set to.

    Returns:
        ``None`` when the manager accepts the setting, else a one-line reason naming the fix.
    """
    gates = KUEUE_FEATURE_GATES[version]
    gate = gates.get(name)
    if gate is None:
        if name in KUEUE_REMOVED_FEATURE_GATES:
            removed_in, why = KUEUE_REMOVED_FEATURE_GATES[name]
            return (
                f'feature gate "{name}" was removed in Kueue {removed_in} ({why}); Kueue {version} '
                f"refuses to start with it: remove it"
            )
        return (
            f'unknown feature gate "{name}" for Kueue {version} (the manager exits with '
            f'"unrecognized feature gate: {name}"); known gates: {", ".join(sorted(gates))}'
        )
    if gate.locked and enabled != gate.default:
        return (
            f'feature gate "{name}" is {gate.stage.upper() if gate.stage == "ga" else gate.stage} and locked to '
            f"{str(gate.default).lower()} in Kueue {version}; "
            f"setting it to {str(enabled).lower()} makes the manager exit: remove it"
        )
    return None


# --- Configuration model -----------------------------------------------------------------------

Duration = Annotated[str, Field(pattern=r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$")]
"""A Go ``time.Duration`` / ``metav1.Duration`` string such as ``5m``, ``1h30m`` or ``0s``."""


class RequeuingStrategy(ConfigModel):
    """``waitForPodsReady.requeuingStrategy``: how a workload evicted for PodsReady timeout is requeued."""

    timestamp: Literal["Eviction", "Creation"] | None = None
    """Requeue ordering timestamp. Omitted: Kueue's default ``Eviction``."""
    backoff_limit_count: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None
    """Requeues before the workload is deactivated. Omitted: requeue forever."""
    backoff_base_seconds: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None
    """Exponential backoff base in seconds. Omitted: Kueue's default 60."""
    backoff_max_seconds: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None
    """Backoff cap in seconds. Omitted: Kueue's default 3600."""


class WaitForPodsReady(ConfigModel):
    """``waitForPodsReady``: all-or-nothing admission (v1beta2: present means enabled)."""

    timeout: Duration = "5m"
    """Time an admitted workload has to reach PodsReady before it is evicted and requeued. Defaults to ``5m``."""
    block_admission: bool | None = None
    """Block further admissions in the ClusterQueue until admitted jobs are ready. Omitted: false."""
    recovery_timeout: Duration | None = None
    """Timeout after a running workload loses PodsReady. Omitted: equals ``timeout``; ``0s`` disables it."""
    requeuing_strategy: RequeuingStrategy | None = None
    """Requeue backoff. Omitted: Kueue's defaults."""


class FairSharingConfig(ConfigModel):
    """``fairSharing``: cohort fair sharing (v1beta2: present means enabled)."""

    preemption_strategies: list[Literal["LessThanOrEqualToFinalShare", "LessThanInitialShare"]] = [
        "LessThanOrEqualToFinalShare",
        "LessThanInitialShare",
    ]
    """Preemption constraints, tried in order. Defaults to both, in Kueue's documented order."""


class AdmissionFairSharingConfig(ConfigModel):
    """``admissionFairSharing``: order workloads in a ClusterQueue by their LocalQueue's past usage."""

    usage_half_life_time: Duration
    """Required. Time after which recorded usage decays by half (e.g. ``168h``)."""
    usage_sampling_interval: Duration = "5m"
    """How often usage is sampled. Defaults to ``5m`` (Kueue's default)."""
    resource_weights: dict[QualifiedName, float] = {}
    """Per-resource weights; omitted resources weigh 1. Defaults to none."""


class ResourceTransformation(ConfigModel):
    """``resources.transformations[]``: how a pod resource is turned into workload requests."""

    input: QualifiedName
    """Required. The input resource name, e.g. ``nvidia.com/mig-1g.5gb``."""
    strategy: Literal["Retain", "Replace"] | None = None
    """``Retain`` keeps the input alongside the outputs, ``Replace`` drops it. Omitted: ``Retain``."""
    multiply_by: QualifiedName | None = None
    """Another requested resource whose amount multiplies the input amount. Defaults to none."""
    outputs: dict[QualifiedName, Quantity] = {}
    """Output resources and quantities per unit of input. Empty with ``Replace`` ignores the input."""


class ResourcesConfig(ConfigModel):
    """``resources``: which pod resources Kueue accounts, and how."""

    exclude_resource_prefixes: list[str] = []
    """Resource name prefixes Kueue ignores (e.g. ``example.com/``). Defaults to none."""
    transformations: list[ResourceTransformation] = []
    """Resource transformations, one per ``input`` (unique). Defaults to none."""


class IntegrationsConfig(ConfigModel):
    """``integrations``: the job frameworks Kueue manages, beyond those Batchplane derives."""

    frameworks: list[str] = []
    """Frameworks to enable in addition to the derived ones (``batch/job`` plus one per installed job
    operator, see :func:`batchplane.config.operators.derived_frameworks`). Each must be one of the
    18 names of :data:`KUEUE_FRAMEWORKS`, listed once and not derived already. Defaults to none."""
    external_frameworks: list[str] = []
    """GroupVersionKinds (``Kind.version.group``) managed by external controllers. Defaults to none."""
    label_keys_to_copy: list[QualifiedName] = []
    """Job label keys copied onto Workloads. Defaults to none."""


class MetricsConfig(ConfigModel):
    """``metrics``: what the manager reports to Prometheus."""

    enable_cluster_queue_resources: bool = False
    """Report ClusterQueue quota and usage per resource. Defaults to false (Kueue's default); omitted, the stack
    turns it on while ``batchplane:observability`` is enabled (its GPU alerts read these metrics)."""


class WorkloadRetention(ConfigModel):
    """``objectRetentionPolicies.workloads``: when finished/deactivated Workloads are deleted."""

    after_finished: Duration | None = None
    """Delete Workloads this long after they finish. Omitted: keep forever."""
    after_deactivated_by_kueue: Duration | None = None
    """Delete Workloads this long after Kueue deactivates them. Omitted: keep forever."""


class IncrementalDispatcherConfig(ConfigModel):
    """``multiKueue.incrementalDispatcherConfig`` of the Kueue Configuration (Kueue ``apis/config/v1beta2``
    ``IncrementalDispatcherConfig``,
    https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/apis/config/v1beta2/configuration_types.go line 376)."""

    step_size: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    """How many more worker clusters each round of the incremental dispatcher nominates (a round lasts up to
    5 minutes). Omitted: Kueue's ``3`` (``DefaultStepSize``, ``pkg/controller/workloaddispatcher/
    incrementaldispatcher.go`` line 51 at v0.19.2); ``1`` tries the workers one at a time. Honoured only with the
    ``MultiKueueIncrementalDispatcherConfig`` feature gate (beta, on by default in 0.19)."""


class MultiKueueOptions(ConfigModel):
    """``multiKueue`` of the Kueue Configuration (the manager's MultiKueue controller; Kueue
    ``apis/config/v1beta2`` ``MultiKueue``, defaults in ``apis/config/v1beta2/defaults.go``)."""

    gc_interval: Duration | None = None
    """How often the manager garbage-collects remote objects whose local Workload is gone. Omitted: Kueue's
    ``1m``; ``0s`` disables the collection."""
    origin: Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$")] | None = None
    """The value of the ``kueue.x-k8s.io/multikueue-origin`` label on remote objects, telling managers that share
    a worker apart. Omitted: Kueue's ``multikueue``."""
    worker_lost_timeout: Duration | None = None
    """How long a workload admitted on a worker that became unreachable stays admitted before the manager requeues
    it elsewhere. Omitted: Kueue's ``15m``."""
    dispatcher_name: (
        Literal[
            "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
            "kueue.x-k8s.io/multikueue-dispatcher-incremental",
        ]
        | None
    ) = None
    """How workloads are nominated to workers: all at once, or incrementally in MultiKueueConfig order. Omitted:
    Kueue's ``kueue.x-k8s.io/multikueue-dispatcher-all-at-once``."""
    incremental_dispatcher_config: IncrementalDispatcherConfig | None = None
    """The incremental dispatcher's step (``incrementalDispatcherConfig.stepSize``); only with ``dispatcherName:
    kueue.x-k8s.io/multikueue-dispatcher-incremental`` (Kueue's config validation refuses it otherwise). Omitted:
    Kueue's step of 3 workers per round."""


class KueueConfiguration(ConfigModel):
    """The Kueue manager Configuration a stack sets (``config.kueue.x-k8s.io/v1beta2``, Kueue v0.19.2).

    Every field defaults to Kueue's own default, except ``managedJobsNamespaceSelector`` which
    Batchplane derives from the stack's tenant namespaces.
    """

    manage_jobs_without_queue_name: bool = False
    """Also suspend and manage jobs without the ``kueue.x-k8s.io/queue-name`` label (they then wait
    for a queue). Defaults to false (Kueue's default): unlabelled jobs run unmanaged."""
    managed_jobs_namespace_selector: LabelSelector | None = None
    """Namespaces whose jobs Kueue manages. Omitted: Batchplane derives
    ``kubernetes.io/metadata.name In [<tenant namespaces>]`` from the stack's LocalQueues (with the GA
    gate ManagedJobsNamespaceSelectorAlwaysRespected, jobs elsewhere are never managed). With no tenant
    namespaces, Kueue's default (everything except kube-system and Kueue's namespace) applies."""
    wait_for_pods_ready: WaitForPodsReady | None = None
    """All-or-nothing scheduling. Omitted: disabled (Kueue's default)."""
    fair_sharing: FairSharingConfig | None = None
    """Cohort fair sharing. Omitted: disabled (Kueue's default)."""
    admission_fair_sharing: AdmissionFairSharingConfig | None = None
    """Admission fair sharing. Omitted: disabled."""
    integrations: IntegrationsConfig = IntegrationsConfig()
    """Extra job frameworks. Defaults to none beyond the derived ones."""
    resources: ResourcesConfig | None = None
    """Resource accounting options. Omitted: every resource counts as requested."""
    metrics: MetricsConfig = MetricsConfig()
    """Metrics options. Defaults to Kueue's defaults."""
    feature_gates: dict[str, bool] = {}
    """Feature gates set in the Configuration (``featureGates``); validated against the pinned Kueue
    version. Do not also pass ``--feature-gates`` (Helm ``controllerManager.featureGates``): Kueue
    refuses both. Defaults to none."""
    object_retention_policies: WorkloadRetention | None = None
    """Automatic deletion of Workloads (``objectRetentionPolicies.workloads``). Omitted: never."""
    multi_kueue: MultiKueueOptions | None = None
    """The MultiKueue manager's options (``multiKueue``): garbage collection, origin label, lost-worker timeout,
    dispatcher. Omitted: Kueue's defaults."""

"""The record of one job framework (:class:`JobFramework`) and the RBAC rule shape it grants on a MultiKueue worker.

Kueue keeps one folder per job framework (``pkg/controller/jobs/<framework>/``), each registering itself once
with ``jobframework.RegisterIntegration(FrameworkName, IntegrationCallbacks{...})``
(https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobframework/integrationmanager.go).
Batchplane does the same: one module per framework in :mod:`batchplane.frameworks`, each holding one
:class:`JobFramework`, registered once by the package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeAlias

if TYPE_CHECKING:
    from batchplane.accounting.podsets import RawPodSet, TrainingRuntimes

KUEUE_TAG = "v0.19.2"
"""The Kueue release the framework facts are transcribed from."""
KUEUE_SOURCE = f"https://github.com/kubernetes-sigs/kueue/blob/{KUEUE_TAG}"
"""Where those facts are: a file path below this URL."""
UPDATE_SOURCE = f"{KUEUE_SOURCE}/pkg/controller/jobframework/validation.go"
"""Kueue's checks of a job UPDATE shared by every framework (``ValidateJobOnUpdate``, lines 106-119)."""
EQUIVALENCE_SOURCE = f"{KUEUE_SOURCE}/pkg/controller/jobframework/reconciler.go"
"""Where Kueue compares a job's PodSets with its Workload's and replaces a Workload that no longer matches."""
MULTIKUEUE_SCRIPT = f"{KUEUE_SOURCE}/site/static/examples/multikueue/create-multikueue-kubeconfig.sh"
"""Kueue's script that creates the MultiKueue manager's ServiceAccount, ClusterRole and kubeconfig on a worker."""

MANAGE_VERBS = ("create", "delete", "get", "list", "watch")
"""What the script grants on a dispatched job kind: MultiKueue creates, watches and deletes the remote copy."""

JobOperator = Literal["kuberay", "training-operator-v1", "trainer-v2", "appwrapper"]
"""A job operator Batchplane installs (``batchplane:operators``): KubeRay, the v1 Training Operator, Kubeflow
Trainer v2 (which installs JobSet) or the AppWrapper controller."""

JOB_OPERATOR_NAMES: dict[JobOperator, str] = {
    "kuberay": "KubeRay",
    "training-operator-v1": "the v1 Training Operator",
    "trainer-v2": "Kubeflow Trainer v2",
    "appwrapper": "AppWrapper",
}
"""Job operator → how messages name it."""

PodSetSource = Literal["object", "training-runtime"]
"""How Batchplane's accounting computes a framework's PodSets: from the object alone (``object``), or from the
object and the TrainingRuntime/ClusterTrainingRuntime it references (``training-runtime``, TrainJob)."""

ObjectPodSets: TypeAlias = "Callable[[Mapping[str, Any]], list[RawPodSet]]"
"""A job object (a parsed manifest) → its PodSets as Kueue builds them (Kueue's ``GenericJob.PodSets()``).
Raises :class:`~batchplane.accounting.model.FieldError` naming the field it cannot read."""
RuntimePodSets: TypeAlias = "Callable[[Mapping[str, Any], TrainingRuntimes, str], list[RawPodSet]]"
"""A job object, the training runtimes known to the caller and the object's namespace → its PodSets (TrainJob)."""


class ReviewProblem(NamedTuple):
    """Why the quota webhook refuses a job of this framework before any quota is looked at.

    Attributes:
        reason: the decision's machine-readable reason (one of the webhook's ``DENY_REASONS``: a metrics label).
        message: what is wrong and what to change, for the user.
    """

    reason: str
    message: str


Review: TypeAlias = "Callable[[Mapping[str, Any]], list[ReviewProblem]]"
"""A job object → the framework's own refusals (e.g. a RayJob that would keep its quota after it ends); empty when
the object is fine. Runs on every review of the kind, so it reads the object and allocates nothing else."""
PriorityClassOf: TypeAlias = "Callable[[Mapping[str, Any]], str | None]"
"""A job object → the pod priority class its framework names outside the pod templates (Kueue's
``ExtractPriority`` for kubeflow jobs: ``spec.runPolicy.schedulingPolicy.priorityClass``), or ``None``."""


@dataclass(frozen=True)
class PolicyRule:
    """One rule of a ClusterRole (``rbac.authorization.k8s.io/v1`` PolicyRule).

    Attributes:
        api_groups: ``apiGroups`` (``""`` is the core group).
        resources: ``resources`` (plural names, ``<plural>/status`` for the status subresource).
        verbs: ``verbs``, in the order Kueue's script lists them.
    """

    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]

    def manifest(self) -> dict[str, list[str]]:
        """The rule as it appears in a ClusterRole manifest: ``{"apiGroups", "resources", "verbs"}``."""
        return {
            "apiGroups": list(self.api_groups),
            "resources": list(self.resources),
            "verbs": list(self.verbs),
        }


def dispatched_rules(
    group: str, plural: str, *, extra_verbs: tuple[str, ...] = (), status: bool = True
) -> tuple[PolicyRule, ...]:
    """The rules Kueue's script grants for a kind MultiKueue dispatches: :data:`MANAGE_VERBS` (plus
    ``extra_verbs``) on ``plural`` and, unless ``status`` is false, ``get`` on ``<plural>/status``."""
    rules = [PolicyRule((group,), (plural,), MANAGE_VERBS + extra_verbs)]
    if status:
        rules.append(PolicyRule((group,), (f"{plural}/status",), ("get",)))
    return tuple(rules)


@dataclass(frozen=True)
class JobFramework:
    """What Batchplane knows about one Kueue job integration.

    Attributes:
        name: Kueue's integration name (``FrameworkName``; ``integrations.frameworks`` of the manager
            Configuration), e.g. ``ray.io/rayjob``.
        group: the kind's API group (``""`` for the core group).
        version: the API version Batchplane reads and the quota webhook reviews, e.g. ``v1``.
        kind: the kind, e.g. ``RayJob``.
        plural: the resource name, e.g. ``rayjobs``.
        source: the Kueue file that registers the integration (URL at :data:`KUEUE_TAG`).
        rhbok_name: the framework's name in the Red Hat build of Kueue's ``Kueue`` CR
            (``spec.config.integrations.frameworks`` enum of ``kueue.openshift.io/v1``), or ``None`` if absent.
        kueue_chart_default: enabled by the Kueue Helm chart's default Configuration (``charts/kueue/values.yaml``).
        multikueue: MultiKueue dispatches its workloads to workers (the integration has a ``MultiKueueAdapter``,
            or, for Deployment, its Pods go through the Pod adapter).
        worker_rules: the ClusterRole rules the MultiKueue manager needs on a worker for this framework, as
            Kueue's :data:`MULTIKUEUE_SCRIPT` grants them; empty when MultiKueue does not dispatch it.
        worker_rules_beyond_script: ``worker_rules`` are Batchplane's own because the script grants nothing
            although Kueue dispatches the kind (same shape as the script's other kinds).
        pod_sets: the framework's PodSet extraction from the object alone (:data:`ObjectPodSets`), or ``None``.
        runtime_pod_sets: the extraction that needs the referenced training runtime too (:data:`RuntimePodSets`,
            TrainJob), or ``None``. A framework with neither is not accounted (its jobs are allowed unchecked by
            the quota webhook).
        review: the framework's own refusals in the quota webhook (:data:`Review`), or ``None``.
        priority_class: where the framework names a pod priority class outside the pod templates
            (:data:`PriorityClassOf`), or ``None``.
        admission_review: the quota webhook reviews objects of this kind on CREATE.
        update_review: the quota webhook reviews UPDATE of this kind too (needs ``admission_review``): set where
            Kueue lets an update change what gets admitted — the queue-name label while the job is suspended
            (``validateUpdateForQueueName``, :data:`UPDATE_SOURCE` lines 180-190) or the PodSets, which make Kueue
            replace the pending Workload (``EquivalentToWorkload``, :data:`EQUIVALENCE_SOURCE` lines 1419-1458).
            ``False`` (the default) for a kind whose updates never do, so its controllers' frequent updates cost
            the webhook nothing.
        operator: the job operator whose install makes Batchplane switch this integration on in Kueue's
            ``integrations.frameworks`` (the program) and require it there (the policy pack), or ``None`` when no
            operator Batchplane installs serves the kind (``batch/job`` is always on).
        workload_noun: what the quota webhook's sentences call the unit Kueue admits ("this LeaderWorkerSet group
            asks for …") when one object is several Workloads; ``None`` (the default): the kind, one object being
            one Workload.
        topology_checks: which of Kueue's topology-aware-scheduling validations (``pkg/controller/jobs/
            tas_validation.go``) the kind's own Kueue webhook calls: ``request`` (``ValidateTASPodSetRequest``),
            ``slice-bound`` (``ValidateSliceSizeAnnotationUpperBound``), ``grouping``
            (``ValidatePodSetGroupingTopology``); :mod:`batchplane.webhook.topology` cites the call sites. Empty
            (the default): none.
    """

    name: str
    group: str
    version: str
    kind: str
    plural: str
    source: str
    rhbok_name: str | None
    kueue_chart_default: bool
    multikueue: bool
    worker_rules: tuple[PolicyRule, ...] = ()
    worker_rules_beyond_script: bool = False
    pod_sets: ObjectPodSets | None = None
    runtime_pod_sets: RuntimePodSets | None = None
    review: Review | None = None
    priority_class: PriorityClassOf | None = None
    admission_review: bool = False
    update_review: bool = False
    operator: JobOperator | None = None
    workload_noun: str | None = None
    topology_checks: frozenset[str] = frozenset()

    @property
    def pod_set_source(self) -> PodSetSource | None:
        """How its PodSets are computed: ``object``, ``training-runtime``, or ``None`` when they are not."""
        if self.pod_sets is not None:
            return "object"
        return "training-runtime" if self.runtime_pod_sets is not None else None

    @property
    def api_version(self) -> str:
        """``apiVersion`` of its objects: ``<group>/<version>``, or ``<version>`` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def gvk(self) -> tuple[str, str]:
        """``(apiVersion, kind)``, the key Batchplane's accounting looks objects up by."""
        return (self.api_version, self.kind)

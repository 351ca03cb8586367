"""The policy document: the one source of the webhook's decision data — its types, reading and canonical JSON.

The document holds exactly what the decisions need and nothing else: tenant namespaces → their
LocalQueues (and the default one) → ClusterQueues → resource groups, flavors and quotas (nominal,
borrowing and lending limits) → cohorts (Cohort objects' own quota and parents) → admission checks
with their ProvisioningRequestConfig → per-namespace workload limits, plus the Kueue Configuration
options that change accounting (``resources``, enabled integrations). It is rendered *statically*
from the validated stack config by :func:`batchplane.components.quota_webhook.policy.render_policy`, beside the
component that ships it as a ConfigMap, each section built by the module owning its facts (this module imports no
stack loading: the server loads only the schema and loader below); docs/webhook.md explains why it is not synced
from the live cluster and how drift is handled. ``batchplane webhook policy --stack NAME`` prints it.

This module is the document's schema (the models, including which keys are left out when unset: ``exclude_if`` on
the field), its canonical JSON (:func:`policy_json`) and its loader (:func:`load_policy`).

Quantities stay Kubernetes quantity strings (as in the stack config); :mod:`batchplane.webhook.queues`
parses them once when the server loads the document.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from batchplane.config.base import ConfigModel
from batchplane.config.kueue import Taint, Toleration
from batchplane.config.webhook import WorkloadLimits
from batchplane.webhook.errors import PolicyError
from batchplane.wellknown import DEFAULT_GPU_RESOURCES

POLICY_API_VERSION: Literal["batchplane.dev/v1"] = "batchplane.dev/v1"
POLICY_KIND: Literal["QuotaPolicy"] = "QuotaPolicy"
#: Kueue feature gates the decisions depend on (carried in ``kueue.featureGates`` when the stack sets them).
DECISION_FEATURE_GATES = frozenset({"FlavorFungibility"})

NodeAffinityKeys = Literal["Flavor", "ResourceGroup"]
"""Which label keys Kueue's flavor assigner matches a pod's nodeSelector / required node affinity on, per flavor
(``flavorSelector`` in ``pkg/scheduler/flavorassigner/flavorassigner.go``):

* ``Flavor``: the keys of that flavor's own ``nodeLabels`` (``flavorLabelKeys := sets.KeySet(flavor.Spec.NodeLabels)``,
  line 1227 @v0.19.2): a flavor without node labels matches every pod. Kueue v0.19.0 and later, v0.18.2 and later
  v0.18 releases, v0.17.6 and later v0.17 releases — commit 40fe434 "Fix flavor selector using per-flavor label
  keys" (https://github.com/kubernetes-sigs/kueue/pull/12449), cherry-picked as e261deca24 (release-0.18) and
  109fcd51d3 (release-0.17).
* ``ResourceGroup``: the keys of every flavor of the resource group (``flavorSelector(&ps.Template.Spec,
  resourceGroup.LabelKeys)``, line 834 @v0.18.1; the union built by ``updateLabelKeys``,
  ``pkg/cache/scheduler/clusterqueue.go`` lines 379-408 @v0.18.1): a flavor lacking a key the pod names fails
  ``key=value``, ``In``, ``Exists``, ``Gt`` and ``Lt`` on it. Every Kueue before those releases (v0.18.0, v0.18.1,
  v0.17.0-v0.17.5, v0.16 and older).
"""


def _empty(value: object) -> bool:
    """``exclude_if`` of the keys left out of the JSON when they hold nothing (``None``, ``{}``, ``[]``)."""
    return not value


class PolicyModel(ConfigModel):
    """Base of the policy models: the stack config's conventions (camelCase keys, unknown keys
    rejected, immutable)."""


class QuotaPolicy(PolicyModel):
    """Quota of one resource in one flavor (Kueue ``ResourceQuota``); quantities as strings."""

    nominal_quota: str
    """Guaranteed quantity."""
    borrowing_limit: str | None = None
    """How much more may be borrowed from the cohort; ``None`` = unlimited."""
    lending_limit: str | None = None
    """How much of the nominal quota the cohort may borrow; ``None`` = all of it."""


class FlavorQuotasPolicy(PolicyModel):
    """A flavor's quotas inside a resource group."""

    name: str
    """The ResourceFlavor."""
    resources: dict[str, QuotaPolicy]
    """Resource name → quota."""


class ResourceGroupPolicy(PolicyModel):
    """A resource group: resources assigned one flavor together, flavors in order."""

    covered_resources: list[str]
    """Resources of the group."""
    flavors: list[FlavorQuotasPolicy]
    """Flavors in the order Kueue tries them."""


class AdmissionCheckUse(PolicyModel):
    """An admission check a ClusterQueue requires (``admissionChecksStrategy.admissionChecks[]``)."""

    name: str
    """The AdmissionCheck."""
    on_flavors: list[str] = []
    """Flavors it applies to; empty = all."""


class FlavorFungibilityPolicy(PolicyModel):
    """A ClusterQueue's ``flavorFungibility`` (Kueue v0.19.2 ``apis/kueue/v1beta2/clusterqueue_types.go``).

    In an otherwise empty queue only ``whenCanBorrow`` changes which flavor Kueue's assigner picks (no flavor ever
    needs preemption there); ``whenCanPreempt`` and ``preference`` are kept so the document mirrors the object.
    """

    when_can_borrow: Literal["MayStopSearch", "TryNextFlavor"] = "MayStopSearch"
    """Kueue's default ``MayStopSearch``: take the first flavor that fits, borrowing or not."""
    when_can_preempt: Literal["MayStopSearch", "TryNextFlavor"] = "TryNextFlavor"
    """Kueue's default ``TryNextFlavor``."""
    preference: Literal["BorrowingOverPreemption", "PreemptionOverBorrowing"] | None = None
    """``None`` = Kueue's built-in order (``BorrowingOverPreemption``)."""


class ClusterQueuePolicy(PolicyModel):
    """What the decisions need of a ClusterQueue."""

    cohort: str | None = None
    """``cohortName``; ``None`` = no cohort."""
    resource_groups: list[ResourceGroupPolicy] = []
    """Quotas."""
    admission_checks: list[AdmissionCheckUse] = []
    """Admission checks."""
    stop_policy: str | None = None
    """``Hold``/``HoldAndDrain`` stop admissions (reported as a warning)."""
    reclaim_within_cohort: str | None = Field(default=None, exclude_if=_empty)
    """``preemption.reclaimWithinCohort`` (``Never``, ``LowerPriority``, ``Any``); ``None`` = Kueue's default
    ``Never``. Named when a workload borrows this queue's quota: it can be preempted when this queue reclaims it."""
    flavor_fungibility: FlavorFungibilityPolicy | None = Field(default=None, exclude_if=_empty)
    """``flavorFungibility``; ``None`` = Kueue's defaults."""
    quota_keys: dict[str, str] = Field(default={}, exclude_if=_empty)
    """``<flavor>/<resource>`` → the stack config key that sets that quota (named in denial messages)."""


class CohortPolicy(PolicyModel):
    """A Cohort object: its parent and its own quota."""

    parent: str | None = None
    """``parentName``; ``None`` = a root cohort."""
    resource_groups: list[ResourceGroupPolicy] = []
    """Quota owned by the cohort."""


class NodeShapePolicy(PolicyModel):
    """The nodes of one pool that backs a ResourceFlavor: what one node holds."""

    pool: str
    """The pool (GKE node pool, OpenShift GPU MachineSet)."""
    machine_type: str = ""
    """Its machine type (``a3-highgpu-8g``); ``""`` when unknown."""
    capacity: dict[str, str] = {}
    """Resource → what one node has (the machine's capacity: GPUs, vCPUs, memory), each only when known."""
    allocatable: dict[str, str] = Field(default={}, exclude_if=_empty)
    """Resource → what one node offers pods (capacity less the platform's system reservation and eviction
    threshold, :mod:`batchplane.node_allocatable`); empty = unknown, then ``capacity`` is what a pod can get."""
    key: str = ""
    """The stack config key of the pool's machine type (named in denial messages)."""


class FlavorPolicy(PolicyModel):
    """A ResourceFlavor's node labels, taints and tolerations, and the nodes that back it."""

    node_labels: dict[str, str] = {}
    """``nodeLabels``."""
    node_taints: list[Taint] = []
    """``nodeTaints``."""
    tolerations: list[Toleration] = []
    """``tolerations`` Kueue adds to admitted pods."""
    nodes: list[NodeShapePolicy] = Field(default=[], exclude_if=_empty)
    """Every pool whose nodes the flavor's node labels select, with one node's capacity; empty = unknown (then no
    pod is ever refused for its size)."""
    topology_levels: list[str] = Field(default=[], exclude_if=_empty)
    """The node labels of the flavor's Topology (``topologyName``), widest first; empty = no topology-aware
    scheduling on this flavor."""


class ProvisioningPolicy(PolicyModel):
    """A ProvisioningRequestConfig, as far as PodSet merging is concerned."""

    name: str
    """Object name."""
    provisioning_class_name: str
    """e.g. ``queued-provisioning.gke.io``."""
    managed_resources: list[str] = []
    """Only PodSets requesting one of these are provisioned; empty = all."""
    pod_set_merge_policy: (
        Literal["IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements"] | None
    ) = None
    """How PodSets are merged into one ProvisioningRequest PodSet; ``None`` = never."""


class AdmissionCheckPolicy(PolicyModel):
    """An AdmissionCheck and, for the provisioning controller, its ProvisioningRequestConfig."""

    controller_name: str
    """``controllerName``."""
    provisioning_request_config: ProvisioningPolicy | None = None
    """The referenced ProvisioningRequestConfig, when the stack declares it."""


class NamespacePolicy(PolicyModel):
    """A tenant namespace: its LocalQueues, default queue and workload limits."""

    local_queues: dict[str, str] = {}
    """LocalQueue name → ClusterQueue name."""
    default_queue: str | None = None
    """The LocalQueue marked ``default: true`` (annotation ``kueue.x-k8s.io/default-queue``)."""
    limits: WorkloadLimits | None = None
    """Per-workload limits (team limits or ``webhook.namespaces[].limits``)."""


class KueueSettings(PolicyModel):
    """The Kueue Configuration options that change the decisions."""

    resources: dict[str, Any] = {}
    """``Configuration.resources`` (``excludeResourcePrefixes``, ``transformations``), camelCase."""
    quota_check_strategy: Literal["BlockUndeclared", "IgnoreUndeclared"] = "BlockUndeclared"
    """``resources.quotaCheckStrategy``; Kueue's default ``BlockUndeclared``."""
    frameworks: list[str] | None = None
    """Enabled ``integrations.frameworks``; ``None`` when the stack does not install Kueue (unknown)."""
    feature_gates: dict[str, bool] = Field(default={}, exclude_if=_empty)
    """The feature gates the stack sets that change the decisions (``FlavorFungibility``: Beta, on by default);
    a gate not listed keeps Kueue v0.19.2's default."""
    workload_priority_classes: list[str] = Field(default=[], exclude_if=_empty)
    """The WorkloadPriorityClasses the stack declares (``kueue.workloadPriorityClasses``), sorted; left out of the
    document when none (a stack without them keeps its checksum). Read only when ``frameworks`` is known (the stack
    installs Kueue)."""
    node_affinity_keys: NodeAffinityKeys = Field(default="Flavor", exclude_if=lambda keys: keys == "Flavor")
    """Which label keys a flavor is matched on against a pod's nodeSelector / required node affinity
    (:data:`NodeAffinityKeys`): ``Flavor`` (Kueue v0.19, v0.18.2+, v0.17.6+; the default, and what an unknown Kueue
    version gets) or ``ResourceGroup`` (older Kueue: the Red Hat build of Kueue 1.0-1.3, OpenShift AI 2.x's
    embedded Kueue). Derived from the Kueue version the stack runs
    (:func:`batchplane.kueue.policy.node_affinity_keys_of`)."""


class WebhookSettings(PolicyModel):
    """How the server decides and fails."""

    on_internal_error: Literal["Allow", "Deny"] = "Allow"
    """Answer to a review the webhook fails on."""
    default_queue_label: bool = True
    """Whether ``/mutate`` adds the default queue label."""
    gpu_resources: list[str] = list(DEFAULT_GPU_RESOURCES)
    """Resources counted by ``maxGpusPerWorkload``."""
    refuse_undeclared_queues: bool = False
    """Whether ``/validate`` refuses an unlabeled workload in a tenant namespace without a declared LocalQueue named
    ``default`` (Kueue would default it into an undeclared ``default`` LocalQueue)."""


class WorkerPolicy(PolicyModel):
    """A MultiKueue worker as the manager's webhook sees it."""

    name: str
    """The MultiKueueCluster's name."""
    policy: PolicyDocument | None = None
    """The worker's own policy document (a worker this program declares); ``None`` for an existing worker, whose
    queues are unknown — then no workload is denied for the workers' sake."""


class MultiKueuePolicy(PolicyModel):
    """The manager side of MultiKueue: which admission check dispatches, and to which workers."""

    admission_check: str
    """The AdmissionCheck (controller ``kueue.x-k8s.io/multikueue``) on the dispatching ClusterQueues."""
    workers: list[WorkerPolicy]
    """Every worker of the MultiKueueConfig, in order."""


class PolicyDocument(PolicyModel):
    """The whole policy document (``batchplane.dev/v1`` ``QuotaPolicy``)."""

    api_version: Literal["batchplane.dev/v1"] = POLICY_API_VERSION
    """Document version."""
    kind: Literal["QuotaPolicy"] = POLICY_KIND
    """Document kind."""
    stack: str
    """Name of the stack it was rendered from."""
    kueue: KueueSettings = KueueSettings()
    """Kueue Configuration options."""
    webhook: WebhookSettings = WebhookSettings()
    """Server behaviour."""
    namespaces: dict[str, NamespacePolicy] = {}
    """Tenant namespaces; the webhook allows everything elsewhere."""
    cluster_queues: dict[str, ClusterQueuePolicy] = {}
    """ClusterQueues by name."""
    cohorts: dict[str, CohortPolicy] = {}
    """Cohort objects by name (cohorts without an object have no quota and no parent)."""
    resource_flavors: dict[str, FlavorPolicy] = {}
    """ResourceFlavors by name."""
    admission_checks: dict[str, AdmissionCheckPolicy] = {}
    """AdmissionChecks by name."""
    multi_kueue: MultiKueuePolicy | None = None
    """MultiKueue: the workers a dispatching ClusterQueue's workloads may run on; ``None`` without MultiKueue."""


WorkerPolicy.model_rebuild()


def policy_json(doc: PolicyDocument) -> str:
    """The document as canonical JSON (sorted keys, 2-space indent, trailing newline), in one dump.

    Keys marked ``exclude_if`` in the schema are left out when they hold nothing or their default (a ClusterQueue's
    ``flavorFungibility`` and ``quotaKeys``, a flavor's ``nodes``, ``kueue.featureGates``,
    ``kueue.nodeAffinityKeys: Flavor``), in the workers' documents too, and the top-level ``multiKueue`` when unset —
    so a stack that does not need them keeps the document (and checksum) it had before the key existed: no webhook
    rollout, and a server of the previous release still reads it. (A worker's own document keeps its
    ``multiKueue: null``, as it always has.)
    """
    data = doc.model_dump(
        by_alias=True, mode="json", exclude={"multi_kueue"} if doc.multi_kueue is None else None
    )
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def policy_checksum(doc: PolicyDocument) -> str:
    """SHA-256 (hex) of :func:`policy_json`; the pod-template annotation that rolls pods on change."""
    return hashlib.sha256(policy_json(doc).encode()).hexdigest()


def parse_policy(data: Any) -> PolicyDocument:
    """Validate a decoded policy document.

    Raises:
        PolicyError: the document does not match the model (the message lists the fields).
    """
    try:
        return PolicyDocument.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        )
        raise PolicyError(f"invalid policy document: {problems}") from None


#: The most a gzip-compressed policy file may expand to (bytes): far above any ConfigMap's document, far below
#: what would hurt the webhook process (a corrupt or hostile file fails instead of filling memory).
MAX_POLICY_BYTES = 64 * 1024 * 1024


def load_policy(path: Path) -> PolicyDocument:
    """Read and validate a policy file: JSON as ``batchplane webhook policy`` writes it, or gzip-compressed JSON
    (``policy.json.gz``, as the ConfigMap ships a large document) — recognised by its gzip header.

    Raises:
        PolicyError: the file cannot be read, is not JSON (or gzip of JSON, at most :data:`MAX_POLICY_BYTES`
            when expanded), or is not a policy document.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PolicyError(f"cannot read policy file {path}: {exc.strerror or exc}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
                raw = stream.read(MAX_POLICY_BYTES + 1)
        except (OSError, EOFError) as exc:
            raise PolicyError(f"policy file {path} is not valid gzip: {exc}") from None
        if len(raw) > MAX_POLICY_BYTES:
            raise PolicyError(f"policy file {path} expands to more than {MAX_POLICY_BYTES:,} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PolicyError(f"policy file {path} is not JSON: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PolicyError(f"policy file {path} is not JSON: {exc}") from None
    return parse_policy(data)

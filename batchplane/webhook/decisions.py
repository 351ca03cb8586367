"""Pure admission decisions: what the webhook answers for one workload object (no I/O, no server).

:class:`Decider` compiles a :class:`~batchplane.webhook.policy.PolicyDocument` once and then judges
objects. ``validate`` denies, with a message naming the workload, its queue and the numbers, the
workloads that would otherwise sit pending forever or break under Kueue:

* the ``kueue.x-k8s.io/queue-name`` label names a LocalQueue the namespace does not have;
* the ClusterQueue can never admit it (:mod:`batchplane.webhook.capacity`: an uncovered resource, a
  PodSet or the whole workload larger than any flavor assignment could ever get, untolerated flavor
  taints, nodeSelectors no flavor matches, or an assignment that fits but that Kueue's flavor assigner,
  PodSet by PodSet and retrying from the last flavor tried, never finds);
* the ClusterQueue could admit it, but one of its pods is larger than every node of every pool backing each flavor
  it could get (``larger-than-any-node``; only flavors whose pools the policy knows count);
* per-namespace limits (max GPUs per workload, max requests per resource, allowed priority classes);
* combinations Kueue cannot run well: a GKE queued-provisioning (DWS) queue receiving several
  provisioned PodSets its ProvisioningRequestConfig cannot merge (ray-project/ray#57839), more than
  18 PodSets, PodSet names that are not DNS labels, a queue-managed RayJob without
  ``shutdownAfterJobFinishes: true`` or with ``clusterSelector``, Ray in-tree autoscaling without
  the elastic-job annotation, a job kind whose Kueue integration the stack does not enable.

A denial's message leads with a plain sentence in the user's unit (:mod:`batchplane.explain.sentences`), then the
numbers (:attr:`Decision.details`), the stack key that sets the quoted limit and the guide (docs/submitting-jobs.md).

``validate`` judges ``CREATE``, and ``UPDATE`` of the kinds whose framework sets ``update_review`` when the update
moves the queue label or grows the accounted demand (then exactly as the CREATE of the new object); an update that
only shrinks it is allowed (``smaller-on-update``), one that changes neither at once (``unchanged-on-update``).

``mutate`` adds the queue label of the namespace's default LocalQueue to unlabeled workloads unless
Kueue's own defaulting applies (a LocalQueue named ``default`` exists there).

Only objects in the policy's tenant namespaces are judged; objects with a controller owner
(a RayCluster of a RayJob, a Job of a JobSet) are left to their owner's review. The decisions are
conservative: whatever the webhook cannot decide (an object the accounting cannot read, a search
over flavors that runs out of budget) is allowed, with a warning when useful.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeAlias

from batchplane.accounting import (
    AccountingError,
    PodSetRequests,
    WorkloadRequests,
    resource_options_from_mapping,
    workload_requests,
)
from batchplane.accounting.pod_requests import PodContext
from batchplane.accounting.podsets import MAX_POD_SETS
from batchplane.accounting.validity import resource_requirement_problems, unknown_runtime_class_warnings
from batchplane.accounting.workload import SIMPLE_EXTRACTORS, is_workload
from batchplane.config.names import DNS1123_LABEL_RE
from batchplane.explain.sentences import (
    SUBMITTING_JOBS_DOC,
    Advice,
    Borrowing,
    amount,
    borrowing_sentence,
    node_advice,
    node_never_runs,
    shortfall_lead,
)
from batchplane.frameworks import BY_KIND, KUEUE_INTEGRATION_OF_KIND
from batchplane.frameworks.batch_job import JOB_MIN_PARALLELISM_ANNOTATION
from batchplane.frameworks.ray_common import RAY_FT_ENABLED_ANNOTATION
from batchplane.quantity import format_quantity, parse_quantity
from batchplane.webhook.assign import kueue_attempts
from batchplane.webhook.capacity import check_workload_ever_fits, node_misfit, possible_flavors
from batchplane.webhook.errors import PolicyError
from batchplane.webhook.flavors import Flavor, affinity_warnings, compile_flavors
from batchplane.webhook.policy import NamespacePolicy, PolicyDocument, ProvisioningPolicy
from batchplane.webhook.queues import PODS, Demand, QueueModel, compile_queues, demands, show
from batchplane.webhook.topology import queue_levels, tas_problems
from batchplane.wellknown import PRIORITY_CLASS_LABEL, PROVISIONING_CONTROLLER, QUEUE_NAME_LABEL

log = logging.getLogger("batchplane.webhook")

QUEUE_LABEL = QUEUE_NAME_LABEL
"""The label that selects a LocalQueue (Kueue ``pkg/controller/constants/constants.go``)."""
KUEUE_DEFAULT_QUEUE = "default"
"""A LocalQueue with this name makes Kueue itself label unlabeled jobs (LocalQueueDefaulting, GA)."""
DWS_PROVISIONING_CLASS = "queued-provisioning.gke.io"
"""GKE Dynamic Workload Scheduler; it accepts one PodSet per ProvisioningRequest."""

FRAMEWORK_OF_KIND = KUEUE_INTEGRATION_OF_KIND
"""Kind → Kueue ``integrations.frameworks`` name (the job-framework registry, :mod:`batchplane.frameworks`)."""

#: Every reason a decision can carry (a bounded set: it is a metrics label).
ALLOW_REASONS = (
    "ok", "not-a-workload", "not-a-tenant", "owned", "no-queue-label", "not-accounted", "operation-not-checked",
    "internal-error", "labeled", "defaulted", "kueue-defaults", "no-default-queue", "defaulting-off",
    "unchanged-on-update", "smaller-on-update", "borrows",
)  # fmt: skip
DENY_REASONS = (
    "unknown-local-queue", "never-admissible", "limit-exceeded", "priority-class-not-allowed",
    "unmergeable-podsets", "too-many-podsets", "invalid-podset-name", "rayjob-shutdown",
    "rayjob-cluster-selector", "ray-autoscaling-not-elastic", "framework-disabled", "internal-error",
    "no-worker-admits", "larger-than-any-node", "undeclared-local-queue", "invalid-pod-spec",
    "invalid-topology-request", "unknown-topology-level",
)  # fmt: skip


@dataclass(frozen=True)
class Decision:
    """The answer to one review.

    Attributes:
        allowed: admit the object or not.
        reason: a machine-readable reason from :data:`ALLOW_REASONS` / :data:`DENY_REASONS`.
        message: for a denial, what is wrong and what to do (``status.message``): a plain sentence
            (:mod:`batchplane.explain.sentences`), then ``details``, then the stack keys and the guide; else ``""``.
        warnings: shown to the user by kubectl even when allowed.
        patch: JSONPatch operations (mutating only); empty for none.
    """

    allowed: bool
    reason: str
    message: str = ""
    warnings: tuple[str, ...] = ()
    patch: tuple[dict[str, Any], ...] = ()
    details: str = ""
    """For a denial, the workload and every problem with its numbers (the middle of ``message``); else ``""``."""
    lead: str = ""
    """For a denial, the plain sentence ``message`` starts with (:mod:`batchplane.explain.sentences`); else ``""``."""
    advice: Advice | None = None
    """For a denial whose sentence advises a change (fewer pods, smaller pods), that change, re-judged to fit."""


_OK = Decision(True, "ok")
"""The answer to most reviews (immutable, so one instance serves them all)."""
_UNCHANGED = Decision(True, "unchanged-on-update")
"""The answer to an UPDATE that changes neither the accounted demand nor the queue label."""
_SMALLER = Decision(True, "smaller-on-update")
"""The answer to an UPDATE that keeps the queue and priority class and grows no PodSet: a scale-down is never refused."""
_NOT_CHECKED = Decision(True, "operation-not-checked")

AccountedDemand: TypeAlias = tuple[
    str | None, tuple[tuple[str, int, int | None, tuple[tuple[str, int], ...]], ...]
]
"""What an UPDATE is compared on (:meth:`Decider.demand`): the workload's priority class, then per PodSet in Kueue's
order its name, count, minCount and one pod's requests as Kueue stores them (``(resource, value)`` sorted)."""


def no_larger(before: AccountedDemand, after: AccountedDemand) -> bool:
    """Whether ``after`` asks for nothing ``before`` did not: the same priority class and PodSets (names, in order),
    each with a count, a minCount (its count when unset) and every per-pod request no larger, and no resource added.

    A job that only shrinks is never less admissible than it was (fewer pods, each asking for less, fit wherever the
    larger ones did), so the webhook allows it without judging — also when the larger job was admitted before its
    quota shrank (an autoscaler's scale-down of a running RayCluster must pass).
    """
    if before[0] != after[0] or len(before[1]) != len(after[1]):
        return False
    for (name, count, min_count, stored), (name_after, count_after, min_after, stored_after) in zip(
        before[1], after[1], strict=True
    ):
        if name != name_after or count_after > count:
            return False
        if (count_after if min_after is None else min_after) > (count if min_count is None else min_count):
            return False
        requests = dict(stored)
        if any(value > requests.get(resource, -1) for resource, value in stored_after):
            return False
    return True


BUILTIN_PRIORITY_CLASSES: tuple[str, ...] = ("system-cluster-critical", "system-node-critical")
"""The PriorityClasses Kubernetes creates in every cluster (https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/)."""

DEMAND_LABELS: tuple[str, ...] = (QUEUE_LABEL, PRIORITY_CLASS_LABEL)
"""The object's own labels the accounting reads (``tests/webhook/test_update_decisions.py`` records the reads)."""
DEMAND_ANNOTATIONS: tuple[str, ...] = (JOB_MIN_PARALLELISM_ANNOTATION, RAY_FT_ENABLED_ANNOTATION)
"""The object's own annotations the accounting reads: an update of other labels and annotations alone, with the
``spec`` unchanged but for ``suspend``, leaves the demand as it was without accounting either object."""


@dataclass(frozen=True)
class _Problem:
    reason: str
    text: str
    lead: str = ""
    """The plain sentence this problem leads the message with (``never runs: …``), or ``""``."""
    keys: tuple[str, ...] = ()
    """The stack config keys that set the limit the sentence quotes."""
    advice: Advice | None = None
    """The change the sentence advises (:func:`~batchplane.explain.sentences.advise`), re-judged to fit."""


class _SizeJudge:
    """The size part of :meth:`Decider.validate` as a predicate over PodSets, to re-judge advice before it is given:
    the ClusterQueue's quota on every flavor (:func:`check_workload_ever_fits`, unmodelled retries counting as fit,
    as the webhook allows them) and every pod on some node of a flavor it could get (:func:`node_misfit`)."""

    def __init__(self, queue: QueueModel, flavors: Mapping[str, Flavor], block_undeclared: bool) -> None:
        self.queue = queue
        self.flavors = flavors
        self.block_undeclared = block_undeclared

    def __call__(self, pod_sets: Sequence[Demand]) -> bool:
        shortfalls = check_workload_ever_fits(
            pod_sets, self.queue, self.flavors, block_undeclared=self.block_undeclared
        )
        if any(s.kind != "unmodelled" for s in shortfalls):
            return False
        for d in pod_sets:
            if d.count <= 0:
                continue
            per_pod = {r: -(-v // d.count) for r, v in d.requests.items() if r != PODS and v > 0}
            if node_misfit(d, per_pod, self.queue, self.flavors) is not None:
                return False
        return True


@dataclass(frozen=True)
class _DwsCheck:
    """A queued-provisioning (DWS) admission check of one ClusterQueue, compiled once: the check's name, its
    ProvisioningRequestConfig, the resources it manages and the flavors it applies to."""

    name: str
    config: ProvisioningPolicy
    managed: frozenset[str]
    checked: frozenset[str]


class Decider:
    """Judges workload objects against one compiled policy document (thread-safe, immutable).

    Args:
        policy: the policy document.

    Raises:
        PolicyError: the document's quotas or Kueue resource options do not compile.
    """

    def __init__(self, policy: PolicyDocument) -> None:
        self.policy = policy
        self.queues: dict[str, QueueModel] = compile_queues(policy)
        self.flavors: dict[str, Flavor] = compile_flavors(policy)
        try:
            self.options = resource_options_from_mapping(policy.kueue.resources)
        except AccountingError as exc:
            raise PolicyError(f"invalid kueue.resources in policy: {exc}") from None
        self._pod_context = PodContext(options=self.options)
        frameworks = policy.kueue.frameworks
        self._frameworks = None if frameworks is None else frozenset(frameworks)
        multi = policy.multi_kueue
        self.workers: tuple[tuple[str, Decider | None], ...] = (
            ()
            if multi is None
            else tuple((w.name, None if w.policy is None else Decider(w.policy)) for w in multi.workers)
        )
        self._dws: dict[str, tuple[_DwsCheck, ...]] = {
            name: checks for name in policy.cluster_queues if (checks := self._compile_dws(name))
        }
        self._stop_warnings: dict[str, str] = {
            name: f'ClusterQueue "{name}" has stopPolicy {cq.stop_policy}: nothing is admitted until it is lifted'
            for name, cq in policy.cluster_queues.items()
            if cq.stop_policy in ("Hold", "HoldAndDrain")
        }
        self._block_undeclared = policy.kueue.quota_check_strategy == "BlockUndeclared"
        self._lenders: dict[str, dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]]] = {
            name: _lenders(policy, name)
            for name, cq in policy.cluster_queues.items()
            if cq.cohort is not None
        }
        self._limits: dict[str, dict[str, Decimal]] = {
            ns: {res: parse_quantity(q) for res, q in p.limits.max_workload_requests.items()}
            for ns, p in policy.namespaces.items()
            if p.limits is not None
        }

    def _compile_dws(self, cq_name: str) -> tuple[_DwsCheck, ...]:
        """The ClusterQueue's admission checks that provision through GKE queued provisioning (DWS)."""
        queue = self.queues.get(cq_name)
        if queue is None:
            return ()
        all_flavors = frozenset(f for g in queue.groups for f in g.flavors)
        out: list[_DwsCheck] = []
        for use in self.policy.cluster_queues[cq_name].admission_checks:
            check = self.policy.admission_checks.get(use.name)
            if check is None or check.controller_name != PROVISIONING_CONTROLLER:
                continue
            prc = check.provisioning_request_config
            if prc is None or prc.provisioning_class_name != DWS_PROVISIONING_CLASS:
                continue
            checked = frozenset(use.on_flavors) if use.on_flavors else all_flavors
            out.append(_DwsCheck(use.name, prc, frozenset(prc.managed_resources), checked))
        return tuple(out)

    # --- validating ---------------------------------------------------------------------------

    def validate(
        self,
        obj: Mapping[str, Any],
        namespace: str | None,
        operation: str = "CREATE",
        old: Mapping[str, Any] | None = None,
    ) -> Decision:
        """Decide whether ``obj`` may be created, or an existing object changed into ``obj``.

        Args:
            obj: the object of the AdmissionReview (a job of one of the accounted kinds, or anything).
            namespace: the request's namespace (``request.namespace``); falls back to the object's.
            operation: ``CREATE`` is judged. ``UPDATE`` of a kind whose framework sets ``update_review`` is judged
                exactly as the CREATE of ``obj`` when the queue label changes or :meth:`demand` grows in any way
                (:func:`no_larger` false); allowed when the demand only shrinks (``smaller-on-update``: a scale-down
                is never refused, even over a quota that shrank; when the smaller job still could never be admitted,
                with a warning that says why), and at once (``unchanged-on-update``) when neither
                changes: Kueue replaces a pending
                Workload only when the job's PodSets change (``EquivalentToWorkload``,
                https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobframework/reconciler.go#L1419-L1458)
                and moves it only when the queue label does, so an update of neither (labels, annotations, Kueue's own
                ``suspend`` flip, a controller's write) never makes a job less admissible than it was, even one
                created before its quota shrank. Other operations, and an UPDATE without ``old``, are allowed
                unchecked (``operation-not-checked``).
            old: the object before the update (``request.oldObject``); ``None`` on CREATE.

        Returns:
            The decision; denials carry every problem found, joined with ``"; "``.
        """
        skip = self._skip(obj, namespace, operation, update=True)
        if skip is not None:
            return skip
        if operation == "UPDATE":
            if old is None:
                return _NOT_CHECKED
            if _label(old, QUEUE_LABEL) == _label(obj, QUEUE_LABEL):
                if self._same_without_accounting(old, obj):
                    return _UNCHANGED
                before, after = self.demand(old), self.demand(obj)
                if before == after:
                    return _UNCHANGED
                if before is not None and after is not None and no_larger(before, after):
                    judged = self._judge(obj, namespace)
                    if judged.allowed:
                        return _SMALLER
                    return Decision(
                        True,
                        "smaller-on-update",
                        warnings=(
                            f"allowed because it only asks for less, but {judged.lead or judged.details}",
                        ),
                    )
        return self._judge(obj, namespace)

    def _same_without_accounting(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        """Whether an update leaves the demand as it was, known without accounting either object: a ``spec`` equal but
        for ``suspend`` (Kueue's own flips) and equal :data:`DEMAND_LABELS` and :data:`DEMAND_ANNOTATIONS`
        (controllers' writes of other labels, annotations, finalizers). False does not mean changed: :meth:`demand`
        decides then."""
        if not _same_spec(old.get("spec"), new.get("spec")):
            return False
        old_labels, new_labels = _labels(old), _labels(new)
        old_notes, new_notes = _annotations(old), _annotations(new)
        return all(old_labels.get(k) == new_labels.get(k) for k in DEMAND_LABELS) and all(
            old_notes.get(k) == new_notes.get(k) for k in DEMAND_ANNOTATIONS
        )

    def demand(self, obj: Mapping[str, Any]) -> AccountedDemand | None:
        """What an UPDATE is compared on (:data:`AccountedDemand`), or ``None`` when the accounting cannot read ``obj``
        (two unreadable objects compare equal: the webhook allows what it cannot decide).

        Scheduling constraints (nodeSelector, affinity, tolerations) are left out: Kueue's own comparison ignores
        nodeSelectors and, once admitted, tolerations
        (https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/util/equality/podset.go#L39-L76), and Kueue
        writes them into the pod templates when it starts an admitted job.
        """
        try:
            workload = workload_requests(obj, pod_context=self._pod_context)
        except Exception:  # AccountingError or a malformed object: not comparable, never a denial
            return None
        return (
            workload.priority_class,
            tuple((ps.name, ps.count, ps.min_count, tuple(ps.stored.items())) for ps in workload.pod_sets),
        )

    def _judge(self, obj: Mapping[str, Any], namespace: str | None) -> Decision:
        """The CREATE decision of ``obj`` (after :meth:`_skip`)."""
        ns = self._namespace(obj, namespace)
        tenant = self.policy.namespaces[ns]
        kind = str(obj.get("kind"))
        # Judged in the queue the mutating webhooks give an unlabelled job before any validation (issue #37):
        # Kueue's LocalQueue defaulting (a LocalQueue named "default"; no feature gate at v0.19.2, kubernetes-sigs/kueue
        # v0.19.2 pkg/controller/jobframework/defaults.go L59-L99), else this webhook's /mutate default (see mutate).
        queue = _label(obj, QUEUE_LABEL) or self._defaulted_queue(tenant, kind)
        if not queue:
            if self.policy.webhook.refuse_undeclared_queues:
                return _undeclared_default_queue(_who(kind, ns, obj), ns)
            return Decision(
                True,
                "no-queue-label",
                warnings=(
                    f"{_who(kind, ns, obj)} has no {QUEUE_LABEL} label and namespace {ns} has no default LocalQueue: "
                    "Kueue does not manage it, so it runs outside quota",
                ),
            )
        if queue not in tenant.local_queues:
            known = ", ".join(f'"{q}"' for q in sorted(tenant.local_queues)) or "none"
            return _deny(
                _who(kind, ns, obj),
                [
                    _Problem(
                        "unknown-local-queue",
                        f'{QUEUE_LABEL}: LocalQueue "{queue}" does not exist in namespace {ns} (LocalQueues there: '
                        f"{known}); the workload would stay pending forever",
                        f'never runs: namespace {ns} has no queue "{queue}" — set {QUEUE_LABEL} to one of {known}',
                    )
                ],
            )
        cq_name = tenant.local_queues[queue]
        problems = self._shape_problems(obj, kind)
        warnings: list[str] = []
        try:
            workload = workload_requests(obj, pod_context=self._pod_context)
        except AccountingError as exc:
            too_many = self._count_pod_sets(obj)
            if too_many is not None:
                problems.append(too_many)
            if problems:
                return _deny(_who(kind, ns, obj), problems)
            return Decision(True, "not-accounted", warnings=(f"quota not checked by batchplane: {exc}",))
        except Exception as unexpected:  # malformed input the accounting does not anticipate: never a denial
            log.warning("accounting failed on %s: %r", _who(kind, ns, obj), unexpected)
            if problems:
                return _deny(_who(kind, ns, obj), problems)
            return Decision(
                True,
                "not-accounted",
                warnings=(f"quota not checked by batchplane: {_who(kind, ns, obj)} is malformed",),
            )
        problems += self._pod_set_name_problems(workload)
        problems += [
            _Problem("invalid-pod-spec", t, f"never runs: the API server refuses it ({t})")
            for t in resource_requirement_problems(obj)
        ]
        warnings += unknown_runtime_class_warnings(workload)
        warnings += self._priority_class_warnings(obj, workload.priority_class)
        problems += [
            _Problem(*p) for p in tas_problems(kind, workload.pod_sets, queue_levels(self.policy, cq_name))
        ]
        problems += self._limit_problems(workload, ns, tenant)
        where = f'ClusterQueue "{cq_name}" (LocalQueue "{queue}")'
        problems += self._queue_problems(workload, cq_name, where, warnings, _workload_noun(kind))
        if not problems:
            problems += self._worker_problems(obj, namespace, cq_name, where)
        if problems:
            return _deny(_who(kind, ns, obj), problems, tuple(warnings))
        borrowing = self.borrowing(workload, cq_name)
        if borrowing is not None:
            sentence = borrowing_sentence(borrowing, self.policy.webhook.gpu_resources)
            return Decision(True, "borrows", warnings=(sentence, *warnings), lead=sentence)
        return Decision(True, "ok", warnings=tuple(warnings)) if warnings else _OK

    def _priority_class_warnings(self, obj: Mapping[str, Any], named: str | None) -> list[str]:
        """A priority class the stack does not declare: a ``kueue.x-k8s.io/priority-class`` label naming no declared
        WorkloadPriorityClass, or a pod ``priorityClassName`` (a pod template's, or the framework's own field,
        :attr:`~batchplane.frameworks.framework.JobFramework.priority_class`) that is not one every cluster has
        (:data:`BUILTIN_PRIORITY_CLASSES`; the stack declares no PriorityClass). Kueue looks the class up when it
        builds the Workload and builds none when it is missing (kubernetes-sigs/kueue v0.19.2
        ``pkg/controller/jobframework/reconciler.go`` L1682-1686, L1716-1724, ``pkg/util/priority/priority.go`` L91-114).
        Nothing when the stack does not install Kueue (``kueue.frameworks`` unknown: its classes are unknown too)."""
        declared = self.policy.kueue.workload_priority_classes
        if self.policy.kueue.frameworks is None or named is None:
            return []
        meta = obj.get("metadata")
        labels = meta.get("labels") if isinstance(meta, (dict, Mapping)) else None
        label = labels.get(PRIORITY_CLASS_LABEL) if isinstance(labels, (dict, Mapping)) else None
        if label:
            if label in declared:
                return []
            what = f'WorkloadPriorityClass "{label}" ({PRIORITY_CLASS_LABEL})'
        elif named in BUILTIN_PRIORITY_CLASSES:
            return []
        else:
            what = f'PriorityClass "{named}" (priorityClassName)'
        return [
            f"{what} is not declared by this stack — Kueue creates no Workload for the job while it is missing; "
            f"declared WorkloadPriorityClasses: {', '.join(declared) or 'none'}; PriorityClasses every cluster has: "
            f"{', '.join(BUILTIN_PRIORITY_CLASSES)}"
        ]

    def borrowing(self, workload: WorkloadRequests, cq_name: str) -> Borrowing | None:
        """What ``workload`` borrows when Kueue admits it on an empty cluster (its flavor assigner's first admitting
        attempt, :func:`~batchplane.webhook.assign.kueue_attempts`, puts more on a flavor than the ClusterQueue's
        nominal quota), quoting a GPU resource when one is borrowed; None when it fits its own quota, when the queue
        has nothing to borrow, or when the attempts do not admit it (not modelled exactly)."""
        lenders = self._lenders.get(cq_name)
        queue = self.queues.get(cq_name)
        if lenders is None or queue is None or not queue.can_borrow:
            return None
        wanted = demands(workload, queue)
        attempts, _ = kueue_attempts(wanted, queue, self.flavors)
        last = attempts[-1]
        if last.failed >= 0:
            return None
        used: dict[tuple[str, str], int] = {}
        for p, d in enumerate(wanted):
            row = last.flavors[p]
            for g, group in enumerate(queue.groups):
                if row[g]:
                    for r in group.resources:
                        if d.requests.get(r):
                            used[(row[g], r)] = used.get((row[g], r), 0) + d.requests[r]
        over = [(fr, v) for fr, v in sorted(used.items()) if v > queue.capacity[fr].nominal and fr[1] != PODS]
        if not over:
            return None
        gpus = self.policy.webhook.gpu_resources
        (flavor, resource), value = next((o for o in over if o[0][1] in gpus), over[0])
        cap = queue.capacity[(flavor, resource)]
        names, reclaimers = lenders.get((flavor, resource), ((), ()))
        return Borrowing(flavor, resource, value, cap.nominal, cap.cohort or "", names, reclaimers)

    def _queue_problems(
        self,
        workload: WorkloadRequests,
        cq_name: str,
        where: str,
        warnings: list[str],
        kind: str = "workload",
    ) -> list[_Problem]:
        """Capacity (Kueue-exact) and provisioning problems in the ClusterQueue; a stop policy adds a warning."""
        queue_model = self.queues.get(cq_name)
        if queue_model is None:
            return []
        problems: list[_Problem] = []
        workload_demands = demands(workload, queue_model)
        shortfalls = check_workload_ever_fits(
            workload_demands, queue_model, self.flavors, block_undeclared=self._block_undeclared
        )
        if shortfalls:
            denials = [s.detail for s in shortfalls if s.kind != "unmodelled"]
            if denials:
                details = "; ".join(denials)
                lead = shortfall_lead(
                    kind,
                    shortfalls,
                    workload_demands,
                    queue_model,
                    self.flavors,
                    self.policy.webhook.gpu_resources,
                    _SizeJudge(queue_model, self.flavors, self._block_undeclared),
                )
                key = self.policy.cluster_queues[cq_name].quota_keys.get(f"{lead.flavor}/{lead.resource}")
                problems.append(
                    _Problem(
                        "never-admissible",
                        f"can never be admitted by {where}: {details}",
                        lead.text,
                        (key,) if key else (),
                        lead.advice,
                    )
                )
            else:
                warnings += [f"{where}: {s.detail}" for s in shortfalls]
        if not problems:
            problems += self._node_problems(workload, workload_demands, queue_model, where, kind)
        if not problems:
            warnings += [
                f"{where}: {w}" for w in affinity_warnings(workload_demands, queue_model, self.flavors)
            ]
        dws = self._dws.get(cq_name)
        if dws is not None:
            problems += self._provisioning_problems(
                workload, workload_demands, cq_name, queue_model, dws, kind
            )
        stop = self._stop_warnings.get(cq_name)
        if stop is not None:
            warnings.append(stop)
        return problems

    def _node_problems(
        self,
        workload: WorkloadRequests,
        workload_demands: list[Demand],
        queue: QueueModel,
        where: str,
        kind: str,
    ) -> list[_Problem]:
        """PodSets whose pods are larger than every node of every pool backing each flavor they could get (Kueue
        admits them on quota; the kube-scheduler never places them). Only flavors whose backing pools are known
        count: one flavor of unknown nodes and nothing is claimed."""
        problems: list[_Problem] = []
        gpus = self.policy.webhook.gpu_resources
        for index, (ps, d) in enumerate(zip(workload.pod_sets, workload_demands, strict=True)):
            per_pod = {r: v for r, v in ps.stored.items() if v > 0}
            misfit = node_misfit(d, per_pod, queue, self.flavors)
            if misfit is None:
                continue
            _, names = misfit
            nodes = [n for f in names for n in self.flavors[f].nodes]
            largest: dict[str, int] = {}
            for n in nodes:
                for r, have in n.capacity.items():
                    largest[r] = max(largest.get(r, 0), have)
            over = [r for r in per_pod if r in largest and per_pod[r] > largest[r]]
            candidates = over or [r for r in per_pod if r in largest]
            lead = next((r for r in candidates if r in gpus), candidates[0])
            machines = sorted({n.machine_type or n.pool for n in nodes})
            shapes = "; ".join(
                f'flavor "{f}": '
                + ", ".join(
                    f"{n.machine_type or 'pool ' + n.pool} ("
                    + ", ".join(f"{r} {show(r, v)}" for r, v in sorted(n.capacity.items()))
                    + (" allocatable)" if n.allocatable else ")")
                    for n in self.flavors[f].nodes
                )
                for f in names
            )
            asked = ", ".join(f"{r} {show(r, per_pod[r])}" for r in sorted(per_pod) if r in largest)
            sentence = node_never_runs(
                kind,
                d,
                lead,
                names[0] if len(names) == 1 else "/".join(names),
                largest[lead],
                machines,
                gpus,
                allocatable=all(n.allocatable for n in nodes),
            )
            judge = _SizeJudge(queue, self.flavors, self._block_undeclared)
            advice = node_advice(kind, workload_demands, index, lead, judge, gpus)
            problems.append(
                _Problem(
                    "larger-than-any-node",
                    f'{where} could admit it, but one pod of PodSet "{ps.name}" needs {asked} and no node of the '
                    f"pools backing the flavors it could get is that large ({shapes}), so the pod is never "
                    f"scheduled (a single pod runs on one node: {amount(lead, largest[lead], gpus)} at most)",
                    sentence.text,
                    tuple(sorted({n.key for n in nodes if n.key})),
                    advice,
                )
            )
        return problems

    def _dispatches(self, cq_name: str) -> bool:
        """Whether the ClusterQueue dispatches every workload to the MultiKueue workers: it carries the
        MultiKueue admission check for all flavors (with ``onFlavors`` it depends on the flavor Kueue assigns,
        so no workload is denied for the workers' sake)."""
        multi = self.policy.multi_kueue
        queue = self.policy.cluster_queues.get(cq_name)
        if multi is None or queue is None:
            return False
        return any(use.name == multi.admission_check and not use.on_flavors for use in queue.admission_checks)

    def _worker_problems(
        self, obj: Mapping[str, Any], namespace: str | None, cq_name: str, where: str
    ) -> list[_Problem]:
        """MultiKueue: a workload the manager would admit but that no worker ever admits sits dispatched forever.
        Each worker judges it with its own policy, as its own webhook and Kueue would; it is denied only when
        every worker refuses and every worker's queues are known (never stricter than Kueue)."""
        if not self.workers or not self._dispatches(cq_name):
            return []
        if any(decider is None for _, decider in self.workers):
            return []
        best: tuple[str, Decision] | None = None
        for name, decider in self.workers:
            assert decider is not None
            decision = decider.validate(obj, namespace)
            if decision.allowed:
                return []
            if best is None or (best[1].advice is None and decision.advice is not None):
                best = (name, decision)
        assert best is not None
        name, decision = best
        advice = decision.advice
        said = (
            decision.lead.removeprefix("never runs: ")
            if decision.lead
            else decision.details.split(": ", 1)[-1]
        )
        lead = f"never runs: none of the {len(self.workers)} MultiKueue workers can ever admit it; on {name}, {said}"
        others = [n for n, _ in self.workers if n != name]
        return [
            _Problem(
                "no-worker-admits",
                f"{where} dispatches to MultiKueue workers, and none of them can ever admit it ({name}: "
                f"{decision.details.split(': ', 1)[-1]}"
                + (f"; {', '.join(others)} refuse it too" if others else "")
                + ")",
                lead,
                advice=advice,
            )
        ]

    def _skip(
        self, obj: Mapping[str, Any], namespace: str | None, operation: str, *, update: bool = False
    ) -> Decision | None:
        """The decision for a review that is not judged, or ``None``. ``update``: UPDATE of a kind whose framework
        sets ``update_review`` is judged (validating only)."""
        if (
            not isinstance(obj, (dict, Mapping))
            or not isinstance(obj.get("apiVersion"), str)
            or not isinstance(obj.get("kind"), str)
            or not is_workload(obj)
            or obj.get("kind") == "Workload"
        ):
            return Decision(True, "not-a-workload")
        if self._namespace(obj, namespace) not in self.policy.namespaces:
            return Decision(True, "not-a-tenant")
        if _controller_owner(obj):
            return Decision(True, "owned")
        if operation == "CREATE":
            return None
        if update and operation == "UPDATE":
            framework = BY_KIND.get(str(obj.get("kind")))
            if framework is not None and framework.update_review:
                return None
        return _NOT_CHECKED

    @staticmethod
    def _namespace(obj: Mapping[str, Any], namespace: str | None) -> str:
        if namespace:
            return namespace
        meta = obj.get("metadata")
        ns = meta.get("namespace") if isinstance(meta, (dict, Mapping)) else None
        return str(ns) if ns else "default"

    def _shape_problems(self, obj: Mapping[str, Any], kind: str) -> list[_Problem]:
        problems: list[_Problem] = []
        framework = FRAMEWORK_OF_KIND.get(kind)
        if self._frameworks is not None and framework is not None and framework not in self._frameworks:
            problems.append(
                _Problem(
                    "framework-disabled",
                    f"Kueue's {framework} integration is not enabled in this stack (enabled: {', '.join(self.policy.kueue.frameworks or ())}), "
                    "so Kueue would ignore the queue label and the job would run outside quota; enable it in "
                    "operators.kueue.configuration.integrations.frameworks",
                    f"refused: Kueue's {framework} integration is not enabled on this stack, so the queue label "
                    f"would be ignored and the {kind} would run outside quota — ask the platform team to enable it",
                    ("batchplane:operators.kueue.configuration.integrations.frameworks",),
                )
            )
        framework_of_kind = BY_KIND.get(kind)
        if framework_of_kind is not None and framework_of_kind.review is not None:
            # The framework's own refusals (its module in batchplane.frameworks registers them), led by their
            # first clause as the plain sentence.
            problems.extend(
                _Problem(reason, message, f"refused: {message.split(' (', 1)[0].split('; ', 1)[0]}")
                for reason, message in framework_of_kind.review(obj)
            )
        return problems

    @staticmethod
    def _count_pod_sets(obj: Mapping[str, Any]) -> _Problem | None:
        extractor = SIMPLE_EXTRACTORS.get((str(obj.get("apiVersion")), str(obj.get("kind"))))
        if extractor is None:
            return None
        try:
            count = len(extractor(obj))
        except Exception:  # FieldError, or malformed input: nothing to say about the PodSet count
            return None
        if count <= MAX_POD_SETS:
            return None
        return _Problem(
            "too-many-podsets",
            f"it makes {count} PodSets but a Kueue Workload holds at most {MAX_POD_SETS} "
            f"(for Ray: the head plus at most {MAX_POD_SETS - 1} worker groups); merge groups",
        )

    @staticmethod
    def _pod_set_name_problems(workload: WorkloadRequests) -> list[_Problem]:
        bad = [ps.name for ps in workload.pod_sets if not _is_pod_set_name(ps.name)]
        if not bad:
            return []
        names = ", ".join(f'"{n}"' for n in bad)
        return [
            _Problem(
                "invalid-podset-name",
                f"PodSet name(s) {names} are not DNS labels after lower-casing (lower-case letters, digits and "
                "'-', at most 63 characters), so Kueue cannot create its Workload; rename the group(s)",
            )
        ]

    def _limit_problems(self, workload: WorkloadRequests, ns: str, tenant: NamespacePolicy) -> list[_Problem]:
        limits = tenant.limits
        if limits is None:
            return []
        problems: list[_Problem] = []
        total = workload.total
        if limits.max_gpus_per_workload is not None:
            gpus = sum((total.get(r, Decimal(0)) for r in self.policy.webhook.gpu_resources), Decimal(0))
            if gpus > limits.max_gpus_per_workload:
                detail = ", ".join(
                    f"{ps.name} {_fmt(sum((ps.requests.get(r, Decimal(0)) for r in self.policy.webhook.gpu_resources), Decimal(0)))}"
                    for ps in workload.pod_sets
                    if any(ps.requests.get(r) for r in self.policy.webhook.gpu_resources)
                )
                problems.append(
                    _Problem(
                        "limit-exceeded",
                        f"requests {_fmt(gpus)} GPUs in total ({detail}) but namespace {ns} allows at most "
                        f"{limits.max_gpus_per_workload} per workload",
                        f"refused: namespace {ns} allows at most {limits.max_gpus_per_workload} GPUs per workload and "
                        f"this one asks for {_fmt(gpus)} — ask for at most {limits.max_gpus_per_workload}",
                    )
                )
        for resource, cap in sorted(self._limits.get(ns, {}).items()):
            asked = total.get(resource, Decimal(0))
            if asked > cap:
                problems.append(
                    _Problem(
                        "limit-exceeded",
                        f"requests {resource} {format_quantity(asked, resource)} in total but namespace {ns} allows "
                        f"at most {resource} {format_quantity(cap, resource)} per workload",
                    )
                )
        allowed = limits.allowed_priority_classes
        if (
            allowed is not None
            and workload.priority_class is not None
            and workload.priority_class not in allowed
        ):
            problems.append(
                _Problem(
                    "priority-class-not-allowed",
                    f'priority class "{workload.priority_class}" is not allowed in namespace {ns} '
                    f"(allowed: {', '.join(allowed) or 'none'})",
                )
            )
        return problems

    def _provisioning_problems(
        self,
        workload: WorkloadRequests,
        by_pod_set: list[Demand],
        cq_name: str,
        queue: QueueModel,
        dws: tuple[_DwsCheck, ...],
        kind: str = "workload",
    ) -> list[_Problem]:
        problems: list[_Problem] = []
        attempts, _ = kueue_attempts(by_pod_set, queue, self.flavors)
        placed = attempts[-1].flavors if attempts and attempts[-1].failed < 0 else ()
        for use in dws:
            prc, managed, checked = use.config, use.managed, use.checked
            provisioned: list[PodSetRequests] = []
            for index, (ps, d) in enumerate(zip(workload.pod_sets, by_pod_set, strict=True)):
                if ps.count <= 0:
                    continue
                if managed:  # only PodSets requesting a resource the check manages
                    stored = ps.stored
                    for resource in managed:
                        if stored.get(resource, 0) > 0:
                            break
                    else:
                        continue
                # PodSets that cannot escape to a flavor the check skips, and those Kueue's own attempts put on a
                # checked flavor on an empty cluster (a GPU Ray head on the queued flavor: docs/gke.md "Limits")
                possible = possible_flavors(d, queue, self.flavors)
                on_checked = index < len(placed) and any(f in checked for f in placed[index] if f)
                if (possible and possible <= checked) or on_checked:
                    provisioned.append(ps)
            if len(provisioned) <= 1:
                continue  # one PodSet is one ProvisioningRequest PodSet: nothing to merge, no key to build
            merged: list[list[str]] = []
            keys: list[str] = []
            for ps in provisioned:
                key = _merge_key(ps.template, prc.pod_set_merge_policy, ps.name)
                if key in keys:
                    merged[keys.index(key)].append(ps.name)
                else:
                    keys.append(key)
                    merged.append([ps.name])
            if len(merged) <= 1:
                continue
            what = f"requesting {', '.join(sorted(managed))}" if managed else "provisioned"
            policy_text = (
                "podSetMergePolicy is not set"
                if prc.pod_set_merge_policy is None
                else f"their pod templates differ under podSetMergePolicy {prc.pod_set_merge_policy}"
            )
            groups = " | ".join(", ".join(g) for g in merged)
            problems.append(
                _Problem(
                    "unmergeable-podsets",
                    f'ClusterQueue "{cq_name}" provisions nodes through AdmissionCheck "{use.name}" '
                    f'(ProvisioningRequestConfig "{prc.name}", class {DWS_PROVISIONING_CLASS}), which accepts one '
                    f"PodSet per ProvisioningRequest, but {len(merged)} PodSets {what} cannot be merged "
                    f"({groups}; {policy_text}); give the GPU PodSets identical templates/requests with "
                    "podSetMergePolicy IdenticalWorkloadSchedulingRequirements, or keep the GPUs in one PodSet "
                    "(ray-project/ray#57839)",
                    _unmergeable_lead(kind, [ps.name for ps in provisioned], sorted(managed), use.name),
                )
            )
        return problems

    # --- mutating -----------------------------------------------------------------------------

    def _defaulted_queue(self, tenant: NamespacePolicy, kind: str) -> str | None:
        """The queue label an unlabelled ``kind`` job of ``tenant``'s namespace carries after the mutating webhooks:
        ``default`` when the namespace has a LocalQueue of that name (Kueue's webhook for the kind, so only with its
        integration enabled), else :meth:`mutate`'s default, else ``None``."""
        if KUEUE_DEFAULT_QUEUE in tenant.local_queues:
            enabled = self._frameworks is None or FRAMEWORK_OF_KIND.get(kind) in self._frameworks
            return KUEUE_DEFAULT_QUEUE if enabled else None
        framework = BY_KIND.get(kind)  # /mutate sees only the kinds its entry lists (not Pods)
        mutated = (
            framework is not None and framework.admission_review and self.policy.webhook.default_queue_label
        )
        return tenant.default_queue if mutated else None

    def mutate(self, obj: Mapping[str, Any], namespace: str | None, operation: str = "CREATE") -> Decision:
        """Default the queue label of an unlabeled workload in a tenant namespace (never denies).

        Returns:
            ``allowed=True``; with ``patch`` adding ``metadata.labels["kueue.x-k8s.io/queue-name"]``
            (reason ``defaulted``) when the namespace has a default LocalQueue and no LocalQueue named
            ``default`` (Kueue's own defaulting would apply then: reason ``kueue-defaults``).
        """
        skip = self._skip(obj, namespace, operation)
        if skip is not None:
            return skip
        tenant = self.policy.namespaces[self._namespace(obj, namespace)]
        if _label(obj, QUEUE_LABEL):
            return Decision(True, "labeled")
        if not self.policy.webhook.default_queue_label:
            return Decision(True, "defaulting-off")
        if KUEUE_DEFAULT_QUEUE in tenant.local_queues:
            return Decision(True, "kueue-defaults")
        if tenant.default_queue is None:
            return Decision(True, "no-default-queue")
        return Decision(True, "defaulted", patch=tuple(label_patch(obj, QUEUE_LABEL, tenant.default_queue)))


# --- helpers --------------------------------------------------------------------------------------


def escape_pointer(token: str) -> str:
    """Escape one JSON-Pointer token (RFC 6901): ``~`` → ``~0``, ``/`` → ``~1``."""
    return token.replace("~", "~0").replace("/", "~1")


def label_patch(obj: Mapping[str, Any], key: str, value: str) -> list[dict[str, Any]]:
    """JSONPatch operations that set label ``key`` to ``value`` on ``obj``.

    Adds ``/metadata/labels`` as a whole when the object has no labels map (an ``add`` to
    ``/metadata/labels/<key>`` would fail there), else ``/metadata/labels/<escaped key>``.
    """
    meta = obj.get("metadata")
    if not isinstance(meta, (dict, Mapping)):
        return [{"op": "add", "path": "/metadata", "value": {"labels": {key: value}}}]
    if not isinstance(meta.get("labels"), (dict, Mapping)):
        return [{"op": "add", "path": "/metadata/labels", "value": {key: value}}]
    return [{"op": "add", "path": f"/metadata/labels/{escape_pointer(key)}", "value": value}]


def _workload_noun(kind: str) -> str:
    """What the sentences call one Workload of ``kind``: the framework's ``workload_noun``, else the kind."""
    framework = BY_KIND.get(kind)
    return (framework.workload_noun if framework is not None else None) or kind


def _lenders(
    policy: PolicyDocument, cq_name: str
) -> dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]]:
    """(flavor, resource) → (the other ClusterQueues of ``cq_name``'s cohort that lend some of it — a nominal quota
    above a zero ``lendingLimit`` — and those of them whose ``reclaimWithinCohort`` is not ``Never``)."""
    cohort = policy.cluster_queues[cq_name].cohort
    out: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for name, cq in sorted(policy.cluster_queues.items()):
        if name == cq_name or cq.cohort != cohort:
            continue
        reclaims = (cq.reclaim_within_cohort or "Never") != "Never"
        for group in cq.resource_groups:
            for flavor in group.flavors:
                for resource, quota in flavor.resources.items():
                    lent = parse_quantity(quota.nominal_quota)
                    if quota.lending_limit is not None:
                        lent = min(lent, parse_quantity(quota.lending_limit))
                    if lent <= 0:
                        continue
                    names, reclaimers = out.get((flavor.name, resource), ((), ()))
                    out[(flavor.name, resource)] = (
                        (*names, name),
                        (*reclaimers, name) if reclaims else reclaimers,
                    )
    return out


def _unmergeable_lead(kind: str, names: Sequence[str], managed: Sequence[str], check: str) -> str:
    """The plain sentence of ``unmergeable-podsets``: GKE's queued provisioning takes one PodSet per request
    (docs/gke.md "Limits": a head that requests GPUs goes into the request too and, unless its scheduling
    requirements equal the workers', GKE rejects the request)."""
    what = " or ".join(managed) if managed else "provisioned resources"
    if "head" in names:
        return (
            f"never runs: this {kind}'s head pod asks for {what}, so it joins the workers in the one GKE "
            f"ProvisioningRequest of AdmissionCheck {check}, and GKE accepts a single pod group per request — make "
            f"the head CPU-only (drop its {what} request) or give it exactly the workers' requests"
        )
    return (
        f"never runs: pod groups {', '.join(names)} of this {kind} all ask for {what}, and GKE's queued "
        f"provisioning (AdmissionCheck {check}) accepts a single pod group per request — keep {what} in one pod "
        "group, or give those groups identical requests"
    )


def _who(kind: str, ns: str, obj: Mapping[str, Any]) -> str:
    """``RayJob "team-a/train-1"``: how messages name the workload (built only for a denial or a warning)."""
    return f'{kind} "{ns}/{_name(obj)}"'


def _undeclared_default_queue(who: str, ns: str) -> Decision:
    """The denial of ``webhook.refuseUndeclaredQueues``: an unlabeled workload where the stack declares no LocalQueue
    named ``default``, which Kueue's LocalQueueDefaulting would put into a ``default`` LocalQueue someone else created
    (OpenShift AI 3.0-3.4 creates one in every managed namespace, on a ClusterQueue sized to the whole cluster)."""
    return _deny(
        who,
        [
            _Problem(
                "undeclared-local-queue",
                f'no {QUEUE_LABEL} label, and Kueue would default it into LocalQueue "default" of namespace {ns}, '
                "which this stack does not declare (webhook.refuseUndeclaredQueues): label it with one of the "
                "namespace's LocalQueues",
                lead=f"not queued by this stack: name one of namespace {ns}'s LocalQueues in its {QUEUE_LABEL} label",
                keys=("batchplane:webhook.refuseUndeclaredQueues",),
            )
        ],
    )


def _deny(who: str, problems: Sequence[_Problem], warnings: tuple[str, ...] = ()) -> Decision:
    """A denial: the first problem's plain sentence (if any), then the workload and every problem with its numbers,
    then the guide (:data:`~batchplane.explain.sentences.SUBMITTING_JOBS_DOC`)."""
    details = f"{who}: " + "; ".join(p.text for p in problems)
    first = next((p for p in problems if p.lead), None)
    lead = f"{first.lead}. " if first is not None else ""
    keys = f"stack key: {', '.join(first.keys)}; " if first is not None and first.keys else ""
    message = f"{lead}{details} ({keys}see {SUBMITTING_JOBS_DOC})"
    advice = first.advice if first is not None else None
    return Decision(
        False, problems[0].reason, message, warnings, details=details, lead=lead.rstrip(". "), advice=advice
    )


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, (dict, Mapping)) else {}


def _name(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    return str(meta.get("name") or meta.get("generateName") or "<unnamed>")


def _label(obj: Mapping[str, Any], key: str) -> str | None:
    """A label's value when it is a string (the API server rejects anything else; a mutating review may still
    carry it), else None."""
    labels = _meta(obj).get("labels")
    value = labels.get(key) if isinstance(labels, (dict, Mapping)) else None
    return value if isinstance(value, str) else None


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = _meta(obj).get("labels")
    return labels if isinstance(labels, (dict, Mapping)) else {}


def _same_spec(old: Any, new: Any) -> bool:
    """Equal ``spec`` but for ``suspend`` (top level, or ``runPolicy.suspend`` of the Kubeflow jobs), which the
    accounting never reads."""
    if old == new:
        return True
    if not isinstance(old, (dict, Mapping)) or not isinstance(new, (dict, Mapping)):
        return False
    for key in old.keys() | new.keys():
        if key == "suspend":
            continue
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if key != "runPolicy" or not isinstance(a, (dict, Mapping)) or not isinstance(b, (dict, Mapping)):
            return False
        if {k: v for k, v in a.items() if k != "suspend"} != {k: v for k, v in b.items() if k != "suspend"}:
            return False
    return True


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    annotations = _meta(obj).get("annotations")
    return annotations if isinstance(annotations, (dict, Mapping)) else {}


def _controller_owner(obj: Mapping[str, Any]) -> bool:
    owners = _meta(obj).get("ownerReferences")
    return isinstance(owners, list) and any(
        isinstance(o, (dict, Mapping)) and o.get("controller") is True for o in owners
    )


def _fmt(amount: Decimal) -> str:
    return format_quantity(amount)


@functools.lru_cache(maxsize=1024)
def _is_pod_set_name(name: str) -> bool:
    """A DNS label of at most 63 characters (cached: reviews repeat the same few names — main, head, worker)."""
    return len(name) <= 63 and DNS1123_LABEL_RE.match(name) is not None


def _prune(value: Any) -> Any:
    """Drop empty maps/lists/None recursively (``equality.Semantic`` treats nil and empty alike)."""
    if isinstance(value, (dict, Mapping)):
        out = {k: _prune(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value


def _requests(containers: Any) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for c in containers if isinstance(containers, list) else []:
        res = c.get("resources") if isinstance(c, (dict, Mapping)) else None
        req = res.get("requests") if isinstance(res, (dict, Mapping)) else None
        parsed: dict[str, str] = {}
        for k, v in req.items() if isinstance(req, (dict, Mapping)) else ():
            try:
                parsed[str(k)] = str(parse_quantity(v).normalize())
            except ValueError:
                parsed[str(k)] = str(v)
        out.append(parsed)
    return out


def _merge_key(template: Mapping[str, Any], policy: str | None, name: str) -> str:
    """PodSets with equal keys are merged into one ProvisioningRequest PodSet (Kueue ``canMergePodSets``)."""
    if policy is None:
        return f"unmergeable:{name}"
    spec = template.get("spec") if isinstance(template.get("spec"), (dict, Mapping)) else {}
    assert isinstance(spec, (dict, Mapping))
    if policy == "IdenticalPodTemplates":
        return json.dumps(_prune(template), sort_keys=True, default=str)
    return json.dumps(
        {
            "containers": _requests(spec.get("containers")),
            "initContainers": _requests(spec.get("initContainers")),
            "resources": _prune(spec.get("resources")),
            "nodeSelector": _prune(spec.get("nodeSelector")),
            "tolerations": _prune(spec.get("tolerations")),
            "affinity": _prune(spec.get("affinity")),
            "resourceClaims": _prune(spec.get("resourceClaims")),
        },
        sort_keys=True,
        default=str,
    )

"""LeaderWorkerSet: Kueue's ``leaderworkerset.x-k8s.io/leaderworkerset`` integration.

Registered in ``pkg/controller/jobs/leaderworkerset/leaderworkerset_controller.go`` at Kueue v0.19.2 (LWS API
``sigs.k8s.io/lws`` v0.9.0, Kueue's ``go.mod``). The files cited below by name and line are in
https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/leaderworkerset/.

Kueue queues a LeaderWorkerSet group by group: each of its ``spec.replicas`` groups (a leader and its workers)
becomes a Workload of its own, created by the LeaderWorkerSet reconciler rather than the generic job reconciler, and
every group's Workload holds the same PodSets. A group is therefore the unit Kueue admits, and the unit the quota
webhook judges: a group that can never fit the queue is refused, while groups that each fit are allowed however many
there are (Kueue admits them one after another as quota frees).

Kueue's LeaderWorkerSet webhook defaults the queue label and the WorkloadPriorityClass like every other integration
(``leaderworkerset_webhook.go:75-103``) — Batchplane's webhook defaults the queue label the same way, for this kind
as for the others. What it refuses on create (``leaderworkerset_webhook.go:248-274``: a queue name that is not a DNS
subdomain, the elastic-job annotation, ``spec.replicas`` outside 0..1,000,000, invalid TAS annotations) and the
fields it keeps immutable on update (``leaderworkerset_webhook.go:170-237``: the queue label once a group is ready,
the priority class, and while Kueue manages the object its pod templates and, behind ``LWSImmutableGroupSize``,
``size``) are Kueue's own answers, which Kueue's webhook gives beside Batchplane's; none is about quota, so this
module registers no ``review``. Nor a ``priority_class``: Kueue passes no custom priority function for a
LeaderWorkerSet (``leaderworkerset_reconciler.go:316``), so its priority is the WorkloadPriorityClass label, else the
first PodSet's ``priorityClassName`` — the accounting's default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.accounting.model import FieldError
from batchplane.accounting.podsets import DEFAULT_POD_SET_NAME, RawPodSet, int_at, mapping_at, template_at
from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

#: Kueue's ``leaderPodSetName`` and ``workerPodSetName`` (``leaderworkerset_reconciler.go:69-70``).
LEADER_POD_SET_NAME = "leader"
WORKER_POD_SET_NAME = "worker"
#: The LeaderWorkerSet API defaults of ``spec.replicas`` and ``spec.leaderWorkerTemplate.size`` that Kueue mirrors
#: (``defaultLeaderWorkerSetReplicas``, ``defaultLeaderWorkerSetSize``, ``leaderworkerset_controller.go:41-47``).
DEFAULT_REPLICAS = 1
DEFAULT_SIZE = 1

_TEMPLATE_PATH = "spec.leaderWorkerTemplate"


def leaderworkerset_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """leaderworkerset.x-k8s.io/v1 LeaderWorkerSet → the PodSets of each group's Workload (Kueue ``podSets``,
    https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/leaderworkerset/leaderworkerset_reconciler.go#L400-L431).

    With ``spec.leaderWorkerTemplate.leaderTemplate``: ``leader`` (count 1, the leader template) then ``worker``
    (count ``size - 1``, the worker template); without it, one PodSet ``main`` (count ``size``, the worker template,
    which then serves the leader too). ``size`` defaults to 1. The templates are the object's own; Kueue's copies
    drop the ``leaderworkerset.sigs.k8s.io/`` labels and annotations and de-duplicate env vars
    (``newPodSet``, lines 377-398), which changes no request.

    The object becomes ``spec.replicas`` (default 1) Workloads, one per group, each with these PodSets
    (``filterWorkloads`` and ``constructWorkload``, lines 263-293 and 338-343): ``[]`` when ``spec.replicas`` is 0, as
    no Workload exists to admit. Groups a rolling update surges above ``spec.replicas`` (lines 273-277) come from
    ``status``, which a new object does not have.

    Raises:
        FieldError: ``spec`` or ``spec.leaderWorkerTemplate`` or its ``workerTemplate`` is missing or not a mapping,
            ``spec.replicas`` or ``size`` is not a non-negative integer, or ``size`` is 0 beside a
            ``leaderTemplate`` (the leader is one of the group's pods; Kueue would build a PodSet of -1 pods).
    """
    spec = mapping_at(obj, "spec", "spec")
    replicas = int_at(spec.get("replicas"), "spec.replicas", default=DEFAULT_REPLICAS)
    group = mapping_at(spec, "leaderWorkerTemplate", _TEMPLATE_PATH)
    size = int_at(group.get("size"), f"{_TEMPLATE_PATH}.size", default=DEFAULT_SIZE)
    worker_path = f"{_TEMPLATE_PATH}.workerTemplate"
    worker = template_at(group, "workerTemplate", worker_path)
    pod_sets: list[RawPodSet] = []
    name, count = DEFAULT_POD_SET_NAME, size
    if group.get("leaderTemplate") is not None:
        if size < 1:
            raise FieldError(f"{_TEMPLATE_PATH}.size", f"must be ≥ 1 with a leaderTemplate, not {size}")
        leader_path = f"{_TEMPLATE_PATH}.leaderTemplate"
        pod_sets.append(
            RawPodSet(
                LEADER_POD_SET_NAME, 1, None, template_at(group, "leaderTemplate", leader_path), leader_path
            )
        )
        name, count = WORKER_POD_SET_NAME, size - 1
    pod_sets.append(RawPodSet(name, count, None, worker, worker_path))
    return pod_sets if replicas > 0 else []


FRAMEWORK: JobFramework = JobFramework(
    name="leaderworkerset.x-k8s.io/leaderworkerset",
    group="leaderworkerset.x-k8s.io",
    version="v1",
    kind="LeaderWorkerSet",
    topology_checks=frozenset({"request", "slice-bound", "grouping"}),
    plural="leaderworkersets",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/leaderworkerset/leaderworkerset_controller.go",
    rhbok_name="LeaderWorkerSet",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("leaderworkerset.x-k8s.io", "leaderworkersets"),
    pod_sets=leaderworkerset_pod_sets,
    admission_review=True,
    # UPDATE: only the queue label matters: pod templates and group size are immutable while Kueue manages it,
    # the label may change while no replica is ready and Kueue's defaulting copies it into the templates on update
    # (https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/leaderworkerset/leaderworkerset_webhook.go#L71-L116 and #L170-L233).
    update_review=True,
    workload_noun="LeaderWorkerSet group",
)

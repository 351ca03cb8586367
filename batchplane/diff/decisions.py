"""Webhook decisions that change: a small generated set of workload shapes judged by the old and the new policy.

Each side's policy document is rendered from its stack (:func:`batchplane.components.quota_webhook.policy.render_policy`) and
compiled into the webhook's own :class:`~batchplane.webhook.decisions.Decider`; every generated shape is validated by
both. A shape is a ``batch/v1`` Job in a tenant namespace, labelled with one of its LocalQueues, whose single pod
requests ``cpu: 1``, ``memory: 1Gi`` and ``n`` GPUs, with ``n`` drawn from the figures that matter on either side: 1,
every pool's GPUs per node, every ClusterQueue's nominal GPU quota, nominal + borrowing limit, and one more than
each; a CPU-only shape (``n = 0``) too. The set is bounded (:data:`MAX_SHAPES`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from batchplane.backed_pools import GPU_RESOURCE
from batchplane.components.quota_webhook.policy import render_policy
from batchplane.diff.differ import DecisionChange
from batchplane.diff.model import StackSummary
from batchplane.frameworks import batch_job
from batchplane.stack import Stack
from batchplane.webhook.decisions import QUEUE_LABEL, Decider, Decision

MAX_SHAPES = 400
"""At most this many (namespace, queue, GPU count) shapes are judged per diff."""
MAX_GPUS_PER_POD = 64


def gpu_counts(*summaries: StackSummary) -> list[int]:
    """The GPU counts worth probing on these stacks (module docstring), sorted, within 0..:data:`MAX_GPUS_PER_POD`."""
    counts: set[int] = {0, 1}
    for s in summaries:
        for pool in s.pools.values():
            if pool.gpus_per_node > 0:
                counts |= {int(pool.gpus_per_node), int(pool.gpus_per_node) + 1}
        for e in s.quotas.values():
            if e.resource != GPU_RESOURCE or e.values["nominalQuota"] is None:
                continue
            nominal = e.values["nominalQuota"] or Decimal(0)
            counts |= {int(nominal), int(nominal) + 1}
            if e.values["borrowingLimit"] is not None:
                total = int(nominal + e.values["borrowingLimit"])
                counts |= {total, total + 1}
    return sorted(c for c in counts if 0 <= c <= MAX_GPUS_PER_POD)


def job_shape(namespace: str, queue: str, gpus: int) -> dict[str, Any]:
    """A ``batch/v1`` Job with one pod requesting ``cpu: 1``, ``memory: 1Gi`` and ``gpus`` GPUs."""
    requests: dict[str, Any] = {"cpu": "1", "memory": "1Gi"}
    if gpus:
        requests[GPU_RESOURCE] = str(gpus)
    return {
        "apiVersion": batch_job.FRAMEWORK.api_version,
        "kind": batch_job.FRAMEWORK.kind,
        "metadata": {"name": "batchplane-diff-probe", "namespace": namespace, "labels": {QUEUE_LABEL: queue}},
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox", "resources": {"requests": requests}}],
                }
            },
        },
    }


def _queues(*deciders: Decider) -> list[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for d in deciders:
        for ns, policy in d.policy.namespaces.items():
            out |= {(ns, q) for q in policy.local_queues}
    return sorted(out)


def _decide(decider: Decider, obj: dict[str, Any], namespace: str) -> Decision:
    return decider.validate(obj, namespace, "CREATE")


def decision_changes(
    base: Stack, head: Stack, base_summary: StackSummary, head_summary: StackSummary
) -> list[DecisionChange]:
    """The generated shapes the two policies decide differently (allowed ↔ denied, or another reason)."""
    old, new = Decider(render_policy(base)), Decider(render_policy(head))
    out: list[DecisionChange] = []
    judged = 0
    for namespace, queue in _queues(old, new):
        for gpus in gpu_counts(base_summary, head_summary):
            if judged >= MAX_SHAPES:
                return out
            judged += 1
            obj = job_shape(namespace, queue, gpus)
            b, a = _decide(old, obj, namespace), _decide(new, obj, namespace)
            if (b.allowed, b.reason) != (a.allowed, a.reason):
                shape = f"Job, 1 pod: {gpus} GPU{'s' if gpus != 1 else ''}, 1 CPU, 1Gi"
                out.append(
                    DecisionChange(
                        shape,
                        namespace,
                        queue,
                        (b.allowed, b.reason),
                        (a.allowed, a.reason),
                        a.message or b.message,
                        _why(b, a),
                    )
                )
    return out


def _why(before: Decision, after: Decision) -> str:
    """The row's sentence: the head's (a refusal's or borrowing's) lead; for a shape the head admits within its own
    quota, that plainly (the base's lead would describe the base)."""
    if after.lead:
        return after.lead
    if after.allowed and after.reason == "ok":
        return "runs now within its queue's own quota"
    return before.lead

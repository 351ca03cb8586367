"""The ``multiKueue`` section of the quota webhook's policy document (the manager side of MultiKueue).

One of the section builders :func:`batchplane.components.quota_webhook.policy.render_policy` assembles the document
from; the schema is :class:`~batchplane.webhook.policy.MultiKueuePolicy`. Imports no Pulumi and no stack loading:
the declared workers' own documents are rendered by the caller and handed in.
"""

from __future__ import annotations

from collections.abc import Mapping

from batchplane.multikueue.config import MultiKueueSection
from batchplane.webhook.policy import MultiKueuePolicy, PolicyDocument, WorkerPolicy

__all__ = ["multi_kueue_policy"]


def multi_kueue_policy(
    section: MultiKueueSection | None, worker_policies: Mapping[str, PolicyDocument]
) -> MultiKueuePolicy | None:
    """The manager's ``multiKueue`` section: its AdmissionCheck and every worker of the MultiKueueConfig, in order.

    Args:
        section: the stack's ``batchplane:multiKueue``; ``None`` = no MultiKueue (the section is ``None``).
        worker_policies: worker name → that worker's own policy document, for each worker this program declares
            (``target``); an existing worker (``kubeconfigSecret``) is absent and gets ``policy: None`` — its queues
            are unknown, so no workload is denied for its sake.
    """
    if section is None:
        return None
    return MultiKueuePolicy(
        admission_check=section.name,
        workers=[WorkerPolicy(name=w.name, policy=worker_policies.get(w.name)) for w in section.workers],
    )

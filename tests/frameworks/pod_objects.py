"""Pods of Kueue pod groups, as a user writes them (Kueue's docs: site/content/en/docs/tasks/run/plain_pods.md)."""

from __future__ import annotations

from typing import Any

GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
TOTAL_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def group_pod(
    name: str,
    requests: dict[str, str],
    *,
    group: str | None = "g",
    total: int | str | None = 3,
    namespace: str = "team-a",
    queue: str | None = "team-a-queue",
    image: str = "busybox",
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A v1 Pod of pod group ``group`` (no group label when ``None``) with one container requesting ``requests``."""
    labels = {}
    if group is not None:
        labels[GROUP_LABEL] = group
    if queue is not None:
        labels[QUEUE_LABEL] = queue
    notes = dict(annotations or {})
    if total is not None:
        notes[TOTAL_ANNOTATION] = str(total)
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if notes:
        meta["annotations"] = notes
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": name, "image": image, "resources": {"requests": requests}}],
        },
    }

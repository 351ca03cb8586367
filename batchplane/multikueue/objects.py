"""MultiKueue objects of the manager and the admission check wired into its ClusterQueues."""

from __future__ import annotations

from typing import Any

from batchplane.config.kueue import KUEUE_V1BETA1, AdmissionCheck, AdmissionCheckParameters, AdmissionCheckRef
from batchplane.config.rules import ExpandedKueue, KeyPath, Located
from batchplane.errors import ConfigIssue
from batchplane.multikueue.config import MultiKueueSection
from batchplane.wellknown import MULTIKUEUE_CONTROLLER

_PATH = "batchplane:multiKueue"


def expand_multikueue(section: MultiKueueSection, k: ExpandedKueue) -> list[ConfigIssue]:
    """Add the MultiKueue AdmissionCheck to ``k`` and to the dispatching ClusterQueues (in place).

    Returns:
        Errors for ``clusterQueues`` entries that name no ClusterQueue of the stack.
    """
    names = {q.obj.name for q in k.cluster_queues}
    issues = [
        ConfigIssue(f"{_PATH}.clusterQueues[{i}]", f'no ClusterQueue "{name}" in this stack')
        for i, name in enumerate(section.cluster_queues or [])
        if name not in names
    ]
    chosen = set(section.cluster_queues) if section.cluster_queues is not None else names
    check = AdmissionCheck(
        name=section.name,
        controller_name=MULTIKUEUE_CONTROLLER,
        parameters=AdmissionCheckParameters(
            api_group="kueue.x-k8s.io", kind="MultiKueueConfig", name=section.name
        ),
    )
    k.admission_checks.append(Located(check, KeyPath(_PATH, f'generated AdmissionCheck "{section.name}"')))
    for index, loc in enumerate(k.cluster_queues):
        queue = loc.obj
        if queue.name in chosen and all(ref.name != section.name for ref in queue.admission_checks):
            refs = [*queue.admission_checks, AdmissionCheckRef(name=section.name)]
            k.cluster_queues[index] = Located(queue.model_copy(update={"admission_checks": refs}), loc.path)
    return issues


def multikueue_objects(section: MultiKueueSection, api_version: str) -> list[dict[str, Any]]:
    """The manager's MultiKueueClusters (one per worker) and its MultiKueueConfig, in creation order.

    The kubeconfig Secret is ``spec.clusterSource.kubeConfig`` in ``kueue.x-k8s.io/v1beta2`` and
    ``spec.kubeConfig`` in ``v1beta1``, which requires it there (``apis/kueue/v1beta1/multikueue_types.go`` and
    ``apis/kueue/v1beta2/multikueue_types.go``, Kueue v0.19.2,
    https://github.com/kubernetes-sigs/kueue/tree/v0.19.2/apis/kueue).
    """
    clusters = []
    for worker in section.workers:
        kube_config = {"locationType": "Secret", "location": section.kubeconfig_secret(worker)}
        clusters.append(
            {
                "apiVersion": api_version,
                "kind": "MultiKueueCluster",
                "metadata": {"name": worker.name},
                "spec": {"kubeConfig": kube_config}
                if api_version == KUEUE_V1BETA1
                else {"clusterSource": {"kubeConfig": kube_config}},
            }
        )
    config = {
        "apiVersion": api_version,
        "kind": "MultiKueueConfig",
        "metadata": {"name": section.name},
        "spec": {"clusters": [worker.name for worker in section.workers]},
    }
    return [*clusters, config]


def with_multikueue(
    objects: list[dict[str, Any]], section: MultiKueueSection | None, api_version: str
) -> list[dict[str, Any]]:
    """``objects`` (Kueue objects in creation order) with the MultiKueue objects placed before the first
    AdmissionCheck, which refers to them; unchanged without a ``multiKueue`` section."""
    if section is None:
        return objects
    extra = multikueue_objects(section, api_version)
    at = next((i for i, o in enumerate(objects) if o["kind"] == "AdmissionCheck"), len(objects))
    return [*objects[:at], *extra, *objects[at:]]

"""Gather a manifest's Pods into the pod groups Kueue makes one Workload of.

Kueue v0.19.2 builds one Workload per pod group: every Pod of a namespace labelled with the same
``kueue.x-k8s.io/pod-group-name`` (``pkg/controller/jobs/pod/pod_controller.go`` ``Load``, L681-L727, lists them by
that name in the namespace). :func:`group_pods` does the same over the documents of a file, so ``explain`` and
``requests`` judge a group once, as Kueue admits it, instead of once per Pod. The PodSets of a group are
:func:`batchplane.frameworks.pod.group_pod_sets`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from batchplane.frameworks.pod import FRAMEWORK as POD
from batchplane.frameworks.pod import group_name
from batchplane.frameworks.trainjob import FRAMEWORK as TRAINJOB

#: What :func:`group_pods` returns: each document, a Pod group standing for all its Pods where the first of them was.
Documents = list[Any]


class PodGroup(dict[str, Any]):
    """One pod group of a manifest: reads as its first Pod (queue label, namespace, priority class — Kueue copies
    them from the group's Pods), named after the group (Kueue names the group's Workload after it), with every Pod of
    the group in :attr:`group_members` (file order), which :func:`batchplane.frameworks.pod.pod_pod_sets` builds the
    PodSets from.

    Attributes:
        group_members: the group's Pods, in file order.
    """

    group_members: tuple[Mapping[str, Any], ...]

    def __init__(self, name: str, members: Sequence[Mapping[str, Any]]) -> None:
        first = members[0]
        super().__init__(first)
        meta = dict(first.get("metadata") or {})
        meta["name"] = name
        self["metadata"] = meta
        self.group_members = tuple(members)


def _namespace(pod: Mapping[str, Any], default: str | None) -> str | None:
    meta = pod.get("metadata")
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
    return str(namespace) if namespace else default


def is_group_pod(document: Any) -> bool:
    """True for a ``v1 Pod`` labelled ``kueue.x-k8s.io/pod-group-name``."""
    return (
        isinstance(document, Mapping)
        and (document.get("apiVersion"), document.get("kind")) == POD.gvk
        and group_name(document) is not None
    )


def group_pods(documents: Iterable[Any], namespace: str | None = None) -> Documents:
    """``documents`` with the Pods of each pod group replaced by one :class:`PodGroup` at the first Pod's place.

    Pods belong to one group when they share the group name and the namespace (``metadata.namespace``, else
    ``namespace``, else ``default`` as kubectl applies it). Every other document is returned unchanged, in order.
    """
    docs = list(documents)
    members: dict[tuple[str | None, str], list[Mapping[str, Any]]] = {}
    for doc in docs:
        if is_group_pod(doc):
            name = group_name(doc)
            assert name is not None
            members.setdefault((_namespace(doc, namespace) or "default", name), []).append(doc)
    if not members:
        return docs
    out: Documents = []
    placed: set[tuple[str | None, str]] = set()
    for doc in docs:
        if not is_group_pod(doc):
            out.append(doc)
            continue
        name = group_name(doc)
        assert name is not None
        key = (_namespace(doc, namespace) or "default", name)
        if key not in placed:
            placed.add(key)
            out.append(PodGroup(name, members[key]))
    return out


class WithRuntimes(dict[str, Any]):
    """A TrainJob of a manifest with the (Cluster)TrainingRuntimes known beside it (same file, ``--with``, the stack's
    built-in ones) in :attr:`training_runtimes`, which :func:`batchplane.accounting.workload_requests` resolves its
    runtime from when the caller passes none.

    Attributes:
        training_runtimes: the runtimes, in the order given.
    """

    training_runtimes: tuple[Mapping[str, Any], ...]

    def __init__(self, job: Mapping[str, Any], runtimes: Sequence[Mapping[str, Any]]) -> None:
        super().__init__(job)
        self.training_runtimes = tuple(runtimes)


_RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")


def as_kueue_builds(
    documents: Iterable[Any], namespace: str | None = None, runtimes: Sequence[Mapping[str, Any]] = ()
) -> Documents:
    """A manifest's documents as the Workloads Kueue builds of them: pod groups gathered (:func:`group_pods`), and
    each TrainJob given the training runtimes of the same documents, then ``runtimes`` (e.g. the stack's built-in
    ones; a runtime in the documents wins over one of the same kind and name given here)."""
    docs = group_pods(documents, namespace)
    local = [d for d in docs if isinstance(d, Mapping) and d.get("kind") in _RUNTIME_KINDS]
    known = [*runtimes, *local]  # later entries win in the index: the documents' own
    if not known:
        return docs
    return [
        WithRuntimes(d, known) if isinstance(d, Mapping) and d.get("kind") == TRAINJOB.kind else d
        for d in docs
    ]

"""plain Pods and pod groups: Kueue's ``pod`` integration.

Registered in ``pkg/controller/jobs/pod/pod_controller.go`` at Kueue v0.19.2.

A Pod labelled ``kueue.x-k8s.io/pod-group-name`` and annotated ``kueue.x-k8s.io/pod-group-total-count`` is not a
Workload of its own: Kueue builds ONE Workload for every Pod of the group in its namespace, one PodSet per role
(pods whose admission-relevant spec hashes equal), counted per role (``constructGroupPodSets``, pod_controller.go
L795-L833). :func:`group_pod_sets` transcribes it; :mod:`batchplane.accounting.pod_groups` gathers a manifest's Pods
into groups. The quota webhook reviews only Pods carrying the group label (an ``objectSelector`` on it); it sees one
Pod at a time, so :func:`pod_pod_sets` judges a lone group Pod as the whole group made of pods of its shape.

The script grants no ``pods/status`` rule.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from batchplane.accounting.model import FieldError
from batchplane.accounting.podsets import (
    DEFAULT_POD_SET_NAME,
    RawPodSet,
    mapping_at,
)
from batchplane.frameworks.framework import KUEUE_SOURCE, JobFramework, dispatched_rules

GROUP_NAME_LABEL = "kueue.x-k8s.io/pod-group-name"
"""Label naming a Pod's group (``podconstants.GroupNameLabel``, ``pkg/controller/jobs/pod/constants/constants.go``
L27 at v0.19.2)."""
GROUP_TOTAL_COUNT_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"
"""Annotation with the number of Pods in the group (``GroupTotalCountAnnotation``, constants.go L29)."""
FAST_ADMISSION_ANNOTATION = "kueue.x-k8s.io/pod-group-fast-admission"
"""``"true"``: Kueue builds the Workload from the first Pod as total-count pods of its shape
(``GroupFastAdmissionAnnotationKey``, constants.go L30; ``constructGroupPodSetsFast``, pod_controller.go L774-L793)."""
ROLE_HASH_ANNOTATION = "kueue.x-k8s.io/role-hash"
"""Annotation that overrides a Pod's computed role hash (``RoleHashAnnotation``, constants.go L34; ``getRoleHash``,
pod_controller.go L671-L678)."""
GROUP_SOURCE = f"{KUEUE_SOURCE}/pkg/controller/jobs/pod/pod_controller.go"
"""Where Kueue builds a pod group's PodSets (``constructGroupPodSets`` L795-L833, ``groupTotalCount`` L642-L669)."""


def group_name(obj: Mapping[str, Any]) -> str | None:
    """The Pod's group name (label :data:`GROUP_NAME_LABEL`), or ``None`` for a Pod that is its own Workload
    (``utilpod.GetPodGroupName``, ``pkg/util/pod/pod.go`` L196-L203 at v0.19.2, with the
    ``WorkloadIdentifierAnnotations`` feature gate off, its default)."""
    labels = _meta_map(obj, "labels")
    name = labels.get(GROUP_NAME_LABEL)
    return str(name) if name else None


def group_total_count(obj: Mapping[str, Any]) -> int:
    """The Pod's :data:`GROUP_TOTAL_COUNT_ANNOTATION` as Kueue reads it (``groupTotalCount``, pod_controller.go
    L642-L669): an integer ≥ 1.

    Raises:
        FieldError: the annotation is missing, not an integer, or below 1 (Kueue builds no Workload then).
    """
    path = f"metadata.annotations.{GROUP_TOTAL_COUNT_ANNOTATION}"
    raw = _meta_map(obj, "annotations").get(GROUP_TOTAL_COUNT_ANNOTATION)
    if raw is None:
        raise FieldError(path, "is required on a Pod of a group (Kueue creates no Workload without it)")
    try:
        total = int(str(raw).strip())
    except ValueError:
        raise FieldError(path, f"must be an integer, not {raw!r}") from None
    if total < 1:
        raise FieldError(path, f"must be greater than zero, not {total}")
    return total


def role_hash(pod: Mapping[str, Any]) -> str:
    """The Pod's role: its :data:`ROLE_HASH_ANNOTATION`, else the first 8 hex digits of the SHA-256 of the JSON of
    the admission-relevant spec fields (``utilpod.GenerateRoleHash``/``SpecShape``/``ContainersShape``,
    ``pkg/util/pod/pod.go`` L133-L183 at v0.19.2: containers' and init containers' requests and ports, nodeSelector,
    affinity, tolerations, runtimeClassName, priority, topologySpreadConstraints, overhead, resourceClaims, and the
    pod-level requests when set). Pods with equal shapes get equal hashes; the hex equals Kueue's when the manifest
    writes quantities in their canonical form (Kueue hashes the API server's canonical quantities)."""
    note = _meta_map(pod, "annotations").get(ROLE_HASH_ANNOTATION)
    if note:
        return str(note)
    spec = pod.get("spec") if isinstance(pod.get("spec"), (dict, Mapping)) else {}
    assert isinstance(spec, (dict, Mapping))
    shape: dict[str, Any] = {
        "initContainers": _containers_shape(spec.get("initContainers")),
        "containers": _containers_shape(spec.get("containers")),
    }
    for key in (
        "nodeSelector",
        "affinity",
        "tolerations",
        "runtimeClassName",
        "priority",
        "topologySpreadConstraints",
        "overhead",
        "resourceClaims",
    ):
        shape[key] = spec.get(key)
    resources = spec.get("resources")
    if isinstance(resources, (dict, Mapping)):
        shape["resources"] = resources.get("requests")
    text = json.dumps({"spec": shape}, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _containers_shape(containers: Any) -> list[dict[str, Any]] | None:
    if not isinstance(containers, list) or not containers:
        return None
    shapes: list[dict[str, Any]] = []
    for container in containers:
        c = container if isinstance(container, (dict, Mapping)) else {}
        resources = c.get("resources") if isinstance(c.get("resources"), (dict, Mapping)) else {}
        assert isinstance(resources, (dict, Mapping))
        requests = resources.get("requests")
        shapes.append(
            {
                "resources": {"requests": {k: str(v) for k, v in requests.items()} if requests else None},
                "ports": c.get("ports"),
            }
        )
    return shapes


def _meta_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    value = meta.get(key) if isinstance(meta, (dict, Mapping)) else None
    return value if isinstance(value, (dict, Mapping)) else {}


def _template(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The Pod as a pod template: its spec, labels and annotations (read only: shared with the Pod)."""
    spec = mapping_at(obj, "spec", "spec")
    template: dict[str, Any] = {"metadata": {}, "spec": spec}
    for key in ("labels", "annotations"):
        value = _meta_map(obj, key)
        if value:
            template["metadata"][key] = dict(value)
    return template


def group_pod_sets(pods: Sequence[Mapping[str, Any]]) -> list[RawPodSet]:
    """The PodSets of the Workload Kueue builds for a pod group's Pods (in one namespace, in creation order).

    Transcribes Kueue v0.19.2 ``pkg/controller/jobs/pod/pod_controller.go``:

    * fast admission (:data:`FAST_ADMISSION_ANNOTATION` on the first Pod): one PodSet, named by the first Pod's
      role, of total-count pods of its shape (``constructGroupPodSetsFast``, L774-L793);
    * otherwise one PodSet per role (:func:`role_hash`), ``count`` = that role's Pods, sorted by name
      (``constructGroupPodSets``, L795-L833); Pods beyond the total count are removed by Kueue before the Workload
      is built (``ConstructComposableWorkload``, L1135-L1147), so only the first total-count Pods are counted.
    * A group with fewer Pods than its total count gets no Workload until the rest exist (``validatePodGroupMetadata``,
      L844-L848). When the Pods present all share one role, the group is judged as total-count pods of that role (as
      the quota webhook judges a lone Pod); with several roles, the Pods present are counted (a lower bound).

    Raises:
        FieldError: the first Pod's total count is missing or invalid, or a Pod has no ``spec``.
    """
    if not pods:
        raise FieldError("metadata.labels", f"a pod group needs at least one Pod labelled {GROUP_NAME_LABEL}")
    first = pods[0]
    total = group_total_count(first)
    fast = str(_meta_map(first, "annotations").get(FAST_ADMISSION_ANNOTATION, "")) == "true"
    if fast:
        return [RawPodSet(role_hash(first), total, None, _template(first), "spec")]
    counts: dict[str, int] = {}
    templates: dict[str, dict[str, Any]] = {}
    for pod in pods[:total]:
        role = role_hash(pod)
        if role not in counts:
            counts[role] = 0
            templates[role] = _template(pod)
        counts[role] += 1
    if len(counts) == 1 and len(pods) < total:
        counts[next(iter(counts))] = total
    return [RawPodSet(role, counts[role], None, templates[role], "spec") for role in sorted(counts)]


def pod_pod_sets(obj: Mapping[str, Any]) -> list[RawPodSet]:
    """v1 Pod → its PodSets.

    * A pod group gathered by :func:`batchplane.accounting.pod_groups.group_pods` (an object with a
      ``group_members`` attribute: the group's Pods): :func:`group_pod_sets` of them.
    * A Pod of a group seen alone (the quota webhook's case): the whole group as total-count pods of this Pod's
      shape, as the other roles are unknown (:func:`group_pod_sets` of this one Pod).
    * Any other Pod: one PodSet ``main`` of 1 pod (``constructPodSet``, pod_controller.go L754-L772).

    Raises:
        FieldError: no ``spec``, or a group Pod's total count missing or invalid.
    """
    members = getattr(obj, "group_members", None)
    if isinstance(members, (list, tuple)):
        return group_pod_sets(members)
    if group_name(obj) is not None:
        return group_pod_sets([obj])
    return [RawPodSet(DEFAULT_POD_SET_NAME, 1, None, _template(obj), "")]


FRAMEWORK: JobFramework = JobFramework(
    name="pod",
    group="",
    version="v1",
    kind="Pod",
    topology_checks=frozenset({"request"}),
    plural="pods",
    source=f"{KUEUE_SOURCE}/pkg/controller/jobs/pod/pod_controller.go",
    rhbok_name="Pod",
    kueue_chart_default=True,
    multikueue=True,
    worker_rules=dispatched_rules("", "pods", status=False),
    pod_sets=pod_pod_sets,
)

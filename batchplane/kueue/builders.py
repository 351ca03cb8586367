"""Pure builders: the expanded Kueue config → Kubernetes object dicts (``kubectl apply``-ready).

Each builder returns ``{"apiVersion", "kind", "metadata", "spec"...}`` for one object, in the
emitted API version (``kueue.x-k8s.io/v1beta2`` by default; ``v1beta1`` renames ClusterQueue
``cohortName`` to ``cohort``: ``apis/kueue/v1beta1/clusterqueue_types.go`` at
https://github.com/kubernetes-sigs/kueue/tree/v0.19.2). Omitted optional config fields are
omitted from the object, so Kueue's own defaults apply. No Pulumi here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from batchplane.config.kueue import (
    KUEUE_V1BETA1,
    AdmissionCheck,
    ClusterQueue,
    Cohort,
    LocalQueue,
    NamespaceSpec,
    ProvisioningRequestConfig,
    ResourceFlavor,
    ResourceGroup,
    Topology,
    WorkloadPriorityClass,
)
from batchplane.config.rules import ExpandedKueue, tenant_namespaces
from batchplane.wellknown import DEFAULT_QUEUE_ANNOTATION

Object = dict[str, Any]

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "batchplane"

#: Kueue kinds in the order they are created (referenced objects before referrers).
KUEUE_KIND_ORDER = (
    "ResourceFlavor",
    "Topology",
    "WorkloadPriorityClass",
    "ProvisioningRequestConfig",
    "AdmissionCheck",
    "Cohort",
    "ClusterQueue",
    "LocalQueue",
)


def _dump(model: BaseModel | None) -> Any:
    """camelCase dict of a config model without unset/None fields (Kueue defaults then apply)."""
    if model is None:
        return None
    return model.model_dump(by_alias=True, exclude_none=True, exclude_defaults=False)


def _meta(
    name: str,
    namespace: str | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {MANAGED_BY_LABEL: MANAGED_BY, **(labels or {})}
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def _resource_groups(groups: list[ResourceGroup]) -> list[dict[str, Any]]:
    return [_dump(g) for g in groups]


def resource_flavor(f: ResourceFlavor, api_version: str) -> Object:
    """A ResourceFlavor object (``spec`` omits empty nodeLabels/taints/tolerations)."""
    spec: dict[str, Any] = {}
    if f.node_labels:
        spec["nodeLabels"] = dict(f.node_labels)
    if f.node_taints:
        spec["nodeTaints"] = [_dump(t) for t in f.node_taints]
    if f.tolerations:
        spec["tolerations"] = [_dump(t) for t in f.tolerations]
    if f.topology_name:
        spec["topologyName"] = f.topology_name
    return {"apiVersion": api_version, "kind": "ResourceFlavor", "metadata": _meta(f.name), "spec": spec}


def topology(t: Topology, api_version: str) -> Object:
    """A Topology object."""
    return {
        "apiVersion": api_version,
        "kind": "Topology",
        "metadata": _meta(t.name),
        "spec": {"levels": [_dump(level) for level in t.levels]},
    }


def workload_priority_class(w: WorkloadPriorityClass, api_version: str) -> Object:
    """A WorkloadPriorityClass object (top-level ``value`` and ``description``, no spec)."""
    obj: Object = {
        "apiVersion": api_version,
        "kind": "WorkloadPriorityClass",
        "metadata": _meta(w.name),
        "value": w.value,
    }
    if w.description is not None:
        obj["description"] = w.description
    return obj


def provisioning_request_config(p: ProvisioningRequestConfig, api_version: str) -> Object:
    """A ProvisioningRequestConfig object."""
    spec = _dump(p)
    spec.pop("name")
    for key in ("parameters", "managedResources"):
        if not spec.get(key):
            spec.pop(key, None)
    return {
        "apiVersion": api_version,
        "kind": "ProvisioningRequestConfig",
        "metadata": _meta(p.name),
        "spec": spec,
    }


def admission_check(a: AdmissionCheck, api_version: str) -> Object:
    """An AdmissionCheck object (the provisioning shorthand resolved)."""
    spec: dict[str, Any] = {"controllerName": a.resolved_controller_name()}
    params = a.resolved_parameters()
    if params is not None:
        spec["parameters"] = _dump(params)
    return {"apiVersion": api_version, "kind": "AdmissionCheck", "metadata": _meta(a.name), "spec": spec}


def cohort(c: Cohort, api_version: str) -> Object:
    """A Cohort object."""
    spec: dict[str, Any] = {}
    if c.parent_name:
        spec["parentName"] = c.parent_name
    if c.resource_groups:
        spec["resourceGroups"] = _resource_groups(c.resource_groups)
    if c.fair_sharing is not None:
        spec["fairSharing"] = _dump(c.fair_sharing)
    return {"apiVersion": api_version, "kind": "Cohort", "metadata": _meta(c.name), "spec": spec}


def cluster_queue(q: ClusterQueue, api_version: str) -> Object:
    """A ClusterQueue object. ``namespaceSelector`` is always emitted (``{}`` when omitted)."""
    spec: dict[str, Any] = {}
    if q.cohort_name:
        spec["cohort" if api_version == KUEUE_V1BETA1 else "cohortName"] = q.cohort_name
    spec["namespaceSelector"] = _dump(q.namespace_selector) or {}
    for key in ("matchLabels", "matchExpressions"):
        if not spec["namespaceSelector"].get(key, True):
            spec["namespaceSelector"].pop(key)
    if q.queueing_strategy:
        spec["queueingStrategy"] = q.queueing_strategy
    spec["resourceGroups"] = _resource_groups(q.resource_groups)
    for key, value in (
        ("preemption", q.preemption),
        ("flavorFungibility", q.flavor_fungibility),
        ("fairSharing", q.fair_sharing),
    ):
        if value is not None:
            spec[key] = _dump(value)
    if q.admission_checks:
        checks = []
        for ref in q.admission_checks:
            item: dict[str, Any] = {"name": ref.name}
            if ref.on_flavors:
                item["onFlavors"] = list(ref.on_flavors)
            checks.append(item)
        spec["admissionChecksStrategy"] = {"admissionChecks": checks}
    if q.stop_policy:
        spec["stopPolicy"] = q.stop_policy
    return {"apiVersion": api_version, "kind": "ClusterQueue", "metadata": _meta(q.name), "spec": spec}


def local_queue(q: LocalQueue, api_version: str) -> Object:
    """A LocalQueue object; ``default: true`` becomes the ``kueue.x-k8s.io/default-queue`` annotation."""
    spec: dict[str, Any] = {"clusterQueue": q.cluster_queue}
    if q.stop_policy:
        spec["stopPolicy"] = q.stop_policy
    if q.fair_sharing is not None:
        spec["fairSharing"] = _dump(q.fair_sharing)
    annotations = {DEFAULT_QUEUE_ANNOTATION: "true"} if q.default else None
    return {
        "apiVersion": api_version,
        "kind": "LocalQueue",
        "metadata": _meta(q.name, q.namespace, annotations),
        "spec": spec,
    }


def namespace(ns: NamespaceSpec) -> Object:
    """A Namespace object with the configured labels and annotations."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": _meta(ns.name, annotations=dict(ns.annotations) or None, labels=dict(ns.labels)),
    }


def namespaces(k: ExpandedKueue) -> list[Object]:
    """Namespace objects for every tenant namespace the stack creates (built-ins and ``create: false`` skipped)."""
    return [namespace(ns) for ns in tenant_namespaces(k) if ns.create]


def kueue_objects(k: ExpandedKueue) -> list[Object]:
    """Every Kueue object of the stack in creation order (:data:`KUEUE_KIND_ORDER`), no namespaces."""
    v = k.api_version
    out: list[Object] = []
    out += [resource_flavor(x.obj, v) for x in k.resource_flavors]
    out += [topology(x.obj, v) for x in k.topologies]
    out += [workload_priority_class(x.obj, v) for x in k.workload_priority_classes]
    out += [provisioning_request_config(x.obj, v) for x in k.provisioning_request_configs]
    out += [admission_check(x.obj, v) for x in k.admission_checks]
    out += [cohort(x.obj, v) for x in k.cohorts]
    out += [cluster_queue(x.obj, v) for x in k.cluster_queues]
    out += [local_queue(x.obj, v) for x in k.local_queues]
    return out

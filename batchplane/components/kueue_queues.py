"""KueueQueues: every Kueue object of a stack, and the tenant namespaces they need, as Pulumi resources.

One Kubernetes resource (:class:`~batchplane.kubernetes_object.KubernetesObject`, every top-level field) per Kueue object (never a yaml/Chart bundle, so previews,
tests, the policy pack and ``batchplane render`` all see each object), one ``core/v1 Namespace``
per tenant namespace. Objects are declared in dependency order with explicit ``depends_on`` so
referenced objects exist first: ResourceFlavors/AdmissionChecks/Cohorts before ClusterQueues,
ClusterQueues and namespaces before LocalQueues; all of them after ``kueue_ready`` (the Kueue
install or its readiness gate) when given.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from batchplane.kubernetes_object import KubernetesObject

TYPE_TOKEN = "batchplane:kueue:KueueQueues"


class KueueQueuesArgs(TypedDict):
    """Inputs of :class:`KueueQueues`."""

    objects: list[dict[str, Any]]
    """Required. Kueue object dicts from :func:`batchplane.kueue.kueue_objects` (creation order)."""
    namespaces: NotRequired[list[dict[str, Any]]]
    """Namespace objects from :func:`batchplane.kueue.namespaces`. Defaults to none."""
    kueue_ready: NotRequired[list[pulumi.Resource]]
    """Resources every Kueue object must wait for (the Kueue install or its webhook readiness gate).
    Defaults to none: the objects are created as soon as the provider allows."""


def child_name(name: str, obj: dict[str, Any]) -> str:
    """Stable child resource name: ``<component>-<kind>-[<namespace>-]<name>`` in lower case."""
    meta = obj["metadata"]
    parts = [name, obj["kind"].lower()]
    if meta.get("namespace"):
        parts.append(meta["namespace"])
    parts.append(meta["name"])
    return "-".join(parts)


TOPOLOGY_FLAVOR_IMMUTABLE = ("spec.nodeLabels", "spec.tolerations", "spec.topologyName")
"""The ResourceFlavor fields Kueue makes immutable once ``topologyName`` is set (CEL rules of
``kubernetes-sigs/kueue`` v0.19.2 ``apis/kueue/v1beta2/resourceflavor_types.go`` L49-51)."""


def replacement_options(obj: dict[str, Any]) -> dict[str, Any]:
    """Resource options that replace an object instead of updating it where Kubernetes refuses the update.

    A ResourceFlavor with ``topologyName``: a change of :data:`TOPOLOGY_FLAVOR_IMMUTABLE` deletes the flavor and
    creates it again under the same name (``delete_before_replace``), because the API server refuses the update.
    Every other object: none.
    """
    if obj["kind"] == "ResourceFlavor" and (obj.get("spec") or {}).get("topologyName"):
        return {"replace_on_changes": list(TOPOLOGY_FLAVOR_IMMUTABLE), "delete_before_replace": True}
    return {}


class KueueQueues(pulumi.ComponentResource):
    """The Kueue objects of one stack.

    Attributes:
        resources: child resources by ``(kind, namespace or "", name)``.
    """

    resources: dict[tuple[str, str, str], pulumi.Resource]

    def __init__(self, name: str, args: KueueQueuesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        self.resources = {}
        ready = list(args.get("kueue_ready", []))
        namespaces: dict[str, pulumi.Resource] = {}
        for ns in args.get("namespaces", []):
            ns_res = k8s.core.v1.Namespace(
                child_name(name, ns),
                metadata=ns["metadata"],
                opts=pulumi.ResourceOptions(parent=self),
            )
            namespaces[ns["metadata"]["name"]] = ns_res
            self.resources[("Namespace", "", ns["metadata"]["name"])] = ns_res

        by_kind: dict[str, dict[str, pulumi.Resource]] = {}
        for obj in args["objects"]:
            kind = obj["kind"]
            meta = obj["metadata"]
            deps = ready + self._references(obj, by_kind, namespaces)
            # Every top-level field (a WorkloadPriorityClass has `value`/`description`, no `spec`).
            res = KubernetesObject(
                child_name(name, obj),
                obj,
                opts=pulumi.ResourceOptions(parent=self, depends_on=deps, **replacement_options(obj)),
            )
            by_kind.setdefault(kind, {})[meta["name"]] = res
            self.resources[(kind, meta.get("namespace", ""), meta["name"])] = res
        self.register_outputs({})

    @staticmethod
    def _references(
        obj: dict[str, Any],
        by_kind: dict[str, dict[str, pulumi.Resource]],
        namespaces: dict[str, pulumi.Resource],
    ) -> list[pulumi.Resource]:
        """The already-declared objects ``obj`` refers to (so Pulumi creates them first)."""
        spec = obj.get("spec") or {}
        refs: list[pulumi.Resource] = []

        def add(kind: str, ref: str | None) -> None:
            if ref is not None and ref in by_kind.get(kind, {}):
                refs.append(by_kind[kind][ref])

        kind = obj["kind"]
        if kind == "ResourceFlavor":
            add("Topology", spec.get("topologyName"))
        elif kind == "AdmissionCheck":
            params = spec.get("parameters") or {}
            add(params.get("kind", "ProvisioningRequestConfig"), params.get("name"))
        elif kind == "MultiKueueConfig":
            for cluster in spec.get("clusters", []):
                add("MultiKueueCluster", cluster)
        elif kind in ("ClusterQueue", "Cohort"):
            add("Cohort", spec.get("cohortName") or spec.get("cohort") or spec.get("parentName"))
            for group in spec.get("resourceGroups", []):
                for flavor in group["flavors"]:
                    add("ResourceFlavor", flavor["name"])
            for check in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks", []):
                add("AdmissionCheck", check["name"])
        elif kind == "LocalQueue":
            add("ClusterQueue", spec.get("clusterQueue"))
            ns = namespaces.get(obj["metadata"]["namespace"])
            if ns is not None:
                refs.append(ns)
        return refs

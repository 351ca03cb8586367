"""Which config key a resource of the program comes from, so a policy violation can point at its line.

The program declares each Kueue object from one entry of the expanded config (each with its key path:
``batchplane:kueue.clusterQueues[0]``, ``batchplane:teams.members[1] (generated ClusterQueue "b")``) and each GKE GPU
node pool from one ``target.gpuPools[i]``. :func:`config_key_for` goes back from a recorded resource (its type token
and inputs, as ``batchplane preview --json`` shows them) to that key path; :func:`batchplane.yamlfile.issue_position`
then finds the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.config.rules import Located
from batchplane.stack import Stack
from batchplane.stack.pool_hooks import backed_pools

NODE_POOL = "gcp:container/nodePool:NodePool"
_KUEUE_LISTS = {
    "ClusterQueue": "cluster_queues",
    "Cohort": "cohorts",
    "ResourceFlavor": "resource_flavors",
    "LocalQueue": "local_queues",
    "AdmissionCheck": "admission_checks",
    "ProvisioningRequestConfig": "provisioning_request_configs",
    "WorkloadPriorityClass": "workload_priority_classes",
    "Topology": "topologies",
}


def _name(inputs: Mapping[str, Any]) -> tuple[str | None, str | None]:
    metadata = inputs.get("metadata")
    if not isinstance(metadata, Mapping):
        return None, None
    name, namespace = metadata.get("name"), metadata.get("namespace")
    return (name if isinstance(name, str) else None), (namespace if isinstance(namespace, str) else None)


def config_key_for(stack: Stack, type_token: str, inputs: Mapping[str, Any]) -> str | None:
    """The config key path the resource was declared from, or None when it has none of its own (operators, the
    webhook's objects, providers)."""
    if type_token == NODE_POOL:
        pool = inputs.get("name")
        return next((str(p.path) for p in backed_pools(stack.config) if p.name == pool), None)
    parts = type_token.split(":")
    if len(parts) != 3 or parts[0] != "kubernetes":
        return None
    group, kind = parts[1], parts[2]
    name, namespace = _name(inputs)
    if name is None:
        return None
    if group.startswith("kueue.x-k8s.io/") and kind in _KUEUE_LISTS:
        located: list[Located[Any]] = getattr(stack.kueue, _KUEUE_LISTS[kind])
        for loc in located:
            if loc.obj.name == name and (kind != "LocalQueue" or loc.obj.namespace == namespace):
                return str(loc.path)
    if group == "core/v1" and kind == "Namespace":
        return next((str(loc.path) for loc in stack.kueue.namespaces if loc.obj.name == name), None)
    return None

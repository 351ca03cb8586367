"""GKE policies: Dynamic Workload Scheduler pools, GPU pools that scale from zero, production hardening,
Workload Identity.

Resources: ``gcp:container/nodePool:NodePool`` and ``gcp:container/cluster:Cluster`` (pulumi-gcp
10.2.0; inputs in camelCase: ``queuedProvisioning.enabled``, ``autoscaling.totalMinNodeCount``,
``nodeConfig.reservationAffinity.consumeReservationType`` ...). GKE's rules for queued-provisioning
and flex-start pools come from the GKE docs and Cluster Toolkit's ``gke-node-pool`` preconditions
(https://cloud.google.com/kubernetes-engine/docs/concepts/dws,
https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/main/modules/compute/gke-node-pool/main.tf):
autoscaling from 0 with ``locationPolicy ANY``, no static node count, no reservation (``NO_RESERVATION``),
auto-repair off, no Spot, no COMPACT placement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from batchplane.targets.gke.rules import deletion_protection_refused
from batchplane_policies._support import (
    PRODUCTION_ENVIRONMENTS,
    ReportViolation,
    config_value,
    flag,
    get,
    integer,
    is_production,
    items,
    per_cluster,
    text,
)

NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"

GPU_MACHINE_PREFIXES = ("a2-", "a3-", "a4-", "a4x-", "g2-", "g4-")
"""Accelerator-optimized machine families: every node has GPUs attached, even when the program
declares no ``guestAccelerators`` (Compute Engine "GPU machine types")."""

_PRODUCTION_SCHEMA = {
    "productionEnvironments": {
        "type": "array",
        "items": {"type": "string"},
        "default": list(PRODUCTION_ENVIRONMENTS),
        "description": "Values of the stack config batchplane:environment this policy applies to.",
    }
}


def _pool_mode(props: Mapping[str, Any]) -> str | None:
    """``"queued provisioning"``, ``"flex-start"``, both, or ``None`` for an ordinary pool."""
    queued = flag(get(props, "queuedProvisioning", "enabled")) is True
    flex = flag(get(props, "nodeConfig", "flexStart")) is True
    if queued and flex:
        return "flex-start with queued provisioning"
    if queued:
        return "queued provisioning"
    if flex:
        return "flex-start"
    return None


def _min_nodes(props: Mapping[str, Any]) -> int | None:
    scaling = get(props, "autoscaling")
    total = integer(get(scaling, "totalMinNodeCount"))
    return total if total is not None else integer(get(scaling, "minNodeCount"))


def _autoscaled(props: Mapping[str, Any]) -> bool:
    scaling = get(props, "autoscaling")
    return any(
        integer(get(scaling, key)) is not None
        for key in ("totalMaxNodeCount", "maxNodeCount", "totalMinNodeCount", "minNodeCount")
    )


def dws_pool_problems(props: Mapping[str, Any]) -> list[str]:
    """Every GKE rule a queued-provisioning or flex-start pool breaks (``[]`` for other pools)."""
    mode = _pool_mode(props)
    if mode is None:
        return []
    problems: list[str] = []
    if not _autoscaled(props):
        problems.append("autoscaling must be enabled (totalMinNodeCount 0, totalMaxNodeCount N)")
    else:
        minimum = _min_nodes(props)
        if minimum not in (None, 0):
            problems.append(f"autoscaling minimum is {minimum}; it must be 0")
        policy = text(get(props, "autoscaling", "locationPolicy"))
        if policy not in (None, "ANY"):
            problems.append(f'autoscaling.locationPolicy is "{policy}"; it must be "ANY"')
    if integer(get(props, "nodeCount")) is not None:
        problems.append("nodeCount must not be set (nodes come only from the autoscaler)")
    initial = integer(get(props, "initialNodeCount"))
    if initial not in (None, 0):
        problems.append(f"initialNodeCount is {initial}; it must be 0")
    reservation = text(get(props, "nodeConfig", "reservationAffinity", "consumeReservationType"))
    if reservation != "NO_RESERVATION":
        problems.append(
            f'nodeConfig.reservationAffinity.consumeReservationType is "{reservation or "unset"}"; '
            'it must be "NO_RESERVATION"'
        )
    if flag(get(props, "management", "autoRepair")) is not False:
        problems.append("management.autoRepair must be false")
    if (
        flag(get(props, "nodeConfig", "spot")) is True
        or flag(get(props, "nodeConfig", "preemptible")) is True
    ):
        problems.append("Spot/preemptible VMs cannot be combined with it")
    if text(get(props, "placementPolicy", "type")) == "COMPACT":
        problems.append("placementPolicy COMPACT is not supported for GPUs")
    return [f"{mode} pool: {p}" for p in problems]


def _dws_pool_rules(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != NODE_POOL:
        return
    for problem in dws_pool_problems(args.props):
        report_violation(problem)


gke_dws_pool_rules = ResourceValidationPolicy(
    name="gke-dws-pool-rules",
    description="Queued-provisioning and flex-start node pools must follow GKE's rules for Dynamic Workload Scheduler.",
    validate=_dws_pool_rules,
    enforcement_level=EnforcementLevel.MANDATORY,
    remediation_steps=(
        "Give the pool autoscaling {totalMinNodeCount: 0, totalMaxNodeCount: N, locationPolicy: ANY}, no nodeCount, "
        "initialNodeCount 0, nodeConfig.reservationAffinity.consumeReservationType NO_RESERVATION, "
        "management.autoRepair false, no Spot and no COMPACT placement (GKE 'About flex-start provisioning mode'; "
        "batchplane: target.gpuPools[].provisioning sets all of this)."
    ),
)


def gpus_per_node(props: Mapping[str, Any]) -> int | None:
    """GPUs per node: the sum of ``nodeConfig.guestAccelerators[].count``; ``None`` when the pool
    declares none (a machine type of a GPU family is still a GPU pool, see :func:`is_gpu_pool`)."""
    counts = [integer(get(a, "count")) for a in items(get(props, "nodeConfig", "guestAccelerators"))]
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def is_gpu_pool(props: Mapping[str, Any]) -> bool:
    """A pool with GPUs: accelerators declared, or an accelerator-optimized machine type."""
    if (gpus_per_node(props) or 0) > 0:
        return True
    machine = text(get(props, "nodeConfig", "machineType")) or ""
    return machine.startswith(GPU_MACHINE_PREFIXES)


def _scale_from_zero(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != NODE_POOL or not is_gpu_pool(args.props):
        return
    allowed = integer(config_value(args.get_config(), "maxMinNodes", 0)) or 0
    props = args.props
    if integer(get(props, "nodeCount")) is not None or not _autoscaled(props):
        report_violation("GPU pool has a fixed size; enable autoscaling with a minimum of 0 nodes")
        return
    minimum = _min_nodes(props) or 0
    if minimum > allowed:
        report_violation(
            f"GPU pool keeps at least {minimum} node(s) running; the minimum may be at most {allowed}"
        )
    initial = integer(get(props, "initialNodeCount")) or 0
    if initial > allowed:
        report_violation(
            f"GPU pool starts with {initial} node(s) (initialNodeCount); at most {allowed} allowed"
        )


gke_gpu_pool_scales_from_zero = ResourceValidationPolicy(
    name="gke-gpu-pool-scales-from-zero",
    description="GPU node pools must autoscale from zero so idle GPUs are not paid for.",
    validate=_scale_from_zero,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "maxMinNodes": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "Largest autoscaling minimum (and initialNodeCount) a GPU pool may have.",
            }
        }
    ),
    remediation_steps=(
        "Use autoscaling with totalMinNodeCount (or minNodeCount) 0 and no nodeCount; batchplane: set "
        "target.gpuPools[].minNodes: 0 and maxNodes, not nodeCount. Raise maxMinNodes in the policy config to "
        "keep warm capacity on purpose."
    ),
)


def _deletion_protection(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != CLUSTER:
        return
    # The program's rule (batchplane.targets.gke.rules): only an explicit false is a problem.
    production = is_production(args.get_config(), args.stack_tags)
    if deletion_protection_refused(flag(get(args.props, "deletionProtection")), production=production):
        report_violation("deletionProtection is false on a production stack")


gke_deletion_protection = ResourceValidationPolicy(
    name="gke-production-deletion-protection",
    description="Production GKE clusters must keep deletion protection on.",
    validate=_deletion_protection,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(properties=dict(_PRODUCTION_SCHEMA)),
    remediation_steps="Set target.deletionProtection: true (or remove it: production defaults to true).",
)


def _private_nodes(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != CLUSTER or not is_production(args.get_config(), args.stack_tags):
        return
    if flag(get(args.props, "privateClusterConfig", "enablePrivateNodes")) is not True:
        report_violation("privateClusterConfig.enablePrivateNodes is not true on a production stack")


gke_private_nodes = ResourceValidationPolicy(
    name="gke-production-private-nodes",
    description="Production GKE clusters must use private nodes (no public node IPs).",
    validate=_private_nodes,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(properties=dict(_PRODUCTION_SCHEMA)),
    remediation_steps="Set target.privateNodes: {enabled: true, masterIpv4CidrBlock: <a /28>}.",
)


def _workload_identity(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type == CLUSTER:
        pool = text(get(args.props, "workloadIdentityConfig", "workloadPool"))
        if pool is None:
            report_violation("workloadIdentityConfig.workloadPool is not set")
        elif not pool.endswith(".svc.id.goog"):
            report_violation(f'workloadIdentityConfig.workloadPool "{pool}" is not "<project>.svc.id.goog"')
    elif args.resource_type == NODE_POOL:
        mode = text(get(args.props, "nodeConfig", "workloadMetadataConfig", "mode"))
        if mode is not None and mode != "GKE_METADATA":
            report_violation(
                f'nodeConfig.workloadMetadataConfig.mode is "{mode}"; it must be "GKE_METADATA" '
                "(pods would see the node's service account)"
            )


gke_workload_identity = ResourceValidationPolicy(
    name="gke-workload-identity",
    description="GKE clusters must enable Workload Identity and node pools must not expose node credentials.",
    validate=_workload_identity,
    enforcement_level=EnforcementLevel.MANDATORY,
    remediation_steps=(
        "Set Cluster workloadIdentityConfig.workloadPool to <project>.svc.id.goog and leave node pools at "
        "workloadMetadataConfig.mode GKE_METADATA (batchplane: target.workloadIdentity defaults to true)."
    ),
)

# --- deployability of private nodes ---------------------------------------------------------------------

ROUTER_NAT = "gcp:compute/routerNat:RouterNat"
FIREWALL = "gcp:compute/firewall:Firewall"
#: Ports GKE itself opens from the control plane to private nodes.
GKE_OPEN_PORTS = frozenset({"443", "10250"})
#: Admission webhook ports of what the stack may install: Kueue (webhook, visibility), the quota webhook.
KUEUE_PORTS = ("9443", "8082")
WEBHOOK_CONFIGS = (
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration",
    "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration",
)


def _private_clusters(resources: list[Any]) -> list[Any]:
    return [
        r
        for r in resources
        if r.resource_type == CLUSTER
        and flag(get(r.props, "privateClusterConfig", "enablePrivateNodes")) is True
    ]


def _nat(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    resources = list(args.resources)
    if any(r.resource_type == ROUTER_NAT for r in resources):
        return
    for cluster in _private_clusters(resources):
        report_violation(
            "private nodes have no Cloud NAT in this stack: they cannot pull operator images "
            "(quay.io, registry.k8s.io, ghcr.io)",
            cluster.urn,
        )


gke_private_nodes_have_nat = StackValidationPolicy(
    name="gke-private-nodes-have-nat",
    description="A GKE cluster with private nodes needs a Cloud Router + Cloud NAT to pull images.",
    validate=per_cluster(_nat),
    enforcement_level=EnforcementLevel.ADVISORY,
    remediation_steps=(
        "Batchplane declares <name>-router and <name>-nat with privateNodes; if the network has NAT already "
        "(a shared VPC), keep this advisory or disable it in the policy config."
    ),
)


def _needed_ports(resources: list[Any]) -> set[str]:
    ports: set[str] = set()
    for r in resources:
        chart = text(get(r.props, "chart")) or ""
        if r.resource_type.startswith("kubernetes:helm.sh/") and chart.endswith("kueue"):
            ports.update(KUEUE_PORTS)
        if r.resource_type == "kubernetes:apps/v1:Deployment" and "quota-webhook" in (
            text(get(r.props, "metadata", "name")) or ""
        ):
            for container in items(get(r.props, "spec", "template", "spec", "containers")):
                for port in items(get(container, "ports")):
                    number = integer(get(port, "containerPort"))
                    if number is not None:
                        ports.add(str(number))
    return ports - GKE_OPEN_PORTS


def _webhook_ports(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    resources = list(args.resources)
    clusters = _private_clusters(resources)
    needed = _needed_ports(resources)
    if not clusters or not needed:
        return
    open_ports: set[str] = set()
    for rule in (r for r in resources if r.resource_type == FIREWALL):
        if text(get(rule.props, "direction")) in (None, "INGRESS"):
            for allow in items(get(rule.props, "allows")):
                open_ports.update(str(p) for p in items(get(allow, "ports")))
    missing = sorted(needed - open_ports, key=int)
    if missing:
        report_violation(
            f"the control plane cannot reach webhook port(s) {', '.join(missing)} on private nodes: GKE opens "
            "only 443 and 10250; admission calls will time out",
            clusters[0].urn,
        )


gke_webhook_ports_reachable = StackValidationPolicy(
    name="gke-webhook-ports-reachable",
    description="On private GKE nodes, a firewall rule must open the webhook ports the stack installs.",
    validate=per_cluster(_webhook_ports),
    enforcement_level=EnforcementLevel.MANDATORY,
    remediation_steps=(
        "Batchplane declares <name>-webhooks (ingress from masterIpv4CidrBlock to the nodes' tag) with "
        "privateNodes; a hand-made rule must allow TCP on Kueue's 9443 and 8082 and the quota webhook's port."
    ),
)

POLICIES = [
    gke_dws_pool_rules,
    gke_gpu_pool_scales_from_zero,
    gke_deletion_protection,
    gke_private_nodes,
    gke_workload_identity,
    gke_private_nodes_have_nat,
    gke_webhook_ports_reachable,
]
"""The GKE policies, in the order the pack lists them."""

"""Kueue policies: finite quotas, references that resolve inside the stack, GPU quota backed by node
pools, sane borrowing within cohorts, and DWS queues that can admit multi-PodSet jobs.

Resources: ``kubernetes:kueue.x-k8s.io/<version>:<Kind>`` (any API version; v1beta2 fields first,
v1beta1 spellings accepted: ``spec.cohortName``/``spec.cohort``,
``spec.admissionChecksStrategy.admissionChecks[].name``/``spec.admissionChecks[]``). Field meanings
follow the Kueue v0.19.2 API (https://github.com/kubernetes-sigs/kueue/tree/v0.19.2/apis/kueue); the GKE side is
``gcp:container/nodePool:NodePool``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from batchplane.backed_pools import PoolQuota, QuotaShare, quota_shares
from batchplane.targets.gke.rules import node_pool_max_nodes
from batchplane.wellknown import DEFAULT_GPU_RESOURCES, PROVISIONING_CONTROLLER
from batchplane.wellknown import GKE_NODEPOOL_LABEL as NODE_POOL_LABEL
from batchplane_policies._support import (
    ReportViolation,
    ResourceView,
    cluster_queue_cohort,
    config_value,
    describe,
    get,
    integer,
    items,
    kueue_kind,
    mapping,
    object_name,
    of_kueue_kind,
    per_cluster,
    quantity,
    quota_entries,
    show_quantity,
    stack_environment,
    string_list,
    text,
)
from batchplane_policies.gke import NODE_POOL, gpus_per_node

QUEUED_PROVISIONING_CLASS = "queued-provisioning.gke.io"
"""The ProvisioningRequest class of GKE's queued provisioning (one PodSet per request)."""

DEFAULT_INFINITE_QUOTAS = {"cpu": "10000", "memory": "10000Gi", "*": "10000"}
"""The "infinite" quotas of Google's DWS samples (cpu 10000, memory 10000Gi, GPUs 10000;
ai-on-gke ``dws-queues.yaml``): a nominalQuota at or above these is treated as unlimited."""


# --- kueue-finite-quotas ---------------------------------------------------------------------------


def _finite_quotas(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if kueue_kind(args.resource_type) not in ("ClusterQueue", "Cohort"):
        return
    config = args.get_config()
    exempt = string_list(config_value(config, "exemptEnvironments", ["dev"]))
    environment = stack_environment(args.stack_tags)
    if environment in exempt:
        return
    limits = mapping(config_value(config, "infiniteQuotas", DEFAULT_INFINITE_QUOTAS))
    for flavor, resource, entry in quota_entries(args.props):
        limit = quantity(limits.get(resource, limits.get("*")))
        amount = quantity(get(entry, "nominalQuota"))
        if limit is not None and amount is not None and amount >= limit:
            report_violation(
                f'flavor "{flavor}" {resource} nominalQuota {show_quantity(amount)} is an "infinite" quota '
                f"(≥ {show_quantity(limit)}) on a {environment} stack"
            )


kueue_finite_quotas = ResourceValidationPolicy(
    name="kueue-finite-quotas",
    description="Outside dev, ClusterQueue and Cohort quotas must be finite (no 10000-style 'infinite' quotas).",
    validate=_finite_quotas,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "exemptEnvironments": {
                "type": "array",
                "items": {"type": "string"},
                "default": ["dev"],
                "description": "Values of batchplane:environment where infinite quotas are allowed.",
            },
            "infiniteQuotas": {
                "type": "object",
                "additionalProperties": {"type": ["string", "number"]},
                "default": dict(DEFAULT_INFINITE_QUOTAS),
                "description": 'Per resource ("*": any other), the quota at or above which it counts as infinite.',
            },
        }
    ),
    remediation_steps=(
        "Size nominalQuota to what the cluster can run (e.g. a pool's maxNodes × per-node GPUs); let the "
        "ProvisioningRequest gate capacity, not an unlimited quota."
    ),
)


# --- kueue-references-exist -----------------------------------------------------------------------


def _names(resources: Iterable[ResourceView], kind: str) -> set[str]:
    return {n for r in of_kueue_kind(resources, kind) if (n := object_name(r.props)) is not None}


def cluster_queue_checks(props: Mapping[str, Any]) -> list[str]:
    """Admission-check names of a ClusterQueue (v1beta2 strategy entries and v1beta1 plain names)."""
    strategy = [
        text(get(c, "name")) for c in items(get(props, "spec", "admissionChecksStrategy", "admissionChecks"))
    ]
    return [n for n in strategy if n] + string_list(get(props, "spec", "admissionChecks"))


def _references(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    resources = args.resources
    external = set(string_list(config_value(args.get_config(), "external", [])))
    known = {
        kind: _names(resources, kind) | {e.split("/", 1)[1] for e in external if e.startswith(f"{kind}/")}
        for kind in ("ClusterQueue", "ResourceFlavor", "AdmissionCheck", "ProvisioningRequestConfig")
    }

    def missing(resource: ResourceView, kind: str, name: str, role: str) -> None:
        if name not in known[kind]:
            report_violation(
                f'{describe(resource)} {role} {kind} "{name}", which the stack does not define', resource.urn
            )

    for lq in of_kueue_kind(resources, "LocalQueue"):
        target = text(get(lq.props, "spec", "clusterQueue"))
        if target is not None:
            missing(lq, "ClusterQueue", target, "points at")
    for cq in of_kueue_kind(resources, "ClusterQueue"):
        for flavor in sorted({f for f, _, _ in quota_entries(cq.props)} | _flavor_names(cq.props)):
            missing(cq, "ResourceFlavor", flavor, "uses")
        for check in cluster_queue_checks(cq.props):
            missing(cq, "AdmissionCheck", check, "uses")
    for ac in of_kueue_kind(resources, "AdmissionCheck"):
        params = get(ac.props, "spec", "parameters")
        if text(get(params, "kind")) == "ProvisioningRequestConfig" and (name := text(get(params, "name"))):
            missing(ac, "ProvisioningRequestConfig", name, "uses")


def _flavor_names(props: Mapping[str, Any]) -> set[str]:
    return {
        n
        for group in items(get(props, "spec", "resourceGroups"))
        for flavor in items(get(group, "flavors"))
        if (n := text(get(flavor, "name")))
    }


kueue_references_exist = StackValidationPolicy(
    name="kueue-references-exist",
    description=(
        "Every LocalQueue's ClusterQueue, every ClusterQueue's ResourceFlavors and AdmissionChecks, and every "
        "AdmissionCheck's ProvisioningRequestConfig must be defined in the stack."
    ),
    validate=per_cluster(_references),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "external": {
                "type": "array",
                "items": {"type": "string", "pattern": "^[A-Za-z]+/.+$"},
                "default": [],
                "description": "Objects that exist outside the stack, as Kind/name (e.g. ResourceFlavor/default-flavor).",
            }
        }
    ),
    remediation_steps=(
        "Declare the missing object in batchplane:kueue (or fix the name); list objects managed elsewhere in the "
        "policy config's external list."
    ),
)


# --- kueue-gpu-quota-within-pool-capacity ---------------------------------------------------------


def pool_capacity_nodes(props: Mapping[str, Any]) -> tuple[int, str] | None:
    """The most nodes a pool can have and how that was derived, or ``None`` when unknown: the program's own
    derivation (:func:`batchplane.targets.gke.rules.node_pool_max_nodes`) over the NodePool inputs."""
    return node_pool_max_nodes(
        node_count=integer(get(props, "nodeCount")),
        max_node_count=integer(get(props, "autoscaling", "maxNodeCount")),
        total_max_node_count=integer(get(props, "autoscaling", "totalMaxNodeCount")),
        zones=len(string_list(get(props, "nodeLocations"))),
    )


def _size_key(props: Mapping[str, Any]) -> str:
    for key in ("totalMaxNodeCount", "maxNodeCount"):
        if get(props, "autoscaling", key) is not None:
            return f"autoscaling.{key}"
    return "nodeCount"


def _quota_entries(props: Mapping[str, Any]) -> list[tuple[str, str, Any, Any]]:
    return [
        (flavor, resource, get(entry, "nominalQuota"), get(entry, "borrowingLimit"))
        for flavor, resource, entry in quota_entries(props)
    ]


def _capacity(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    """The program's rule (:class:`batchplane.backed_pools.PoolQuota`) over the registered NodePools, flavors and quotas."""
    resources = args.resources
    gpu_names = set(string_list(config_value(args.get_config(), "gpuResources", list(DEFAULT_GPU_RESOURCES))))
    pools: dict[str, ResourceView] = {}
    for r in resources:
        if r.resource_type == NODE_POOL and (name := text(get(r.props, "name"))):
            pools[name] = r
    if not pools:
        return
    pool_flavors: dict[str, set[str]] = defaultdict(set)
    for rf in of_kueue_kind(resources, "ResourceFlavor"):
        pool = text(get(rf.props, "spec", "nodeLabels", NODE_POOL_LABEL))
        name = object_name(rf.props)
        if pool in pools and name is not None:
            pool_flavors[pool].add(name)
    owners = [r for r in resources if kueue_kind(r.resource_type) in ("ClusterQueue", "Cohort")]
    for pool_name, flavors in sorted(pool_flavors.items()):
        pool_res = pools[pool_name]
        per_node = gpus_per_node(pool_res.props)
        nodes = pool_capacity_nodes(pool_res.props)
        if per_node is None or nodes is None:
            continue
        shares: dict[str, list[QuotaShare]] = defaultdict(list)
        for r in owners:
            for resource, found in quota_shares(
                describe(r), _quota_entries(r.props), flavors, gpu_names
            ).items():
                shares[resource].extend(found)
        for resource, found in sorted(shares.items()):
            quota = PoolQuota(resource, tuple(found), Decimal(per_node), nodes[0], nodes[1])
            over = quota.over_capacity(
                pool=f'GKE node pool "{pool_name}"',
                flavors=", ".join(f'"{f}"' for f in sorted(flavors)),
                size_key=_size_key(pool_res.props),
            )
            if over is not None:
                report_violation(over, pool_res.urn)


kueue_gpu_quota_within_capacity = StackValidationPolicy(
    name="kueue-gpu-quota-within-pool-capacity",
    description=(
        "GPU nominal quota on the flavors of a GKE node pool (flavors select the pool by the "
        "cloud.google.com/gke-nodepool node label) must not exceed the pool's maximum GPUs."
    ),
    validate=per_cluster(_capacity),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "gpuResources": {
                "type": "array",
                "items": {"type": "string"},
                "default": list(DEFAULT_GPU_RESOURCES),
                "description": "Resource names counted as GPUs.",
            }
        }
    ),
    remediation_steps=(
        "Lower the ClusterQueue/Cohort nominalQuota on the pool's flavors or raise the pool's maxNodes: quota "
        "beyond max nodes × GPUs per node can never be backed by nodes."
    ),
)


# --- kueue-cohort-borrowing -----------------------------------------------------------------------


def _cohort_roots(resources: list[Any]) -> dict[str, str]:
    """Cohort name → the root of its tree (``spec.parentName``/``spec.parent`` of Cohort objects)."""
    parent: dict[str, str] = {}
    for co in of_kueue_kind(resources, "Cohort"):
        name = object_name(co.props)
        up = text(get(co.props, "spec", "parentName")) or text(get(co.props, "spec", "parent"))
        if name and up:
            parent[name] = up

    def root(name: str) -> str:
        seen = {name}
        while name in parent and parent[name] not in seen:
            name = parent[name]
            seen.add(name)
        return name

    names = set(parent) | set(parent.values())
    names |= {c for r in of_kueue_kind(resources, "ClusterQueue") if (c := cluster_queue_cohort(r.props))}
    return {n: root(n) for n in names}


def _lendable(
    resources: list[Any], roots: Mapping[str, str]
) -> dict[tuple[str, str, str], list[tuple[str, Decimal]]]:
    """What each cohort member can lend, per cohort tree, flavor and resource: its ``lendingLimit``,
    else its ``nominalQuota`` (ClusterQueues and Cohort objects), with the member's URN."""
    lendable: dict[tuple[str, str, str], list[tuple[str, Decimal]]] = defaultdict(list)
    for r in resources:
        kind = kueue_kind(r.resource_type)
        cohort = cluster_queue_cohort(r.props) if kind == "ClusterQueue" else None
        if kind == "Cohort":
            cohort = object_name(r.props)
        if cohort is None:
            continue
        for flavor, resource, entry in quota_entries(r.props):
            amount = quantity(get(entry, "lendingLimit"))
            if amount is None:
                amount = quantity(get(entry, "nominalQuota"))
            if amount is not None:
                lendable[(roots.get(cohort, cohort), flavor, resource)].append((r.urn, amount))
    return lendable


def _borrowing(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    resources = list(args.resources)
    roots = _cohort_roots(resources)
    lendable = _lendable(resources, roots)
    for cq in of_kueue_kind(resources, "ClusterQueue"):
        cohort = cluster_queue_cohort(cq.props)
        for flavor, resource, entry in quota_entries(cq.props):
            nominal = quantity(get(entry, "nominalQuota"))
            borrowing = quantity(get(entry, "borrowingLimit"))
            lending = quantity(get(entry, "lendingLimit"))
            where = f'{describe(cq)} flavor "{flavor}" {resource}'
            if cohort is None:
                if borrowing is not None or lending is not None:
                    report_violation(f"{where}: borrowingLimit/lendingLimit set without a cohort", cq.urn)
                continue
            if lending is not None and nominal is not None and lending > nominal:
                report_violation(
                    f"{where}: lendingLimit {show_quantity(lending)} exceeds nominalQuota {show_quantity(nominal)}",
                    cq.urn,
                )
            members = lendable[(roots.get(cohort, cohort), flavor, resource)]
            others = sum((a for urn, a in members if urn != cq.urn), Decimal(0))
            if borrowing is not None and borrowing > others:
                report_violation(
                    f'{where}: borrowingLimit {show_quantity(borrowing)} exceeds what the rest of cohort "{cohort}" '
                    f"can lend ({show_quantity(others)})",
                    cq.urn,
                )


kueue_cohort_borrowing = StackValidationPolicy(
    name="kueue-cohort-borrowing",
    description=(
        "Borrowing and lending limits must be satisfiable within the cohort: a borrowingLimit no larger than "
        "what the other members can lend, a lendingLimit no larger than the nominalQuota, no limits without a cohort."
    ),
    validate=per_cluster(_borrowing),
    enforcement_level=EnforcementLevel.ADVISORY,
    remediation_steps=(
        "Lower borrowingLimit to at most the sum of the other members' lendingLimit (or nominalQuota) on the same "
        "flavor and resource, or add quota to the cohort (another ClusterQueue or a Cohort object)."
    ),
)


# --- kueue-dws-multi-podset -----------------------------------------------------------------------


def _dws_multi_podset(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    resources = args.resources
    configs = {
        n: r for r in of_kueue_kind(resources, "ProvisioningRequestConfig") if (n := object_name(r.props))
    }
    checks: dict[str, ResourceView] = {}
    for ac in of_kueue_kind(resources, "AdmissionCheck"):
        params = get(ac.props, "spec", "parameters")
        name = object_name(ac.props)
        if (
            name is not None
            and text(get(ac.props, "spec", "controllerName")) == PROVISIONING_CONTROLLER
            and text(get(params, "kind")) == "ProvisioningRequestConfig"
            and (prc := configs.get(text(get(params, "name")) or "")) is not None
        ):
            checks[name] = prc
    for cq in of_kueue_kind(resources, "ClusterQueue"):
        for check in cluster_queue_checks(cq.props):
            prc = checks.get(check)
            if (
                prc is None
                or text(get(prc.props, "spec", "provisioningClassName")) != QUEUED_PROVISIONING_CLASS
            ):
                continue
            spec = get(prc.props, "spec")
            if text(get(spec, "podSetMergePolicy")) is None and not string_list(
                get(spec, "managedResources")
            ):
                report_violation(
                    f'{describe(cq)} uses AdmissionCheck "{check}" ({QUEUED_PROVISIONING_CLASS}) whose '
                    f"{describe(prc)} has neither podSetMergePolicy nor managedResources: GKE provisions one "
                    "PodSet per request, so multi-PodSet jobs (RayJob head + workers, PyTorchJob master + "
                    "workers) are never admitted",
                    cq.urn,
                )


kueue_dws_multi_podset = StackValidationPolicy(
    name="kueue-dws-multi-podset",
    description=(
        "ClusterQueues with a GKE queued-provisioning admission check must scope the ProvisioningRequest "
        "(podSetMergePolicy or managedResources) so multi-PodSet jobs can be admitted."
    ),
    validate=per_cluster(_dws_multi_podset),
    enforcement_level=EnforcementLevel.MANDATORY,
    remediation_steps=(
        "Set the ProvisioningRequestConfig's managedResources: [nvidia.com/gpu] (CPU-only PodSets stay out of the "
        "request) and podSetMergePolicy: IdenticalWorkloadSchedulingRequirements (identical GPU groups become one PodSet)."
    ),
)

POLICIES = [
    kueue_finite_quotas,
    kueue_references_exist,
    kueue_gpu_quota_within_capacity,
    kueue_cohort_borrowing,
    kueue_dws_multi_podset,
]
"""The Kueue policies, in the order the pack lists them."""

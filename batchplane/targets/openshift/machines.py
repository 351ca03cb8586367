"""OpenShift GPU MachineSets: the objects they become, the pools they back, and their rules (pure).

For every ``target.gpuPools`` entry of an ``openshift`` target (:mod:`batchplane.targets.openshift.gpu`):

* a ``machine.openshift.io/v1beta1`` MachineSet in ``openshift-machine-api`` whose machines become
  nodes labelled ``batchplane.dev/gpu-pool: <pool>`` (the derived flavor selects it),
  ``cluster-api/accelerator: <gpu type>`` (OpenShift docs "Labeling GPU machine sets for the cluster
  autoscaler": the label the autoscaler matches against ``resourceLimits.gpus[].type``) and
  ``node-role.kubernetes.io/gpu: ""``, tainted ``nvidia.com/gpu=true:NoSchedule``;
* a ``MachineAutoscaler`` (``autoscaling.openshift.io/v1beta1``, ``minReplicas``/``maxReplicas``,
  ``scaleTargetRef`` the MachineSet);
* one ``ClusterAutoscaler`` ``default`` (``autoscaling.openshift.io/v1``) whose ``resourceLimits.gpus``
  has, per GPU type, max = Σ maxReplicas × GPUs per machine, and — with a baseline — ``maxNodesTotal``,
  ``cores`` and ``memory`` (GiB) covering the rest of the cluster plus every pool at its maximum.

Scale from zero needs the capacity annotations (``machine.openshift.io/vCPU``, ``memoryMb``, ``GPU``)
on the MachineSet; the AWS, Azure and GCP machine controllers set them from the instance type
(openshift/enhancements ``machine-api/autoscaling-from-to-zero.md``), so Batchplane does not.

:func:`openshift_backed_pools` maps pools onto :class:`~batchplane.backed_pools.BackedPool`, so
flavors, ProvisioningRequest admission checks and the capacity check come from the same code as on
GKE; the class is ``best-effort-atomic-scale-up.autoscaling.x-k8s.io`` (``provisioning: atomic``) or
``check-capacity.autoscaling.x-k8s.io``. :func:`check_gpu_capacity` and :func:`check_gang_sizes`
hold the OpenShift rules; every message is pinned in tests/openshift/test_gpu_validation.py.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from batchplane.backed_pools import (
    GPU_RESOURCE,
    KUEUE_RETRY_DEFAULTS,
    BackedPool,
    NodeTaint,
    ProvisioningSpec,
    flavor_pools,
)
from batchplane.config.rules import ExpandedKueue, KeyPath
from batchplane.errors import ConfigIssue, ConfigLoadError
from batchplane.node_allocatable import openshift_allocatable
from batchplane.quantity import QuantityError, format_quantity, parse_quantity
from batchplane.targets.openshift.aws_instances import GPU_INSTANCE_PREFIXES, INSTANCE_SHAPES
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.gpu import (
    ATOMIC_SCALE_UP_CLASS,
    CHECK_CAPACITY_CLASS,
    PROVISIONING_CRD_FEATURE_SET,
    PROVISIONING_FEATURE_GATE,
    PROVISIONING_FEATURE_SETS,
    PROVISIONING_FEATURE_SETS_READ_THROUGH,
    PROVISIONING_MIN_OPENSHIFT,
    Accelerator,
    AwsMachine,
    MachineTemplate,
    OpenShiftGpuPool,
    PoolProvisioningRequest,
    RootVolume,
    parse_openshift_version,
)
from batchplane.yamlfile import read_yaml_file

Object = dict[str, Any]

MACHINE_API_NAMESPACE = "openshift-machine-api"
"""Namespace of MachineSets and MachineAutoscalers."""
MACHINE_API_VERSION = "machine.openshift.io/v1beta1"
POOL_LABEL = "batchplane.dev/gpu-pool"
"""Node label naming the pool; the derived ResourceFlavor selects it."""
ACCELERATOR_LABEL = "cluster-api/accelerator"
"""Node label the Cluster Autoscaler matches against ``resourceLimits.gpus[].type``."""
GPU_ROLE_LABEL = "node-role.kubernetes.io/gpu"
CLUSTER_LABEL = "machine.openshift.io/cluster-api-cluster"
MACHINESET_LABEL = "machine.openshift.io/cluster-api-machineset"
MACHINE_ROLE_LABEL = "machine.openshift.io/cluster-api-machine-role"
MACHINE_TYPE_LABEL = "machine.openshift.io/cluster-api-machine-type"
MANAGED_BY = {"app.kubernetes.io/managed-by": "batchplane"}
GPU_TAINT = NodeTaint(GPU_RESOURCE, "true", "NoSchedule")
"""The taint every GPU pool's nodes carry (as in NVIDIA's OpenShift GPU MachineSet examples)."""
RESERVED_LABELS = (POOL_LABEL, ACCELERATOR_LABEL, GPU_ROLE_LABEL)
GIB = Decimal(2**30)
BASE = "batchplane:target"

_Error = Callable[[str, str], None]


# --- pool shape and template -------------------------------------------------------------------


@dataclass(frozen=True)
class PoolShape:
    """What one machine of a pool has, as far as known.

    Attributes:
        accelerator: GPU type label and count, or None when unknown (a config error).
        vcpus: vCPUs (CPU cores) per machine, or None.
        memory_gib: memory per machine in GiB, or None.
    """

    accelerator: Accelerator | None
    vcpus: int | None
    memory_gib: int | None


def pool_shape(pool: OpenShiftGpuPool) -> PoolShape:
    """The pool's machine shape: configured values first, then the AWS instance type table."""
    known = INSTANCE_SHAPES.get(pool.aws.instance_type) if pool.aws is not None else None
    accelerator = pool.accelerator
    if accelerator is None and known is not None:
        accelerator = Accelerator(type=known.accelerator_label, count=known.gpus)
    vcpus = pool.vcpus if pool.vcpus is not None else (known.vcpus if known else None)
    memory = pool.memory_gib if pool.memory_gib is not None else (known.memory_gib if known else None)
    return PoolShape(accelerator, vcpus, memory)


@dataclass(frozen=True)
class TemplateSource:
    """A pool template, read.

    Attributes:
        provider_spec: ``providerSpec.value``, or None when it could not be read.
        infrastructure_id: the file's ``machine.openshift.io/cluster-api-cluster`` label, if any.
        problem: why the template is unusable (a config error message), or None.
    """

    provider_spec: Object | None
    infrastructure_id: str | None = None
    problem: str | None = None


def load_template(template: MachineTemplate, base_dir: Path) -> TemplateSource:
    """Read a pool template: the inline provider spec, or the MachineSet file (relative to ``base_dir``).

    Never raises: problems (no such file, not YAML, not a ``machine.openshift.io/v1beta1`` MachineSet,
    no ``spec.template.spec.providerSpec.value``) are returned as :attr:`TemplateSource.problem`.
    """
    if template.path is None:
        return TemplateSource(dict(template.provider_spec or {}))
    path = Path(template.path)
    path = path if path.is_absolute() else base_dir / path
    if not path.is_file():
        return TemplateSource(None, problem=f'cannot read "{template.path}" (from {base_dir})')
    try:
        doc = read_yaml_file(path)  # bounded: size, UTF-8, depth, aliases
    except ConfigLoadError as exc:
        return TemplateSource(None, problem=f'"{template.path}"{str(exc).removeprefix(str(path))}')
    if not isinstance(doc, dict) or (doc.get("apiVersion"), doc.get("kind")) != (
        MACHINE_API_VERSION,
        "MachineSet",
    ):
        return TemplateSource(None, problem=f'"{template.path}" is not a {MACHINE_API_VERSION} MachineSet')
    spec = _dig(doc, "spec", "template", "spec", "providerSpec", "value")
    if not isinstance(spec, dict) or not spec:
        return TemplateSource(None, problem=f'"{template.path}" has no spec.template.spec.providerSpec.value')
    labels = _dig(doc, "metadata", "labels")
    infra = labels.get(CLUSTER_LABEL) if isinstance(labels, dict) else None
    return TemplateSource(spec, infra if isinstance(infra, str) and infra else None)


def _dig(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def infrastructure_id(target: OpenShiftTarget, pool: OpenShiftGpuPool, base_dir: Path) -> str | None:
    """The infrastructure ID for a pool: the target's, else (template pools) the template file's label."""
    if target.infrastructure_id is not None:
        return target.infrastructure_id
    if pool.template is not None:
        return load_template(pool.template, base_dir).infrastructure_id
    return None


def machine_set_name(infra: str | None, pool: OpenShiftGpuPool) -> str:
    """``machineSetName``, else ``<infrastructureId>-<pool>`` (``<pool>`` without an infrastructure ID)."""
    if pool.machine_set_name is not None:
        return pool.machine_set_name
    return f"{infra}-{pool.name}" if infra else pool.name


def node_labels(pool: OpenShiftGpuPool) -> dict[str, str]:
    """Every label the pool's nodes get from the MachineSet: Batchplane's and the configured ones."""
    labels = {GPU_ROLE_LABEL: "", POOL_LABEL: pool.name}
    accelerator = pool_shape(pool).accelerator
    if accelerator is not None:
        labels[ACCELERATOR_LABEL] = accelerator.type
    labels.update(pool.labels)
    return labels


def node_taints(pool: OpenShiftGpuPool) -> tuple[NodeTaint, ...]:
    """Every taint the pool's nodes carry: the GPU taint, then the configured ones."""
    return (GPU_TAINT, *(NodeTaint(t.key, t.value, t.effect) for t in pool.taints))


# --- objects -----------------------------------------------------------------------------------


def _tag_filter(name: str) -> Object:
    return {"filters": [{"name": "tag:Name", "values": [name]}]}


def _owned_tags(infra: str, aws: AwsMachine, copied: list[Any] | None = None) -> list[Object]:
    """``kubernetes.io/cluster/<infra>: owned``, then the copied tags, then the configured ones (replacing copies of
    the same name)."""
    tags: dict[str, str] = {f"kubernetes.io/cluster/{infra}": "owned"}
    for tag in copied or []:
        if isinstance(tag, dict) and isinstance(tag.get("name"), str):
            tags.setdefault(tag["name"], str(tag.get("value", "")))
    tags.update(aws.tags)
    return [{"name": k, "value": v} for k, v in tags.items()]


def aws_provider_spec(infra: str, aws: AwsMachine) -> Object:
    """``providerSpec.value`` of an AWS MachineSet (``AWSMachineProviderConfig``) from configuration alone, for pools
    that give ``ami``, ``subnet``, ``securityGroups`` and ``iamInstanceProfile`` (no copy): the shape of the OpenShift
    docs sample, root volume 120 GiB encrypted gp3 unless configured.

    Raises:
        ValueError: one of those four is not set (such pools copy a worker MachineSet: :func:`copied_provider_spec`).
    """
    if aws.copies_worker():
        raise ValueError(
            "ami, subnet, securityGroups and iamInstanceProfile are copied from a worker MachineSet"
        )
    assert aws.ami and aws.subnet and aws.iam_instance_profile
    volume = aws.root_volume or RootVolume()
    return {
        "apiVersion": MACHINE_API_VERSION,
        "kind": "AWSMachineProviderConfig",
        "ami": {"id": aws.ami},
        "instanceType": aws.instance_type,
        "placement": {"availabilityZone": aws.zone, "region": aws.region},
        "subnet": _tag_filter(aws.subnet),
        "securityGroups": [_tag_filter(g) for g in aws.security_groups],
        "iamInstanceProfile": {"id": aws.iam_instance_profile},
        "blockDevices": [
            {"ebs": {"encrypted": volume.encrypted, "volumeSize": volume.size_gib, "volumeType": volume.type}}
        ],
        "credentialsSecret": {"name": "aws-cloud-credentials"},
        "userDataSecret": {"name": "worker-user-data"},
        "deviceIndex": 0,
        "tags": _owned_tags(infra, aws),
    }


def copied_provider_spec(source: Mapping[str, Any], infra: str, aws: AwsMachine) -> Object:
    """A worker MachineSet's ``providerSpec.value`` made the pool's: a deep copy with ``instanceType`` and
    ``placement`` (zone, region) set, and every configured field winning over the copied one (``ami.id``, the subnet
    and security-group ``tag:Name`` filters, ``iamInstanceProfile.id``, the root volume, extra tags).

    Args:
        source: the copied ``providerSpec.value`` (what :func:`choose_worker_machine_set` found), or, offline, the
            mock engine's placeholder (kept, so the rendered object shows it was not looked up).
        infra: the infrastructure ID (the ``kubernetes.io/cluster/<infra>`` tag).
        aws: the pool's settings.
    """
    spec: Object = copy.deepcopy(dict(source))
    spec["instanceType"] = aws.instance_type
    placement: Object = spec["placement"] if isinstance(spec.get("placement"), dict) else {}
    spec["placement"] = {**placement, "availabilityZone": aws.zone, "region": aws.region}
    if aws.ami:
        spec["ami"] = {"id": aws.ami}
    if aws.subnet:
        spec["subnet"] = _tag_filter(aws.subnet)
    if aws.security_groups:
        spec["securityGroups"] = [_tag_filter(g) for g in aws.security_groups]
    if aws.iam_instance_profile:
        spec["iamInstanceProfile"] = {"id": aws.iam_instance_profile}
    if aws.root_volume is not None:
        volume = aws.root_volume
        devices = [d for d in spec.get("blockDevices") or [] if isinstance(d, dict)]
        root = {
            "ebs": {"encrypted": volume.encrypted, "volumeSize": volume.size_gib, "volumeType": volume.type}
        }
        first = devices[0] if devices else {}
        spec["blockDevices"] = [{**first, "ebs": {**(first.get("ebs") or {}), **root["ebs"]}}, *devices[1:]]
    copied_tags = spec.get("tags")
    spec["tags"] = _owned_tags(infra, aws, copied_tags if isinstance(copied_tags, list) else None)
    return spec


@dataclass(frozen=True)
class WorkerChoice:
    """The worker MachineSet a pool's provider spec is copied from, or why there is none.

    Attributes:
        name: the MachineSet's name, or None.
        provider_spec: its ``spec.template.spec.providerSpec.value``, or None.
        problem: why nothing can be copied (a blocker / deploy-time error), or None.
    """

    name: str | None
    provider_spec: Object | None
    problem: str | None = None


def _zone_of(machine_set_obj: Mapping[str, Any]) -> str | None:
    zone = _dig(
        machine_set_obj, "spec", "template", "spec", "providerSpec", "value", "placement", "availabilityZone"
    )
    return zone if isinstance(zone, str) else None


def choose_worker_machine_set(
    machine_sets: Sequence[Mapping[str, Any]], zone: str, infra: str | None, explicit: str | None = None
) -> WorkerChoice:
    """The MachineSet a pool in ``zone`` copies: ``explicit`` (``aws.sourceMachineSet``) when given, else the first,
    by name, whose machines are workers (template label ``machine.openshift.io/cluster-api-machine-role: worker``), of
    this cluster (``machine.openshift.io/cluster-api-cluster: <infra>`` when ``infra`` is known), in ``zone``
    (``providerSpec.value.placement.availabilityZone``), with a provider spec, and not Batchplane's own (label
    ``app.kubernetes.io/managed-by: batchplane``).

    Args:
        machine_sets: the ``openshift-machine-api`` MachineSets, as the API lists them.
        zone: the pool's availability zone.
        infra: the cluster's infrastructure ID, or None.
        explicit: the MachineSet to copy, or None.
    """
    by_name = {str(_dig(m, "metadata", "name")): m for m in machine_sets}
    if explicit is not None:
        found = by_name.get(explicit)
        spec = _dig(found, "spec", "template", "spec", "providerSpec", "value") if found else None
        if not isinstance(spec, dict) or not spec:
            why = "does not exist" if found is None else "has no spec.template.spec.providerSpec.value"
            return WorkerChoice(None, None, f"MachineSet {MACHINE_API_NAMESPACE}/{explicit} {why}")
        if _zone_of(found or {}) not in (None, zone):
            return WorkerChoice(
                None, None, f"MachineSet {explicit} is in zone {_zone_of(found or {})}, not {zone}"
            )
        return WorkerChoice(explicit, dict(spec))
    for name in sorted(by_name):
        candidate = by_name[name]
        template_labels = _dig(candidate, "spec", "template", "metadata", "labels") or {}
        labels = _dig(candidate, "metadata", "labels") or {}
        spec = _dig(candidate, "spec", "template", "spec", "providerSpec", "value")
        if (
            template_labels.get(MACHINE_ROLE_LABEL) == "worker"
            and (infra is None or labels.get(CLUSTER_LABEL, infra) == infra)
            and labels.get("app.kubernetes.io/managed-by") != "batchplane"
            and _zone_of(candidate) == zone
            and isinstance(spec, dict)
            and spec
        ):
            return WorkerChoice(name, dict(spec))
    zones = sorted({z for m in machine_sets if (z := _zone_of(m))})
    return WorkerChoice(
        None,
        None,
        f"no worker MachineSet in zone {zone} to copy (MachineSets: {', '.join(sorted(by_name)) or 'none'}; zones "
        f"{', '.join(zones) or 'none'}): pick a zone that has one, name one in aws.sourceMachineSet, or give ami, "
        "subnet, securityGroups and iamInstanceProfile",
    )


def machine_set(target: OpenShiftTarget, pool: OpenShiftGpuPool, base_dir: Path) -> Object:
    """The pool's MachineSet. ``replicas`` starts at ``minReplicas``; the autoscaler owns it afterwards. For AWS pools
    that copy a worker MachineSet (:meth:`AwsMachine.copies_worker`) ``providerSpec.value`` is ``None``: the program
    fills it at deploy time (:func:`copied_provider_spec` of what the ``machineset-source`` lookup found).

    Raises:
        ValueError: the pool's template or infrastructure ID is unusable (validation reports it first).
    """
    infra = infrastructure_id(target, pool, base_dir)
    if infra is None:
        raise ValueError(f'GPU pool "{pool.name}" has no infrastructure ID')
    provider_spec: Object | None
    if pool.aws is not None:
        provider_spec = None if pool.aws.copies_worker() else aws_provider_spec(infra, pool.aws)
    else:
        assert pool.template is not None
        source = load_template(pool.template, base_dir)
        if source.provider_spec is None:
            raise ValueError(source.problem or f'GPU pool "{pool.name}" has no provider spec')
        provider_spec = source.provider_spec
    name = machine_set_name(infra, pool)
    return {
        "apiVersion": MACHINE_API_VERSION,
        "kind": "MachineSet",
        "metadata": {
            "name": name,
            "namespace": MACHINE_API_NAMESPACE,
            "labels": {CLUSTER_LABEL: infra, **MANAGED_BY},
        },
        "spec": {
            "replicas": pool.min_replicas,
            "selector": {"matchLabels": {CLUSTER_LABEL: infra, MACHINESET_LABEL: name}},
            "template": {
                "metadata": {
                    "labels": {
                        CLUSTER_LABEL: infra,
                        MACHINE_ROLE_LABEL: "worker",
                        MACHINE_TYPE_LABEL: "worker",
                        MACHINESET_LABEL: name,
                    }
                },
                "spec": {
                    "metadata": {"labels": node_labels(pool)},
                    "taints": [_taint(t) for t in node_taints(pool)],
                    "providerSpec": {"value": provider_spec},
                },
            },
        },
    }


@dataclass(frozen=True)
class MachineSetSource:
    """A pool whose provider spec is copied from a worker MachineSet at deploy time.

    Attributes:
        pool: the pool's name.
        zone: its availability zone.
        infrastructure_id: the cluster's infrastructure ID.
        explicit: ``aws.sourceMachineSet``, or None.
        aws: the pool's AWS settings (what wins over the copy).
        path: the pool's config key path.
    """

    pool: str
    zone: str
    infrastructure_id: str
    explicit: str | None
    aws: AwsMachine
    path: str


def machine_set_sources(target: OpenShiftTarget, base: str = BASE) -> list[MachineSetSource | None]:
    """Per GPU pool, in config order: what its deploy-time ``machineset-source`` lookup copies, or None (template
    pools and AWS pools that give every field)."""
    out: list[MachineSetSource | None] = []
    for i, pool in enumerate(target.gpu_pools):
        aws = pool.aws
        if aws is None or not aws.copies_worker() or target.infrastructure_id is None:
            out.append(None)
            continue
        out.append(
            MachineSetSource(
                pool.name,
                aws.zone,
                target.infrastructure_id,
                aws.source_machine_set,
                aws,
                f"{base}.gpuPools[{i}].aws",
            )
        )
    return out


def _taint(taint: NodeTaint) -> Object:
    out: Object = {"key": taint.key, "effect": taint.effect}
    if taint.value is not None:
        out["value"] = taint.value
    return out


def machine_autoscaler(machine_set_obj: Object, pool: OpenShiftGpuPool) -> Object:
    """The pool's MachineAutoscaler (same name as its MachineSet)."""
    name = machine_set_obj["metadata"]["name"]
    return {
        "apiVersion": "autoscaling.openshift.io/v1beta1",
        "kind": "MachineAutoscaler",
        "metadata": {"name": name, "namespace": MACHINE_API_NAMESPACE, "labels": dict(MANAGED_BY)},
        "spec": {
            "minReplicas": pool.min_replicas,
            "maxReplicas": pool.max_replicas,
            "scaleTargetRef": {"apiVersion": MACHINE_API_VERSION, "kind": "MachineSet", "name": name},
        },
    }


@dataclass(frozen=True)
class PoolTotals:
    """Every GPU pool at its maximum: nodes, GPUs per type, and cores/memory (None when any pool's is unknown)."""

    nodes: int
    gpus: dict[str, int]
    cores: int | None
    memory_gib: int | None


def pool_totals(target: OpenShiftTarget) -> PoolTotals:
    """Sum of every GPU pool at ``maxReplicas``."""
    gpus: dict[str, int] = {}
    cores: int | None = 0
    memory: int | None = 0
    nodes = 0
    for pool in target.gpu_pools:
        shape = pool_shape(pool)
        nodes += pool.max_replicas
        if shape.accelerator is not None:
            kind = shape.accelerator.type
            gpus[kind] = gpus.get(kind, 0) + pool.max_replicas * shape.accelerator.count
        cores = None if cores is None or shape.vcpus is None else cores + pool.max_replicas * shape.vcpus
        memory = (
            None
            if memory is None or shape.memory_gib is None
            else memory + pool.max_replicas * shape.memory_gib
        )
    return PoolTotals(nodes, gpus, cores, memory)


def cluster_autoscaler(target: OpenShiftTarget) -> Object | None:
    """The ``ClusterAutoscaler`` ``default``, or None (no GPU pools, or ``clusterAutoscaler.create: false``).

    ``resourceLimits.gpus``: one entry per GPU type, ``min 0``, ``max`` Σ maxReplicas × GPUs per machine.
    ``maxNodesTotal``, ``cores`` and ``memory`` (GiB): as configured, else baseline + pools when a
    baseline is given, else omitted (unlimited).
    """
    settings = target.cluster_autoscaler
    if not target.gpu_pools or not settings.create:
        return None
    totals = pool_totals(target)
    limits: Object = {}
    base = settings.baseline
    max_nodes = settings.max_nodes_total
    if max_nodes is None and base is not None:
        max_nodes = base.nodes + totals.nodes
    if max_nodes is not None:
        limits["maxNodesTotal"] = max_nodes
    for key, explicit, base_value, pools_value in (
        ("cores", settings.cores, base.cores if base else None, totals.cores),
        ("memory", settings.memory_gib, base.memory_gib if base else None, totals.memory_gib),
    ):
        if explicit is not None:
            limits[key] = {"min": explicit.min, "max": explicit.max}
        elif base_value is not None and pools_value is not None:
            limits[key] = {"min": 0, "max": base_value + pools_value}
    limits["gpus"] = [{"type": kind, "min": 0, "max": count} for kind, count in sorted(totals.gpus.items())]
    spec: Object = {"resourceLimits": limits}
    scale_down: Object = {"enabled": settings.scale_down.enabled}
    for key, value in (
        ("delayAfterAdd", settings.scale_down.delay_after_add),
        ("delayAfterDelete", settings.scale_down.delay_after_delete),
        ("delayAfterFailure", settings.scale_down.delay_after_failure),
        ("unneededTime", settings.scale_down.unneeded_time),
    ):
        if value is not None:
            scale_down[key] = value
    spec["scaleDown"] = scale_down
    for key, opt in (
        ("podPriorityThreshold", settings.pod_priority_threshold),
        ("balanceSimilarNodeGroups", settings.balance_similar_node_groups),
        ("maxNodeProvisionTime", settings.max_node_provision_time),
    ):
        if opt is not None:
            spec[key] = opt
    return {
        "apiVersion": "autoscaling.openshift.io/v1",
        "kind": "ClusterAutoscaler",
        "metadata": {"name": "default", "labels": dict(MANAGED_BY)},
        "spec": spec,
    }


@dataclass(frozen=True)
class GpuCapacityPlan:
    """What :class:`batchplane.targets.openshift.gpu_capacity.OpenShiftGpuCapacity` declares.

    Attributes:
        pools: pool names, in config order (resource names derive from them).
        machine_sets: one MachineSet per pool, same order.
        machine_autoscalers: one MachineAutoscaler per pool, same order.
        cluster_autoscaler: the ClusterAutoscaler ``default``, or None.
    """

    pools: list[str]
    machine_sets: list[Object]
    machine_autoscalers: list[Object]
    cluster_autoscaler: Object | None
    sources: list[MachineSetSource | None] = field(default_factory=list)


def gpu_capacity_plan(target: OpenShiftTarget, base_dir: Path | None = None) -> GpuCapacityPlan:
    """Every object of the target's GPU pools; template paths resolve against ``base_dir`` (default: cwd,
    the Pulumi project directory when the program runs).

    Raises:
        ValueError: a pool's template or infrastructure ID is unusable (validation reports it first).
    """
    where = base_dir or Path.cwd()
    sets = [machine_set(target, pool, where) for pool in target.gpu_pools]
    autoscalers = [machine_autoscaler(ms, pool) for ms, pool in zip(sets, target.gpu_pools, strict=True)]
    return GpuCapacityPlan(
        [p.name for p in target.gpu_pools],
        sets,
        autoscalers,
        cluster_autoscaler(target),
        machine_set_sources(target),
    )


# --- backed pools ------------------------------------------------------------------------------


def provisioning_spec(pool: OpenShiftGpuPool) -> ProvisioningSpec | None:
    """The ProvisioningRequestConfig the pool's flavor is gated by; None for ``provisioning: none``."""
    if pool.provisioning == "none":
        return None
    settings = pool.provisioning_request or PoolProvisioningRequest()
    return ProvisioningSpec(
        class_name=ATOMIC_SCALE_UP_CLASS if pool.provisioning == "atomic" else CHECK_CAPACITY_CLASS,
        managed_resources=tuple(settings.managed_resources),
        parameters=dict(settings.parameters),
        retry_strategy=settings.retry_strategy or KUEUE_RETRY_DEFAULTS,
        pod_set_merge_policy=settings.pod_set_merge_policy,
        check_suffix="provisioning",
        accepted_classes=(ATOMIC_SCALE_UP_CLASS, CHECK_CAPACITY_CLASS),
        one_pod_set=False,
    )


def per_node(pool: OpenShiftGpuPool) -> dict[str, Decimal]:
    """GPUs, vCPUs (cores) and memory (bytes) per machine, each only when known."""
    shape = pool_shape(pool)
    out: dict[str, Decimal] = {}
    if shape.accelerator is not None:
        out[GPU_RESOURCE] = Decimal(shape.accelerator.count)
    if shape.vcpus is not None:
        out["cpu"] = Decimal(shape.vcpus)
    if shape.memory_gib is not None:
        out["memory"] = Decimal(shape.memory_gib) * GIB
    return out


def openshift_backed_pools(target: OpenShiftTarget, base: str = BASE) -> list[BackedPool]:
    """One :class:`BackedPool` per GPU pool of the target, in config order."""
    out: list[BackedPool] = []
    for i, pool in enumerate(target.gpu_pools):
        path = KeyPath(f"{base}.gpuPools[{i}]")
        out.append(
            BackedPool(
                name=pool.name,
                kind="OpenShift GPU MachineSet",
                path=path,
                flavor_name=pool.resolved_flavor_name(),
                selector=(POOL_LABEL, pool.name),
                labels=node_labels(pool),
                taints=node_taints(pool),
                max_nodes=pool.max_replicas,
                max_nodes_note=f"{pool.max_replicas} machines",
                max_nodes_path=path.key("maxReplicas"),
                per_node=per_node(pool),
                allocatable=openshift_allocatable(per_node(pool)),
                provisioning=provisioning_spec(pool),
                size_key="maxReplicas",
                min_nodes=pool.min_replicas,
                machine=pool.aws.instance_type if pool.aws is not None else "",
            )
        )
    return out


# --- rules -------------------------------------------------------------------------------------


def check_gpu_capacity(
    target: OpenShiftTarget, base_dir: Path | None = None, base: str = BASE
) -> list[ConfigIssue]:
    """Every OpenShift GPU-capacity rule; all issues at once, with key paths.

    Pools: exactly one source (``aws`` or ``template``), a readable template, an infrastructure ID, a
    known instance type or a stated accelerator that matches it, the zone in the region, min ≤ max,
    min 0 for ``atomic`` pools, no labels/taints that clash with Batchplane's, unique names. Cluster:
    the ProvisioningRequest prerequisites (OpenShift ≥ 4.21, feature set), ClusterAutoscaler limits that
    cover every pool at its maximum, and the GPU Operator.

    Returns:
        Errors and warnings (severity ``warning`` for what cannot be checked at plan time).
    """
    out: list[ConfigIssue] = []
    where = base_dir or Path.cwd()

    def error(path: str, message: str) -> None:
        out.append(ConfigIssue(f"{base}{path}", message))

    def warn(path: str, message: str) -> None:
        out.append(ConfigIssue(f"{base}{path}", message, "warning"))

    names: dict[str, str] = {}
    set_names: dict[str, str] = {}
    for i, pool in enumerate(target.gpu_pools):
        p = f".gpuPools[{i}]"
        if pool.name in names:
            error(f"{p}.name", f'duplicate GPU pool name "{pool.name}" (first defined at {names[pool.name]})')
        names.setdefault(pool.name, f"{base}{p}")
        infra = _check_source(target, pool, p, where, error)
        ms_name = machine_set_name(infra, pool)
        key = f"{p}.machineSetName" if pool.machine_set_name else f"{p}.name"
        if len(ms_name) > 63:
            error(
                key,
                f'MachineSet name "{ms_name}" is {len(ms_name)} characters; at most 63 (it is a label value)',
            )
        if ms_name in set_names:
            error(key, f'MachineSet name "{ms_name}" is also used by {set_names[ms_name]}')
        set_names.setdefault(ms_name, f"{base}{p}")
        _check_shape(pool, p, error)
        _check_size(pool, p, error, warn)
        _check_labels(pool, p, error)
    if target.gpu_pools:
        _check_prerequisites(target, error, warn)
        _check_cluster_autoscaler(target, error, warn)
    return out


def _check_source(
    target: OpenShiftTarget, pool: OpenShiftGpuPool, p: str, base_dir: Path, error: _Error
) -> str | None:
    if (pool.aws is None) == (pool.template is None):
        error(
            p,
            "give exactly one of aws (a MachineSet derived from instance type, AMI and zone) or template "
            "(a MachineSet file or an inline providerSpec)",
        )
        return target.infrastructure_id
    if pool.aws is not None:
        if target.infrastructure_id is None:
            error(
                ".infrastructureId",
                f'required for gpuPools[{target.gpu_pools.index(pool)}] "{pool.name}": AWS MachineSets are '
                "named and filtered after the cluster's infrastructure ID "
                "(oc get infrastructure cluster -o jsonpath='{.status.infrastructureName}')",
            )
        if not pool.aws.zone.startswith(pool.aws.region):
            error(f"{p}.aws.zone", f'"{pool.aws.zone}" is not a zone of region {pool.aws.region}')
        return target.infrastructure_id
    assert pool.template is not None
    template = pool.template
    if (template.path is None) == (template.provider_spec is None):
        error(f"{p}.template", "give exactly one of path (a MachineSet YAML file) or providerSpec (inline)")
        return target.infrastructure_id
    source = load_template(template, base_dir)
    if source.problem is not None:
        error(f"{p}.template.path", source.problem)
    if (
        target.infrastructure_id
        and source.infrastructure_id
        and source.infrastructure_id != target.infrastructure_id
    ):
        error(
            f"{p}.template.path",
            f"the MachineSet is labelled {CLUSTER_LABEL}: {source.infrastructure_id}, but "
            f"target.infrastructureId is {target.infrastructure_id}",
        )
    infra = target.infrastructure_id or source.infrastructure_id
    if infra is None and source.problem is None:
        error(
            f"{p}.template",
            f"no infrastructure ID: set target.infrastructureId, or use a MachineSet file labelled {CLUSTER_LABEL}",
        )
    return infra


def _check_shape(pool: OpenShiftGpuPool, p: str, error: _Error) -> None:
    if pool.aws is None:
        if pool.template is not None and pool.accelerator is None:
            error(f"{p}.accelerator", "required for template pools: the GPU type label and GPUs per machine")
        return
    instance = pool.aws.instance_type
    known = INSTANCE_SHAPES.get(instance)
    family = instance.split(".", 1)[0]
    if known is None and instance.startswith(GPU_INSTANCE_PREFIXES):
        sizes = ", ".join(sorted(t for t in INSTANCE_SHAPES if t.startswith(family + ".")))
        error(f"{p}.aws.instanceType", f'"{instance}" is not a known {family} instance type (known: {sizes})')
        return
    if known is None:
        if pool.accelerator is None:
            error(
                f"{p}.accelerator",
                f"required for instance type {instance}: Batchplane knows the GPUs of "
                f"{', '.join(f.rstrip('.') for f in GPU_INSTANCE_PREFIXES)} instance types only",
            )
        return
    if pool.accelerator is None:
        return
    comes_with = f"does not match instance type {instance}, which comes with {known.gpus} × {known.gpu}"
    if pool.accelerator.type != known.accelerator_label:
        error(f"{p}.accelerator.type", f'"{pool.accelerator.type}" {comes_with} ({known.accelerator_label})')
    if pool.accelerator.count != known.gpus:
        error(f"{p}.accelerator.count", f"{pool.accelerator.count} {comes_with}")


def _check_size(pool: OpenShiftGpuPool, p: str, error: _Error, warn: _Error) -> None:
    if pool.min_replicas > pool.max_replicas:
        error(
            f"{p}.minReplicas",
            f"{pool.min_replicas} must be less than or equal to maxReplicas ({pool.max_replicas})",
        )
    elif pool.provisioning == "atomic" and pool.min_replicas:
        error(
            f"{p}.minReplicas",
            "must be 0 for provisioning: atomic: a gang pool scales from zero, machines exist only for "
            "admitted ProvisioningRequests",
        )
    if pool.provisioning == "check-capacity" and pool.min_replicas == 0:
        warn(
            f"{p}.minReplicas",
            "0 with provisioning: check-capacity: the check never adds machines, so it passes only while "
            "other pods keep machines of this pool up; use provisioning: atomic or raise minReplicas",
        )
    if pool.provisioning == "none" and pool.provisioning_request is not None:
        error(
            f"{p}.provisioningRequest",
            "only pools with provisioning atomic or check-capacity create ProvisioningRequests",
        )


def _check_labels(pool: OpenShiftGpuPool, p: str, error: _Error) -> None:
    for key in pool.labels:
        if key in RESERVED_LABELS:
            error(f"{p}.labels.{key}", "is set by Batchplane on every GPU pool node; remove it")
    for j, taint in enumerate(pool.taints):
        if taint.key == GPU_RESOURCE:
            error(
                f"{p}.taints[{j}]",
                f"{GPU_TAINT.key} is the taint every GPU pool gets ({GPU_TAINT}); remove this one",
            )


def _check_prerequisites(target: OpenShiftTarget, error: _Error, warn: _Error) -> None:
    gated = [p for p in target.gpu_pools if p.provisioning != "none"]
    if gated:
        where = f'gpuPools[{target.gpu_pools.index(gated[0])}] "{gated[0].name}"'
        why = f"the first OpenShift release with ProvisioningRequest support in its Cluster Autoscaler ({where})"
        if target.openshift_version is None:
            warn(
                ".openshiftVersion",
                f"not set: the cluster must run OpenShift {PROVISIONING_MIN_OPENSHIFT} or later, {why}; "
                "set openshiftVersion to check it at plan time",
            )
        else:
            have = parse_openshift_version(target.openshift_version)
            need = parse_openshift_version(PROVISIONING_MIN_OPENSHIFT)
            if have is not None and need is not None and have < need:
                error(
                    ".openshiftVersion",
                    f'"{target.openshift_version}" is below {PROVISIONING_MIN_OPENSHIFT}, {why}',
                )
        allowed = " or ".join(PROVISIONING_FEATURE_SETS)
        gate = f"ProvisioningRequests need the {PROVISIONING_FEATURE_GATE} feature gate ({where})"
        if target.feature_set is None:
            warn(
                ".featureSet",
                f"not set: {gate}, enabled by the cluster's FeatureGate featureSet {allowed}; set featureSet "
                "to check it at plan time",
            )
        elif target.feature_set == "CustomNoUpgrade":
            error(
                ".featureSet",
                f"CustomNoUpgrade: {gate}, and even with {PROVISIONING_FEATURE_GATE} listed in "
                "customNoUpgrade.enabled the cluster-version operator never creates the ProvisioningRequest CRD, "
                f"which is annotated release.openshift.io/feature-set: {PROVISIONING_CRD_FEATURE_SET}; use featureSet "
                f"{PROVISIONING_CRD_FEATURE_SET} or provisioning: none",
            )
        elif target.feature_set not in PROVISIONING_FEATURE_SETS:
            read = parse_openshift_version(PROVISIONING_FEATURE_SETS_READ_THROUGH)
            have = (
                None
                if target.openshift_version is None
                else parse_openshift_version(target.openshift_version)
            )
            if have is not None and read is not None and have[:2] <= read[:2]:
                error(
                    ".featureSet",
                    f"{target.feature_set} does not enable {PROVISIONING_FEATURE_GATE}: {gate}, which OpenShift "
                    f"{target.openshift_version} enables in {allowed} only; or use "
                    "provisioning: none",
                )
            else:
                release = (
                    "an unset openshiftVersion" if have is None else f"OpenShift {target.openshift_version}"
                )
                warn(
                    ".featureSet",
                    f"{target.feature_set} does not enable {PROVISIONING_FEATURE_GATE} in any OpenShift release "
                    f"through {PROVISIONING_FEATURE_SETS_READ_THROUGH} ({gate}; {allowed} do); not known for "
                    f"{release}: pulumi up's feature-gate gate and preflight read the cluster's FeatureGate",
                )
    if not target.gpu_operator.install:
        warn(
            ".gpuOperator.install",
            "false: GPU pool nodes advertise nvidia.com/gpu only once Node Feature Discovery and the NVIDIA "
            "GPU Operator run; install them yourself or set install: true",
        )


def _check_cluster_autoscaler(target: OpenShiftTarget, error: _Error, warn: _Error) -> None:
    settings = target.cluster_autoscaler
    totals = pool_totals(target)
    p = ".clusterAutoscaler"
    gpus = ", ".join(f"{kind} max ≥ {count}" for kind, count in sorted(totals.gpus.items()))
    if not settings.create:
        warn(
            f"{p}.create",
            f"false: the cluster's ClusterAutoscaler default must list resourceLimits.gpus {gpus}, "
            "or the autoscaler stops adding GPU machines below the pools' maxima",
        )
        return
    if settings.max_nodes_total is not None and settings.max_nodes_total < totals.nodes:
        error(
            f"{p}.maxNodesTotal",
            f"{settings.max_nodes_total} is below the {totals.nodes} machines of the GPU pools at their "
            "maxima (and the cluster's other nodes count too)",
        )
    for key, unit, explicit, need in (
        ("cores", "cores", settings.cores, totals.cores),
        ("memoryGiB", "GiB", settings.memory_gib, totals.memory_gib),
    ):
        if explicit is None:
            continue
        if explicit.min > explicit.max:
            error(f"{p}.{key}.min", f"{explicit.min} must be less than or equal to max ({explicit.max})")
        elif need is not None and explicit.max < need:
            error(
                f"{p}.{key}.max",
                f"{explicit.max} is below the {need} {unit} of the GPU pools at their maxima "
                "(and the cluster's other nodes count too)",
            )
    base = settings.baseline
    if base is not None:
        unknown = [
            f'gpuPools[{i}] "{pool.name}"'
            for i, pool in enumerate(target.gpu_pools)
            if _well_formed(pool) and (pool_shape(pool).vcpus is None or pool_shape(pool).memory_gib is None)
        ]
        if unknown and (settings.cores is None or settings.memory_gib is None):
            error(
                f"{p}.baseline",
                f"cannot derive the cores/memory limits: vcpus and memoryGiB of {', '.join(unknown)} are "
                "unknown; set them on the pools, or give cores and memoryGiB",
            )


def _well_formed(pool: OpenShiftGpuPool) -> bool:
    """Whether the pool's source is valid enough for its shape to matter (otherwise already reported)."""
    if (pool.aws is None) == (pool.template is None):
        return False
    if pool.aws is not None:
        instance = pool.aws.instance_type
        if instance not in INSTANCE_SHAPES:
            return pool.accelerator is not None and not instance.startswith(GPU_INSTANCE_PREFIXES)
        return True
    assert pool.template is not None
    one_source = (pool.template.path is None) != (pool.template.provider_spec is None)
    return one_source and pool.accelerator is not None


def check_gang_sizes(k: ExpandedKueue, target: OpenShiftTarget, base: str = BASE) -> list[ConfigIssue]:
    """ClusterQueues that admit a gang larger than a ProvisioningRequest-gated pool can ever provide.

    The largest gang a ClusterQueue admits on a pool's flavor is its GPU ``nominalQuota`` plus its
    ``borrowingLimit``; it needs ceil(GPUs / GPUs per machine) machines, which must not exceed the pool's
    ``maxReplicas`` (an atomic ProvisioningRequest for it would fail and retry forever). Reported at the
    quota's key path.
    """
    mapping = flavor_pools(k, openshift_backed_pools(target, base))
    out: list[ConfigIssue] = []
    for loc in k.cluster_queues:
        for gi, group in enumerate(loc.obj.resource_groups):
            for fi, fq in enumerate(group.flavors):
                pool = mapping.get(fq.name)
                if pool is None or pool.provisioning is None or GPU_RESOURCE not in pool.per_node:
                    continue
                for ri, rq in enumerate(fq.resources):
                    if rq.name != GPU_RESOURCE:
                        continue
                    issue = _gang_issue(loc.obj.name, fq.name, pool, rq.nominal_quota, rq.borrowing_limit)
                    if issue is not None:
                        path = loc.path.key("resourceGroups").index(gi).key("flavors").index(fi)
                        path = path.key("resources").index(ri).key("nominalQuota")
                        out.append(ConfigIssue(str(path), issue))
    return out


def _gang_issue(queue: str, flavor: str, pool: BackedPool, nominal: str, borrowing: str | None) -> str | None:
    assert pool.max_nodes is not None
    try:
        gang = parse_quantity(nominal) + (parse_quantity(borrowing) if borrowing is not None else Decimal(0))
    except QuantityError:  # reported by the Kueue rules
        return None
    per_machine = pool.per_node[GPU_RESOURCE]
    machines = math.ceil(gang / per_machine)
    if machines <= pool.max_nodes:
        return None
    size = format_quantity(gang, GPU_RESOURCE)
    what = "nominalQuota" if borrowing is None else "nominalQuota + borrowingLimit"
    return (
        f'ClusterQueue "{queue}" admits gangs of up to {size} {GPU_RESOURCE} on flavor "{flavor}" ({what}), '
        f"which need {machines} machines of {pool.describe()} at {format_quantity(per_machine)} GPU(s) each, "
        f"but its maxReplicas is {pool.max_nodes}: the ProvisioningRequest for such a gang can never be satisfied"
    )

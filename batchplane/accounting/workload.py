"""Turn one job object into the resource requests of the Kueue Workload it becomes.

This is the entry point of the accounting package: :func:`workload_requests` picks the PodSet
extractor the object's job framework registers (:mod:`batchplane.frameworks`; Kueue's own Workload kind in
:mod:`batchplane.accounting.podsets`), then computes each PodSet's
per-pod requests (:mod:`batchplane.accounting.pod_requests`) against the LimitRanges,
RuntimeClasses and ``Configuration.resources`` given.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from batchplane.accounting.model import (
    AccountingError,
    FieldError,
    PodSetRequests,
    ResourceOptions,
    WorkloadRequests,
)
from batchplane.accounting.pod_requests import (
    PodContext,
    limit_range_defaults,
    runtime_class_overheads,
    stored_pod_requests,
)
from batchplane.accounting.podsets import MAX_POD_SETS, RawPodSet, TrainingRuntimes, workload_pod_sets
from batchplane.frameworks import BY_KIND, FRAMEWORKS
from batchplane.frameworks.framework import ObjectPodSets, RuntimePodSets
from batchplane.wellknown import PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL

#: Label that selects the LocalQueue (``pkg/controller/constants/constants.go:23``).
#: Label that selects a WorkloadPriorityClass.
#: Namespace assumed for objects whose manifest leaves ``metadata.namespace`` out (as kubectl does).
DEFAULT_NAMESPACE = "default"

#: (apiVersion, kind) → PodSet extractor, for objects that need nothing but themselves: each job framework's own
#: (:attr:`~batchplane.frameworks.framework.JobFramework.pod_sets`), then Kueue's Workload (both served versions).
SIMPLE_EXTRACTORS: dict[tuple[str, str], ObjectPodSets] = {
    **{f.gvk: f.pod_sets for f in FRAMEWORKS if f.pod_sets is not None},
    ("kueue.x-k8s.io/v1beta2", "Workload"): workload_pod_sets,
    ("kueue.x-k8s.io/v1beta1", "Workload"): workload_pod_sets,
}
#: (apiVersion, kind) → the extractor that also needs the referenced training runtime (TrainJob).
RUNTIME_EXTRACTORS: dict[tuple[str, str], RuntimePodSets] = {
    f.gvk: f.runtime_pod_sets for f in FRAMEWORKS if f.runtime_pod_sets is not None
}
_SUPPORTED = frozenset((*SIMPLE_EXTRACTORS, *RUNTIME_EXTRACTORS))

#: (API group, kind) of objects that are never Kueue workloads; manifests that bundle them with a
#: job (ConfigMaps with code, queues, runtimes ...) have them skipped, not reported as errors.
NON_WORKLOAD_KINDS: frozenset[tuple[str, str]] = frozenset(
    [("", k) for k in (
        "ConfigMap", "Secret", "Service", "ServiceAccount", "Namespace", "LimitRange", "ResourceQuota",
        "PersistentVolumeClaim", "PersistentVolume", "Endpoints", "Event",
    )]
    + [("rbac.authorization.k8s.io", k) for k in ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")]
    + [("node.k8s.io", "RuntimeClass"), ("scheduling.k8s.io", "PriorityClass"),
       ("storage.k8s.io", "StorageClass"), ("networking.k8s.io", "NetworkPolicy"),
       ("networking.k8s.io", "Ingress"), ("policy", "PodDisruptionBudget"),
       ("apiextensions.k8s.io", "CustomResourceDefinition"),
       ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
       ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration")]
    + [("kueue.x-k8s.io", k) for k in (
        "ClusterQueue", "LocalQueue", "ResourceFlavor", "WorkloadPriorityClass", "AdmissionCheck", "Cohort",
        "Topology", "ProvisioningRequestConfig", "MultiKueueCluster", "MultiKueueConfig",
    )]
    + [("trainer.kubeflow.org", k) for k in ("TrainingRuntime", "ClusterTrainingRuntime")]
    + [("cert-manager.io", k) for k in ("Certificate", "Issuer", "ClusterIssuer")]
)  # fmt: skip


def supported_kinds() -> frozenset[tuple[str, str]]:
    """The ``(apiVersion, kind)`` pairs :func:`workload_requests` accounts, e.g. ``("ray.io/v1", "RayJob")``.

    Every framework of :mod:`batchplane.frameworks` that registers a PodSet extraction (``pod_sets`` or
    ``runtime_pod_sets``), at the version it is registered with, and kueue.x-k8s.io v1beta1/v1beta2 Workload.
    """
    return _SUPPORTED


def is_workload(obj: Mapping[str, Any]) -> bool:
    """True when ``obj``'s ``(apiVersion, kind)`` is one of :func:`supported_kinds`."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    return isinstance(api_version, str) and isinstance(kind, str) and (api_version, kind) in _SUPPORTED


def is_known_non_workload(obj: Mapping[str, Any]) -> bool:
    """True when ``obj`` is a kind Kueue never manages (ConfigMap, Secret, LocalQueue ...; any version)."""
    api_version = obj.get("apiVersion")
    group = api_version.rpartition("/")[0] if isinstance(api_version, str) else None
    return (group, obj.get("kind")) in NON_WORKLOAD_KINDS


def workload_requests(
    obj: Mapping[str, Any],
    *,
    limit_ranges: Sequence[Mapping[str, Any]] = (),
    runtime_classes: Sequence[Mapping[str, Any]] = (),
    options: ResourceOptions = ResourceOptions(),  # noqa: B008 - frozen dataclass, immutable default
    training_runtimes: Sequence[Mapping[str, Any]] = (),
    pod_context: PodContext | None = None,
) -> WorkloadRequests:
    """Compute the Kueue Workload and its requests for one job object, exactly as Kueue v0.19.2 does.

    Args:
        obj: the job object as a mapping (a parsed manifest or an AdmissionReview object); one of
            :func:`supported_kinds`.
        limit_ranges: ``v1 LimitRange`` objects; those in the object's namespace (``default`` when
            either leaves the namespace out) supply container/pod defaults. Defaults to none.
        runtime_classes: ``node.k8s.io/v1 RuntimeClass`` objects supplying pod overhead. Defaults to none.
        options: Kueue ``Configuration.resources`` exclusions and transformations. Defaults to none.
        training_runtimes: ``trainer.kubeflow.org/v1alpha1`` (Cluster)TrainingRuntime objects, needed to
            account a TrainJob. Defaults to none.
        pod_context: a :class:`~batchplane.accounting.pod_requests.PodContext` built once by a caller that accounts
            many objects with the same options and no LimitRanges or RuntimeClasses (the webhook); when given,
            ``limit_ranges``, ``runtime_classes`` and ``options`` are not read. Defaults to building one.

    Returns:
        The Workload's PodSets with per-pod requests (base units: CPU cores, memory bytes, device counts).

    Raises:
        AccountingError: the kind is not supported, or a field needed for accounting is missing or
            malformed (the message names the object and the field); also for a malformed LimitRange,
            RuntimeClass or TrainingRuntime (naming that object).
    """
    if not isinstance(obj, (dict, Mapping)):
        raise AccountingError("", "<unnamed>", "", "is not a Kubernetes object (expected a mapping)")
    kind = str(obj.get("kind") or "")
    api_version = obj.get("apiVersion")
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), (dict, Mapping)) else {}
    assert isinstance(meta, (dict, Mapping))
    name = str(meta.get("name") or meta.get("generateName") or "<unnamed>")
    raw_namespace = meta.get("namespace")
    namespace = str(raw_namespace) if raw_namespace else None
    key = (api_version, kind)
    if not isinstance(api_version, str) or key not in _SUPPORTED:
        supported = ", ".join(f"{v} {k}" for v, k in sorted(_SUPPORTED))
        raise AccountingError(
            kind, name, "", f"unsupported kind {api_version} {kind} (supported: {supported})"
        )

    effective_ns = namespace or DEFAULT_NAMESPACE
    if pod_context is not None:
        context = pod_context
    elif not limit_ranges and not runtime_classes:
        try:  # the webhook's case: nothing namespace-specific to summarise, one shared context per options
            context = _plain_context(options)
        except TypeError:  # options with transformations hold dicts: unhashable, build one
            context = PodContext(options=options)
    else:
        context = PodContext(
            limit_range_defaults=limit_range_defaults(
                [
                    lr
                    for lr in limit_ranges
                    if _namespace_of(lr) == effective_ns and lr.get("kind") == "LimitRange"
                ]
            ),
            runtime_class_overheads=runtime_class_overheads(runtime_classes),
            options=options,
        )
    # Decimal arithmetic (the Decimal path of the per-pod requests, the Ray head's raised requests, AppWrapper
    # rounding) enters ACCOUNTING_CONTEXT where it happens; the integer path needs none.
    try:
        runtime_extractor = RUNTIME_EXTRACTORS.get(key)
        if runtime_extractor is not None:
            # A TrainJob of a manifest may carry the runtimes known beside it (accounting.pod_groups.WithRuntimes).
            known = training_runtimes or getattr(obj, "training_runtimes", ())
            raw = runtime_extractor(obj, _index_runtimes(known), effective_ns)
        else:
            raw = SIMPLE_EXTRACTORS[(str(api_version), kind)](obj)
        _check_pod_sets(raw)
        pod_sets = tuple(
            PodSetRequests(
                name=ps.name,
                count=ps.count,
                min_count=ps.min_count,
                stored=stored_pod_requests(ps.template, ps.path, context),
                template=ps.template,
            )
            for ps in raw
        )
    except FieldError as exc:
        raise AccountingError(kind, name, exc.field, exc.reason) from exc
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as malformed:
        # A field of an unexpected type deep inside the object (e.g. a pod template `spec` that is
        # a string): the API server would reject such an object; report it instead of crashing. (Its own
        # name: compiled by mypyc, one `as` name takes the type of its first except clause.)
        reason = f"malformed object ({type(malformed).__name__}: {malformed})"
        raise AccountingError(kind, name, "", reason) from malformed

    labels = meta.get("labels") if isinstance(meta.get("labels"), (dict, Mapping)) else {}
    assert isinstance(labels, (dict, Mapping))
    spec = obj.get("spec") if isinstance(obj.get("spec"), (dict, Mapping)) else {}
    assert isinstance(spec, (dict, Mapping))
    if kind == "Workload":
        queue_name = spec.get("queueName")
        ref = spec.get("priorityClassRef")
        priority = (ref.get("name") if isinstance(ref, (dict, Mapping)) else None) or spec.get(
            "priorityClassName"
        )
    else:
        queue_name = labels.get(QUEUE_NAME_LABEL)
        priority = labels.get(PRIORITY_CLASS_LABEL) or _job_priority_class(obj, kind, pod_sets)
    return WorkloadRequests(
        kind=kind,
        name=name,
        namespace=namespace,
        queue_name=str(queue_name) if queue_name else None,
        priority_class=str(priority) if priority else None,
        pod_sets=pod_sets,
    )


@functools.lru_cache(maxsize=16)
def _plain_context(options: ResourceOptions) -> PodContext:
    """The PodContext without LimitRanges or RuntimeClasses (read-only, so one per ``options`` is shared)."""
    return PodContext(options=options)


def _check_pod_sets(pod_sets: Sequence[RawPodSet]) -> None:
    if len(pod_sets) > MAX_POD_SETS:
        raise FieldError(
            "spec", f"yields {len(pod_sets)} pod sets; a Kueue Workload holds at most {MAX_POD_SETS}"
        )
    seen: set[str] = set()
    for pod_set in pod_sets:
        if pod_set.name in seen:
            raise FieldError(pod_set.path, f'pod set name "{pod_set.name}" is used twice')
        seen.add(pod_set.name)


def _job_priority_class(obj: Mapping[str, Any], kind: str, pod_sets: Sequence[PodSetRequests]) -> str | None:
    """The pod priority class Kueue's ``ExtractPriority`` uses when no WorkloadPriorityClass label is set: where the
    job's framework names one (:attr:`~batchplane.frameworks.framework.JobFramework.priority_class`), else the first
    pod template's ``priorityClassName``."""
    framework = BY_KIND.get(kind)
    if framework is not None and framework.priority_class is not None:
        named = framework.priority_class(obj)
        if named:
            return named
    for pod_set in pod_sets:
        pod_spec = pod_set.template.get("spec")
        if isinstance(pod_spec, (dict, Mapping)) and pod_spec.get("priorityClassName"):
            return str(pod_spec["priorityClassName"])
    return None


def _namespace_of(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    namespace = meta.get("namespace") if isinstance(meta, (dict, Mapping)) else None
    return str(namespace) if namespace else DEFAULT_NAMESPACE


def _index_runtimes(runtimes: Sequence[Mapping[str, Any]]) -> TrainingRuntimes:
    cluster: dict[str, Mapping[str, Any]] = {}
    namespaced: dict[tuple[str, str], Mapping[str, Any]] = {}
    for runtime in runtimes:
        meta = runtime.get("metadata")
        name = meta.get("name") if isinstance(meta, (dict, Mapping)) else None
        if not isinstance(name, str) or not name:
            raise AccountingError(str(runtime.get("kind") or ""), "<unnamed>", "metadata.name", "is required")
        if runtime.get("kind") == "ClusterTrainingRuntime":
            cluster[name] = runtime
        elif runtime.get("kind") == "TrainingRuntime":
            namespaced[(_namespace_of(runtime), name)] = runtime
    return TrainingRuntimes(cluster=cluster, namespaced=namespaced)

"""MCAD AppWrapper → ``workload.codeflare.dev/v1beta2`` AppWrapper, queued by Kueue.

The Multi-Cluster App Dispatcher (MCAD, project-codeflare/multi-cluster-app-dispatcher, archived) queued
``AppWrapper``\\ s of two API versions: ``mcad.ibm.com/v1beta1`` (the KubeRay + MCAD "GLUE" walkthrough) and,
from MCAD v1.34, ``workload.codeflare.dev/v1beta1``. Both have the same spec
(``pkg/apis/controller/v1beta1/appwrapper.go`` at v1.40.0): ``priority``, ``priorityslope``, ``service``,
``resources.GenericItems[]`` (``replicas``, ``minavailable``, ``allocated``, ``priority``, ``priorityslope``,
``generictemplate``, ``custompodresources[]``, ``completionstatus``), the pre-v1.34 ``resources.Items[]``, a
``selector`` and ``schedulingSpec`` (``minAvailable``, ``nodeSelector``, ``requeuing``, ``dispatchDuration``,
``clusterScheduling``, ``dispatchingWindow``).

Its successor is project-codeflare/appwrapper (``workload.codeflare.dev/v1beta2``, v1.2.1), queued by Kueue:
``spec.components[]`` each with a ``template`` (the wrapped object) and ``podSets[]`` (``path`` to a pod
template inside it, ``replicas``), and the queue as the label ``kueue.x-k8s.io/queue-name``.

What MCAD reserved and what Kueue accounts differ: MCAD's ``GetAggregatedResources`` sums
``custompodresources`` (replicas × requests, a zero request replaced by the limit; CPU, memory and
``nvidia.com/gpu`` only) when an item has them (``pkg/controller/queuejobresources/genericresource/
genericresource.go:544-598`` at v1.40.0), while Kueue accounts the wrapped pods themselves. :func:`convert`
warns wherever the two disagree.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from batchplane.accounting import AccountingError, workload_requests
from batchplane.accounting.model import FieldError
from batchplane.frameworks.appwrapper import FRAMEWORK as APPWRAPPER
from batchplane.frameworks.appwrapper import appwrapper_inferred_pod_sets
from batchplane.quantity import QuantityError, format_quantity, parse_quantity
from batchplane.wellknown import PRIORITY_CLASS_LABEL
from batchplane.wellknown import QUEUE_NAME_LABEL as QUEUE_LABEL

#: The two API versions of MCAD's AppWrapper.
MCAD_API_VERSIONS = ("mcad.ibm.com/v1beta1", "workload.codeflare.dev/v1beta1")
#: MCAD's kind (its own name, which the v1beta2 AppWrapper kept).
MCAD_KIND = "AppWrapper"
#: The AppWrapper that Kueue queues (project-codeflare/appwrapper v1.2.1): the job-framework registry's.
APPWRAPPER_API_VERSION = APPWRAPPER.api_version
MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
#: The resources MCAD's ``clusterstateapi.Resource`` tracks (``NewResource``): the rest it ignores.
MCAD_RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
#: Metadata a converted object keeps (server-set fields such as ``uid`` or ``resourceVersion`` are dropped).
KEPT_METADATA = ("name", "generateName", "namespace", "labels", "annotations")
DROPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)
#: KubeRay API versions the AppWrapper library does not infer PodSets for; rewritten to ``ray.io/v1``.
OLD_RAY_API_VERSIONS = ("ray.io/v1alpha1",)

_SPEC_KEYS = {"priority", "priorityslope", "service", "resources", "selector", "schedulingSpec"}
_ITEM_KEYS = {
    "replicas", "minavailable", "allocated", "priority", "priorityslope", "generictemplate",
    "custompodresources", "completionstatus",
}  # fmt: skip
_SCHEDULING_KEYS = {
    "minAvailable", "nodeSelector", "requeuing", "dispatchDuration", "clusterScheduling", "dispatchingWindow",
}  # fmt: skip


class ConversionError(Exception):
    """The MCAD AppWrapper has fields that have no v1beta2 / Kueue equivalent.

    Attributes:
        problems: one ``"<field path>: <why>"`` line per field, every one found.
    """

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class Conversion:
    """The result of :func:`convert`.

    Attributes:
        appwrapper: the ``workload.codeflare.dev/v1beta2`` AppWrapper.
        warnings: what changed meaning or was dropped, and where ``custompodresources`` disagree with the
            wrapped pods (each names the field).
    """

    appwrapper: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def is_mcad_appwrapper(obj: object) -> bool:
    """Whether ``obj`` is an MCAD AppWrapper (either API version)."""
    return (
        isinstance(obj, Mapping)
        and obj.get("kind") == MCAD_KIND
        and obj.get("apiVersion") in MCAD_API_VERSIONS
    )


def convert(
    obj: Mapping[str, Any], *, queue_name: str | None = None, priority_class: str | None = None
) -> Conversion:
    """Convert an MCAD AppWrapper into a ``workload.codeflare.dev/v1beta2`` AppWrapper.

    Each ``GenericItems[i].generictemplate`` becomes ``components[i].template`` with explicit ``podSets``
    (those the AppWrapper library infers — ``InferPodSets``, appwrapper v1.2.1 ``pkg/utils/utils.go`` — or,
    for another kind with a pod template at ``spec.template``, that template with ``spec.replicas`` pods, as
    MCAD's ``hasFields`` read it). ``ray.io/v1alpha1`` objects become ``ray.io/v1`` (same schema; the library
    infers PodSets only for v1). ``schedulingSpec.dispatchDuration.limit`` becomes the Kueue label
    ``kueue.x-k8s.io/max-exec-time-seconds``; ``priority`` becomes ``kueue.x-k8s.io/priority-class`` when
    ``priority_class`` is given (a WorkloadPriorityClass), else it is dropped with a warning.

    Args:
        obj: the MCAD AppWrapper (``mcad.ibm.com/v1beta1`` or ``workload.codeflare.dev/v1beta1``).
        queue_name: the LocalQueue (label ``kueue.x-k8s.io/queue-name``); ``None`` keeps the object's own
            label, if any. Defaults to ``None``.
        priority_class: a Kueue WorkloadPriorityClass for MCAD's integer ``priority``. Defaults to ``None``.

    Returns:
        The v1beta2 AppWrapper and the warnings.

    Raises:
        ConversionError: fields that cannot be converted (every one, with its path): a ``service``, a
            ``selector``, ``schedulingSpec.nodeSelector``/``clusterScheduling``/``dispatchingWindow``,
            ``minAvailable`` below the pod count (Kueue admits all pods or none), non-empty ``Items`` (pre-v1.34
            form), a missing or namespaced-elsewhere ``generictemplate``, a wrapped object whose pods cannot
            be found while ``custompodresources`` reserve some, unknown keys.
    """
    if not is_mcad_appwrapper(obj):
        kind = f"{obj.get('apiVersion')} {obj.get('kind')}"
        raise ConversionError(
            [f"apiVersion/kind: expected {MCAD_KIND} of {' or '.join(MCAD_API_VERSIONS)}, got {kind}"]
        )
    problems: list[str] = []
    warnings: list[str] = []
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    metadata: dict[str, Any] = {k: copy.deepcopy(meta[k]) for k in KEPT_METADATA if meta.get(k) is not None}
    labels: dict[str, Any] = dict(metadata.pop("labels", None) or {})
    annotations = {
        k: v for k, v in (metadata.pop("annotations", None) or {}).items() if k not in DROPPED_ANNOTATIONS
    }
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise ConversionError(["spec: is required"])
    _check_spec(spec, problems)
    _convert_priority(spec, labels, priority_class, warnings)
    items = _generic_items(spec, problems)

    components: list[dict[str, Any]] = []
    reserved: list[tuple[int, dict[str, Decimal]]] = []  # MCAD custompodresources: (replicas, per pod)
    for index, item in enumerate(items):
        path = f"spec.resources.GenericItems[{index}]"
        if not isinstance(item, Mapping):
            problems.append(f"{path}: must be a mapping")
            continue
        component = _convert_item(item, path, meta.get("namespace"), problems, warnings, reserved)
        if component is not None:
            components.append(component)

    scheduling = spec.get("schedulingSpec")
    pods = sum(ps.get("replicas", 1) for c in components for ps in c["podSets"])
    if isinstance(scheduling, Mapping):
        _convert_scheduling(scheduling, pods, labels, problems, warnings)
    elif scheduling is not None:
        problems.append("spec.schedulingSpec: must be a mapping")
    if problems:
        raise ConversionError(problems)

    _queue_label(labels, queue_name, warnings)
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    converted: dict[str, Any] = {
        "apiVersion": APPWRAPPER_API_VERSION,
        "kind": APPWRAPPER.kind,
        "metadata": metadata,
        "spec": {"components": components},
    }
    if reserved:
        warnings.extend(_disagreements(converted, reserved))
    return Conversion(converted, warnings)


def _check_spec(spec: Mapping[str, Any], problems: list[str]) -> None:
    for key in sorted(set(spec) - _SPEC_KEYS):
        problems.append(f"spec.{key}: unknown MCAD AppWrapper field")
    service = spec.get("service")
    if isinstance(service, Mapping) and service.get("spec"):
        problems.append(
            "spec.service: MCAD created a Service for the AppWrapper; v1beta2 has no such field — wrap a "
            "v1 Service as a component of its own"
        )
    if spec.get("selector"):
        problems.append("spec.selector: no v1beta2 equivalent")


def _generic_items(spec: Mapping[str, Any], problems: list[str]) -> list[Any]:
    resources = spec.get("resources")
    if not isinstance(resources, Mapping):
        raise ConversionError([*problems, "spec.resources: is required"])
    for key in sorted(set(resources) - {"GenericItems", "Items"}):
        problems.append(f"spec.resources.{key}: unknown MCAD AppWrapper field")
    if resources.get("Items"):
        problems.append(
            "spec.resources.Items: the pre-v1.34 form is not converted; move each item to GenericItems "
            "(generictemplate)"
        )
    items = resources.get("GenericItems")
    if not isinstance(items, list) or not items:
        raise ConversionError([*problems, "spec.resources.GenericItems: at least one item is required"])
    return items


def _queue_label(labels: dict[str, Any], queue_name: str | None, warnings: list[str]) -> None:
    if queue_name is not None:
        if labels.get(QUEUE_LABEL) not in (None, queue_name):
            warnings.append(
                f"metadata.labels.{QUEUE_LABEL}: {labels[QUEUE_LABEL]!r} replaced by {queue_name!r}"
            )
        labels[QUEUE_LABEL] = queue_name
    elif QUEUE_LABEL not in labels:
        warnings.append(
            f"metadata.labels.{QUEUE_LABEL}: not set (give --queue); Kueue then queues the AppWrapper in the "
            "namespace's LocalQueue named 'default' if there is one, else it is not managed by Kueue"
        )


def _convert_priority(
    spec: Mapping[str, Any], labels: dict[str, Any], priority_class: str | None, warnings: list[str]
) -> None:
    if priority_class is not None:
        labels[PRIORITY_CLASS_LABEL] = priority_class
    elif spec.get("priority"):
        warnings.append(
            f"spec.priority: {spec['priority']} dropped; Kueue orders by WorkloadPriorityClass (give "
            f"--priority-class for the label {PRIORITY_CLASS_LABEL})"
        )
    if spec.get("priorityslope"):
        warnings.append("spec.priorityslope: dropped; Kueue has no priority that grows with waiting time")


def _convert_item(
    item: Mapping[str, Any],
    path: str,
    namespace: object,
    problems: list[str],
    warnings: list[str],
    reserved: list[tuple[int, dict[str, Decimal]]],
) -> dict[str, Any] | None:
    _check_item(item, path, problems, warnings)
    for cpr_index, cpr in enumerate(item.get("custompodresources") or []):
        cpr_path = f"{path}.custompodresources[{cpr_index}]"
        parsed = _custom_pod_resources(cpr, cpr_path, problems)
        if parsed is not None:
            reserved.append(parsed)
    template = item.get("generictemplate")
    if not isinstance(template, Mapping) or not template.get("apiVersion") or not template.get("kind"):
        problems.append(f"{path}.generictemplate: a Kubernetes object with apiVersion and kind is required")
        return None
    wrapped = copy.deepcopy(dict(template))
    wrapped.pop("status", None)
    wrapped_ns = (wrapped.get("metadata") or {}).get("namespace")
    if wrapped_ns and namespace and wrapped_ns != namespace:
        problems.append(
            f"{path}.generictemplate.metadata.namespace: {wrapped_ns!r} differs from the AppWrapper's "
            f"{namespace!r}; v1beta2 wraps objects of its own namespace only"
        )
    if wrapped["apiVersion"] in OLD_RAY_API_VERSIONS:
        warnings.append(
            f"{path}.generictemplate.apiVersion: {wrapped['apiVersion']} rewritten to ray.io/v1 (served by "
            "KubeRay 1.7 with the same schema; the AppWrapper library infers PodSets only for ray.io/v1)"
        )
        wrapped["apiVersion"] = "ray.io/v1"
    try:
        entries = appwrapper_inferred_pod_sets(wrapped)
    except FieldError as exc:
        problems.append(f"{path}.generictemplate: {exc.field}: {exc.reason}")
        return None
    if not entries:
        entries = _mcad_pod_template(wrapped)
    if not entries and item.get("custompodresources"):
        problems.append(
            f"{path}.generictemplate: no pod template found in {wrapped['apiVersion']} {wrapped['kind']}, "
            "but custompodresources reserve pods: Kueue would account nothing for it"
        )
        return None
    component: dict[str, Any] = {"template": wrapped}
    component["podSets"] = [{"path": p, "replicas": r} for p, r in entries]
    if not entries:
        warnings.append(
            f"{path}.generictemplate: {wrapped['kind']} has no pods; Kueue accounts nothing for it"
        )
    return component


def _check_item(item: Mapping[str, Any], path: str, problems: list[str], warnings: list[str]) -> None:
    for key in sorted(set(item) - _ITEM_KEYS):
        problems.append(f"{path}.{key}: unknown MCAD GenericItem field")
    for key in ("priority", "priorityslope"):
        if item.get(key):
            warnings.append(f"{path}.{key}: dropped; per-item priorities have no Kueue equivalent")
    if item.get("completionstatus"):
        warnings.append(
            f"{path}.completionstatus: dropped; a v1beta2 AppWrapper completes when its wrapped pods and Jobs do"
        )
    if item.get("replicas") not in (None, 1):
        warnings.append(
            f"{path}.replicas: {item['replicas']} ignored (MCAD created the generictemplate once)"
        )


def _mcad_pod_template(wrapped: Mapping[str, Any]) -> list[tuple[str, int]]:
    """MCAD's ``hasFields``: pods at ``spec.template`` (``spec.replicas`` of them, default 1)."""
    spec = wrapped.get("spec")
    if not isinstance(spec, Mapping):
        return []
    template = spec.get("template")
    pod_spec = template.get("spec") if isinstance(template, Mapping) else None
    if isinstance(pod_spec, Mapping) and isinstance(pod_spec.get("containers"), list):
        replicas = spec.get("replicas", 1)
        return [("template.spec.template", replicas if isinstance(replicas, int) else 1)]
    return []


def _custom_pod_resources(
    cpr: object, path: str, problems: list[str]
) -> tuple[int, dict[str, Decimal]] | None:
    if not isinstance(cpr, Mapping):
        problems.append(f"{path}: must be a mapping")
        return None
    replicas = cpr.get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        problems.append(f"{path}.replicas: must be a non-negative integer")
        return None
    per_pod: dict[str, Decimal] = {}
    for kind in ("requests", "limits"):
        values = cpr.get(kind) or {}
        if not isinstance(values, Mapping):
            problems.append(f"{path}.{kind}: must be a mapping")
            return None
        for resource in MCAD_RESOURCES:
            if resource in values and not per_pod.get(resource):
                try:
                    per_pod[resource] = parse_quantity(values[resource])
                except QuantityError as exc:
                    problems.append(f"{path}.{kind}.{resource}: {exc}")
                    return None
    return replicas, per_pod


def _convert_scheduling(
    scheduling: Mapping[str, Any], pods: int, labels: dict[str, Any], problems: list[str], warnings: list[str]
) -> None:
    base = "spec.schedulingSpec"
    for key in sorted(set(scheduling) - _SCHEDULING_KEYS):
        problems.append(f"{base}.{key}: unknown MCAD schedulingSpec field")
    for key in ("nodeSelector", "clusterScheduling", "dispatchingWindow"):
        if scheduling.get(key):
            problems.append(f"{base}.{key}: no v1beta2 / Kueue equivalent")
    minimum = scheduling.get("minAvailable")
    if isinstance(minimum, int) and 0 < minimum < pods:
        problems.append(
            f"{base}.minAvailable: {minimum} of {pods} pods; Kueue admits an AppWrapper's pods all together "
            "(no partial admission for AppWrappers)"
        )
    requeuing = scheduling.get("requeuing")
    if isinstance(requeuing, Mapping) and requeuing:
        warnings.append(
            f"{base}.requeuing: dropped; a v1beta2 AppWrapper retries by its own policy (annotations "
            "workload.codeflare.dev.appwrapper/warmupGracePeriodDuration, retryLimit, retryPausePeriodDuration)"
        )
    duration = scheduling.get("dispatchDuration")
    if isinstance(duration, Mapping):
        limit = duration.get("limit")
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            labels[MAX_EXEC_TIME_LABEL] = str(limit)
        if duration.get("expected") or duration.get("overrun"):
            warnings.append(f"{base}.dispatchDuration.expected/overrun: dropped (no Kueue equivalent)")


def _disagreements(converted: Mapping[str, Any], reserved: list[tuple[int, dict[str, Decimal]]]) -> list[str]:
    """Warnings where MCAD's reservation (``custompodresources``) and Kueue's accounting differ."""
    try:
        workload = workload_requests(converted)
    except AccountingError as exc:
        return [f"the converted AppWrapper cannot be accounted: {exc}"]
    kueue_total = workload.total
    mcad_total: dict[str, Decimal] = {}
    for replicas, per_pod in reserved:
        for resource, amount in per_pod.items():
            mcad_total[resource] = mcad_total.get(resource, Decimal(0)) + amount * replicas
    warnings = []
    mismatched = []
    for resource in MCAD_RESOURCES:
        mcad = mcad_total.get(resource, Decimal(0))
        kueue = kueue_total.get(resource, Decimal(0))
        if mcad != kueue:
            mismatched.append(
                f"{resource} {format_quantity(mcad, resource)} vs {format_quantity(kueue, resource)}"
            )
    mcad_pods = sum(replicas for replicas, _ in reserved)
    kueue_pods = sum(ps.count for ps in workload.pod_sets)
    if mcad_pods != kueue_pods:
        mismatched.append(f"pods {mcad_pods} vs {kueue_pods}")
    if mismatched:
        warnings.append(
            "custompodresources disagree with the wrapped pods (MCAD reserved the former, Kueue accounts the "
            f"latter): {', '.join(mismatched)} (custompodresources vs Kueue)"
        )
        return warnings
    mcad_shapes: Counter[tuple[tuple[str, Decimal], ...]] = Counter()
    for replicas, per_pod in reserved:
        if replicas:
            mcad_shapes[_shape(per_pod)] += replicas
    kueue_shapes: Counter[tuple[tuple[str, Decimal], ...]] = Counter()
    for ps in workload.pod_sets:
        kueue_shapes[_shape(ps.per_pod)] += ps.count
    if mcad_shapes != kueue_shapes:
        warnings.append(
            "custompodresources match the wrapped pods' total but not their shape: "
            f"{_describe(mcad_shapes)} declared, {_describe(kueue_shapes)} wrapped (a pod must fit one node)"
        )
    return warnings


def _shape(per_pod: Mapping[str, Decimal]) -> tuple[tuple[str, Decimal], ...]:
    return tuple((r, per_pod.get(r, Decimal(0))) for r in MCAD_RESOURCES)


def _describe(shapes: Counter[tuple[tuple[str, Decimal], ...]]) -> str:
    parts = []
    for shape, count in sorted(shapes.items()):
        amounts = " ".join(f"{r}={format_quantity(a, r)}" for r, a in shape)
        parts.append(f"{count} × {{{amounts}}}")
    return " + ".join(parts)

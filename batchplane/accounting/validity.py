"""The API server's own check of a pod template's requests against its limits, so a job it would refuse is never
reported as admitted.

Transcribes ``validateResourceRequirements`` of kubernetes/kubernetes ``pkg/apis/core/validation/validation.go``
(read at commit 000f26050b9be6fb3d79fae95e06b47fc96128cd; the rule and its wording are unchanged since Kubernetes
1.26): for each requested resource that also has a limit, a resource the node may overcommit (``IsOvercommitAllowed``:
a native resource — no ``/`` in its name, or a ``kubernetes.io/`` prefix — that is not ``hugepages-*``) must request
at most its limit ("must be less than or equal to <name> limit of <limit>"), any other (``nvidia.com/gpu``, hugepages)
exactly its limit ("must be equal to <name> limit of <limit>"). Checked for every container, init container and the
pod-level ``resources``. (The API server also requires a limit for a non-overcommittable request; that rule is not
applied here.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.accounting.model import WorkloadRequests
from batchplane.quantity import QuantityError, parse_quantity


def _overcommit_allowed(name: str) -> bool:
    native = "/" not in name or name.startswith("kubernetes.io/")
    return native and not name.startswith("hugepages-")


def _requirement_problems(resources: Any, path: str) -> list[str]:
    if not isinstance(resources, Mapping):
        return []
    requests, limits = resources.get("requests"), resources.get("limits")
    if not isinstance(requests, Mapping) or not isinstance(limits, Mapping):
        return []
    problems: list[str] = []
    for name in sorted(requests):
        if name not in limits:
            continue
        try:
            request, limit = parse_quantity(requests[name]), parse_quantity(limits[name])
        except QuantityError:
            continue  # the accounting names a malformed quantity itself
        if not _overcommit_allowed(str(name)) and request != limit:
            rule = "must be equal to"
        elif request > limit:
            rule = "must be less than or equal to"
        else:
            continue
        problems.append(
            f'{path}.requests: Invalid value: "{requests[name]}": {rule} {name} limit of {limits[name]}'
        )
    return problems


def resource_requirement_problems(obj: Mapping[str, Any]) -> list[str]:
    """The API server's refusals of the requests against the limits in every pod spec of ``obj`` (a job object as
    submitted: every mapping holding a ``containers`` list is a pod spec), each ``<field path>: Invalid value:
    "<request>": must be … <resource> limit of <limit>`` (its own wording); empty when it accepts them all."""
    problems: list[str] = []
    stack: list[tuple[Any, str]] = [(obj, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, Mapping):
            if isinstance(node.get("containers"), list):
                problems += _pod_spec_problems(node, path)
            for key, value in node.items():
                if isinstance(value, (Mapping, list)) and key not in (
                    "containers",
                    "initContainers",
                    "metadata",
                ):
                    stack.append((value, f"{path}.{key}" if path else str(key)))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                if isinstance(value, (Mapping, list)):
                    stack.append((value, f"{path}[{index}]"))
    return sorted(problems)


def _pod_spec_problems(spec: Mapping[str, Any], path: str) -> list[str]:
    problems = _requirement_problems(spec.get("resources"), f"{path}.resources")
    for key in ("initContainers", "containers"):
        containers = spec.get(key)
        if not isinstance(containers, list):
            continue
        for index, container in enumerate(containers):
            if isinstance(container, Mapping):
                problems += _requirement_problems(
                    container.get("resources"), f"{path}.{key}[{index}].resources"
                )
    return problems


OVERHEAD_SOURCE = "https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/workload/resources.go#L57-L75"
"""Where Kueue copies a RuntimeClass's ``overhead.podFixed`` into a PodSet that names it and sets no ``overhead``."""


def unknown_runtime_class_warnings(workload: WorkloadRequests) -> list[str]:
    """One warning per PodSet whose pod names a ``runtimeClassName`` without its own ``overhead``: Kueue adds that
    RuntimeClass's pod overhead to every pod (``handlePodOverhead``, :data:`OVERHEAD_SOURCE`), but no stack declares
    RuntimeClasses, so the overhead is unknown here and not counted."""
    warnings: list[str] = []
    for pod_set in workload.pod_sets:
        spec = pod_set.template.get("spec")
        if not isinstance(spec, Mapping):
            continue
        name = spec.get("runtimeClassName")
        if name and not spec.get("overhead"):
            warnings.append(
                f'PodSet "{pod_set.name}" runs with RuntimeClass "{name}", which this stack does not declare: Kueue '
                "adds its pod overhead to each pod's requests, and that overhead is not counted here"
            )
    return warnings

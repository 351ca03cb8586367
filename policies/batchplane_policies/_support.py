"""Helpers every Batchplane policy uses: defensive property reads, quantities, the stack environment.

Policies read resource inputs the way Pulumi sends them to a policy pack: camelCase keys, numbers as
floats (``google.protobuf.Struct`` widens ``2`` to ``2.0``), lists and mappings wrapped in
``pulumi_policy``'s unknown-checking proxies. The readers here never raise for a missing property
or a value of the wrong type (they return ``None``); a value that is *unknown* during a preview
raises ``pulumi_policy``'s ``UnknownValueError`` when read, on purpose, so the analyzer reports
"can't run policy ... during preview" (advisory) exactly as ``pulumi preview --policy-pack`` does.

Rules the program also enforces are stated once, in the ``batchplane`` package, and imported from it: quantity
parsing (:mod:`batchplane.quantity`), the operator allow-lists (:mod:`batchplane.config.operators`), deletion
protection (:mod:`batchplane.targets.gke.rules`). ``policies/requirements.txt`` installs the core package
(``-e ..``: pydantic and PyYAML, no Pulumi program) beside ``pulumi_policy`` into the pack's virtualenv, which the
Pulumi CLI creates the first time it runs the pack; ``batchplane check`` runs the pack with the CLI's own
interpreter, which has the package.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from pulumi_policy import PolicyResource

from batchplane.quantity import QUANTITY_PATTERN as _QUANTITY_PATTERN
from batchplane.quantity import QuantityError, parse_quantity, quantity_text

ENVIRONMENT_KEY = "batchplane:environment"
"""Stack config key (and accepted stack tag) that names a stack's environment
(``dev``/``staging``/``production``); the program's ``StackConfig.environment``."""

DEFAULT_ENVIRONMENT = "dev"
"""The environment of a stack that does not set :data:`ENVIRONMENT_KEY` (the program's default)."""

PRODUCTION_ENVIRONMENTS = ("production",)
"""Default ``productionEnvironments`` of the production-only policies."""

#: The quantity pattern of the Kueue v0.19.2 CRDs (``resource.Quantity`` in apimachinery): the program's.
QUANTITY_PATTERN = re.compile(_QUANTITY_PATTERN)

_KUEUE_TYPE = re.compile(r"^kubernetes:kueue\.x-k8s\.io/[A-Za-z0-9]+:([A-Za-z]+)$")

ReportViolation = Callable[..., None]
"""``report_violation(message, urn=None)`` as ``pulumi_policy`` hands it to a validator."""

BASELINE_PROPERTY: dict[str, str] = {
    "type": "string",
    "description": "A `batchplane preview --json` of the base (e.g. the PR's merge base). Unset: the policy cannot "
    "see the old state and checks nothing.",
}
"""The ``baseline`` config property of the policies that compare with the base's preview."""


def baseline_resources(path: str, resource_type: str) -> list[dict[str, Any]]:
    """The resources of type ``resource_type`` in a ``batchplane preview --json`` document (empty when the file is
    unreadable or not such a document)."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    listed = document.get("resources", []) if isinstance(document, dict) else []
    return [r for r in listed if isinstance(r, dict) and r.get("type") == resource_type]


ResourceView = PolicyResource
"""What stack policies read: ``resource_type``, ``props``, ``urn``, ``name``, ``dependencies``."""


def get(value: Any, *path: str | int) -> Any:
    """Follow ``path`` (keys and list indexes) into ``value``; ``None`` when any step is missing.

    Never raises for a missing key, an index out of range or a value of the wrong type. An
    unknown value on the path raises ``UnknownValueError`` (see the module docstring).
    """
    for step in path:
        if isinstance(step, int):
            if (
                isinstance(value, Sequence)
                and not isinstance(value, str)
                and -len(value) <= step < len(value)
            ):
                value = value[step]
            else:
                return None
        elif isinstance(value, Mapping) and step in value:
            value = value[step]
        else:
            return None
    return value


def items(value: Any) -> list[Any]:
    """``value`` as a list when it is a (proxied) sequence other than a string, else ``[]``."""
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [value[i] for i in range(len(value))]
    return []


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else ``{}``."""
    return value if isinstance(value, Mapping) else {}


def text(value: Any) -> str | None:
    """``value`` when it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def integer(value: Any) -> int | None:
    """An integral number (``3`` or ``3.0``, as protobuf sends it) or a decimal string as ``int``.

    Returns ``None`` for booleans, fractions, other strings and anything else.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def flag(value: Any) -> bool | None:
    """A boolean, also from the strings ``"true"``/``"false"`` (provider inputs sent as text)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def quantity(value: Any) -> Decimal | None:
    """A Kubernetes quantity (``"8Gi"``, ``40``, ``40.0`` as protobuf sends it, ``"500m"``) in base units, or
    ``None`` if not one.

    The program's own strict, exact parser (:func:`batchplane.quantity.parse_quantity`: the CRDs' pattern, no
    rounding, bounded size), so the pack and the program agree on every value.
    """
    try:
        return parse_quantity(quantity_text(value))
    except QuantityError:
        return None


def show_quantity(amount: Decimal) -> str:
    """A quantity for messages: whole numbers as integers, binary multiples of Gi/Mi as such."""
    if amount == amount.to_integral_value():
        whole = int(amount)
        for suffix, factor in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20)):
            if whole and whole % factor == 0 and whole >= factor:
                return f"{whole // factor}{suffix}"
        return str(whole)
    return format(amount.normalize(), "f")


def string_list(value: Any) -> list[str]:
    """The strings of a list (other items dropped); ``[]`` when ``value`` is not a list."""
    return [v for v in items(value) if isinstance(v, str)]


def config_value(config: Mapping[str, Any], key: str, default: Any) -> Any:
    """A policy-config property, ``default`` when unset (direct calls pass no config)."""
    value = config.get(key) if isinstance(config, Mapping) else None
    return default if value is None else value


def stack_environment(stack_tags: Mapping[str, str] | None = None) -> str:
    """The stack's environment: the stack tag ``batchplane:environment`` if set, else the stack
    config ``batchplane:environment`` (which the CLI hands every policy pack in ``PULUMI_CONFIG``,
    read through ``pulumi.runtime.get_config``), else :data:`DEFAULT_ENVIRONMENT`."""
    tag = (stack_tags or {}).get(ENVIRONMENT_KEY)
    if isinstance(tag, str) and tag:
        return tag
    import pulumi.runtime

    value = pulumi.runtime.get_config(ENVIRONMENT_KEY)
    if isinstance(value, str) and value:
        return value.strip('"')
    return DEFAULT_ENVIRONMENT


def is_production(config: Mapping[str, Any], stack_tags: Mapping[str, str] | None) -> bool:
    """Whether the stack's environment is one of the policy's ``productionEnvironments``."""
    production = config_value(config, "productionEnvironments", list(PRODUCTION_ENVIRONMENTS))
    return stack_environment(stack_tags) in set(string_list(production))


def kueue_kind(resource_type: str) -> str | None:
    """The Kueue kind of a type token (``kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue`` →
    ``ClusterQueue``), any API version; ``None`` for other types."""
    match = _KUEUE_TYPE.match(resource_type)
    return match.group(1) if match else None


def of_kueue_kind(resources: Iterable[ResourceView], kind: str) -> Iterator[ResourceView]:
    """The resources of one Kueue kind, in stack order."""
    return (r for r in resources if kueue_kind(r.resource_type) == kind)


def object_name(props: Mapping[str, Any]) -> str | None:
    """``metadata.name`` of a Kubernetes object's inputs (``None`` when absent: auto-named)."""
    return text(get(props, "metadata", "name"))


def describe(resource: ResourceView) -> str:
    """``Kind "name"`` of a Kubernetes object (``metadata.name``, else the Pulumi name)."""
    kind = resource.resource_type.rsplit(":", 1)[-1]
    return f'{kind} "{object_name(resource.props) or resource.name}"'


def depends_on(resource: ResourceView, predicate: Callable[[ResourceView], bool]) -> bool:
    """Whether ``resource`` depends, directly or through other resources' dependencies, on a
    resource matching ``predicate`` (``PolicyResource.dependencies``, as ``AnalyzeStack`` fills them)."""
    seen: set[str] = set()
    stack = list(resource.dependencies)
    while stack:
        dep = stack.pop()
        if dep.urn in seen:
            continue
        seen.add(dep.urn)
        if predicate(dep):
            return True
        stack.extend(dep.dependencies)
    return False


def cluster_queue_cohort(props: Mapping[str, Any]) -> str | None:
    """A ClusterQueue's cohort: ``spec.cohortName`` (v1beta2) or ``spec.cohort`` (v1beta1)."""
    return text(get(props, "spec", "cohortName")) or text(get(props, "spec", "cohort"))


def quota_entries(props: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """``(flavor, resource, entry)`` for every quota entry of a ClusterQueue's or Cohort's
    ``spec.resourceGroups[].flavors[].resources[]`` (entries without names are skipped)."""
    for group in items(get(props, "spec", "resourceGroups")):
        for flavor in items(get(group, "flavors")):
            flavor_name = text(get(flavor, "name"))
            if flavor_name is None:
                continue
            for entry in items(get(flavor, "resources")):
                resource = text(get(entry, "name"))
                if resource is not None and isinstance(entry, Mapping):
                    yield flavor_name, resource, entry


# --- one cluster at a time -------------------------------------------------------------------------

BATCH_CLUSTER = "batchplane:cluster:BatchCluster"
"""The component that holds one cluster's resources (the program declares one per cluster: the MultiKueue
manager and each declared worker)."""


def cluster_of(resource: ResourceView) -> str:
    """The URN of the ``BatchCluster`` that ``resource`` belongs to (itself, or its nearest such ancestor), or
    ``""`` for a resource outside any (a program written before ``BatchCluster``: one cluster)."""
    node: ResourceView | None = resource
    while node is not None:
        if node.resource_type == BATCH_CLUSTER:
            return str(node.urn)
        node = node.parent
    return ""


class ClusterArgs:
    """A stack policy's arguments narrowed to one cluster's resources (``resources``); config and everything
    else as the stack's."""

    def __init__(self, args: Any, resources: list[ResourceView]) -> None:
        self._args = args
        self.resources = resources

    def get_config(self) -> Any:
        """The policy's config, as for the whole stack."""
        return self._args.get_config()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._args, name)


def per_cluster(validate: Callable[[Any, ReportViolation], None]) -> Callable[[Any, ReportViolation], None]:
    """Run a stack policy's ``validate`` once per cluster: a program that declares several clusters (a MultiKueue
    manager and its workers) must not join one cluster's ClusterQueues with another's node pools or Services."""

    def run(args: Any, report_violation: ReportViolation) -> None:
        groups: dict[str, list[ResourceView]] = {}
        for resource in args.resources:
            groups.setdefault(cluster_of(resource), []).append(resource)
        for group in groups.values():
            validate(ClusterArgs(args, group), report_violation)

    run.__doc__ = validate.__doc__
    return run

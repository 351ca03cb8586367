"""Builders of CrossGuard validator arguments, shaped as the analyzer hands them to policies.

Props go through the same steps as in ``pulumi_policy``'s analyzer: numbers widened to floats (a
``google.protobuf.Struct`` has only doubles) and the whole tree wrapped in
``unknown_checking_proxy``, so reading an unknown value raises ``UnknownValueError`` as under
``pulumi preview``. Validators are called directly with a collecting ``report_violation``
(platforms.md §6.2; pulumi-policy#445: no official harness exists).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

UNKNOWN = UNKNOWN_STRING_VALUE
"""The wire sentinel of a value unknown during preview."""

PRODUCTION = {"batchplane:environment": "production"}
"""Stack tags of a production stack (the pack also reads the stack config, see _support)."""
DEV = {"batchplane:environment": "dev"}


def widen(value: Any) -> Any:
    """Integers to floats, recursively, as protobuf's Struct delivers them."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, Mapping):
        return {k: widen(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [widen(v) for v in value]
    return value


def _options(parent: str | None = None) -> PolicyResourceOptions:
    return PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], parent)


def resource_args(
    resource_type: str,
    props: Mapping[str, Any],
    *,
    config: Mapping[str, Any] | None = None,
    stack_tags: Mapping[str, str] | None = None,
    name: str = "res",
) -> ResourceValidationArgs:
    """``ResourceValidationArgs`` for one resource (URN ``urn:pulumi:test::batchplane::<type>::<name>``)."""
    urn = f"urn:pulumi:test::batchplane::{resource_type}::{name}"
    props_proxy = unknown_checking_proxy(widen(dict(props)))
    return ResourceValidationArgs(
        resource_type, props_proxy, urn, name, _options(), None, config, stack_tags or DEV
    )


def check_resource(
    policy: ResourceValidationPolicy,
    resource_type: str,
    props: Mapping[str, Any],
    *,
    config: Mapping[str, Any] | None = None,
    stack_tags: Mapping[str, str] | None = None,
) -> list[str]:
    """Run a resource policy on one resource; returns the messages it reported, in order."""
    messages: list[str] = []

    def report(message: str, urn: str | None = None) -> None:
        messages.append(message)

    policy.validate(resource_args(resource_type, props, config=config, stack_tags=stack_tags), report)
    return messages


@dataclass
class Stack:
    """A stack of ``PolicyResource``s built resource by resource, with dependencies by name."""

    resources: list[PolicyResource] = field(default_factory=list)

    def add(
        self,
        resource_type: str,
        name: str,
        props: Mapping[str, Any],
        depends_on: Sequence[str] = (),
        *,
        parent: str | None = None,
    ) -> PolicyResource:
        """Add a resource; ``depends_on`` and ``parent`` name resources added before."""
        urn = f"urn:pulumi:test::batchplane::{resource_type}::{name}"
        deps = [self.get(d) for d in depends_on]
        resource = PolicyResource(
            resource_type,
            unknown_checking_proxy(widen(dict(props))),
            urn,
            name,
            _options(),
            None,
            None if parent is None else self.get(parent),
            deps,
            {},
        )
        self.resources.append(resource)
        return resource

    def get(self, name: str) -> PolicyResource:
        """The resource with logical name ``name``."""
        return next(r for r in self.resources if r.name == name)

    def check(
        self,
        policy: StackValidationPolicy,
        *,
        config: Mapping[str, Any] | None = None,
        stack_tags: Mapping[str, str] | None = None,
    ) -> list[tuple[str, str | None]]:
        """Run a stack policy; returns ``(message, resource name or None)`` per violation."""
        found: list[tuple[str, str | None]] = []
        by_urn = {r.urn: r.name for r in self.resources}

        def report(message: str, urn: str | None = None) -> None:
            found.append((message, by_urn.get(urn) if urn else None))

        policy.validate(StackValidationArgs(self.resources, config, stack_tags or DEV), report)
        return found


def kueue(
    kind: str,
    name: str,
    spec: Mapping[str, Any] | None = None,
    *,
    version: str = "v1beta2",
    namespace: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """``(type token, props)`` of a Kueue object as the program declares it."""
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    props: dict[str, Any] = {"apiVersion": f"kueue.x-k8s.io/{version}", "kind": kind, "metadata": metadata}
    if spec is not None:
        props["spec"] = dict(spec)
    return f"kubernetes:kueue.x-k8s.io/{version}:{kind}", props


def flavor_quota(flavor: str, **quotas: Any) -> dict[str, Any]:
    """One ``resourceGroups[].flavors[]`` entry: ``flavor_quota("h100", gpu=8)``; values are a nominal
    quota or a dict of ``nominalQuota``/``borrowingLimit``/``lendingLimit``. ``gpu`` → ``nvidia.com/gpu``."""
    resources = []
    for key, value in quotas.items():
        entry = dict(value) if isinstance(value, Mapping) else {"nominalQuota": value}
        resources.append({"name": "nvidia.com/gpu" if key == "gpu" else key, **entry})
    return {"name": flavor, "resources": resources}


def cluster_queue_spec(
    *flavors: dict[str, Any], cohort: str | None = None, checks: Sequence[str] = ()
) -> dict[str, Any]:
    """A v1beta2 ClusterQueue spec with one resource group over the given flavors."""
    covered = sorted({r["name"] for f in flavors for r in f["resources"]})
    spec: dict[str, Any] = {"resourceGroups": [{"coveredResources": covered, "flavors": list(flavors)}]}
    if cohort is not None:
        spec["cohortName"] = cohort
    if checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": c} for c in checks]}
    return spec

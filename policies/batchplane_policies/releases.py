"""Operator Helm releases: a change that replaces or deletes a Release whose chart ships CRDs as templates is
refused, naming the CRDs and the Kueue objects it would take with it.

The Kueue chart keeps its CRDs under ``templates/crd/`` without ``helm.sh/resource-policy: keep``
(:data:`batchplane.wellknown.KUEUE_CHART_CRDS`, charts/kueue at v0.19.2): a ``helm uninstall`` of the
release — which is what deleting or replacing the ``kubernetes:helm.sh/v3:Release`` does without
``retainOnDelete`` — deletes every ClusterQueue, LocalQueue and Workload, and running jobs lose their admission.
A Release is replaced when its ``name`` or ``namespace`` changes, and deleted when it is gone from the stack (a
renamed Pulumi resource is both). CrossGuard hands a policy only the new inputs, so ``operator-release-replacement``
compares with a ``baseline`` (a ``batchplane preview --json`` of the base; ``batchplane check --base REF`` writes
one) as ``production-node-pool-replacement`` does; without one it checks nothing. It applies to every environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, StackValidationArgs, StackValidationPolicy

from batchplane.wellknown import KUEUE_CHART_CRDS
from batchplane_policies._support import (
    BASELINE_PROPERTY,
    ReportViolation,
    baseline_resources,
    config_value,
    get,
    kueue_kind,
    string_list,
    text,
)
from batchplane_policies.installs import chart_key

RELEASE = "kubernetes:helm.sh/v3:Release"
"""The Pulumi type of a Helm release (``pulumi_kubernetes.helm.v3.Release``)."""

TEMPLATE_CRDS: dict[str, tuple[str, ...]] = {"kueue": KUEUE_CHART_CRDS}
"""Chart name (:func:`~batchplane_policies.installs.chart_key`) → the CRDs it ships as templates (deleted with the
release)."""


def _baseline_releases(path: str) -> dict[str, Mapping[str, Any]]:
    """URN → inputs of each Helm Release in a ``batchplane preview --json`` document (empty when unreadable)."""
    out: dict[str, Mapping[str, Any]] = {}
    for resource in baseline_resources(path, RELEASE):
        inputs = resource.get("inputs")
        if isinstance(resource.get("urn"), str):
            out[resource["urn"]] = inputs if isinstance(inputs, dict) else {}
    return out


def _kueue_object_count(args: StackValidationArgs) -> int:
    return sum(1 for r in args.resources if kueue_kind(r.resource_type) is not None)


def _release_replacement(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    config = args.get_config()
    baseline = config_value(config, "baseline", None)
    if not isinstance(baseline, str):
        return
    allowed = set(string_list(config_value(config, "allowReleaseReplace", [])))
    now = {r.urn: r for r in args.resources if r.resource_type == RELEASE}
    for urn, before in _baseline_releases(baseline).items():
        crds = TEMPLATE_CRDS.get(chart_key(text(get(before, "chart")) or ""))
        name, namespace = text(get(before, "name")), text(get(before, "namespace"))
        if not crds or f"{namespace}/{name}" in allowed:
            continue
        after = now.get(urn)
        if after is None:
            change, where = "deleted (gone from the stack, or its Pulumi name changed)", None
        else:
            moved = [k for k in ("name", "namespace") if text(get(after.props, k)) != text(get(before, k))]
            if not moved:
                continue
            change, where = (
                f"replaced (deleted and created) because its {' and '.join(moved)} changed",
                after.urn,
            )
        report_violation(
            f'Helm release "{namespace}/{name}" would be {change}: its uninstall deletes the {len(crds)} CRDs its '
            f"chart ships as templates ({', '.join(crds)}) and with them every object of those kinds — the "
            f"{_kueue_object_count(args)} Kueue objects this stack declares and every Workload in the cluster, so "
            f'running jobs lose their admission; add "{namespace}/{name}" to allowReleaseReplace to allow it',
            where,
        )


operator_release_replacement = StackValidationPolicy(
    name="operator-release-replacement",
    description="An operator's Helm release whose chart ships CRDs as templates (Kueue) is not replaced or deleted.",
    validate=_release_replacement,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "baseline": BASELINE_PROPERTY,
            "allowReleaseReplace": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "description": "Releases (`namespace/name`, as in the base) that may be replaced or deleted.",
            },
        }
    ),
    remediation_steps=(
        "Keep the release's name and namespace (operators.kueue.namespace) and its Pulumi name; to move Kueue to "
        'another namespace follow docs/upgrading.md ("Moving Kueue to another namespace").'
    ),
)

POLICIES = [operator_release_replacement]

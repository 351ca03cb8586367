"""What already runs in an operator's namespace, and what the stack declares there instead (pure).

OLM admits exactly one OperatorGroup per namespace: a CSV in a namespace with two fails with reason
``TooManyOperatorGroups`` ("csv created in namespace with multiple operatorgroups, can't pick one automatically",
operator-framework/operator-lifecycle-manager v0.46.0 ``pkg/controller/operators/olm/operator.go``; OLM docs
"Operator Multitenancy with OperatorGroups": "an OperatorGroup ... there can only be one per namespace"). The
OpenShift web console creates its own group, named ``<namespace>-<random suffix>``, when an operator is installed
from OperatorHub, so a stack that always declares its own group breaks every operator installed that way.

:func:`plan_namespace` decides, from the namespace's OperatorGroups and Subscriptions (as the API lists them), which
OperatorGroup and Subscription the stack declares:

* no OperatorGroup: the stack's; exactly one: that one, reused by name and with its ``spec`` (the stack declares
  it under that name, so the upserting provider adopts it instead of creating a second group); more than one: a
  problem (OLM already fails the namespace's CSVs);
* a Subscription of the stack's package (or with the stack's Subscription name): reused by name when it has the
  stack's package and channel, or when it is the stack's own (labelled ``app.kubernetes.io/managed-by: batchplane``
  by an earlier ``pulumi up``: a channel change in the config moves it); otherwise, with another package or channel,
  it is a problem unless the operator's settings say ``adopt: true`` (adopting would silently move a running
  operator to the stack's channel); two Subscriptions of the package: a problem.

Both the deploy-time lookup (the ``olm-namespace`` gate, :mod:`batchplane.operators.readiness`) and ``batchplane
preflight`` call it, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

OPERATOR_GROUP_API = "operators.coreos.com/v1"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
"""The label the stack puts on everything it declares (``batchplane``): a Subscription carrying it is the stack's own
(created or adopted by an earlier ``pulumi up``), so changing its channel is the stack's change, not an adoption."""
SUBSCRIPTION_API = "operators.coreos.com/v1alpha1"


@dataclass(frozen=True)
class StackInstall:
    """What the stack would declare in one operator namespace.

    Attributes:
        namespace: the operator's namespace.
        package: the Subscription's ``spec.name``.
        channel: its ``spec.channel``.
        operator_group: the stack's OperatorGroup name.
        operator_group_spec: the stack's OperatorGroup ``spec``.
        subscription: the stack's Subscription name.
        adopt: take over a Subscription of another package or channel (``adopt`` of the operator's settings).
    """

    namespace: str
    package: str
    channel: str
    operator_group: str
    operator_group_spec: Mapping[str, Any]
    subscription: str
    adopt: bool = False


@dataclass(frozen=True)
class NamespacePlan:
    """What the stack declares in the namespace, given what is there.

    Attributes:
        operator_group: the OperatorGroup name to declare (an existing group's, or the stack's).
        operator_group_spec: its ``spec`` (the existing group's, or the stack's).
        existing_group: the reused OperatorGroup's name, or None when the stack creates its own.
        subscription: the Subscription name to declare.
        existing_subscription: the adopted Subscription's name, or None.
        notes: what was found and reused, one sentence each.
        problems: why the stack must not touch the namespace as configured (each a refusal).
    """

    operator_group: str
    operator_group_spec: dict[str, Any]
    existing_group: str | None
    subscription: str
    existing_subscription: str | None
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def plan_namespace(
    install: StackInstall, groups: Sequence[Mapping[str, Any]], subscriptions: Sequence[Mapping[str, Any]]
) -> NamespacePlan:
    """The OperatorGroup and Subscription the stack declares in ``install.namespace`` (see the module docstring).

    Args:
        install: what the stack would declare.
        groups: the namespace's ``operators.coreos.com/v1`` OperatorGroups (list items).
        subscriptions: the namespace's ``operators.coreos.com/v1alpha1`` Subscriptions (list items).

    Returns:
        The plan; :attr:`NamespacePlan.problems` is empty when ``pulumi up`` may go on.
    """
    ns = install.namespace
    notes: list[str] = []
    problems: list[str] = []
    group_name, group_spec, existing_group = install.operator_group, dict(install.operator_group_spec), None
    if len(groups) > 1:
        names = ", ".join(sorted(_name(g) for g in groups))
        problems.append(
            f"namespace {ns} has {len(groups)} OperatorGroups ({names}): OLM fails every CSV there with "
            "TooManyOperatorGroups; delete all but one (oc delete operatorgroup <name> -n " + ns + ")"
        )
    elif len(groups) == 1:
        existing_group = _name(groups[0])
        if existing_group != install.operator_group:
            group_name = existing_group
            group_spec = dict(groups[0].get("spec") or {})
            notes.append(f"OperatorGroup {ns}/{existing_group} exists: reused (no second group is created)")
    mine = [
        s
        for s in subscriptions
        if _name(s) == install.subscription or (s.get("spec") or {}).get("name") == install.package
    ]
    sub_name, existing_sub = install.subscription, None
    same_package = [s for s in mine if (s.get("spec") or {}).get("name") == install.package]
    if len(same_package) > 1:
        names = ", ".join(sorted(_name(s) for s in same_package))
        problems.append(
            f"namespace {ns} has {len(same_package)} Subscriptions of package {install.package} ({names}); "
            "delete all but one"
        )
    elif mine:
        found = same_package[0] if same_package else mine[0]
        spec = found.get("spec") or {}
        existing_sub = _name(found)
        sub_name = existing_sub
        package, channel = spec.get("name"), spec.get("channel")
        differs = []
        if package != install.package:
            differs.append(f"package {package}, not the stack's {install.package}")
        if channel != install.channel:
            differs.append(f"channel {channel}, not the stack's {install.channel}")
        ours = ((found.get("metadata") or {}).get("labels") or {}).get(MANAGED_BY_LABEL) == "batchplane"
        if differs and ours:
            notes.append(
                f"Subscription {ns}/{existing_sub} is the stack's own: pulumi up moves it from {' and '.join(differs)}"
            )
        elif differs and not install.adopt:
            problems.append(
                f"Subscription {ns}/{existing_sub} exists with {' and '.join(differs)}: adopting it would move the "
                f"running operator; set the operator's channel to {channel} (and keep package {package}) to take it "
                "over as it is, or adopt: true to move it"
            )
        elif differs:
            notes.append(
                f"Subscription {ns}/{existing_sub} exists with {' and '.join(differs)}: adopted (adopt: true), "
                f"pulumi up moves it to package {install.package}, channel {install.channel}"
            )
        else:
            notes.append(
                f"Subscription {ns}/{existing_sub} exists with the stack's package and channel: adopted"
            )
    return NamespacePlan(group_name, group_spec, existing_group, sub_name, existing_sub, notes, problems)

"""The upgrade planner: the ordered steps from what a cluster runs (or a stated version) to the stack's pinned
operator versions, with what users notice computed on the stack's own ClusterQueues, and the refusals.

:func:`plan` takes the stack and a :class:`~batchplane.upgrade.cluster.ClusterState` (read from the cluster, or
built from ``--from kueue=0.13.1`` offline) and returns an :class:`UpgradePlan`. A removed API version still listed
in a CRD's ``status.storedVersions`` refuses the upgrade with the step that removes it (Kueue's own procedure,
:data:`~batchplane.upgrade.steps.REMOVED_VERSIONS`); a downgrade is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from batchplane.quantity import format_quantity, parse_quantity
from batchplane.stack.model import Stack
from batchplane.upgrade.cluster import ClusterState
from batchplane.upgrade.steps import (
    KUEUE_STEPS,
    Step,
    Version,
    parse_version,
    stored_version_refusals,
    version_text,
)

__all__ = ["PlannedStep", "UpgradePlan", "pinned_versions", "plan", "ray_sidecar_notices"]

AUTOSCALER_SIDECAR = (Decimal("0.5"), Decimal(512 * 2**20))
"""KubeRay's default autoscaler sidecar request (cpu cores, memory bytes) Kueue 0.19 counts in an autoscaling
RayCluster's head PodSet (CHANGELOG-0.19.md L206-208 at v0.19.2)."""
SUBMITTER_SIDECAR = (Decimal("0.5"), Decimal(200 * 2**20))
"""KubeRay's default submitter sidecar request (cpu cores, memory bytes) Kueue 0.19 counts in a ``SidecarMode``
RayJob's head PodSet (CHANGELOG-0.19.md L209-211 at v0.19.2)."""


@dataclass(frozen=True)
class PlannedStep:
    """A step of the table as it applies to this cluster: ``notices`` are what users notice on this stack."""

    step: Step
    notices: tuple[str, ...] = ()


@dataclass(frozen=True)
class UpgradePlan:
    """The plan for one stack.

    Attributes:
        current: operator → version running (or stated with ``--from``); absent = unknown / not installed.
        target: operator → the stack's pinned version.
        steps: the steps that apply, in release order.
        refusals: why the upgrade must not run as it is (each names the step to run first); empty = may run.
    """

    current: dict[str, Version]
    target: dict[str, Version]
    steps: list[PlannedStep] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)

    @property
    def no_op(self) -> bool:
        """Nothing to change: every operator at its pinned version and no step left."""
        return (
            not self.steps
            and not self.refusals
            and all(self.current.get(k) == v for k, v in self.target.items())
        )

    def text(self) -> str:
        """The plan as the CLI prints it."""
        lines: list[str] = []
        for operator, target in sorted(self.target.items()):
            now = self.current.get(operator)
            lines.append(
                f"{operator}: {version_text(now) if now else 'not installed'} -> {version_text(target)}"
            )
        if self.no_op:
            lines.append("nothing to do: the cluster runs the pinned versions")
        for number, planned in enumerate(self.steps, 1):
            s = planned.step
            lines.append("")
            lines.append(f"{number}. [{s.tag}] {s.key} — by {s.actor}")
            lines.append(f"   stored objects: {s.stored_objects}")
            lines.append(f"   users notice: {s.users_notice}")
            lines.extend(f"     - {notice}" for notice in planned.notices)
            lines.extend(f"   do: {action}" for action in s.actions)
            lines.append(f"   source: {s.source}")
        for refusal in self.refusals:
            lines.append("")
            lines.append(f"REFUSED: {refusal}")
        return "\n".join(lines) + "\n"


def pinned_versions(stack: Stack) -> dict[str, Version]:
    """The operator versions the stack pins (``operators.kueue.version``, ``operators.kuberay.version``); an
    operator the stack does not install is left out."""
    ops = stack.config.operators
    out: dict[str, Version] = {}
    if ops is None:
        return out
    if ops.kueue.enabled:
        out["kueue"] = parse_version(ops.kueue.version)
    if ops.kuberay.enabled:
        out["kuberay"] = parse_version(ops.kuberay.version)
    return out


def ray_sidecar_notices(stack: Stack) -> tuple[str, ...]:
    """For each ClusterQueue flavor with cpu and memory quota: how much of it one Ray head's sidecar now takes.

    Sizes are KubeRay's defaults (:data:`AUTOSCALER_SIDECAR`, :data:`SUBMITTER_SIDECAR`); a RayCluster that sets
    ``spec.autoscalerOptions.resources`` reserves those instead.
    """
    out: list[str] = []
    for located in stack.kueue.cluster_queues:
        cq = located.obj
        for group in cq.resource_groups:
            for flavor in group.flavors:
                quota = {r.name: parse_quantity(r.nominal_quota) for r in flavor.resources}
                cpu, memory = quota.get("cpu"), quota.get("memory")
                if cpu is None or memory is None or cpu <= 0 or memory <= 0:
                    continue
                parts = []
                for what, (scpu, smem) in (
                    ("autoscaling RayCluster head", AUTOSCALER_SIDECAR),
                    ("SidecarMode RayJob head", SUBMITTER_SIDECAR),
                ):
                    parts.append(
                        f"each {what} +{format_quantity(scpu, 'cpu')} cpu ({scpu / cpu:.1%}) and "
                        f"+{format_quantity(smem, 'memory')} memory ({smem / memory:.1%})"
                    )
                out.append(
                    f"ClusterQueue {cq.name} flavor {flavor.name} (cpu {format_quantity(cpu, 'cpu')}, memory "
                    f"{format_quantity(memory, 'memory')}): " + "; ".join(parts)
                )
    return tuple(out)


def _stack_sets_wait_for_pods_ready(stack: Stack) -> bool:
    ops = stack.config.operators
    return ops is not None and ops.kueue.configuration.wait_for_pods_ready is not None


def _applies(
    step: Step, current: Version, target: Version, state: ClusterState, stack: Stack, known: bool
) -> bool:
    """Whether ``step`` applies. ``known``: the CRDs were read (offline, stored-version steps crossed apply)."""
    crosses = step.applies_between(current, target)
    if step.condition in ("stored-v1alpha1", "stored-v1beta1"):
        version = step.condition.removeprefix("stored-")
        if not known:
            return crosses
        still_stored = any(version in state.crds[c].stored for c in step.crds if c in state.crds)
        return still_stored and target >= step.introduced
    if not crosses:
        return False
    if step.condition == "no-wait-for-pods-ready":
        in_use = state.configuration is not None and "waitForPodsReady" in state.configuration
        return not in_use and not _stack_sets_wait_for_pods_ready(stack)
    if step.condition == "ray":
        ops = stack.config.operators
        return "kuberay" in state.versions or (ops is not None and ops.ray_installed)
    if step.condition == "tas":
        return state.topologies > 0 or bool(stack.kueue.topologies)
    return True


def plan(stack: Stack, state: ClusterState, *, crds_read: bool) -> UpgradePlan:
    """The upgrade plan from ``state`` to the stack's pinned versions.

    Args:
        stack: the validated stack (its pins and its Kueue objects).
        state: what the cluster runs (:func:`batchplane.upgrade.cluster.read_cluster`) or, offline, the stated
            versions only.
        crds_read: whether ``state.crds`` was read from the cluster (offline: False; stored-version steps then
            apply whenever the upgrade crosses them).

    Returns:
        The plan; ``refusals`` non-empty when a removed API version is still stored or the stack pins an older
        version than the cluster runs.
    """
    target = pinned_versions(stack)
    result = UpgradePlan(current=dict(state.versions), target=target)
    kueue_target = target.get("kueue")
    kueue_now = state.versions.get("kueue")
    for operator, pinned in target.items():
        now = state.versions.get(operator)
        if now is not None and now > pinned:
            result.refusals.append(
                f"{operator} {version_text(now)} runs, the stack pins {version_text(pinned)}: a downgrade is not "
                "an upgrade step Batchplane plans"
            )
    if kueue_target is None or kueue_now is None:  # a fresh install has no upgrade steps
        return result
    for step in KUEUE_STEPS:
        if not _applies(step, kueue_now, kueue_target, state, stack, crds_read):
            continue
        notices = ray_sidecar_notices(stack) if step.condition == "ray" else ()
        if step.condition.startswith("stored-") and not crds_read:
            version = step.condition.removeprefix("stored-")
            notices = (
                f"offline: needed while kubectl get crd {' '.join(step.crds)} -o "
                f"jsonpath='{{.items[*].status.storedVersions}}' lists {version}",
            )
        result.steps.append(PlannedStep(step, notices))
    result.refusals.extend(
        stored_version_refusals({n: v.stored for n, v in state.crds.items()}, kueue_target)
    )
    return result

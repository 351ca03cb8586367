"""The ``batchplane:target`` section: which cluster the stack manages.

A tagged union on ``kind`` of the platforms' target models, each in its own home under
:mod:`batchplane.targets` (``kind``, ``existing``, ``openshift``, ``gke``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from batchplane.targets.existing.config import ExistingTarget
from batchplane.targets.gke.config import GkeTarget
from batchplane.targets.kind.config import KindTarget
from batchplane.targets.openshift.config import OpenShiftTarget

__all__ = [
    "TARGET_KINDS",
    "ExistingTarget",
    "GkeTarget",
    "KindTarget",
    "OpenShiftTarget",
    "Target",
    "TargetKind",
]


TargetKind = Literal["kind", "existing", "openshift", "gke"]
Target = Annotated[KindTarget | ExistingTarget | OpenShiftTarget | GkeTarget, Field(discriminator="kind")]
"""The target union (tag ``kind``)."""

TARGET_KINDS: tuple[str, ...] = ("kind", "existing", "openshift", "gke")
"""Every ``kind`` tag the union accepts (used to tidy error paths)."""


def cluster_identity(target: ExistingTarget | GkeTarget | KindTarget | OpenShiftTarget) -> tuple[str, ...]:
    """What makes two targets the same cluster: a GKE cluster's location and name, a kind cluster's name, an existing
    or OpenShift cluster's kubeconfig and context."""
    if isinstance(target, GkeTarget):
        return ("gke", target.location(), target.cluster_name)
    if isinstance(target, KindTarget):
        return ("kind", target.cluster_name)
    return (target.kind, getattr(target, "kubeconfig", None) or "", target.kube_context())

"""The ``batchplane:target`` section: which cluster the stack manages, and the platform that answers for it.

A tagged union on ``kind`` of the platforms' target models, each in its own home under
:mod:`batchplane.targets` (``kind``, ``existing``, ``openshift``, ``gke``), and :func:`platform_for`, which builds a
target's :class:`~batchplane.targets.platform.Platform` from the one platform registry
(:data:`batchplane.targets.registry.REGISTRY`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from batchplane.targets.existing.config import ExistingTarget
from batchplane.targets.gke.config import GkeTarget
from batchplane.targets.kind.config import KindTarget
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.platform import Platform
from batchplane.targets.registry import REGISTRY

__all__ = [
    "TARGET_KINDS",
    "ExistingTarget",
    "GkeTarget",
    "KindTarget",
    "OpenShiftTarget",
    "Target",
    "TargetKind",
    "platform_for",
]


TargetKind = Literal["kind", "existing", "openshift", "gke"]
Target = Annotated[KindTarget | ExistingTarget | OpenShiftTarget | GkeTarget, Field(discriminator="kind")]
"""The target union (tag ``kind``)."""

TARGET_KINDS: tuple[str, ...] = tuple(REGISTRY)
"""Every ``kind`` tag the union accepts (used to tidy error paths)."""


_BUILD: dict[str, Callable[[Any], Platform]] = {kind: d.platform for kind, d in REGISTRY.items()}


def platform_for(target: ExistingTarget | GkeTarget | KindTarget | OpenShiftTarget) -> Platform:
    """The platform of a validated target (looked up by its ``kind`` tag in :data:`~batchplane.targets.registry.REGISTRY`)."""
    return _BUILD[target.kind](target)


def cluster_identity(target: ExistingTarget | GkeTarget | KindTarget | OpenShiftTarget) -> tuple[str, ...]:
    """What makes two targets the same cluster (:meth:`~batchplane.targets.platform.Platform.cluster_identity`): a
    GKE cluster's location and name, a kind cluster's name, an existing or OpenShift cluster's kubeconfig and
    context."""
    return platform_for(target).cluster_identity()

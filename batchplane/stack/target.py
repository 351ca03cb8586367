"""The ``batchplane:target`` section: which cluster the stack manages, and the platform that answers for it.

A tagged union on ``kind`` of the platforms' target models, each in its own home under
:mod:`batchplane.targets` (``kind``, ``existing``, ``openshift``, ``gke``), and :data:`PLATFORMS`, the one registry
from a ``kind`` tag to its :class:`~batchplane.targets.platform.Platform` (:func:`platform_for`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from batchplane.targets.existing.config import ExistingTarget
from batchplane.targets.existing.platform import ExistingPlatform
from batchplane.targets.gke.config import GkeTarget
from batchplane.targets.gke.platform import GkePlatform
from batchplane.targets.kind.config import KindTarget
from batchplane.targets.kind.platform import KindPlatform
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.platform import OpenShiftPlatform
from batchplane.targets.platform import Platform

__all__ = [
    "PLATFORMS",
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

TARGET_KINDS: tuple[str, ...] = ("kind", "existing", "openshift", "gke")
"""Every ``kind`` tag the union accepts (used to tidy error paths)."""


PLATFORMS: dict[str, type[Platform]] = {
    platform.kind: platform for platform in (KindPlatform, ExistingPlatform, OpenShiftPlatform, GkePlatform)
}
"""Every platform by its target's ``kind`` tag (the same tags as :data:`TARGET_KINDS`)."""

_BUILD: dict[str, Callable[[Any], Platform]] = dict(PLATFORMS)


def platform_for(target: ExistingTarget | GkeTarget | KindTarget | OpenShiftTarget) -> Platform:
    """The platform of a validated target (looked up by its ``kind`` tag in :data:`PLATFORMS`)."""
    return _BUILD[target.kind](target)


def cluster_identity(target: ExistingTarget | GkeTarget | KindTarget | OpenShiftTarget) -> tuple[str, ...]:
    """What makes two targets the same cluster (:meth:`~batchplane.targets.platform.Platform.cluster_identity`): a
    GKE cluster's location and name, a kind cluster's name, an existing or OpenShift cluster's kubeconfig and
    context."""
    return platform_for(target).cluster_identity()

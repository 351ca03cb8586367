"""The one platform registry: every target ``kind`` tag → its :class:`PlatformDescriptor`.

A descriptor names the three halves of a platform, each in the platform's home ``batchplane/targets/<platform>/``:

* the pure :class:`~batchplane.targets.platform.Platform` (``platform.py``; imported here, no Pulumi);
* the Pulumi :class:`~batchplane.targets.deploy.PlatformDeploy` (``deploy.py``), named by module and class and
  imported only when a Pulumi program asks for it (:meth:`PlatformDescriptor.deploy_class`), so the stack loader,
  the webhook's policy and ``batchplane check`` never load Pulumi;
* its preflight half, a :class:`~batchplane.targets.preflight.PlatformPreflight` (``preflight.py``): what the
  platform needs of the world before ``pulumi up`` and the checks that ask it, imported only by ``batchplane
  preflight`` (:meth:`PlatformDescriptor.preflight_class`).

:mod:`batchplane.stack.target` builds a target's platform from this registry,
:class:`~batchplane.components.batch_cluster.BatchCluster` its Pulumi half and :mod:`batchplane.preflight` its
preflight half; nothing outside ``batchplane/targets/`` keys a table by a platform's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

from batchplane.targets.existing.platform import ExistingPlatform
from batchplane.targets.gke.platform import GkePlatform
from batchplane.targets.kind.platform import KindPlatform
from batchplane.targets.openshift.platform import OpenShiftPlatform
from batchplane.targets.platform import Platform

if TYPE_CHECKING:
    from batchplane.targets.deploy import PlatformDeploy
    from batchplane.targets.preflight import PlatformPreflight

__all__ = ["REGISTRY", "PlatformDescriptor", "descriptor"]


@dataclass(frozen=True)
class PlatformDescriptor:
    """One platform's halves.

    Attributes:
        platform: the pure platform class (its ``kind`` class attribute is the target's ``kind`` tag).
        deploy: ``"<module>:<class>"`` of its :class:`~batchplane.targets.deploy.PlatformDeploy` (imports Pulumi).
        preflight: ``"<module>:<class>"`` of its :class:`~batchplane.targets.preflight.PlatformPreflight`.
    """

    platform: type[Platform]
    deploy: str
    preflight: str

    @property
    def kind(self) -> str:
        """The target's ``kind`` tag (``gke``, ``openshift``, ``kind``, ``existing``)."""
        return self.platform.kind

    def deploy_class(self) -> type[PlatformDeploy]:
        """The Pulumi half, imported now (this imports Pulumi and the platform's providers)."""
        cls: type[PlatformDeploy] = _load(self.deploy)
        return cls

    def preflight_class(self) -> type[PlatformPreflight]:
        """The preflight half, imported now (its checkers import their client libraries only when they run)."""
        cls: type[PlatformPreflight] = _load(self.preflight)
        return cls


def _load(name: str) -> Any:
    module, _, attribute = name.partition(":")
    return getattr(import_module(module), attribute)


def _home(platform: type[Platform]) -> str:
    return platform.__module__.rsplit(".", 1)[0]


def _describe(platform: type[Platform], deploy_class: str, preflight_class: str) -> PlatformDescriptor:
    home = _home(platform)
    return PlatformDescriptor(
        platform, f"{home}.deploy:{deploy_class}", f"{home}.preflight:{preflight_class}"
    )


REGISTRY: dict[str, PlatformDescriptor] = {
    d.kind: d
    for d in (
        _describe(KindPlatform, "KindDeploy", "KindPreflight"),
        _describe(ExistingPlatform, "ExistingDeploy", "ExistingPreflight"),
        _describe(OpenShiftPlatform, "OpenShiftDeploy", "OpenShiftPreflight"),
        _describe(GkePlatform, "GkeDeploy", "GkePreflight"),
    )
}
"""Every platform by its target's ``kind`` tag, in the target union's order."""


def descriptor(kind: str) -> PlatformDescriptor:
    """The descriptor of a target ``kind`` tag.

    Raises:
        KeyError: no platform has that tag (the target union has already refused it in a validated stack).
    """
    return REGISTRY[kind]

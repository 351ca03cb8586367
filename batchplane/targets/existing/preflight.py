"""The existing-cluster platform's preflight half (:class:`ExistingPreflight`,
:class:`~batchplane.targets.preflight.PlatformPreflight`): the kubeconfig context the stack reaches the cluster with
(checked by :func:`batchplane.preflight.kube.kube_client`); the platform asks nothing else."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from batchplane.preflight.kube import KubeContext
from batchplane.targets.existing.config import ExistingTarget
from batchplane.targets.preflight import PlatformPreflight, StackFacts

if TYPE_CHECKING:
    from batchplane.preflight.model import Requirements


class ExistingPreflight(PlatformPreflight):
    """An existing cluster needs its kubeconfig context."""

    def add_requirements(self, facts: StackFacts, targets: list[tuple[Any, str]], req: Requirements) -> None:
        target, path = targets[0]
        assert isinstance(target, ExistingTarget)
        req.contexts.append(KubeContext(target.kube_context(), target.kubeconfig, f"{path}.context"))

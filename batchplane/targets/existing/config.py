"""The ``kind: existing`` target: any existing cluster reached through a kubeconfig context."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from batchplane.config.base import ConfigModel


class ExistingTarget(ConfigModel):
    """Any existing cluster reached through a kubeconfig context (EKS, AKS, on-prem, a GKE cluster
    managed elsewhere). Batchplane installs nothing at the cluster level."""

    kind: Literal["existing"]
    """Required tag: ``existing``."""
    context: Annotated[str, Field(min_length=1)]
    """Required. The kubeconfig context to use."""
    kubeconfig: str | None = None
    """Path to a kubeconfig file. Defaults to the provider's default (``$KUBECONFIG`` or ``~/.kube/config``)."""

    def kube_context(self) -> str:
        """The kubeconfig context the Kubernetes provider uses."""
        return self.context

"""The ``kind: kind`` target: a local kind cluster (``kind create cluster --name <clusterName>``)."""

from __future__ import annotations

from typing import Literal

from batchplane.config.base import ConfigModel, DnsLabel


class KindTarget(ConfigModel):
    """A local kind cluster (``kind create cluster --name <clusterName>``)."""

    kind: Literal["kind"]
    """Required tag: ``kind``."""
    cluster_name: DnsLabel = "batchplane"
    """The kind cluster's name. Defaults to ``batchplane``."""
    context: str | None = None
    """kubeconfig context to use. Defaults to ``kind-<clusterName>``, the context kind writes."""

    def kube_context(self) -> str:
        """The kubeconfig context the Kubernetes provider uses."""
        return self.context or f"kind-{self.cluster_name}"

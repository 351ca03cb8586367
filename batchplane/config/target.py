"""The ``batchplane:target`` section: which cluster the stack manages.

A tagged union on ``kind``. ``kind`` (a local kind cluster) and ``existing`` (any cluster reached
through a kubeconfig context) are here; ``gke`` and ``openshift`` join the union in their own modules.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from batchplane.config.base import ConfigModel, DnsLabel
from batchplane.config.gke import GkeTarget
from batchplane.config.openshift import OpenShiftTarget


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


TargetKind = Literal["kind", "existing", "openshift", "gke"]
Target = Annotated[KindTarget | ExistingTarget | OpenShiftTarget | GkeTarget, Field(discriminator="kind")]
"""The target union (tag ``kind``)."""

TARGET_KINDS: tuple[str, ...] = ("kind", "existing", "openshift", "gke")
"""Every ``kind`` tag the union accepts (used to tidy error paths)."""

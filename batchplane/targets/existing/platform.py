"""The existing-cluster platform (:class:`~batchplane.targets.platform.Platform`): any cluster reached through a
kubeconfig context; operators installed with Helm; no pools, no image build."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.config.operators import OperatorHost
from batchplane.config.settings import Setting
from batchplane.targets.existing.config import ExistingTarget
from batchplane.targets.platform import Connection, Platform


class ExistingPlatform(Platform):
    """An existing cluster (``target: {kind: existing, context: …}``)."""

    kind = "existing"
    operator_host = OperatorHost(kind="existing")

    def __init__(self, target: ExistingTarget) -> None:
        self.target = target

    def cluster_identity(self) -> tuple[str, ...]:
        """``("existing", <kubeconfig or "">, <context>)``."""
        return ("existing", self.target.kubeconfig or "", self.target.kube_context())

    def connection(self) -> Connection:
        """The target's context and kubeconfig."""
        return Connection(context=self.target.kube_context(), kubeconfig=self.target.kubeconfig)

    def environment_settings(
        self, env: str, config: Mapping[str, Any], target: Mapping[str, Any]
    ) -> list[Setting]:
        """The kubeconfig context of the cluster."""
        question = "kubeconfig context of the cluster (`oc login` writes one)"
        return [Setting("batchplane:target", ("context",), question, None, "context")]

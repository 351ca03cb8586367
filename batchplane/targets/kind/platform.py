"""The kind platform (:class:`~batchplane.targets.platform.Platform`): a local kind cluster reached through the
context kind writes; operators installed with Helm; the webhook image built locally and loaded into the nodes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.config.operators import OperatorHost
from batchplane.config.settings import Setting
from batchplane.config.webhook import WebhookConfig
from batchplane.errors import ConfigIssue
from batchplane.targets.kind.config import KindTarget
from batchplane.targets.platform import Connection, Platform


class KindPlatform(Platform):
    """A local kind cluster (``target: {kind: kind}``)."""

    kind = "kind"
    operator_host = OperatorHost(kind="kind")
    image_registry = "kind"

    def __init__(self, target: KindTarget) -> None:
        self.target = target

    def check_build(self, webhook: WebhookConfig) -> list[ConfigIssue]:
        """``kind load`` loads the image under ``webhook.image``'s tag, so that must be a tag, not a digest."""
        if "@" not in webhook.resolved_image:
            return []
        return [
            ConfigIssue(
                "batchplane:webhook.image",
                "registry kind builds and loads the image under this name, so it must be pinned by tag "
                f"(name:tag), not by digest: {webhook.resolved_image}",
            )
        ]

    def cluster_identity(self) -> tuple[str, ...]:
        """``("kind", <cluster name>)``."""
        return ("kind", self.target.cluster_name)

    def connection(self) -> Connection:
        """The kind context (``kind-<clusterName>`` unless ``context`` is set), default kubeconfig."""
        return Connection(context=self.target.kube_context())

    def environment_settings(
        self, env: str, config: Mapping[str, Any], target: Mapping[str, Any]
    ) -> list[Setting]:
        """The kind cluster's name."""
        name = target.get("clusterName")
        return [Setting("batchplane:target", ("clusterName",), "kind cluster name", name, "cluster_name")]

"""The validated stack's types: :class:`StackConfig` (every ``batchplane:`` key) and :class:`Stack` (the config, its
expanded Kueue objects, warnings, other namespaces' keys, declared workers), and what follows from them alone
(whether the stack deploys the quota webhook: :func:`webhook_deployed`, :func:`webhook_enabled`).

Plain models, importing no loader: :func:`batchplane.stack.load.load_stack` builds them, and the loader's hooks
(:mod:`batchplane.stack.pool_hooks`, :mod:`batchplane.stack.observability`) read them without importing the loader
(issue #40: no import circle).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from batchplane.config.base import ConfigModel
from batchplane.config.kueue import KueueConfig
from batchplane.config.observability import ObservabilityConfig
from batchplane.config.operators import OperatorsConfig
from batchplane.config.rules import ExpandedKueue
from batchplane.config.teams import TeamsConfig
from batchplane.config.webhook import WebhookConfig
from batchplane.errors import ConfigIssue
from batchplane.multikueue.config import MultiKueueSection
from batchplane.stack.target import Target, platform_for
from batchplane.targets.platform import Platform

__all__ = ["CONFIG_NAMESPACE", "Environment", "Stack", "StackConfig", "webhook_deployed", "webhook_enabled"]

CONFIG_NAMESPACE = "batchplane"
"""Pulumi config namespace of every Batchplane key (``batchplane:<key>``)."""

Environment = Literal["dev", "staging", "production"]


class StackConfig(ConfigModel):
    """Every ``batchplane:`` key of a stack. Unknown keys are errors."""

    environment: Environment = "dev"
    """``dev``, ``staging`` or ``production``. Policies are stricter on ``production`` (deletion
    protection, private nodes, finite quotas, webhook replicas). Defaults to ``dev``."""
    target: Target
    """Required. The cluster: ``{kind: kind}``, ``{kind: existing, context: ...}``."""
    kueue: KueueConfig = KueueConfig()
    """Kueue objects. Defaults to none."""
    teams: TeamsConfig | None = None
    """Team shorthand, expanded into ClusterQueues/LocalQueues/namespaces. Defaults to none."""
    operators: OperatorsConfig | None = None
    """In-cluster operators installed with Helm (cert-manager, KubeRay, Kueue, Kubeflow training,
    AppWrapper) and the Kueue Configuration (docs/operators.md). Defaults to none: nothing installed,
    Kueue is expected to be there already. Not allowed on OpenShift (OLM installs come from the target)."""
    webhook: WebhookConfig = WebhookConfig()
    """The quota admission webhook and per-namespace workload limits (docs/webhook.md). Defaults to
    deployed when cert-manager is installed, with the image the stack builds for its platform, 2 replicas,
    ``failurePolicy: Fail``."""
    multi_kueue: MultiKueueSection | None = None
    """MultiKueue: this stack's cluster is the manager and dispatches workloads to existing worker clusters
    (docs/multikueue.md). Defaults to none."""
    observability: ObservabilityConfig = ObservabilityConfig()
    """Metrics collection (per platform) and the alert rules generated from the stack (docs/observability.md).
    Defaults to enabled with the default thresholds."""


@dataclass(frozen=True)
class Stack:
    """A validated stack: the typed config, its expanded Kueue objects and any warnings.

    Attributes:
        name: the stack name (``kind`` for ``stacks/Pulumi.kind.yaml``).
        config: the typed ``batchplane:`` config as written, with the platform's default ``webhook.build`` made
            explicit when the webhook is deployed and neither ``webhook.image`` nor ``webhook.build`` is given.
        kueue: every Kueue object after shorthand expansion, with its config key path.
        warnings: issues that do not block the stack.
        other_config: config keys of other namespaces (``kubernetes:context``, ``gcp:project`` ...).
        workers: the MultiKueue workers this program declares (``multiKueue.workers[].target``), by worker
            name, each validated as a stack of its own (``<stack>-<worker>``), in ``workers`` order.
    """

    name: str
    config: StackConfig
    kueue: ExpandedKueue
    warnings: list[ConfigIssue] = field(default_factory=list)
    other_config: dict[str, Any] = field(default_factory=dict)
    workers: dict[str, Stack] = field(default_factory=dict)

    @property
    def platform(self) -> Platform:
        """The platform of the stack's target (:func:`batchplane.stack.target.platform_for`)."""
        return platform_for(self.config.target)


def webhook_deployed(config: StackConfig, platform: Platform) -> bool:
    """Whether the stack deploys the quota webhook: ``webhook.enabled`` when set, else whether the stack installs
    cert-manager, which its serving certificate needs (``operators.certManager.enabled``, or a platform that always
    installs it: :attr:`~batchplane.targets.platform.Platform.installs_cert_manager`, OpenShift's operator plan)."""
    if config.webhook.enabled is not None:
        return config.webhook.enabled
    ops = config.operators
    return platform.installs_cert_manager or (ops is not None and ops.cert_manager.enabled)


def webhook_enabled(stack: Stack) -> bool:
    """Whether the stack deploys the webhook (:func:`webhook_deployed`)."""
    return webhook_deployed(stack.config, stack.platform)

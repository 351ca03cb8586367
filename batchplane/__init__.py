"""Batchplane: a GPU batch platform as code.

``from batchplane import …`` is the public surface (docs/api.md); every other module path is internal and may move
between releases. Three uses, each with its names:

* **typed stack config as a library** — :class:`StackConfig` and the models it is made of, validated with every
  rule of the loader by :func:`load_stack_config` (or :func:`load_stack` for a ``batchplane:`` config map,
  :func:`load_stack_file` for a ``Pulumi.<stack>.yaml``), which raise :class:`ConfigValidationError` listing every
  :class:`ConfigIssue` at once;
* **the components in a Pulumi program of your own** — :class:`BatchCluster` with :class:`BatchClusterArgs`, given a
  :class:`ClusterConnection` to a cluster the program already reaches;
* **the quota webhook embedded in another process** — :func:`render_policy` (a validated :class:`Stack` → the
  :class:`PolicyDocument`), :func:`load_policy` / :func:`parse_policy`, :class:`Decider` (one
  AdmissionReview request → :class:`Decision`) and :func:`create_app` (the ASGI app the image serves).

The names are resolved on first use (PEP 562), so ``import batchplane`` imports neither Pulumi nor the stack loader:
the webhook process imports this package and must stay small (``tests/webhook/test_process_imports.py``). Only the
component names import Pulumi, and only when they are used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from batchplane._version import __version__

#: Public name → the module that defines it.
_EXPORTS: dict[str, str] = {
    # typed stack config
    "StackConfig": "batchplane.stack",
    "Stack": "batchplane.stack",
    "load_stack": "batchplane.stack",
    "load_stack_config": "batchplane.stack",
    "load_stack_file": "batchplane.stack",
    "ConfigIssue": "batchplane.errors",
    "ConfigValidationError": "batchplane.errors",
    "BatchplaneError": "batchplane.errors",
    "KueueConfig": "batchplane.config.kueue",
    "ResourceFlavor": "batchplane.config.kueue",
    "ClusterQueue": "batchplane.config.kueue",
    "Cohort": "batchplane.config.kueue",
    "LocalQueue": "batchplane.config.kueue",
    "TeamsConfig": "batchplane.config.teams",
    "Team": "batchplane.config.teams",
    "OperatorsConfig": "batchplane.config.operators",
    "WebhookConfig": "batchplane.config.webhook",
    "KindTarget": "batchplane.targets.kind.config",
    "ExistingTarget": "batchplane.targets.existing.config",
    "GkeTarget": "batchplane.targets.gke.config",
    "OpenShiftTarget": "batchplane.targets.openshift.config",
    # Pulumi components (importing these imports Pulumi)
    "BatchCluster": "batchplane.components.batch_cluster",
    "BatchClusterArgs": "batchplane.components.batch_cluster",
    "ClusterConnection": "batchplane.targets.deploy",
    # the quota webhook
    "PolicyDocument": "batchplane.webhook.policy",
    "load_policy": "batchplane.webhook.policy",
    "parse_policy": "batchplane.webhook.policy",
    "render_policy": "batchplane.components.quota_webhook.policy",
    "Decider": "batchplane.webhook.decisions",
    "Decision": "batchplane.webhook.decisions",
    "create_app": "batchplane.webhook.app",
}

__all__ = [
    "BatchCluster",
    "BatchClusterArgs",
    "BatchplaneError",
    "ClusterConnection",
    "ClusterQueue",
    "Cohort",
    "ConfigIssue",
    "ConfigValidationError",
    "Decider",
    "Decision",
    "ExistingTarget",
    "GkeTarget",
    "KindTarget",
    "KueueConfig",
    "LocalQueue",
    "OpenShiftTarget",
    "OperatorsConfig",
    "PolicyDocument",
    "ResourceFlavor",
    "Stack",
    "StackConfig",
    "Team",
    "TeamsConfig",
    "WebhookConfig",
    "__version__",
    "create_app",
    "load_policy",
    "load_stack",
    "load_stack_config",
    "load_stack_file",
    "parse_policy",
    "render_policy",
]

if TYPE_CHECKING:
    from batchplane.components.batch_cluster import BatchCluster, BatchClusterArgs
    from batchplane.components.quota_webhook.policy import render_policy
    from batchplane.config.kueue import ClusterQueue, Cohort, KueueConfig, LocalQueue, ResourceFlavor
    from batchplane.config.operators import OperatorsConfig
    from batchplane.config.teams import Team, TeamsConfig
    from batchplane.config.webhook import WebhookConfig
    from batchplane.errors import BatchplaneError, ConfigIssue, ConfigValidationError
    from batchplane.stack import Stack, StackConfig, load_stack, load_stack_config, load_stack_file
    from batchplane.targets.deploy import ClusterConnection
    from batchplane.targets.existing.config import ExistingTarget
    from batchplane.targets.gke.config import GkeTarget
    from batchplane.targets.kind.config import KindTarget
    from batchplane.targets.openshift.config import OpenShiftTarget
    from batchplane.webhook.app import create_app
    from batchplane.webhook.decisions import Decider, Decision
    from batchplane.webhook.policy import PolicyDocument, load_policy, parse_policy


def __getattr__(name: str) -> Any:
    """Import the module behind a public name on first use and cache the name here.

    Raises:
        AttributeError: ``name`` is not part of the public surface.
    """
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'batchplane' has no attribute {name!r} (the public names: docs/api.md)")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

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

from batchplane._version import __version__ as __version__

# The public names, each once: the imports below are what a type checker reads (``X as X`` re-exports it under
# ``mypy --strict``), and :func:`_exports` reads the same lines at run time for the lazy lookup, ``__all__`` and
# ``dir()`` — the pattern of scientific-python's lazy_loader ``attach_stub``, without its dependency.
if TYPE_CHECKING:
    from batchplane.components.batch_cluster import BatchCluster as BatchCluster
    from batchplane.components.batch_cluster import BatchClusterArgs as BatchClusterArgs
    from batchplane.components.quota_webhook.policy import render_policy as render_policy
    from batchplane.config.kueue import ClusterQueue as ClusterQueue
    from batchplane.config.kueue import Cohort as Cohort
    from batchplane.config.kueue import KueueConfig as KueueConfig
    from batchplane.config.kueue import LocalQueue as LocalQueue
    from batchplane.config.kueue import ResourceFlavor as ResourceFlavor
    from batchplane.config.operators import OperatorsConfig as OperatorsConfig
    from batchplane.config.teams import Team as Team
    from batchplane.config.teams import TeamsConfig as TeamsConfig
    from batchplane.config.webhook import WebhookConfig as WebhookConfig
    from batchplane.errors import BatchplaneError as BatchplaneError
    from batchplane.errors import ConfigIssue as ConfigIssue
    from batchplane.errors import ConfigValidationError as ConfigValidationError
    from batchplane.stack import Stack as Stack
    from batchplane.stack import StackConfig as StackConfig
    from batchplane.stack import load_stack as load_stack
    from batchplane.stack import load_stack_config as load_stack_config
    from batchplane.stack import load_stack_file as load_stack_file
    from batchplane.targets.deploy import ClusterConnection as ClusterConnection
    from batchplane.targets.existing.config import ExistingTarget as ExistingTarget
    from batchplane.targets.gke.config import GkeTarget as GkeTarget
    from batchplane.targets.kind.config import KindTarget as KindTarget
    from batchplane.targets.openshift.config import OpenShiftTarget as OpenShiftTarget
    from batchplane.webhook.app import create_app as create_app
    from batchplane.webhook.decisions import Decider as Decider
    from batchplane.webhook.decisions import Decision as Decision
    from batchplane.webhook.policy import PolicyDocument as PolicyDocument
    from batchplane.webhook.policy import load_policy as load_policy
    from batchplane.webhook.policy import parse_policy as parse_policy


_exported: dict[str, str] = {}


def _exports() -> dict[str, str]:
    """Public name → the module that defines it, read from this file's ``if TYPE_CHECKING:`` imports (once)."""
    if not _exported:
        import ast

        with open(__file__, encoding="utf-8") as source:
            tree = ast.parse(source.read())
        (block,) = [n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
        for node in block.body:
            assert isinstance(node, ast.ImportFrom) and node.module is not None
            _exported.update({alias.asname or alias.name: node.module for alias in node.names})
    return _exported


def __getattr__(name: str) -> Any:
    """Import the module behind a public name on first use and cache the name here; ``__all__`` is
    ``__version__`` and every public name.

    Raises:
        AttributeError: ``name`` is not part of the public surface.
    """
    if name == "__all__":
        value: Any = ["__version__", *_exports()]
    elif (module := _exports().get(name)) is not None:
        value = getattr(importlib.import_module(module), name)
    else:
        raise AttributeError(f"module 'batchplane' has no attribute {name!r} (the public names: docs/api.md)")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), "__all__", *_exports()})

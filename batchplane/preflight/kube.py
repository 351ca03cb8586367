"""Preflight's kubeconfig client: a ``kubernetes.client.ApiClient`` for each context the stack uses (OpenShift, kind,
an existing cluster), read with the kubernetes client (``kubernetes.config``) as the Kubernetes provider reads it, or
a blocker naming the context's key path when the kubeconfig or the context is missing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from batchplane.preflight.report import Report


@dataclass(frozen=True)
class KubeContext:
    """A kubeconfig context the stack uses.

    Attributes:
        context: the context name.
        kubeconfig: an explicit kubeconfig file, or None for ``$KUBECONFIG`` / ``~/.kube/config``.
        path: the config key path.
        fix: how to create or reach the context when the kubeconfig lacks it (the platform's advice: kind's
            ``kind create cluster``), or None for logging in to the cluster.
    """

    context: str
    kubeconfig: str | None
    path: str
    fix: str | None = None


def kube_client(need: KubeContext, report: Report) -> Any | None:
    """An ``ApiClient`` for the context, or None with a blocker when the kubeconfig or the context is missing."""
    from kubernetes import config
    from kubernetes.config.config_exception import ConfigException

    # $KUBECONFIG read now (the client reads it once, at import); a list of files is merged by the client.
    kubeconfig = need.kubeconfig or os.environ.get("KUBECONFIG") or None
    try:
        contexts, _ = config.list_kube_config_contexts(config_file=kubeconfig)  # type: ignore[no-untyped-call]
    except (ConfigException, OSError) as exc:
        report.blocker(
            "kube-context",
            need.path,
            f"no usable kubeconfig ({exc}); the stack needs context {need.context}",
            _context_fix(need),
        )
        return None
    if need.context not in {c["name"] for c in contexts}:
        names = ", ".join(sorted(c["name"] for c in contexts)) or "none"
        report.blocker(
            "kube-context",
            need.path,
            f'kubeconfig has no context "{need.context}" (contexts: {names})',
            _context_fix(need),
        )
        return None
    report.ran("kube-context")
    return config.new_client_from_config(  # type: ignore[no-untyped-call]
        config_file=kubeconfig, context=need.context
    )


def _context_fix(need: KubeContext) -> str:
    if need.fix is not None:
        return need.fix
    return "log in to the cluster (oc login …) or set target.context to an existing context (kubectl config get-contexts)"

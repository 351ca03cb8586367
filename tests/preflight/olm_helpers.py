"""A kubeconfig file for the kubernetes-client tests."""

from __future__ import annotations

from pathlib import Path

import yaml


def kubeconfig(directory: Path, server: str, context: str) -> Path:
    """Write a kubeconfig with one context (token auth) pointing at `server`; returns its path."""
    path = directory / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "sha256~recorded"}}],
                "contexts": [{"name": context, "context": {"cluster": "c", "user": "u"}}],
                "current-context": context,
            }
        ),
        encoding="utf-8",
    )
    return path

"""Kueue object builders (pure functions from the typed config to Kubernetes object dicts)."""

from batchplane.kueue.builders import kueue_objects, namespaces

__all__ = ["kueue_objects", "namespaces"]

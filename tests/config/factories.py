"""Builders for stack config maps used across the config tests."""

from __future__ import annotations

import copy
from typing import Any


def base_config() -> dict[str, Any]:
    """A small valid stack: one flavor, a ClusterQueue in a cohort, a default LocalQueue."""
    return {
        "batchplane:target": {"kind": "kind"},
        "batchplane:kueue": {
            "resourceFlavors": [{"name": "f1"}, {"name": "f2"}],
            "clusterQueues": [
                {
                    "name": "cq",
                    "cohortName": "co",
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu", "memory"],
                            "flavors": [
                                {
                                    "name": "f1",
                                    "resources": [
                                        {"name": "cpu", "nominalQuota": 4},
                                        {"name": "memory", "nominalQuota": "8Gi"},
                                    ],
                                }
                            ],
                        }
                    ],
                }
            ],
            "localQueues": [{"name": "lq", "namespace": "team-a", "clusterQueue": "cq", "default": True}],
        },
    }


def with_changes(**changes: Any) -> dict[str, Any]:
    """``base_config()`` with dotted-path changes applied: ``{"kueue.clusterQueues.0.name": "x"}``.

    Keys use ``__`` for ``.`` (Python kwargs) and the first part is the ``batchplane:`` key.
    A value of ``DELETE`` removes the key.
    """
    cfg = copy.deepcopy(base_config())
    for dotted, value in changes.items():
        parts = dotted.split("__")
        node: Any = cfg.setdefault(f"batchplane:{parts[0]}", {}) if len(parts) > 1 else cfg
        if len(parts) == 1:
            key: Any = f"batchplane:{parts[0]}"
        else:
            for part in parts[1:-1]:
                node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
            node = node if node is not None else {}
            key = int(parts[-1]) if isinstance(node, list) else parts[-1]
        if value is DELETE:
            del node[key]
        elif isinstance(node, list) and key == len(node):
            node.append(value)
        else:
            node[key] = value
    return cfg


DELETE = object()

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


def apply_changes(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of a stack config map with dotted-path changes applied.

    Keys use ``__`` for ``.`` (Python kwargs); the first part is the ``batchplane:`` key:
    ``kueue__clusterQueues__0__name="x"`` sets ``batchplane:kueue.clusterQueues[0].name``. A list
    index equal to the list's length appends; a value of :data:`DELETE` removes the key.
    """
    cfg = copy.deepcopy(base)
    for dotted, value in changes.items():
        first, *rest = dotted.split("__")
        key: Any = f"batchplane:{first}"
        node: Any = cfg
        for part in rest:
            node = node.setdefault(key, {}) if isinstance(node, dict) else node[key]
            key = int(part) if isinstance(node, list) else part
        if value is DELETE:
            del node[key]
        elif isinstance(node, list) and key == len(node):
            node.append(value)
        else:
            node[key] = value
    return cfg


def with_changes(**changes: Any) -> dict[str, Any]:
    """``base_config()`` with :func:`apply_changes`."""
    return apply_changes(base_config(), **changes)


DELETE = object()

"""Hypothesis strategies for whole stack configs: mostly plausible ones, then mutated.

The plausible generator draws from the vocabulary of the stack models (``StackConfig`` and the Kueue, teams,
webhook, operators and target models), so that a good share of the drawn configs are valid and the rest break
a rule on purpose; :func:`mutated` then replaces, deletes or adds one key anywhere in the config with a value
drawn from the classes that have broken Batchplane before (negative, empty, huge, wrong type, absurd
quantity). Every size is bounded: at most 3 flavors, 3 ClusterQueues, 4 LocalQueues, 2 teams, 2
WorkloadPriorityClasses, 2 webhook namespaces.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

FLAVORS = ["f0", "f1", "f2"]
RESOURCES = ["cpu", "memory", "nvidia.com/gpu"]
NAMESPACES = ["team-a", "team-b", "research"]
COHORTS = ["c0", "c1"]

#: Values that have broken a config layer before, used by :func:`mutated`.
ODD_VALUES: list[Any] = [
    -1, 0, 2**40, -(2**31) - 1, 1.5, True, None, "", " ", "x" * 300, "Upper_Case", "-4", "1e500000", "9" * 80,
    [], {}, [None], {"secure": "AAAB"}, {"nested": {"deep": [1, 2]}},
]  # fmt: skip


def quantity(resource: str) -> st.SearchStrategy[Any]:
    if resource == "memory":
        return st.sampled_from(["1Gi", "8Gi", "36Gi", "512Mi", 1073741824, "0"])
    if resource == "cpu":
        return st.sampled_from([0, 1, 4, 8, "500m", "1.5", "100"])
    return st.integers(0, 16)


@st.composite
def flavor(draw: st.DrawFn, name: str) -> dict[str, Any]:
    f: dict[str, Any] = {"name": name}
    if draw(st.booleans()):
        f["nodeLabels"] = {"pool": name}
    if draw(st.integers(0, 3)) == 0:
        f["tolerations"] = [
            draw(
                st.sampled_from(
                    [
                        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "dedicated", "operator": "Equal", "value": name},
                        {"key": "k", "operator": "Exists", "value": ""},
                    ]
                )
            )
        ]
    return f


@st.composite
def cluster_queue(draw: st.DrawFn, name: str, flavors: list[str]) -> dict[str, Any]:
    covered = draw(st.lists(st.sampled_from(RESOURCES), min_size=1, max_size=3, unique=True))
    used = draw(st.lists(st.sampled_from(flavors), min_size=1, max_size=len(flavors), unique=True))
    group = {
        "coveredResources": covered,
        "flavors": [
            {"name": f, "resources": [{"name": r, "nominalQuota": draw(quantity(r))} for r in covered]}
            for f in used
        ],
    }
    cq: dict[str, Any] = {"name": name, "namespaceSelector": {}, "resourceGroups": [group]}
    if draw(st.booleans()):
        cq["cohortName"] = draw(st.sampled_from(COHORTS))
    if draw(st.integers(0, 3)) == 0:
        cq["fairSharing"] = {"weight": draw(st.sampled_from([0, 1, 2, "500m"]))}
    if draw(st.integers(0, 3)) == 0:
        cq["preemption"] = {"withinClusterQueue": draw(st.sampled_from(["Never", "LowerPriority"]))}
    return cq


@st.composite
def plausible_config(draw: st.DrawFn) -> dict[str, Any]:
    """A stack config that is often valid: kind target, flavors, ClusterQueues, LocalQueues and extras."""
    flavor_names = FLAVORS[: draw(st.integers(1, 3))]
    cq_names = [f"cq{i}" for i in range(draw(st.integers(1, 3)))]
    kueue: dict[str, Any] = {
        "resourceFlavors": [draw(flavor(name)) for name in flavor_names],
        "clusterQueues": [draw(cluster_queue(name, flavor_names)) for name in cq_names],
    }
    local_queues = []
    for i in range(draw(st.integers(0, 4))):
        lq: dict[str, Any] = {
            "name": f"lq{i}",
            "namespace": draw(st.sampled_from(NAMESPACES)),
            "clusterQueue": draw(st.sampled_from([*cq_names, "missing"])),
        }
        if draw(st.integers(0, 4)) == 0:
            lq["fairSharing"] = {"weight": draw(st.sampled_from([1, "-1", 0]))}
        local_queues.append(lq)
    kueue["localQueues"] = local_queues
    if draw(st.booleans()):
        kueue["workloadPriorityClasses"] = [
            {"name": f"p{i}", "value": draw(st.integers(-(2**31), 2**31 - 1)), "description": "generated"}
            for i in range(draw(st.integers(1, 2)))
        ]
    if draw(st.integers(0, 2)) == 0:
        kueue["namespaces"] = [
            {
                "name": draw(st.sampled_from(NAMESPACES)),
                "labels": {"owner": "ml"},
                "annotations": {"note": "x"},
            }
        ]
    config: dict[str, Any] = {
        "batchplane:environment": draw(st.sampled_from(["dev", "staging"])),
        "batchplane:target": {"kind": "kind"},
        "batchplane:kueue": kueue,
    }
    if draw(st.integers(0, 2)) == 0:
        config["batchplane:teams"] = {
            "members": [
                {"name": f"t{i}", "quotas": {flavor_names[0]: {"cpu": draw(quantity("cpu"))}}}
                for i in range(draw(st.integers(1, 2)))
            ]
        }
    if draw(st.integers(0, 2)) == 0:
        config["batchplane:operators"] = {
            "certManager": {"version": "v1.21.1"},
            "kueue": {"version": "0.19.2"},
        }
        webhook: dict[str, Any] = {
            "namespace": draw(st.sampled_from(["batchplane-system", "wh", "kube-system"]))
        }
        if draw(st.booleans()):
            webhook["namespaces"] = [
                {
                    "name": draw(st.sampled_from(["ml", "team-a", "kube-system"])),
                    "limits": {
                        "maxWorkloadRequests": {"cpu": draw(st.sampled_from(["64", "-4", "1e500000"]))}
                    },
                }
            ]
        config["batchplane:webhook"] = webhook
    return config


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*path, index))
    return found


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    """``base`` with one change at a random place: a value replaced, a key deleted or an unknown key added."""
    config = copy.deepcopy(draw(base))
    paths = _paths(config)
    path = draw(st.sampled_from(paths))
    parent: Any = config
    for part in path[:-1]:
        parent = parent[part]
    action = draw(st.sampled_from(["replace", "delete", "add"]))
    if action == "replace":
        parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(ODD_VALUES)))
    elif action == "delete":
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent["unexpectedKey"] = draw(st.sampled_from(ODD_VALUES))
    return config


def _templates() -> list[dict[str, Any]]:
    from batchplane.offline.stackfile import read_stack_file
    from tests.conftest import TEMPLATES_DIR

    return [read_stack_file(path) for path in sorted(TEMPLATES_DIR.glob("Pulumi.*.yaml"))]


#: The shipped templates (GKE, OpenShift, kind) as config maps, to mutate: their targets, pools and operators
#: reach the program paths the plausible generator (kind only) does not.
template_configs = st.sampled_from(_templates()).map(copy.deepcopy)

#: Configs for the property tests: plausible ones, mutated ones, and mutated shipped templates.
stack_configs = st.one_of(plausible_config(), mutated(plausible_config()), mutated(template_configs))

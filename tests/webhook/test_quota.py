"""Kueue's quota model: potential available quota through cohort trees, flavor eligibility, and the
exact search — checked against a brute-force reference model with hypothesis (it must never deny a
workload some flavor assignment could admit, and must deny every one none could)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchplane.webhook.errors import PolicyError
from batchplane.webhook.policy import PolicyDocument, parse_policy
from batchplane.webhook.quota import Demand, Flavor, check_capacity, compile_queues, flavor_mismatch


def _groups(quotas: dict[str, dict[str, dict[str, int | None]]]) -> list[dict[str, Any]]:
    """``{flavor: {resource: {nominal, borrowing, lending}}}`` → one resource group per distinct resource set."""
    by_resources: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for flavor, resources in quotas.items():
        by_resources.setdefault(tuple(resources), []).append(
            {
                "name": flavor,
                "resources": {
                    r: {
                        "nominalQuota": str(q["nominal"]),
                        "borrowingLimit": None if q.get("borrowing") is None else str(q["borrowing"]),
                        "lendingLimit": None if q.get("lending") is None else str(q["lending"]),
                    }
                    for r, q in resources.items()
                },
            }
        )
    return [{"coveredResources": list(k), "flavors": v} for k, v in by_resources.items()]


def _policy(cqs: dict[str, Any], cohorts: dict[str, Any] | None = None) -> PolicyDocument:
    return parse_policy(
        {
            "stack": "t",
            "clusterQueues": {
                n: {"cohort": c.get("cohort"), "resourceGroups": _groups(c["quotas"])} for n, c in cqs.items()
            },
            "cohorts": {
                n: {"parent": c.get("parent"), "resourceGroups": _groups(c.get("quotas", {}))}
                for n, c in (cohorts or {}).items()
            },
        }
    )


def q(nominal: int, borrowing: int | None = None, lending: int | None = None) -> dict[str, int | None]:
    return {"nominal": nominal, "borrowing": borrowing, "lending": lending}


POTENTIAL_CASES = [
    ({"a": {"quotas": {"f": {"cpu": q(4)}}}}, None, 4),
    (
        {
            "a": {"cohort": "c", "quotas": {"f": {"cpu": q(4)}}},
            "b": {"cohort": "c", "quotas": {"f": {"cpu": q(6)}}},
        },
        None,
        10,
    ),
    (
        {
            "a": {"cohort": "c", "quotas": {"f": {"cpu": q(4, borrowing=2)}}},
            "b": {"cohort": "c", "quotas": {"f": {"cpu": q(6)}}},
        },
        None,
        6,
    ),
    (
        {
            "a": {"cohort": "c", "quotas": {"f": {"cpu": q(4)}}},
            "b": {"cohort": "c", "quotas": {"f": {"cpu": q(6, lending=1)}}},
        },
        None,
        5,
    ),
    (
        {
            "a": {"cohort": "c", "quotas": {"f": {"cpu": q(4, lending=0)}}},
            "b": {"cohort": "c", "quotas": {"f": {"cpu": q(6, lending=1)}}},
        },
        None,
        5,
    ),
    (
        {
            "a": {"cohort": "c", "quotas": {"f": {"cpu": q(4)}}},
            "b": {"cohort": "d", "quotas": {"f": {"cpu": q(6)}}},
        },
        {
            "c": {"parent": "root", "quotas": {"f": {"cpu": q(3)}}},
            "d": {"parent": "root"},
            "root": {"quotas": {"f": {"cpu": q(10)}}},
        },
        23,
    ),
    (
        {
            "a": {"cohort": "c", "quotas": {"f": {"cpu": q(4)}}},
            "b": {"cohort": "d", "quotas": {"f": {"cpu": q(6)}}},
        },
        {
            "c": {"parent": "root", "quotas": {"f": {"cpu": q(3, borrowing=1)}}},
            "d": {"parent": "root"},
            "root": {},
        },
        8,
    ),
]


@pytest.mark.parametrize(
    ("cqs", "cohorts", "exp_max"),
    POTENTIAL_CASES,
    ids=["no-cohort", "cohort-sum", "borrowing-limit", "peer-lending-limit", "own-lending-limit-ignored-for-self",
         "hierarchy-with-cohort-quota", "cohort-borrowing-limit"],
)  # fmt: skip
def test_potential_available_quota_follows_kueue_resource_nodes(
    cqs: dict[str, Any], cohorts: Any, exp_max: int
) -> None:
    queue = compile_queues(_policy(cqs, cohorts))["a"]
    assert queue.capacity[("f", "cpu")].maximum == exp_max * 1000  # stored in millicores


def test_cohort_cycle_is_a_policy_error() -> None:
    with pytest.raises(PolicyError, match='cohort cycle through "'):
        compile_queues(
            _policy(
                {"a": {"cohort": "x", "quotas": {"f": {"cpu": q(1)}}}},
                {"x": {"parent": "y"}, "y": {"parent": "x"}},
            )
        )


MISMATCH_CASES = [
    ({}, {"taints": ({"key": "gpu", "effect": "NoSchedule"},)}, 'untolerated taint gpu:NoSchedule of flavor "f"'),
    ({}, {"taints": ({"key": "gpu", "effect": "PreferNoSchedule"},)}, None),
    ({"tolerations": [{"operator": "Exists"}]}, {"taints": ({"key": "gpu", "effect": "NoExecute"},)}, None),
    ({"tolerations": [{"key": "gpu", "value": "a", "effect": "NoSchedule"}]}, {"taints": ({"key": "gpu", "value": "b", "effect": "NoSchedule"},)},
     'untolerated taint gpu=b:NoSchedule of flavor "f"'),
    ({}, {"taints": ({"key": "gpu", "effect": "NoSchedule"},), "tolerations": ({"key": "gpu", "operator": "Exists"},)}, None),
    ({"nodeSelector": {"pool": "a"}}, {"node_labels": {"pool": "b"}}, 'nodeSelector pool=a does not match flavor "f" (pool=b)'),
    ({"nodeSelector": {"zone": "x"}}, {"node_labels": {"pool": "b"}}, None),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]}]}}}}, {"node_labels": {"pool": "b"}},
     'required node affinity does not match the node labels of flavor "f"'),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]},
        {"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["a"]}]}]}}}}, {"node_labels": {"pool": "b"}}, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod_spec", "flavor", "exp"),
    MISMATCH_CASES,
    ids=["untolerated", "prefer-no-schedule-ignored", "exists-all", "value-differs", "flavor-toleration",
         "selector-differs", "selector-other-key", "affinity-differs", "affinity-second-term"],
)  # fmt: skip
def test_flavor_eligibility_mirrors_taints_and_node_labels(
    pod_spec: dict[str, Any], flavor: dict[str, Any], exp: str | None
) -> None:
    assert flavor_mismatch(pod_spec, Flavor("f", **flavor)) == exp


# --- property: exact and conservative against a brute-force reference --------------------------------


RESOURCES = ("cpu", "example.com/gpu")
FLAVORS = ("f0", "f1", "f2")


def _reference_potential(
    cqs: dict[str, Any], cohorts: dict[str, Any], queue: str, fr: tuple[str, str]
) -> int:
    """Kueue's potential available, written out as pools: what a node can use is its non-lendable part
    plus what its parent's pool holds, capped at its own quota plus its borrowing limit."""
    nodes: dict[str, dict[str, Any]] = {
        f"cq:{n}": {"parent": c.get("cohort"), "quotas": c["quotas"]} for n, c in cqs.items()
    }
    for n, c in cohorts.items():
        nodes[f"co:{n}"] = {"parent": c.get("parent"), "quotas": c.get("quotas", {})}
    for node in list(nodes.values()):
        if node["parent"] and f"co:{node['parent']}" not in nodes:
            nodes[f"co:{node['parent']}"] = {"parent": None, "quotas": {}}
    flavor, resource = fr

    def quota(key: str) -> dict[str, Any]:
        return nodes[key]["quotas"].get(flavor, {}).get(resource, {"nominal": 0})

    def total(key: str) -> int:  # everything this subtree can offer upwards or use itself
        kids = [k for k, v in nodes.items() if v["parent"] and f"co:{v['parent']}" == key]
        return quota(key)["nominal"] + sum(offered(k) for k in kids)

    def offered(key: str) -> int:  # what a child puts into its parent's pool
        lending = quota(key).get("lending")
        return total(key) if lending is None else min(lending, total(key))

    def usable(key: str) -> int:
        parent = nodes[key]["parent"]
        if not parent:
            return total(key)
        kept = total(key) - offered(key)
        from_parent = usable(f"co:{parent}")
        borrowing = quota(key).get("borrowing")
        cap = offered(key) + borrowing if borrowing is not None else from_parent
        return kept + min(from_parent, cap)

    return usable(f"cq:{queue}")


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    n_flavors = draw(st.integers(1, 3))
    split_groups = n_flavors >= 2 and draw(st.booleans())

    def quotas(allow_limits: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, flavor in enumerate(FLAVORS[:n_flavors]):
            resources = (
                (RESOURCES[0],) if split_groups and i == 0 else (RESOURCES[1],) if split_groups else RESOURCES
            )
            out[flavor] = {}
            for r in resources:
                nominal = draw(st.integers(0, 6))
                borrowing = draw(st.one_of(st.none(), st.integers(0, 4))) if allow_limits else None
                lending = draw(st.one_of(st.none(), st.integers(0, nominal))) if allow_limits else None
                out[flavor][r] = q(nominal, borrowing, lending)
        return out

    in_cohort = draw(st.booleans())
    cqs: dict[str, Any] = {"a": {"cohort": "c" if in_cohort else None, "quotas": quotas(in_cohort)}}
    cohorts: dict[str, Any] = {}
    if in_cohort:
        for i in range(draw(st.integers(0, 2))):
            cqs[f"peer{i}"] = {"cohort": "c", "quotas": quotas(True)}
        if draw(st.booleans()):
            hierarchical = draw(st.booleans())
            cohorts["c"] = {"parent": "root" if hierarchical else None, "quotas": quotas(hierarchical)}
            if hierarchical:
                cohorts["root"] = {"quotas": quotas(False)}
                cqs["cousin"] = {"cohort": "root", "quotas": quotas(True)}
    taints = {f: draw(st.booleans()) for f in FLAVORS[:n_flavors]}
    pod_sets = []
    for i in range(draw(st.integers(1, 3))):
        per_pod = {r: draw(st.integers(0, 3)) for r in RESOURCES}
        if draw(st.integers(0, 9)) == 0:
            per_pod["example.com/undeclared"] = 1
        pod_sets.append({"name": f"ps{i}", "count": draw(st.integers(1, 3)), "per_pod": per_pod,
                         "tolerates": draw(st.sets(st.sampled_from(FLAVORS[:n_flavors])))})  # fmt: skip
    return {"cqs": cqs, "cohorts": cohorts, "taints": taints, "pod_sets": pod_sets}


def _brute_force_fits(s: dict[str, Any]) -> bool:
    quotas = s["cqs"]["a"]["quotas"]
    groups: dict[tuple[str, ...], list[str]] = {}
    for flavor, resources in quotas.items():
        groups.setdefault(tuple(resources), []).append(flavor)
    covered = {r for rs in groups for r in rs}
    choices: list[tuple[dict[str, Any], tuple[str, ...], list[str]]] = []
    for ps in s["pod_sets"]:
        asked = {r for r, v in ps["per_pod"].items() if v}
        if asked - covered:
            return False
        for resources, flavors in groups.items():
            if asked & set(resources):
                choices.append((ps, resources, flavors))
    for pick in itertools.product(*(flavors for _, _, flavors in choices)):
        used: dict[tuple[str, str], int] = {}
        ok = True
        for (ps, resources, _), flavor in zip(choices, pick, strict=True):
            if s["taints"][flavor] and flavor not in ps["tolerates"]:
                ok = False
                break
            for r in resources:
                used[(flavor, r)] = used.get((flavor, r), 0) + ps["per_pod"][r] * ps["count"]
        if ok and all(v <= _reference_potential(s["cqs"], s["cohorts"], "a", fr) for fr, v in used.items()):
            return True
    return False


def _webhook_fits(s: dict[str, Any]) -> bool:
    """The webhook's answer; each tainted flavor has its own taint key, tolerated per PodSet."""
    queue = compile_queues(_policy(s["cqs"], s["cohorts"]))["a"]
    flavors = {
        f: Flavor(f, taints=({"key": f"t-{f}", "effect": "NoSchedule"},) if t else ())
        for f, t in s["taints"].items()
    }
    demands = [
        Demand(
            name=ps["name"],
            count=ps["count"],
            requests={
                r: v * ps["count"] * (1000 if r == "cpu" else 1) for r, v in ps["per_pod"].items() if v
            },
            pod_spec={
                "tolerations": [{"key": f"t-{f}", "operator": "Exists"} for f in sorted(ps["tolerates"])]
            },
        )
        for ps in s["pod_sets"]
    ]
    return not check_capacity(demands, queue, flavors)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_capacity_check_denies_exactly_the_workloads_no_flavor_assignment_admits(s: dict[str, Any]) -> None:
    assert _webhook_fits(s) == _brute_force_fits(s)


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_potential_available_matches_the_reference_pools(s: dict[str, Any]) -> None:
    queue = compile_queues(_policy(s["cqs"], s["cohorts"]))["a"]
    for fr, cap in queue.capacity.items():
        assert cap.maximum == _reference_potential(s["cqs"], s["cohorts"], "a", fr) * (
            1000 if fr[1] == "cpu" else 1
        )


def test_search_gives_up_conservatively_when_the_budget_is_spent() -> None:
    policy = _policy({"a": {"quotas": {"f0": {"cpu": q(1)}, "f1": {"cpu": q(1)}}}})
    queue = compile_queues(policy)["a"]
    demands = [
        Demand(f"p{i}", 1, {"cpu": 1000}, {}) for i in range(3)
    ]  # 3 × 1 cpu, 2 cpu in total: never fits
    assert check_capacity(demands, queue, {}, budget=10_000)[0].kind == "workload"
    assert check_capacity(demands, queue, {}, budget=1) == []

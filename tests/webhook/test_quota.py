"""Kueue's quota model: potential available quota through cohort trees, flavor eligibility, and the
exact search — checked against a brute-force reference model with hypothesis (it must never deny a
workload some flavor assignment could admit, and must deny every one none could)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from batchplane.webhook.assign import kueue_attempts, kueue_mismatch
from batchplane.webhook.capacity import Shortfall, check_workload_ever_fits
from batchplane.webhook.errors import PolicyError
from batchplane.webhook.flavors import Flavor, affinity_warnings, compile_flavors, flavor_mismatch
from batchplane.webhook.policy import PolicyDocument, parse_policy
from batchplane.webhook.queues import Demand, compile_queues
from tests.webhook import kueue_reference


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


def _required(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    """A pod spec whose required node affinity has these terms (each a list of match expressions)."""
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": list(t)} for t in terms]}}}}  # fmt: skip


GT_LT_CASES = [
    ([{"key": "rank", "operator": "Gt", "values": ["2"]}], {"rank": "3"}, True),
    ([{"key": "rank", "operator": "Gt", "values": ["5"]}], {"rank": "3"}, False),
    ([{"key": "rank", "operator": "Lt", "values": ["5"]}], {"rank": "3"}, True),
    ([{"key": "rank", "operator": "Lt", "values": ["-1"]}], {"rank": "3"}, False),
    ([{"key": "rank", "operator": "Gt", "values": ["2"]}], {"rank": "high"}, False),  # not an integer label
    ([{"key": "rank", "operator": "Gt", "values": ["2", "3"]}], {"rank": "1"}, True),  # Kubernetes refuses it
    ([{"key": "rank", "operator": "Gt", "values": ["1.5"]}], {"rank": "1"}, True),  # not an integer bound
]


@pytest.mark.parametrize(("exprs", "labels", "matches"), GT_LT_CASES,
                         ids=["gt", "not-gt", "lt", "not-lt", "label-not-integer", "two-values", "bound-not-integer"])  # fmt: skip
def test_gt_and_lt_compare_integer_labels_as_kubernetes_and_a_requirement_it_refuses_never_denies(
    exprs: list[dict[str, Any]], labels: dict[str, str], matches: bool
) -> None:
    assert (flavor_mismatch(_required(exprs), Flavor("f", node_labels=labels)) is None) == matches


GROUP_KEY_CASES = [
    # (pod spec, flavor's node labels, the group's keys, mismatch under the group's keys)
    ({"nodeSelector": {"pool": "a"}}, {}, {"pool"},
     "flavor f doesn't match node affinity: nodeSelector pool=a, and the flavor has no pool label (a label key of its "
     "resource group)"),
    ({"nodeSelector": {"zone": "x"}}, {}, {"pool"}, None),  # a key no flavor of the group declares
    ({"nodeSelector": {"pool": "a"}}, {"pool": "b"}, {"pool"}, 'nodeSelector pool=a does not match flavor "f" (pool=b)'),
    (_required([{"key": "pool", "operator": "Exists"}]), {}, {"pool", "zone"},
     "flavor f doesn't match node affinity: its node labels do not satisfy the required node affinity on the label "
     "keys of its resource group (pool, zone)"),
    (_required([{"key": "pool", "operator": "In", "values": ["a"]}]), {}, {"pool"}, "flavor f doesn't match node "
     "affinity: its node labels do not satisfy the required node affinity on the label keys of its resource group "
     "(pool)"),
    (_required([{"key": "pool", "operator": "NotIn", "values": ["a"]}]), {}, {"pool"}, None),
    (_required([{"key": "pool", "operator": "DoesNotExist"}]), {}, {"pool"}, None),
    (_required([{"key": "rank", "operator": "Gt", "values": ["1"]}]), {}, {"rank"}, "flavor f doesn't match node "
     "affinity: its node labels do not satisfy the required node affinity on the label keys of its resource group "
     "(rank)"),
    # A term left with no expression on the group's keys makes the whole required affinity match (FA lines 1044-1048 @v0.18.1).
    (_required([{"key": "pool", "operator": "Exists"}], [{"key": "zone", "operator": "Exists"}]), {}, {"pool"}, None),
    (_required([{"key": "pool", "operator": "Exists"}], []), {}, {"pool"}, None),
]  # fmt: skip


@pytest.mark.parametrize(("pod_spec", "labels", "keys", "exp"), GROUP_KEY_CASES,
                         ids=["selector-key-missing", "selector-key-outside-group", "selector-value-differs",
                              "exists-missing", "in-missing", "notin-missing", "doesnotexist-missing", "gt-missing",
                              "term-emptied", "empty-term"])  # fmt: skip
def test_on_the_resource_groups_keys_a_flavor_lacking_a_key_the_pod_names_does_not_match(
    pod_spec: dict[str, Any], labels: dict[str, str], keys: set[str], exp: str | None
) -> None:
    flavor = Flavor("f", node_labels=labels)
    assert flavor_mismatch(pod_spec, flavor, frozenset(keys)) == exp
    assert flavor_mismatch(pod_spec, flavor) == (
        exp if labels else None
    )  # on its own keys: only its labels count
    kueue = kueue_mismatch(pod_spec, flavor, frozenset(keys))
    assert kueue == (None if exp is None else "flavor f doesn't match node affinity")


def test_the_resource_groups_keys_are_the_union_of_its_flavors_node_label_keys() -> None:
    data = _policy(
        {"a": {"quotas": {"f0": {"cpu": q(1)}, "f1": {"cpu": q(1)}, "f2": {"cpu": q(1)}}}}
    ).model_dump(by_alias=True, mode="json")
    data["resourceFlavors"] = {
        "f0": {},
        "f1": {"nodeLabels": {"pool": "x", "zone": "a"}},
        "f2": {"nodeLabels": {"rank": "1"}},
    }
    for keys, match in (("Flavor", None), ("ResourceGroup", frozenset({"pool", "zone", "rank"}))):
        data["kueue"] = {"nodeAffinityKeys": keys}
        [group] = compile_queues(parse_policy(data))["a"].groups
        assert (group.label_keys, group.match_keys) == (frozenset({"pool", "zone", "rank"}), match)


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


#: Both ways Kueue matches node affinity: v0.19.2 on each flavor's own label keys, v0.18.1 on the resource group's.
AFFINITY_KEYS = ("Flavor", "ResourceGroup")
FLAVOR_LABELS = ({}, {"pool": "x"}, {"pool": "y"}, {"pool": "x", "zone": "a"}, {"zone": "b"}, {"rank": "3"},
                 {"pool": "y", "rank": "7"})  # fmt: skip
SELECTORS = ({}, {}, {"pool": "x"}, {"pool": "y"}, {"zone": "a"}, {"other": "1"})


@st.composite
def expressions(draw: st.DrawFn) -> dict[str, Any]:
    """One node selector requirement Kubernetes accepts (``Gt``/``Lt``: exactly one integer value)."""
    key = draw(st.sampled_from(["pool", "zone", "rank", "other"]))
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    if op in ("In", "NotIn"):
        return {
            "key": key,
            "operator": op,
            "values": sorted(draw(st.sets(st.sampled_from("xyab"), min_size=1))),
        }
    if op in ("Gt", "Lt"):
        return {"key": key, "operator": op, "values": [draw(st.sampled_from(["2", "5"]))]}
    return {"key": key, "operator": op}


@st.composite
def scenarios(draw: st.DrawFn, affinity_keys: str = "Flavor") -> dict[str, Any]:
    n_flavors = draw(st.sampled_from([1, 2, 2, 3, 3, 3]))
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
    # Node labels on some flavors (keys only some carry): what each semantics of node-affinity keys tells apart.
    labels = {f: draw(st.sampled_from(FLAVOR_LABELS)) for f in FLAVORS[:n_flavors]}
    pod_sets = []
    for i in range(draw(st.integers(1, 4))):
        per_pod = {r: draw(st.integers(0, 3)) for r in RESOURCES}
        if draw(st.integers(0, 9)) == 0:
            per_pod["example.com/undeclared"] = 1
        pod_sets.append({"name": f"ps{i}", "count": draw(st.integers(1, 3)), "per_pod": per_pod,
                         "tolerates": draw(st.sets(st.sampled_from(FLAVORS[:n_flavors]))),
                         "selector": draw(st.sampled_from(SELECTORS)),
                         "affinity": draw(st.one_of(st.none(), st.none(), st.lists(
                             st.lists(expressions(), max_size=2), min_size=1, max_size=2)))})  # fmt: skip
    when_can_borrow = draw(st.sampled_from(["MayStopSearch", "TryNextFlavor"]))
    return {"cqs": cqs, "cohorts": cohorts, "taints": taints, "labels": labels, "pod_sets": pod_sets,
            "when_can_borrow": when_can_borrow, "affinity_keys": affinity_keys}  # fmt: skip


def _brute_force_fits(s: dict[str, Any]) -> bool:
    """Whether *some* assignment of flavors to (PodSet, resource group) fits: what no order of attempts can beat."""
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
            if not kueue_reference.selector_matches(s, ps, flavor, groups[resources]):
                ok = False
                break
            for r in resources:
                used[(flavor, r)] = used.get((flavor, r), 0) + ps["per_pod"][r] * ps["count"]
        if ok and all(v <= _reference_potential(s["cqs"], s["cohorts"], "a", fr) for fr, v in used.items()):
            return True
    return False


def _scenario_policy(s: dict[str, Any]) -> PolicyDocument:
    data = _policy(s["cqs"], s["cohorts"]).model_dump(by_alias=True, mode="json")
    data["clusterQueues"]["a"]["flavorFungibility"] = {"whenCanBorrow": s["when_can_borrow"]}
    data["kueue"] = {"nodeAffinityKeys": s["affinity_keys"]}
    data["resourceFlavors"] = {
        f: {
            "nodeLabels": s["labels"].get(f, {}),
            "nodeTaints": [{"key": f"t-{f}", "effect": "NoSchedule"}] if t else [],
        }
        for f, t in s["taints"].items()
    }
    return parse_policy(data)


def _scenario_demands(s: dict[str, Any]) -> list[Demand]:
    return [
        Demand(
            name=ps["name"],
            count=ps["count"],
            requests={
                r: v * ps["count"] * (1000 if r == "cpu" else 1) for r, v in ps["per_pod"].items() if v
            },
            pod_spec={
                "tolerations": [{"key": f"t-{f}", "operator": "Exists"} for f in sorted(ps["tolerates"])],
                "nodeSelector": ps["selector"],
                **(
                    {}
                    if ps["affinity"] is None
                    else {
                        "affinity": {
                            "nodeAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [{"matchExpressions": t} for t in ps["affinity"]]
                                }
                            }
                        }
                    }
                ),
            },
        )
        for ps in s["pod_sets"]
    ]


def _webhook(s: dict[str, Any]) -> list[Shortfall]:
    """The webhook's shortfalls (each tainted flavor has its own taint key, tolerated per PodSet)."""
    policy = _scenario_policy(s)
    return check_workload_ever_fits(
        _scenario_demands(s), compile_queues(policy)["a"], compile_flavors(policy)
    )


@pytest.mark.parametrize("affinity_keys", AFFINITY_KEYS)
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_capacity_check_denies_exactly_the_workloads_kueue_never_admits_in_an_empty_cohort(
    affinity_keys: str, data: st.DataObject
) -> None:
    s = data.draw(scenarios(affinity_keys))
    admitted, _ = kueue_reference.admitted_in_empty_cohort(s)
    shortfalls = _webhook(s)
    assert all(x.kind != "unmodelled" for x in shortfalls)
    assert (not shortfalls) == admitted
    # A denial says why: no assignment at all fits, or one does and Kueue's order of attempts never finds it.
    if shortfalls:
        kinds = {x.kind for x in shortfalls}
        assert kinds == {"assigner"} if _brute_force_fits(s) else "assigner" not in kinds


@pytest.mark.parametrize("affinity_keys", AFFINITY_KEYS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_each_attempt_fails_on_the_pod_set_and_for_the_reasons_kueue_gives(
    affinity_keys: str, data: st.DataObject
) -> None:
    s = data.draw(scenarios(affinity_keys))
    assume(all(set(ps["per_pod"]) <= set(RESOURCES) or not ps["per_pod"].get("example.com/undeclared")
               for ps in s["pod_sets"]))  # fmt: skip
    policy = _scenario_policy(s)
    attempts, complete = kueue_attempts(
        _scenario_demands(s), compile_queues(policy)["a"], compile_flavors(policy)
    )
    _, expected = kueue_reference.admitted_in_empty_cohort(s)
    assert complete
    queue = compile_queues(policy)["a"]

    def flavors_by_resource(a: Any) -> list[dict[str, str]]:
        return [
            {
                r: f
                for g, f in zip(queue.groups, row, strict=True)
                if f
                for r in g.resources
                if ps["per_pod"].get(r)
            }
            for ps, row in zip(s["pod_sets"], a.flavors, strict=False)
        ]

    got = [
        flavors_by_resource(a) if a.failed < 0 else (s["pod_sets"][a.failed]["name"], sorted(a.reasons))
        for a in attempts
    ]
    want = [e["flavors"] if e["admitted"] else (e["pod_set"], sorted(e["reasons"])) for e in expected]
    assert got == want


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_a_pod_set_no_flavor_matches_on_the_groups_keys_but_one_does_on_its_own_gets_a_warning(
    s: dict[str, Any],
) -> None:
    """Under per-flavor keys, a warning for exactly the PodSets (and resource groups they request) that Kueue v0.18.1
    would find no flavor for on node affinity alone (the reference's group-key ``flavorSelector``) while some flavor
    matches on its own keys; none under the group's keys, where that is a refusal."""
    policy = _scenario_policy(s)
    queue, flavors = compile_queues(policy)["a"], compile_flavors(policy)
    group_keys = {**s, "affinity_keys": "ResourceGroup"}
    want = []
    for ps in s["pod_sets"]:
        for g in queue.groups:
            if not any(ps["per_pod"].get(r) for r in g.resources) or not g.label_keys:
                continue
            names = list(g.flavors)
            if not any(kueue_reference.selector_matches(group_keys, ps, f, names) for f in names) and any(
                kueue_reference.selector_matches(s, ps, f, names) for f in names
            ):
                want.append(ps["name"])
    got = [w.split('"')[1] for w in affinity_warnings(_scenario_demands(s), queue, flavors)]
    assert got == want
    s_group = {**s, "affinity_keys": "ResourceGroup"}
    group_policy = _scenario_policy(s_group)
    assert affinity_warnings(_scenario_demands(s_group), compile_queues(group_policy)["a"], flavors) == []


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_potential_available_matches_the_reference_pools(s: dict[str, Any]) -> None:
    queue = compile_queues(_policy(s["cqs"], s["cohorts"]))["a"]
    for fr, cap in queue.capacity.items():
        assert cap.maximum == _reference_potential(s["cqs"], s["cohorts"], "a", fr) * (
            1000 if fr[1] == "cpu" else 1
        )


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_borrowing_level_matches_the_reference_subtree_heights(s: dict[str, Any]) -> None:
    queue = compile_queues(_policy(s["cqs"], s["cohorts"]))["a"]
    tree = kueue_reference.Tree(s)
    for fr, path in queue.borrow_paths.items():
        scale = 1000 if fr[1] == "cpu" else 1
        for amount in range(0, 30):
            assert (
                path.level(amount * scale) == tree.height_of_lowest_subtree_that_fits("cq:a", fr, amount)[0]
            )


def test_kueue_attempts_decide_when_the_exhaustive_search_spends_its_budget() -> None:
    policy = _policy({"a": {"quotas": {"f0": {"cpu": q(1)}, "f1": {"cpu": q(1)}}}})
    queue = compile_queues(policy)["a"]
    demands = [
        Demand(f"p{i}", 1, {"cpu": 1000}, {}) for i in range(3)
    ]  # 3 × 1 cpu, 2 cpu in total: never fits
    assert check_workload_ever_fits(demands, queue, {}, budget=10_000)[0].kind == "workload"
    [shortfall] = check_workload_ever_fits(demands, queue, {}, budget=1)
    assert shortfall.kind == "assigner"
    assert shortfall.detail.startswith("Kueue assigns flavors PodSet by PodSet")
    assert (
        "couldn't assign flavors to pod set p2: insufficient quota for cpu in flavor f0" in shortfall.detail
    )


# --- the greedy order, example by example (issue #25) ---------------------------------------------------------

SPOT_POLICY = {
    "stack": "t",
    "clusterQueues": {
        "a": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": "default-flavor", "resources": {"cpu": {"nominalQuota": "5"}}},
                        {"name": "spot", "resources": {"cpu": {"nominalQuota": "16"}}},
                    ],
                }
            ]
        }
    },
    "resourceFlavors": {"spot": {"nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}]}},
}
TOLERATES_SPOT = {"tolerations": [{"key": "spot", "operator": "Exists"}]}


def _spot_check(head_spec: dict[str, Any]) -> tuple[list[Shortfall], list[Any]]:
    policy = parse_policy(SPOT_POLICY)
    queue, flavors = compile_queues(policy)["a"], compile_flavors(policy)
    demands = [
        Demand("head", 1, {"cpu": 2000}, head_spec),
        Demand("workers", 2, {"cpu": 3000}, TOLERATES_SPOT),
        Demand("submitter", 1, {"cpu": 500}, {}),
    ]
    return check_workload_ever_fits(demands, queue, flavors), kueue_attempts(demands, queue, flavors)[0]


def test_a_rayjob_whose_workers_take_the_only_flavor_its_submitter_fits_is_refused_with_kueues_reasons() -> (
    None
):
    shortfalls, attempts = _spot_check({})
    assert [a.failed for a in attempts] == [
        2,
        0,
    ]  # the submitter, then (resuming after default-flavor) the head
    [shortfall] = shortfalls
    assert shortfall.kind == "assigner"
    assert (
        "couldn't assign flavors to pod set submitter: insufficient quota for cpu in flavor default-flavor, "
        "previously considered podsets requests (5) + current podset request (500m) > maximum capacity (5), "
        "untolerated taint spot=true:NoSchedule in flavor spot" in shortfall.detail
    )
    assert (
        "couldn't assign flavors to pod set head: untolerated taint spot=true:NoSchedule in flavor spot"
        in shortfall.detail
    )


def test_a_workload_kueue_admits_on_the_retry_is_allowed() -> None:
    shortfalls, attempts = _spot_check(TOLERATES_SPOT)  # the head may move to spot: the retry admits
    assert shortfalls == []
    assert [a.failed for a in attempts] == [2, -1]
    assert attempts[-1].flavors == (("spot",), ("spot",), ("default-flavor",))


def test_try_next_flavor_when_borrowing_takes_a_later_flavor_that_fits_without_borrowing() -> None:
    policy = _policy(
        {
            "a": {"cohort": "c", "quotas": {"f0": {"cpu": q(1)}, "f1": {"cpu": q(4)}}},
            "b": {"cohort": "c", "quotas": {"f0": {"cpu": q(4)}, "f1": {"cpu": q(0)}}},
        }
    )
    data = policy.model_dump(by_alias=True, mode="json")
    demands = [Demand("big", 1, {"cpu": 3000}, {}), Demand("small", 1, {"cpu": 2000}, {})]
    picks = []
    for when in ("MayStopSearch", "TryNextFlavor"):
        data["clusterQueues"]["a"]["flavorFungibility"] = {"whenCanBorrow": when}
        queue = compile_queues(parse_policy(data))["a"]
        [attempt] = kueue_attempts(demands, queue, {})[0]
        picks.append(attempt.flavors)
    assert picks == [(("f0",), ("f0",)), (("f1",), ("f0",))]  # f0 needs borrowing beyond 1 cpu


def test_partial_admission_makes_a_dead_end_a_warning_not_a_denial() -> None:
    policy = parse_policy(SPOT_POLICY)
    queue, flavors = compile_queues(policy)["a"], compile_flavors(policy)
    demands = [
        Demand("head", 1, {"cpu": 2000}, {}),
        Demand("workers", 2, {"cpu": 3000}, TOLERATES_SPOT, partial=True),
        Demand("submitter", 1, {"cpu": 500}, {}),
    ]
    [shortfall] = check_workload_ever_fits(demands, queue, flavors)
    assert shortfall.kind == "unmodelled"
    assert "with partial admission (minCount) its retries are not modelled exactly" in shortfall.detail


def test_a_sequence_longer_than_the_attempt_budget_is_not_complete() -> None:
    policy = parse_policy(SPOT_POLICY)
    queue, flavors = compile_queues(policy)["a"], compile_flavors(policy)
    demands = [
        Demand("head", 1, {"cpu": 2000}, {}),
        Demand("workers", 2, {"cpu": 3000}, TOLERATES_SPOT),
        Demand("submitter", 1, {"cpu": 500}, {}),
    ]
    assert kueue_attempts(demands, queue, flavors, budget=1) == (
        kueue_attempts(demands, queue, flavors)[0][:1],
        False,
    )


def test_without_the_flavor_fungibility_gate_kueue_never_resumes_so_the_retry_admits_nothing() -> None:
    data = {**SPOT_POLICY, "kueue": {"featureGates": {"FlavorFungibility": False}}}
    policy = parse_policy(data)
    queue, flavors = compile_queues(policy)["a"], compile_flavors(policy)
    demands = [
        Demand("head", 1, {"cpu": 2000}, TOLERATES_SPOT),
        Demand("workers", 2, {"cpu": 3000}, TOLERATES_SPOT),
        Demand("submitter", 1, {"cpu": 500}, {}),
    ]
    [shortfall] = check_workload_ever_fits(
        demands, queue, flavors
    )  # with the gate (the default) the retry admits it
    assert shortfall.kind == "assigner"
    assert [a.failed for a in kueue_attempts(demands, queue, flavors)[0]] == [2]

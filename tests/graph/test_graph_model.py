"""The queue-topology graph model: nodes, edges and labels built from validated stacks."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.config.kueue import LabelSelector
from batchplane.graph import stack_graph
from batchplane.graph.model import (
    CapacityRow,
    CheckMark,
    Edge,
    QuotaCell,
    QuotaRow,
    QuotaTable,
    selector_text,
)
from batchplane.stack import load_stack
from tests.graph.conftest import many_teams, shipped

#: A hand-written stack: nested declared cohorts with their own quota, an implicit cohort, lending
#: limits, two resource groups, a custom admission check, a label selector, an existing namespace.
HAND_WRITTEN: dict[str, Any] = {
    "batchplane:target": {"kind": "kind"},
    "batchplane:kueue": {
        "resourceFlavors": [
            {"name": "cpu-nodes", "nodeLabels": {"pool": "cpu"}},
            {
                "name": "gpu-nodes",
                "nodeLabels": {"pool": "gpu"},
                "nodeTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            },
        ],
        "cohorts": [
            {"name": "research", "parentName": "org"},
            {
                "name": "org",
                "resourceGroups": [
                    {
                        "coveredResources": ["nvidia.com/gpu"],
                        "flavors": [
                            {
                                "name": "gpu-nodes",
                                "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 2}],
                            }
                        ],
                    }
                ],
            },
        ],
        "admissionChecks": [{"name": "budget", "controllerName": "example.com/budget"}],
        "clusterQueues": [
            {
                "name": "vision",
                "cohortName": "research",
                "namespaceSelector": {"matchLabels": {"team": "vision"}},
                "admissionChecks": [{"name": "budget", "onFlavors": ["gpu-nodes"]}],
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": "cpu-nodes",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": "1500m", "lendingLimit": "500m"},
                                    {"name": "memory", "nominalQuota": 4294967296},
                                ],
                            }
                        ],
                    },
                    {
                        "coveredResources": ["nvidia.com/gpu"],
                        "flavors": [
                            {
                                "name": "gpu-nodes",
                                "resources": [
                                    {"name": "nvidia.com/gpu", "nominalQuota": 4, "borrowingLimit": 2}
                                ],
                            }
                        ],
                    },
                ],
            },
            {
                "name": "batch",
                "cohortName": "spare",
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [{"name": "cpu-nodes", "resources": [{"name": "cpu", "nominalQuota": 2}]}],
                    }
                ],
            },
        ],
        "namespaces": [{"name": "vision", "create": False, "labels": {"team": "vision"}}],
        "localQueues": [
            {"name": "gpu", "namespace": "vision", "clusterQueue": "vision"},
            {"name": "batch", "namespace": "vision", "clusterQueue": "batch", "default": True},
        ],
    },
}


def test_kind_stack_graph_has_one_flavor_queue_local_queue_and_namespace() -> None:
    graph = stack_graph(shipped("kind"))
    assert [(n.id, n.lines) for n in graph.nodes] == [
        ("ResourceFlavor default-flavor", ("any node (no nodeLabels)",)),
        ("ClusterQueue cluster-queue", ("all namespaces",)),
        ("LocalQueue team-a/default", ("default queue",)),
        ("Namespace team-a", ()),
    ]
    assert graph.edges == (
        Edge("ResourceFlavor default-flavor", "ClusterQueue cluster-queue", "quota"),
        Edge("ClusterQueue cluster-queue", "LocalQueue team-a/default", "queue"),
        Edge("LocalQueue team-a/default", "Namespace team-a", "namespace"),
    )
    assert graph.node("ClusterQueue cluster-queue").quotas == QuotaTable(
        resources=("cpu", "memory"),
        rows=(QuotaRow("default-flavor", (QuotaCell("cpu", "4"), QuotaCell("memory", "8Gi"))),),
    )


def test_gke_prod_stack_graph_draws_pools_with_capacity_and_the_dws_check() -> None:
    graph = stack_graph(shipped("gke-prod-dws"))
    assert [n.id for n in graph.nodes] == [
        "Pool h100", "Pool l4",
        "ResourceFlavor default-flavor", "ResourceFlavor h100", "ResourceFlavor l4",
        "Cohort ml",
        "ClusterQueue team-a", "ClusterQueue team-b", "ClusterQueue team-c",
        "LocalQueue team-a/default", "LocalQueue team-b/default", "LocalQueue team-c/default",
        "Namespace team-a", "Namespace team-b", "Namespace team-c",
    ]  # fmt: skip
    h100 = graph.node("Pool h100")
    assert h100.lines == (
        "GKE node pool",
        "cloud.google.com/gke-nodepool=h100",
        "at most 4 nodes",
        "ProvisioningRequest queued-provisioning.gke.io",
    )
    assert h100.capacity == (
        CapacityRow("nvidia.com/gpu", "8", "32", "24"),
        CapacityRow("cpu", "208", "832", "600"),
        CapacityRow("memory", "1872Gi", "7488Gi", "5400Gi"),
    )
    assert graph.node("ResourceFlavor h100").lines == (
        "cloud.google.com/gke-nodepool=h100",
        "tolerates cloud.google.com/gke-queued, nvidia.com/gpu",
    )
    assert graph.node("Cohort ml").lines == ("implicit (no Cohort object)",)
    team_a = graph.node("ClusterQueue team-a")
    assert (team_a.cohort, team_a.lines) == ("Cohort ml", ("namespace team-a",))
    assert team_a.checks == (
        CheckMark("h100-dws", "kueue.x-k8s.io/provisioning-request", ("h100",), "queued-provisioning.gke.io"),
    )
    assert team_a.checks[0].text() == "h100-dws: ProvisioningRequest queued-provisioning.gke.io on h100"
    assert team_a.quotas is not None
    assert [(r.flavor, [c.text() for c in r.cells if c], r.checks) for r in team_a.quotas.rows] == [
        ("default-flavor", ["4", "16Gi", "0"], ()),
        ("h100", ["200 +200", "1800Gi +1800Gi", "8 +8"], ("h100-dws",)),
        ("l4", ["32 +32", "128Gi +128Gi", "4 +4"], ()),
    ]
    assert [e for e in graph.edges if e.target == "ClusterQueue team-a"] == [
        Edge("Cohort ml", "ClusterQueue team-a", "member"),
        Edge("ResourceFlavor default-flavor", "ClusterQueue team-a", "quota"),
        Edge("ResourceFlavor h100", "ClusterQueue team-a", "quota", checked=True),
        Edge("ResourceFlavor l4", "ClusterQueue team-a", "quota"),
    ]
    assert graph.edges[:2] == (
        Edge("Pool h100", "ResourceFlavor h100", "nodes"),
        Edge("Pool l4", "ResourceFlavor l4", "nodes"),
    )


def test_hand_written_cohorts_nest_under_their_parent_and_implicit_cohorts_are_marked() -> None:
    graph = stack_graph(load_stack(HAND_WRITTEN, "hand"))
    cohorts = [(n.id, n.cohort, n.lines) for n in graph.of_kind("cohort")]
    assert cohorts == [
        ("Cohort research", "Cohort org", ()),
        ("Cohort org", None, ()),
        ("Cohort spare", None, ("implicit (no Cohort object)",)),
    ]
    assert [n.id for n in graph.children(None)] == ["Cohort org", "Cohort spare"]
    assert [n.id for n in graph.children("Cohort org")] == ["Cohort research"]
    assert [n.id for n in graph.children("Cohort research")] == ["ClusterQueue vision"]
    assert graph.node("Cohort org").quotas == QuotaTable(
        resources=("nvidia.com/gpu",), rows=(QuotaRow("gpu-nodes", (QuotaCell("nvidia.com/gpu", "2"),)),)
    )
    assert [e for e in graph.edges if e.kind in ("parent", "member")] == [
        Edge("Cohort org", "Cohort research", "parent"),
        Edge("Cohort research", "ClusterQueue vision", "member"),
        Edge("Cohort spare", "ClusterQueue batch", "member"),
    ]


def test_quota_tables_span_resource_groups_and_show_borrowing_and_lending_limits() -> None:
    vision = stack_graph(load_stack(HAND_WRITTEN, "hand")).node("ClusterQueue vision")
    assert vision.lines == ("namespaces team=vision",)
    assert vision.quotas == QuotaTable(
        resources=("cpu", "memory", "nvidia.com/gpu"),
        rows=(
            QuotaRow(
                "cpu-nodes",
                (QuotaCell("cpu", "1500m", lending_limit="500m"), QuotaCell("memory", "4Gi"), None),
            ),
            QuotaRow(
                "gpu-nodes", (None, None, QuotaCell("nvidia.com/gpu", "4", borrowing_limit="2")), ("budget",)
            ),
        ),
    )
    assert vision.checks == (CheckMark("budget", "example.com/budget", ("gpu-nodes",)),)
    assert vision.checks[0].text() == "budget: example.com/budget on gpu-nodes"


def test_local_queues_point_at_their_namespace_once_per_namespace() -> None:
    graph = stack_graph(load_stack(HAND_WRITTEN, "hand"))
    assert [(n.id, n.lines) for n in graph.of_kind("local-queue") + graph.of_kind("namespace")] == [
        ("LocalQueue vision/gpu", ()),
        ("LocalQueue vision/batch", ("default queue",)),
        ("Namespace vision", ("existing (not created)",)),
    ]
    assert [e for e in graph.edges if e.kind in ("queue", "namespace")] == [
        Edge("ClusterQueue vision", "LocalQueue vision/gpu", "queue"),
        Edge("ClusterQueue batch", "LocalQueue vision/batch", "queue"),
        Edge("LocalQueue vision/gpu", "Namespace vision", "namespace"),
        Edge("LocalQueue vision/batch", "Namespace vision", "namespace"),
    ]


def test_flavor_lines_list_labels_taints_and_tolerated_keys() -> None:
    graph = stack_graph(load_stack(HAND_WRITTEN, "hand"))
    assert graph.node("ResourceFlavor gpu-nodes").lines == (
        "pool=gpu",
        "taint nvidia.com/gpu=present:NoSchedule",
        "tolerates nvidia.com/gpu",
    )
    assert not graph.of_kind("pool")  # a kind target has no pools


@pytest.mark.parametrize(
    ("selector", "exp_text"),
    [
        (None, "no namespaces (no namespaceSelector)"),
        (LabelSelector(), "all namespaces"),
        (LabelSelector(match_labels={"kubernetes.io/metadata.name": "team-a"}), "namespace team-a"),
        (
            LabelSelector.model_validate(
                {
                    "matchLabels": {"a": "b"},
                    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["x", "y"]}],
                }
            ),
            "namespaces a=b, tier In [x, y]",
        ),
        (
            LabelSelector.model_validate({"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}),
            "namespaces gpu Exists",
        ),
    ],
    ids=["nil", "empty", "one-namespace", "labels-and-expression", "exists"],
)
def test_selector_text_says_which_namespaces_a_queue_admits_from(
    selector: LabelSelector | None, exp_text: str
) -> None:
    assert selector_text(selector) == exp_text


@pytest.mark.parametrize(
    ("cell", "exp_text"),
    [
        (QuotaCell("cpu", "8"), "8"),
        (QuotaCell("cpu", "8", borrowing_limit="4"), "8 +4"),
        (QuotaCell("cpu", "8", lending_limit="2"), "8 lend 2"),
        (QuotaCell("cpu", "8", borrowing_limit="4", lending_limit="2"), "8 +4 lend 2"),
    ],
    ids=["nominal", "borrowing", "lending", "both"],
)
def test_quota_cell_text_shows_nominal_borrowing_and_lending(cell: QuotaCell, exp_text: str) -> None:
    assert cell.text() == exp_text


def test_fifty_team_graph_has_one_queue_chain_per_team_and_fans_in_three_flavors() -> None:
    graph = stack_graph(many_teams(50))
    counts = {kind: len(graph.of_kind(kind)) for kind in ("pool", "flavor", "cohort", "cluster-queue", "local-queue", "namespace")}  # fmt: skip
    assert counts == {
        "pool": 2, "flavor": 3, "cohort": 2, "cluster-queue": 50, "local-queue": 50, "namespace": 50,
    }  # fmt: skip
    kinds = [e.kind for e in graph.edges]
    assert {k: kinds.count(k) for k in dict.fromkeys(kinds)} == {
        "nodes": 2, "parent": 1, "member": 50, "quota": 150, "queue": 50, "namespace": 50,
    }  # fmt: skip
    assert sum(e.checked for e in graph.edges) == 50  # every team's h100 row carries h100-dws
    assert graph.node("Pool h100").capacity[0] == CapacityRow("nvidia.com/gpu", "8", "400", "400")
    assert [n.id for n in graph.children("Cohort org")] == ["Cohort ml"]
    assert len(graph.children("Cohort ml")) == 50

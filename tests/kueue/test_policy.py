"""The Kueue sections of the webhook's policy document (:mod:`batchplane.kueue.policy`), built from the expanded
Kueue model: the namespaces' queues and limits, the quota keys named in denials, the flavors' nodes, the Kueue
settings and the Kueue version's node-affinity keys."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.config.operators import OperatorsConfig
from batchplane.config.rules import ExpandedKueue
from batchplane.config.webhook import WorkloadLimits
from batchplane.kueue.policy import (
    cluster_queue_policies,
    flavor_policies,
    kueue_settings,
    namespace_policies,
    node_affinity_keys_of,
)
from batchplane.stack import load_stack
from batchplane.webhook.policy import NodeShapePolicy


def _kueue(kueue: dict[str, Any], **extra: Any) -> ExpandedKueue:
    raw: dict[str, Any] = {"batchplane:target": {"kind": "kind"}, "batchplane:kueue": kueue}
    raw.update({f"batchplane:{k}": v for k, v in extra.items()})
    return load_stack(raw, "test").kueue


TEAMS = {
    "members": [
        {"name": "team-a", "quotas": {"f": {"cpu": 8}}},
        {"name": "team-b", "namespace": "ns-b", "quotas": {"f": {"cpu": 8}}},
    ]
}


def test_namespace_limits_come_from_the_webhook_namespace_else_from_the_team() -> None:
    k = _kueue({"resourceFlavors": [{"name": "f"}]}, teams=TEAMS)
    declared = WorkloadLimits(max_gpus_per_workload=1)
    team = WorkloadLimits(max_gpus_per_workload=4)
    namespaces = namespace_policies(
        k, {"team-a": declared, "extra": None}, {"team-a": team, "ns-b": team, "no-queues": team}
    )
    assert set(namespaces) == {"team-a", "ns-b", "extra"}  # a team limit alone adds no namespace
    assert namespaces["team-a"].limits == declared
    assert namespaces["ns-b"].limits == team
    assert namespaces["ns-b"].local_queues == {"default": "team-b"}
    assert namespaces["ns-b"].default_queue == "default"
    assert (namespaces["extra"].local_queues, namespaces["extra"].limits) == ({}, None)


def test_system_namespaces_are_never_tenant_namespaces() -> None:
    k = _kueue({"resourceFlavors": [{"name": "f"}]}, teams=TEAMS)
    assert "kube-system" not in namespace_policies(k, {"kube-system": None}, {})


def test_quota_keys_name_the_team_quota_or_the_declared_queue_resource() -> None:
    k = _kueue(
        {
            "resourceFlavors": [{"name": "f"}],
            "clusterQueues": [
                {
                    "name": "declared",
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu"],
                            "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 1}]}],
                        }
                    ],
                }
            ],
        },
        teams=TEAMS,
    )
    queues = cluster_queue_policies(k)
    assert queues["team-a"].quota_keys == {"f/cpu": "batchplane:teams.members[0].quotas.f.cpu"}
    assert queues["declared"].quota_keys == {
        "f/cpu": "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0]"
    }


def test_each_flavor_gets_the_nodes_its_finder_returns() -> None:
    k = _kueue({"resourceFlavors": [{"name": "f", "nodeLabels": {"pool": "a"}}, {"name": "g"}]})
    node = NodeShapePolicy(pool="a", capacity={"cpu": "8"})
    flavors = flavor_policies(k, lambda flavor: [node] if flavor.node_labels else [])
    assert (flavors["f"].nodes, flavors["g"].nodes) == ([node], [])
    assert flavors["f"].node_labels == {"pool": "a"}


def test_without_a_kueue_install_only_the_node_affinity_keys_are_known() -> None:
    settings = kueue_settings(None, "0.16.2")
    assert (settings.frameworks, settings.node_affinity_keys) == (None, "ResourceGroup")


def test_the_helm_feature_gate_flag_overrides_the_configuration_and_only_decision_gates_are_kept() -> None:
    ops = OperatorsConfig.model_validate(
        {
            "kueue": {
                "configuration": {
                    "featureGates": {"FlavorFungibility": True, "TopologyAwareScheduling": True}
                },
                "values": {
                    "controllerManager": {"featureGates": [{"name": "FlavorFungibility", "enabled": False}]}
                },
            }
        }
    )
    settings = kueue_settings(ops, None)
    assert settings.feature_gates == {"FlavorFungibility": False}
    assert settings.frameworks is not None and "batch/job" in settings.frameworks


NODE_AFFINITY_KEYS_OF = [
    ("0.19.2", "Flavor"),
    ("v0.19.0", "Flavor"),
    ("0.19.0-rc.0", "Flavor"),
    ("0.18.2", "Flavor"),
    ("0.18.1", "ResourceGroup"),
    ("0.18.0-rc.1", "ResourceGroup"),
    ("0.18", "Flavor"),  # 0.18.0-0.18.1 refuse more than 0.18.2+: an unknown patch gets the permissive keys
    ("0.17.6", "Flavor"),
    ("0.17.5", "ResourceGroup"),
    ("0.16", "ResourceGroup"),
    ("0.16.9", "ResourceGroup"),
    ("0.11", "ResourceGroup"),
    ("1.0.0", "Flavor"),
    ("main", "Flavor"),
    (None, "Flavor"),
]


@pytest.mark.parametrize(("version", "keys"), NODE_AFFINITY_KEYS_OF)
def test_node_affinity_keys_follow_the_kueue_release_that_matches_each_flavor_on_its_own_keys(
    version: str | None, keys: str
) -> None:
    # kubernetes-sigs/kueue 40fe434 (v0.19.0), cherry-picked as e261deca24 (v0.18.2) and 109fcd51d3 (v0.17.6).
    assert node_affinity_keys_of(version) == keys

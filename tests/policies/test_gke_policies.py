"""GKE policies called directly: compliant pools and clusters pass, each broken rule reports its
pinned message, missing properties never crash, unknown values raise as under ``pulumi preview``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from batchplane_policies import gke
from pulumi_policy.proxy import UnknownValueError

from tests.policies.factories import DEV, PRODUCTION, UNKNOWN, Stack, check_resource

POOL = gke.NODE_POOL
CLUSTER = gke.CLUSTER

#: The queued H100 pool of templates/Pulumi.gke-prod-dws.yaml, as the program registers it.
QUEUED_POOL: dict[str, Any] = {
    "autoscaling": {"locationPolicy": "ANY", "totalMaxNodeCount": 4, "totalMinNodeCount": 0},
    "cluster": "batchplane-prod",
    "initialNodeCount": 0,
    "management": {"autoRepair": False, "autoUpgrade": True},
    "name": "h100",
    "nodeConfig": {
        "guestAccelerators": [{"count": 8, "type": "nvidia-h100-80gb"}],
        "machineType": "a3-highgpu-8g",
        "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
        "workloadMetadataConfig": {"mode": "GKE_METADATA"},
    },
    "nodeLocations": ["us-central1-a", "us-central1-c"],
    "queuedProvisioning": {"enabled": True},
}


def with_changes(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with top-level keys replaced (``None`` deletes)."""
    out: dict[str, Any] = json.loads(json.dumps(base))
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


@pytest.mark.parametrize(
    ("props", "want"),
    [
        (QUEUED_POOL, []),
        ({"name": "cpu", "autoscaling": {"totalMinNodeCount": 3, "totalMaxNodeCount": 6}}, []),
        ({}, []),
        (
            {"queuedProvisioning": {"enabled": True}},
            [
                "queued provisioning pool: autoscaling must be enabled (totalMinNodeCount 0, totalMaxNodeCount N)",
                'queued provisioning pool: nodeConfig.reservationAffinity.consumeReservationType is "unset"; it must be "NO_RESERVATION"',
                "queued provisioning pool: management.autoRepair must be false",
            ],
        ),
        (
            with_changes(
                QUEUED_POOL,
                autoscaling={"locationPolicy": "BALANCED", "minNodeCount": 1, "maxNodeCount": 2},
                nodeCount=1,
                initialNodeCount=2,
                management={"autoRepair": True},
                placementPolicy={"type": "COMPACT"},
                nodeConfig={
                    "spot": True,
                    "reservationAffinity": {"consumeReservationType": "ANY_RESERVATION"},
                },
            ),
            [
                "queued provisioning pool: autoscaling minimum is 1; it must be 0",
                'queued provisioning pool: autoscaling.locationPolicy is "BALANCED"; it must be "ANY"',
                "queued provisioning pool: nodeCount must not be set (nodes come only from the autoscaler)",
                "queued provisioning pool: initialNodeCount is 2; it must be 0",
                'queued provisioning pool: nodeConfig.reservationAffinity.consumeReservationType is "ANY_RESERVATION"; it must be "NO_RESERVATION"',
                "queued provisioning pool: management.autoRepair must be false",
                "queued provisioning pool: Spot/preemptible VMs cannot be combined with it",
                "queued provisioning pool: placementPolicy COMPACT is not supported for GPUs",
            ],
        ),
        (
            with_changes(
                QUEUED_POOL,
                queuedProvisioning=None,
                nodeConfig={
                    "flexStart": True,
                    "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
                },
            ),
            [],
        ),
        (
            with_changes(QUEUED_POOL, nodeConfig={"flexStart": True, "preemptible": True}),
            [
                'flex-start with queued provisioning pool: nodeConfig.reservationAffinity.consumeReservationType is "unset"; it must be "NO_RESERVATION"',
                "flex-start with queued provisioning pool: Spot/preemptible VMs cannot be combined with it",
            ],
        ),
        ({"queuedProvisioning": "yes", "nodeConfig": ["not", "a", "map"]}, []),
    ],
    ids=[
        "compliant-queued",
        "cpu-pool",
        "empty",
        "bare-queued",
        "every-rule-broken",
        "flex-start-ok",
        "flex-start-queued-preemptible",
        "wrong-types",
    ],
)
def test_dws_pool_rules_report_each_broken_gke_rule(props: dict[str, Any], want: list[str]) -> None:
    assert check_resource(gke.gke_dws_pool_rules, POOL, props) == want


def test_dws_pool_rules_ignore_other_resource_types() -> None:
    assert check_resource(gke.gke_dws_pool_rules, CLUSTER, {"queuedProvisioning": {"enabled": True}}) == []


def test_dws_pool_rules_cannot_judge_an_unknown_mode() -> None:
    with pytest.raises(UnknownValueError) as err:
        check_resource(gke.gke_dws_pool_rules, POOL, {"queuedProvisioning": {"enabled": UNKNOWN}})
    assert err.value.message == "string value at .queuedProvisioning.enabled can't be known during preview"


L4_POOL: dict[str, Any] = {
    "name": "l4",
    "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 12},
    "nodeConfig": {"machineType": "g2-standard-8", "guestAccelerators": [{"count": 1, "type": "nvidia-l4"}]},
}


@pytest.mark.parametrize(
    ("props", "config", "want"),
    [
        (L4_POOL, None, []),
        (
            with_changes(L4_POOL, autoscaling={"totalMinNodeCount": 2, "totalMaxNodeCount": 12}),
            None,
            ["GPU pool keeps at least 2 node(s) running; the minimum may be at most 0"],
        ),
        (with_changes(L4_POOL, autoscaling={"minNodeCount": 1, "maxNodeCount": 3}), {"maxMinNodes": 1}, []),
        (
            with_changes(L4_POOL, autoscaling=None, nodeCount=2),
            None,
            ["GPU pool has a fixed size; enable autoscaling with a minimum of 0 nodes"],
        ),
        (
            with_changes(L4_POOL, initialNodeCount=3),
            None,
            ["GPU pool starts with 3 node(s) (initialNodeCount); at most 0 allowed"],
        ),
        (
            {
                "nodeConfig": {"machineType": "a3-highgpu-8g"},
                "autoscaling": {"totalMinNodeCount": 1, "totalMaxNodeCount": 2},
            },
            None,
            ["GPU pool keeps at least 1 node(s) running; the minimum may be at most 0"],
        ),
        ({"nodeConfig": {"machineType": "e2-standard-8"}, "nodeCount": 3}, None, []),
        ({}, None, []),
    ],
    ids=[
        "scales-from-zero",
        "min-2",
        "min-1-allowed-by-config",
        "fixed-size",
        "initial-nodes",
        "gpu-machine-family-without-accelerators",
        "cpu-pool",
        "empty",
    ],
)
def test_gpu_pools_must_scale_from_zero(
    props: dict[str, Any], config: dict[str, Any] | None, want: list[str]
) -> None:
    assert check_resource(gke.gke_gpu_pool_scales_from_zero, POOL, props, config=config) == want


@pytest.mark.parametrize(
    ("props", "tags", "want"),
    [
        ({"deletionProtection": False}, PRODUCTION, ["deletionProtection is false on a production stack"]),
        ({"deletionProtection": True}, PRODUCTION, []),
        ({}, PRODUCTION, []),  # pulumi-gcp defaults deletion_protection to true
        ({"deletionProtection": False}, DEV, []),
    ],
    ids=["prod-off", "prod-on", "prod-default", "dev-off"],
)
def test_production_clusters_keep_deletion_protection(
    props: dict[str, Any], tags: dict[str, str], want: list[str]
) -> None:
    assert check_resource(gke.gke_deletion_protection, CLUSTER, props, stack_tags=tags) == want


@pytest.mark.parametrize(
    ("props", "tags", "config", "want"),
    [
        ({"privateClusterConfig": {"enablePrivateNodes": True}}, PRODUCTION, None, []),
        ({}, PRODUCTION, None, ["privateClusterConfig.enablePrivateNodes is not true on a production stack"]),
        (
            {"privateClusterConfig": {"enablePrivateNodes": False}},
            PRODUCTION,
            None,
            ["privateClusterConfig.enablePrivateNodes is not true on a production stack"],
        ),
        ({}, {"batchplane:environment": "staging"}, None, []),
        (
            {},
            {"batchplane:environment": "staging"},
            {"productionEnvironments": ["staging", "production"]},
            ["privateClusterConfig.enablePrivateNodes is not true on a production stack"],
        ),
    ],
    ids=["private", "missing", "public", "staging", "staging-configured-as-production"],
)
def test_production_clusters_use_private_nodes(
    props: dict[str, Any], tags: dict[str, str], config: dict[str, Any] | None, want: list[str]
) -> None:
    assert check_resource(gke.gke_private_nodes, CLUSTER, props, stack_tags=tags, config=config) == want


def test_environment_comes_from_stack_config_when_no_tag_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"batchplane:environment": "production"}))
    assert check_resource(gke.gke_private_nodes, CLUSTER, {}, stack_tags={"other": "tag"}) == [
        "privateClusterConfig.enablePrivateNodes is not true on a production stack"
    ]
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"batchplane:environment": "dev"}))
    assert check_resource(gke.gke_private_nodes, CLUSTER, {}, stack_tags={"other": "tag"}) == []


@pytest.mark.parametrize(
    ("resource_type", "props", "want"),
    [
        (CLUSTER, {"workloadIdentityConfig": {"workloadPool": "my-project.svc.id.goog"}}, []),
        (CLUSTER, {}, ["workloadIdentityConfig.workloadPool is not set"]),
        (
            CLUSTER,
            {"workloadIdentityConfig": {"workloadPool": "my-project"}},
            ['workloadIdentityConfig.workloadPool "my-project" is not "<project>.svc.id.goog"'],
        ),
        (
            POOL,
            {"nodeConfig": {"workloadMetadataConfig": {"mode": "GCE_METADATA"}}},
            [
                'nodeConfig.workloadMetadataConfig.mode is "GCE_METADATA"; it must be "GKE_METADATA" '
                "(pods would see the node's service account)"
            ],
        ),
        (POOL, {"nodeConfig": {"workloadMetadataConfig": {"mode": "GKE_METADATA"}}}, []),
        (POOL, {}, []),
    ],
    ids=["cluster-ok", "cluster-missing", "cluster-bad-pool", "pool-gce-metadata", "pool-ok", "pool-empty"],
)
def test_workload_identity_is_enabled(resource_type: str, props: dict[str, Any], want: list[str]) -> None:
    assert check_resource(gke.gke_workload_identity, resource_type, props) == want


def test_workload_identity_cannot_judge_an_unknown_pool() -> None:
    with pytest.raises(UnknownValueError):
        check_resource(
            gke.gke_workload_identity, CLUSTER, {"workloadIdentityConfig": {"workloadPool": UNKNOWN}}
        )


# --- deployability of private nodes ----------------------------------------------------------------------

PRIVATE = {"privateClusterConfig": {"enablePrivateNodes": True, "masterIpv4CidrBlock": "172.16.0.0/28"}}
KUEUE_RELEASE = {"chart": "oci://registry.k8s.io/kueue/charts/kueue", "version": "0.19.2"}
QUOTA_DEPLOYMENT = {
    "metadata": {"name": "batchplane-quota-webhook"},
    "spec": {"template": {"spec": {"containers": [{"name": "webhook", "ports": [{"containerPort": 8443}]}]}}},
}


def private_stack(*, nat: bool, open_ports: list[str] | None) -> Stack:
    s = Stack()
    s.add(CLUSTER, "gke-cluster", PRIVATE)
    if nat:
        s.add(gke.ROUTER_NAT, "gke-nat", {"natIpAllocateOption": "AUTO_ONLY"})
    if open_ports is not None:
        s.add(
            gke.FIREWALL,
            "gke-webhooks",
            {"direction": "INGRESS", "allows": [{"protocol": "tcp", "ports": open_ports}]},
        )
    s.add("kubernetes:helm.sh/v3:Release", "kueue", KUEUE_RELEASE)
    s.add("kubernetes:apps/v1:Deployment", "quota-webhook", QUOTA_DEPLOYMENT)
    return s


@pytest.mark.parametrize(
    ("nat", "open_ports", "want_nat", "want_ports"),
    [
        (True, ["8082", "8443", "9443"], [], []),
        (False, ["8082", "8443", "9443"], [(
            "private nodes have no Cloud NAT in this stack: they cannot pull operator images (quay.io, "
            "registry.k8s.io, ghcr.io)", "gke-cluster")], []),
        (True, ["9443"], [], [(
            "the control plane cannot reach webhook port(s) 8082, 8443 on private nodes: GKE opens only 443 and "
            "10250; admission calls will time out", "gke-cluster")]),
        (True, None, [], [(
            "the control plane cannot reach webhook port(s) 8082, 8443, 9443 on private nodes: GKE opens only 443 "
            "and 10250; admission calls will time out", "gke-cluster")]),
    ],
    ids=["all-declared", "no-nat", "ports-missing", "no-firewall"],
)  # fmt: skip
def test_private_nodes_need_nat_and_reachable_webhook_ports(
    nat: bool, open_ports: list[str] | None, want_nat: list[Any], want_ports: list[Any]
) -> None:
    s = private_stack(nat=nat, open_ports=open_ports)
    assert s.check(gke.gke_private_nodes_have_nat) == want_nat
    assert s.check(gke.gke_webhook_ports_reachable) == want_ports


def test_public_nodes_need_neither_nat_nor_firewall() -> None:
    s = Stack()
    s.add(CLUSTER, "gke-cluster", {})
    s.add("kubernetes:helm.sh/v3:Release", "kueue", KUEUE_RELEASE)
    assert s.check(gke.gke_private_nodes_have_nat) == [] and s.check(gke.gke_webhook_ports_reachable) == []

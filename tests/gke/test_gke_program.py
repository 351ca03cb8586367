"""The Pulumi program on a GKE target, under the offline mock engine: the exact pulumi-gcp inputs
per pool mode (camelCase, as ``batchplane preview --json`` shows them), the cluster, the provider
wiring (every in-cluster resource uses the Kubernetes provider built from the cluster's kubeconfig),
the templates, and that a bad config registers nothing."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from batchplane.errors import ConfigValidationError
from batchplane.offline.engine import run_program
from batchplane.offline.model import ProgramRun, RecordedResource
from batchplane.offline.stackfile import read_stack_file
from tests.conftest import REPO_ROOT, template_path

NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
K8S_PROVIDER = "pulumi:providers:kubernetes"
SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
WI = {"mode": "GKE_METADATA"}
GPU_TAINT = [{"effect": "NO_SCHEDULE", "key": "nvidia.com/gpu", "value": "present"}]
NO_RESERVATION = {"consumeReservationType": "NO_RESERVATION"}
# The account the stack creates for the cluster "batchplane" (target.nodeServiceAccount omitted).
NODE_SA = "batchplane-nodes@proj-1.iam.gserviceaccount.com"

pytestmark = pytest.mark.slow

MODES_CONFIG: dict[str, Any] = {
    "batchplane:environment": "dev",
    "batchplane:target": {
        "kind": "gke",
        "region": "us-central1",
        "minMasterVersion": "1.35",
        "project": "proj-1",
        "gpuPools": [
            {
                "name": "queued",
                "provisioning": "queued",
                "machineType": "g2-standard-4",
                "nodeLocations": ["us-central1-a"],
                "maxNodes": 4,
            },
            {
                "name": "flex",
                "provisioning": "flex-start",
                "machineType": "g2-standard-8",
                "nodeLocations": ["us-central1-a", "us-central1-b"],
                "maxNodes": 2,
                "maxRunDurationSeconds": 3600,
            },
            {
                "name": "flex-queued",
                "provisioning": "flex-start",
                "queuedProvisioning": True,
                "machineType": "a3-highgpu-8g",
                "nodeLocations": ["us-central1-c"],
                "maxNodes": 2,
                "gpuDriver": "LATEST",
            },
            {
                "name": "on-demand",
                "provisioning": "on-demand",
                "machineType": "n1-standard-8",
                "accelerator": {"type": "nvidia-tesla-t4", "count": 2},
                "nodeLocations": ["us-central1-a", "us-central1-f"],
                "minNodes": 1,
                "maxNodes": 3,
                "autoscalingLimits": "per-zone",
                "labels": {"team": "ml"},
                "taints": [{"key": "dedicated", "value": "ml", "effect": "NoExecute"}],
            },
            {
                "name": "spot",
                "provisioning": "spot",
                "machineType": "g2-standard-4",
                "nodeLocations": ["us-central1-b"],
                "maxNodes": 8,
            },
            {
                "name": "reserved",
                "provisioning": "reservation",
                "machineType": "a2-highgpu-8g",
                "nodeLocations": ["us-central1-c"],
                "nodeCount": 2,
                "reservation": {"name": "a100-res", "project": "shared-proj"},
                "placement": {"type": "COMPACT"},
            },
        ],
    },
}


def node_config(machine: str, gpu: str, count: int, driver: str = "DEFAULT", **extra: Any) -> dict[str, Any]:
    config = {
        "guestAccelerators": [
            {"count": count, "gpuDriverInstallationConfig": {"gpuDriverVersion": driver}, "type": gpu}
        ],
        "machineType": machine,
        "oauthScopes": SCOPES,
        "serviceAccount": NODE_SA,
        "taints": GPU_TAINT,
        "workloadMetadataConfig": WI,
    }
    config.update(extra)
    return config


def pool(
    name: str, locations: list[str], nconfig: dict[str, Any], management: tuple[bool, bool], **extra: Any
) -> dict[str, Any]:
    inputs = {
        "cluster": "batchplane",
        "location": "us-central1",
        "name": name,
        "nodeLocations": locations,
        "project": "proj-1",
        "management": {"autoRepair": management[0], "autoUpgrade": management[1]},
        "nodeConfig": nconfig,
    }
    inputs.update(extra)
    return inputs


DWS_SCALING = {"locationPolicy": "ANY", "totalMinNodeCount": 0}

WANT_POOLS = [
    pytest.param(
        "queued",
        pool(
            "queued",
            ["us-central1-a"],
            node_config("g2-standard-4", "nvidia-l4", 1, reservationAffinity=NO_RESERVATION),
            (False, True),
            autoscaling={**DWS_SCALING, "totalMaxNodeCount": 4},
            initialNodeCount=0,
            queuedProvisioning={"enabled": True},
        ),
        id="queued",
    ),
    pytest.param(
        "flex",
        pool(
            "flex",
            ["us-central1-a", "us-central1-b"],
            node_config(
                "g2-standard-8",
                "nvidia-l4",
                1,
                reservationAffinity=NO_RESERVATION,
                flexStart=True,
                maxRunDuration="3600s",
            ),
            (False, True),
            autoscaling={**DWS_SCALING, "totalMaxNodeCount": 2},
            initialNodeCount=0,
        ),
        id="flex-start",
    ),
    pytest.param(
        "flex-queued",
        pool(
            "flex-queued",
            ["us-central1-c"],
            node_config(
                "a3-highgpu-8g",
                "nvidia-h100-80gb",
                8,
                "LATEST",
                reservationAffinity=NO_RESERVATION,
                flexStart=True,
            ),
            (False, True),
            autoscaling={**DWS_SCALING, "totalMaxNodeCount": 2},
            initialNodeCount=0,
            queuedProvisioning={"enabled": True},
        ),
        id="flex-start-with-queued-provisioning",
    ),
    pytest.param(
        "on-demand",
        pool(
            "on-demand",
            ["us-central1-a", "us-central1-f"],
            node_config(
                "n1-standard-8",
                "nvidia-tesla-t4",
                2,
                labels={"team": "ml"},
                taints=[*GPU_TAINT, {"effect": "NO_EXECUTE", "key": "dedicated", "value": "ml"}],
            ),
            (True, True),
            autoscaling={"minNodeCount": 1, "maxNodeCount": 3},
        ),
        id="on-demand-per-zone-limits",
    ),
    pytest.param(
        "spot",
        pool(
            "spot",
            ["us-central1-b"],
            node_config("g2-standard-4", "nvidia-l4", 1, spot=True),
            (True, True),
            autoscaling={"totalMinNodeCount": 0, "totalMaxNodeCount": 8},
        ),
        id="spot",
    ),
    pytest.param(
        "reserved",
        pool(
            "reserved",
            ["us-central1-c"],
            node_config(
                "a2-highgpu-8g",
                "nvidia-tesla-a100",
                8,
                reservationAffinity={
                    "consumeReservationType": "SPECIFIC_RESERVATION",
                    "key": "compute.googleapis.com/reservation-name",
                    "values": ["projects/shared-proj/reservations/a100-res"],
                },
            ),
            (True, True),
            nodeCount=2,
            placementPolicy={"type": "COMPACT"},
        ),
        id="reservation",
    ),
]


@pytest.fixture(scope="module")
def modes_run() -> ProgramRun:
    return run_program(REPO_ROOT, "modes", MODES_CONFIG)


@pytest.fixture(scope="module")
def prod_run() -> ProgramRun:
    return run_program(REPO_ROOT, "gke-prod-dws", read_stack_file(template_path("gke-prod-dws")))


@pytest.fixture(scope="module")
def dev_run() -> ProgramRun:
    return run_program(REPO_ROOT, "gke-dev", read_stack_file(template_path("gke-dev")))


@pytest.mark.parametrize(("pool_name", "want"), WANT_POOLS)
def test_node_pool_gets_the_exact_pulumi_gcp_inputs_of_its_mode(
    modes_run: ProgramRun, pool_name: str, want: dict[str, Any]
) -> None:
    assert modes_run.get(NODE_POOL, f"gke-{pool_name}").inputs == want


def test_system_pool_is_a_small_autoscaled_cpu_pool_without_taints(modes_run: ProgramRun) -> None:
    assert modes_run.get(NODE_POOL, "gke-system").inputs == {
        "autoscaling": {"totalMaxNodeCount": 3, "totalMinNodeCount": 1},
        "initialNodeCount": 1,  # nodes at creation: the first Helm releases must not wait for the autoscaler
        "cluster": "batchplane",
        "location": "us-central1",
        "management": {"autoRepair": True, "autoUpgrade": True},
        "name": "system",
        "nodeConfig": {
            "machineType": "e2-standard-4",
            "oauthScopes": SCOPES,
            "serviceAccount": NODE_SA,
            "workloadMetadataConfig": WI,
        },
        "project": "proj-1",
    }


def test_dev_cluster_removes_the_default_pool_without_deletion_protection(modes_run: ProgramRun) -> None:
    assert modes_run.get(CLUSTER, "gke-cluster").inputs == {
        "datapathProvider": "ADVANCED_DATAPATH",  # Dataplane V2 enforces the webhook's NetworkPolicy
        "deletionProtection": False,
        "initialNodeCount": 1,
        "location": "us-central1",
        "minMasterVersion": "1.35",
        "name": "batchplane",
        # The default pool GKE creates with the cluster (and the stack removes) runs as the nodes' account too.
        "nodeConfig": {"oauthScopes": SCOPES, "serviceAccount": NODE_SA},
        "project": "proj-1",
        "releaseChannel": {"channel": "REGULAR"},
        "removeDefaultNodePool": True,
        "workloadIdentityConfig": {"workloadPool": "proj-1.svc.id.goog"},
    }


def test_gke_children_are_parented_to_the_component_and_named_after_it(modes_run: ProgramRun) -> None:
    (component,) = modes_run.of_type("batchplane:gke:GkeCluster")
    children = modes_run.children(component.urn)
    assert [(c.type, c.name) for c in children] == [
        ("gcp:serviceaccount/account:Account", "gke-node-account"),
        ("gcp:projects/iAMMember:IAMMember", "gke-node-account-role"),
        (CLUSTER, "gke-cluster"),
        *[
            (NODE_POOL, f"gke-{name}")
            for name in ("system", "queued", "flex", "flex-queued", "on-demand", "spot", "reserved")
        ],
    ]


def k8s_provider(run: ProgramRun) -> RecordedResource:
    (provider,) = run.of_type(K8S_PROVIDER)
    return provider


@pytest.mark.parametrize("which", ["modes", "prod"], ids=["all-modes", "gke-prod-dws"])
def test_every_in_cluster_resource_uses_the_provider_built_from_the_kubeconfig(
    which: str, modes_run: ProgramRun, prod_run: ProgramRun
) -> None:
    run = modes_run if which == "modes" else prod_run
    provider = k8s_provider(run)
    in_cluster = [r for r in run.resources if r.type.startswith("kubernetes:")]
    assert in_cluster, "no in-cluster resources recorded"
    assert {r.provider_urn for r in in_cluster} == {provider.urn}


def test_kubernetes_provider_kubeconfig_is_secret_and_uses_the_gke_auth_plugin(modes_run: ProgramRun) -> None:
    provider = k8s_provider(modes_run)
    assert ("kubeconfig",) in provider.secret_paths
    doc = yaml.safe_load(provider.inputs["kubeconfig"])
    assert doc["current-context"] == "batchplane"
    assert doc["clusters"][0]["cluster"]["server"] == "https://203.0.113.10"
    assert doc["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert ("kubeconfig",) in modes_run.output_secret_paths


def test_kubernetes_provider_waits_for_the_system_pool(modes_run: ProgramRun) -> None:
    system = modes_run.get(NODE_POOL, "gke-system")
    assert system.urn in k8s_provider(modes_run).dependencies


# --- templates ---------------------------------------------------------------------------------


def test_prod_dws_h100_pool_is_flex_start_queued_with_total_min_0_any_no_reservation_and_no_auto_repair(
    prod_run: ProgramRun,
) -> None:
    assert prod_run.get(NODE_POOL, "gke-h100").inputs == {
        "autoscaling": {"locationPolicy": "ANY", "totalMaxNodeCount": 4, "totalMinNodeCount": 0},
        "cluster": "batchplane-prod",
        "initialNodeCount": 0,
        "location": "us-central1",
        "management": {"autoRepair": False, "autoUpgrade": True},
        "name": "h100",
        "nodeConfig": node_config(
            "a3-highgpu-8g",
            "nvidia-h100-80gb",
            8,
            "LATEST",
            diskSizeGb=500,
            diskType="pd-ssd",
            flexStart=True,  # GKE's current DWS pools: --flex-start --enable-queued-provisioning
            reservationAffinity=NO_RESERVATION,
            tags=["batchplane-prod-node"],  # private nodes: the webhook firewall rule targets this tag
            serviceAccount="batchplane-prod-nodes@offline-project.iam.gserviceaccount.com",
        ),
        "nodeLocations": ["us-central1-a", "us-central1-c"],
        "queuedProvisioning": {"enabled": True},
    }


def test_private_nodes_get_a_nat_gateway_and_a_webhook_firewall_rule_before_any_pool(
    prod_run: ProgramRun,
) -> None:
    router = prod_run.get("gcp:compute/router:Router", "gke-router")
    nat = prod_run.get("gcp:compute/routerNat:RouterNat", "gke-nat")
    firewall = prod_run.get("gcp:compute/firewall:Firewall", "gke-webhooks")
    assert router.inputs == {"name": "batchplane-prod-router", "network": "default", "region": "us-central1"}
    assert nat.inputs["natIpAllocateOption"] == "AUTO_ONLY"
    assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"
    assert firewall.inputs["sourceRanges"] == ["172.16.0.0/28"]
    assert firewall.inputs["targetTags"] == ["batchplane-prod-node"]
    # Kueue's webhook and visibility server, the quota webhook (GKE opens 443 and 10250 itself).
    assert firewall.inputs["allows"] == [{"ports": ["8082", "8443", "9443"], "protocol": "tcp"}]
    for pool in prod_run.of_type(NODE_POOL):
        assert {nat.urn, firewall.urn} <= set(pool.dependencies), pool.urn
        assert pool.inputs["nodeConfig"]["tags"] == ["batchplane-prod-node"]


def test_public_nodes_get_no_nat_no_firewall_and_no_tags(modes_run: ProgramRun) -> None:
    assert modes_run.of_type("gcp:compute/routerNat:RouterNat") == []
    assert modes_run.of_type("gcp:compute/firewall:Firewall") == []
    assert all("tags" not in pool.inputs["nodeConfig"] for pool in modes_run.of_type(NODE_POOL))


def test_prod_dws_cluster_is_private_and_deletion_protected(prod_run: ProgramRun) -> None:
    inputs = prod_run.get(CLUSTER, "gke-cluster").inputs
    assert inputs["deletionProtection"] is True
    assert inputs["privateClusterConfig"] == {
        "enablePrivateEndpoint": False,
        "enablePrivateNodes": True,
        "masterIpv4CidrBlock": "172.16.0.0/28",
    }
    assert inputs["workloadIdentityConfig"] == {"workloadPool": "offline-project.svc.id.goog"}


def kueue_object(run: ProgramRun, kind: str, name: str) -> dict[str, Any]:
    (found,) = [
        r for r in run.resources if r.type.endswith(f":{kind}") and r.inputs["metadata"]["name"] == name
    ]
    return found.inputs


def test_prod_dws_wires_derived_flavors_and_the_dws_check_into_every_team_queue(prod_run: ProgramRun) -> None:
    assert kueue_object(prod_run, "ResourceFlavor", "h100")["spec"] == {
        "nodeLabels": {"cloud.google.com/gke-nodepool": "h100"},
        "tolerations": [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {
                "key": "cloud.google.com/gke-queued",
                "operator": "Equal",
                "value": "true",
                "effect": "NoSchedule",
            },
        ],
    }
    assert kueue_object(prod_run, "ResourceFlavor", "l4")["spec"]["nodeLabels"] == {
        "cloud.google.com/gke-nodepool": "l4"
    }
    assert kueue_object(prod_run, "ProvisioningRequestConfig", "h100-dws")["spec"] == {
        "provisioningClassName": "queued-provisioning.gke.io",
        "parameters": {"maxRunDurationSeconds": "86400"},
        "managedResources": ["nvidia.com/gpu"],
        "retryStrategy": {"backoffLimitCount": 5, "backoffBaseSeconds": 60, "backoffMaxSeconds": 1800},
        "podSetMergePolicy": "IdenticalWorkloadSchedulingRequirements",
    }
    assert kueue_object(prod_run, "AdmissionCheck", "h100-dws")["spec"]["controllerName"] == (
        "kueue.x-k8s.io/provisioning-request"
    )
    for team in ("team-a", "team-b", "team-c"):
        spec = kueue_object(prod_run, "ClusterQueue", team)["spec"]
        assert spec["admissionChecksStrategy"] == {
            "admissionChecks": [{"name": "h100-dws", "onFlavors": ["h100"]}]
        }
        assert [f["name"] for f in spec["resourceGroups"][0]["flavors"]] == ["default-flavor", "h100", "l4"]


def test_prod_dws_preview_json_shows_the_queued_pool(prod_run: ProgramRun) -> None:
    doc = prod_run.to_json()
    (h100,) = [r for r in doc["resources"] if r["type"] == NODE_POOL and r["name"] == "gke-h100"]
    assert h100["inputs"]["queuedProvisioning"] == {"enabled": True}
    (provider,) = [r for r in doc["resources"] if r["type"] == K8S_PROVIDER]
    assert provider["inputs"]["kubeconfig"] == "[secret]"


def test_dev_template_has_one_flex_start_l4_pool(dev_run: ProgramRun) -> None:
    pools = dev_run.of_type(NODE_POOL)
    assert [p.name for p in pools] == ["gke-system", "gke-l4-flex"]
    inputs = pools[1].inputs
    assert inputs["nodeConfig"]["flexStart"] is True
    assert inputs["autoscaling"] == {"locationPolicy": "ANY", "totalMaxNodeCount": 2, "totalMinNodeCount": 0}
    assert dev_run.get(CLUSTER, "gke-cluster").inputs["deletionProtection"] is False
    # the one message: offline, the canned GKE versions are no fact about the region (issue #29, item 18)
    assert [m.message.split(";")[0] for m in dev_run.logs] == [
        "not checked offline: whether GKE offers the release channel's default version in us-central1, at least what "
        "the pools need (batchplane:target.releaseChannel)"
    ]


def test_bad_gke_config_raises_before_any_resource_is_declared() -> None:
    config = {
        **MODES_CONFIG,
        "batchplane:target": {**MODES_CONFIG["batchplane:target"], "zone": "us-central1-a"},
    }
    with pytest.raises(ConfigValidationError) as caught:
        run_program(REPO_ROOT, "bad", config)
    assert [str(i) for i in caught.value.errors] == [
        "batchplane:target.zone: give either region (a regional cluster) or zone (a zonal cluster), not both"
    ]


@pytest.mark.parametrize(
    ("kuberay", "want_addon", "want_kuberay_release"),
    [
        ({"gkeRayAddon": True, "enabled": False}, {"rayOperatorConfigs": [{"enabled": True}]}, False),
        ({"version": "1.7.0"}, None, True),
    ],
    ids=["managed-ray-addon", "helm-kuberay"],
)
def test_gke_ray_addon_replaces_the_kuberay_chart(
    kuberay: dict[str, Any], want_addon: dict[str, Any] | None, want_kuberay_release: bool
) -> None:
    config = read_stack_file(template_path("gke-dev"))
    config["batchplane:operators"] = {**config["batchplane:operators"], "kuberay": kuberay}
    run = run_program(REPO_ROOT, "gke-dev", config)
    (cluster,) = run.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs.get("addonsConfig") == want_addon
    charts = [r.inputs["chart"] for r in run.of_type("kubernetes:helm.sh/v3:Release")]
    assert any(c.endswith("kuberay-operator") for c in charts) is want_kuberay_release

"""Declared MultiKueue workers: each validated as a stack of its own with errors at its own keys, brought up as a
BatchCluster with the manager's access (ServiceAccount, ClusterRole for the enabled kinds, token), and the
manager's kubeconfig Secrets built from them as Pulumi secrets (the gke-multiregion-dws template)."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import pytest
import yaml

from batchplane.config.operators import kueue_frameworks
from batchplane.errors import ConfigValidationError
from batchplane.graph.model import build_graph
from batchplane.multikueue.worker import cluster_role_rules, worker_kubeconfig
from batchplane.offline import ProgramRun, read_stack_file, run_program
from batchplane.stack import Stack, load_stack
from tests.conftest import REPO_ROOT, template_path

TEMPLATE = "gke-multiregion-dws"
WORKERS = ["us-east4", "europe-west4", "asia-southeast1"]


def template() -> dict[str, Any]:
    return copy.deepcopy(read_stack_file(template_path(TEMPLATE)))


@cache
def stack() -> Stack:
    return load_stack(template(), TEMPLATE)


@cache
def run() -> ProgramRun:
    return run_program(REPO_ROOT, TEMPLATE, template())


def problems(config: dict[str, Any]) -> list[str]:
    try:
        found = load_stack(config, "t").warnings
    except ConfigValidationError as exc:
        found = exc.issues
    return [str(issue) for issue in found]


def test_each_declared_worker_is_a_stack_with_its_own_target_and_teams() -> None:
    s = stack()
    assert list(s.workers) == WORKERS
    east = s.workers["us-east4"]
    assert (east.name, east.config.target.kind, east.config.operators == s.config.operators) == (
        "gke-multiregion-dws-us-east4",
        "gke",
        True,
    )

    def l4_gpus(k: Any) -> list[str]:
        return [
            str(q.nominal_quota)
            for cq in k.cluster_queues
            for g in cq.obj.resource_groups
            for f in g.flavors
            if f.name == "l4"
            for q in f.resources
            if q.name == "nvidia.com/gpu"
        ]

    assert l4_gpus(s.kueue) == ["12", "12"]  # the manager: the sum of the workers'
    assert l4_gpus(east.kueue) == ["4", "4"]  # a worker: sized to its own pool
    assert [c.obj.name for c in east.kueue.admission_checks] == ["l4-dws"]  # DWS on the worker only
    assert [c.obj.name for c in s.kueue.admission_checks] == ["multikueue"]


def with_worker(index: int, **changes: Any) -> dict[str, Any]:
    config = template()
    worker = copy.deepcopy(config["batchplane:multiKueue"]["workers"][index])
    worker.update(changes)
    config["batchplane:multiKueue"]["workers"][index] = worker
    return config


@pytest.mark.parametrize(
    ("config", "want"),
    [
        (
            with_worker(0, kubeconfigSecret="kc"),
            [
                "batchplane:multiKueue.workers[0]: give exactly one of kubeconfigSecret (an existing worker) and target (a declared one)"
            ],
        ),
        (
            with_worker(2, target={"kind": "kind", "clusterName": "w"}),
            [
                "batchplane:multiKueue.workers[2]: a declared kind worker needs server: the https URL at which the manager reaches its API server (only a gke worker's endpoint is known to the program)"
            ],
        ),
        (
            with_worker(1, target=None, teams=None, kubeconfigSecret="kc", kueue={}),
            ["batchplane:multiKueue.workers[1]: kueue only apply to a declared worker (one with a target)"],
        ),
        (
            with_worker(
                0,
                target={
                    **template()["batchplane:multiKueue"]["workers"][0]["target"],
                    "gpuPools": [
                        {
                            **template()["batchplane:multiKueue"]["workers"][0]["target"]["gpuPools"][0],
                            "maxNodes": 6,
                        }
                    ],
                },
            ),
            [
                'batchplane:multiKueue.workers[0].target.gpuPools[0].maxNodes: nvidia.com/gpu quota on flavor "l4" is 8 (ClusterQueue "team-a" 4; ClusterQueue "team-b" 4) but GKE node pool "l4" (batchplane:multiKueue.workers[0].target.gpuPools[0]) has at most 6 (6 nodes × 1 nvidia.com/gpu per node): 2 nvidia.com/gpu of nominal quota can never be backed by nodes; raise maxNodes or lower the quotas',
                'batchplane:multiKueue.workers[0].target.gpuPools[0].maxNodes: cpu quota on flavor "l4" is 32 (ClusterQueue "team-a" 16; ClusterQueue "team-b" 16) but GKE node pool "l4" (batchplane:multiKueue.workers[0].target.gpuPools[0]) has at most 24 (6 nodes × 4 cpu per node): 8 cpu of nominal quota can never be backed by nodes; raise maxNodes or lower the quotas',
                'batchplane:multiKueue.workers[0].target.gpuPools[0].maxNodes: memory quota on flavor "l4" is 128Gi (ClusterQueue "team-a" 64Gi; ClusterQueue "team-b" 64Gi) but GKE node pool "l4" (batchplane:multiKueue.workers[0].target.gpuPools[0]) has at most 96Gi (6 nodes × 16Gi memory per node): 32Gi memory of nominal quota can never be backed by nodes; raise maxNodes or lower the quotas',
            ],
        ),
        (
            with_worker(
                2,
                teams={
                    "cohortName": "ml",
                    "members": [
                        {
                            "name": "team-a",
                            "quotas": {
                                "default-flavor": {"cpu": 2, "memory": "8Gi", "nvidia.com/gpu": 0},
                                "l4": {"cpu": 16, "memory": "64Gi", "nvidia.com/gpu": 4},
                            },
                        }
                    ],
                },
            ),
            [
                'batchplane:multiKueue.workers[2]: worker "asia-southeast1" has no LocalQueue team-b/default: MultiKueue creates a dispatched workload in the same namespace and LocalQueue on the worker, so it would never be admitted there (add it to the worker\'s kueue or teams)'
            ],
        ),
    ],
    ids=[
        "both-sources",
        "kind-without-server",
        "override-on-existing-worker",
        "worker-pool-too-small",
        "worker-misses-a-local-queue",
    ],
)
def test_bad_worker_configs_are_errors_at_the_workers_keys(config: dict[str, Any], want: list[str]) -> None:
    assert problems(config) == want


def test_an_inherited_key_names_the_worker() -> None:
    config = template()
    config["batchplane:operators"]["kueue"] = {
        "enabled": False
    }  # fine for a manager with Kueue pre-installed
    assert problems(config) == [
        f'batchplane:operators.kueue: on MultiKueue worker "{w}" (batchplane:multiKueue.workers[{i}]): a declared '
        "worker needs Kueue installed by this program (operators.kueue enabled), with the manager's integrations: "
        "MultiKueue dispatches only what the worker's Kueue manages"
        for i, w in enumerate(WORKERS)
    ]


@pytest.mark.parametrize(
    ("gpus", "want"),
    [
        (
            16,
            'warning: batchplane:multiKueue: ClusterQueue "team-a" nvidia.com/gpu on flavor "l4": the manager\'s nominal quota 16 is more than the workers\' combined (us-east4 4; europe-west4 4; asia-southeast1 4): the manager may dispatch workloads no worker can admit',
        ),
        (
            3,
            'warning: batchplane:multiKueue: ClusterQueue "team-a" nvidia.com/gpu on flavor "l4": the manager\'s nominal quota 3 is less than the largest worker\'s (us-east4 4; europe-west4 4; asia-southeast1 4): that worker\'s quota can never be used in full',
        ),
        (12, None),
    ],
    ids=["more-than-all-workers", "less-than-the-largest-worker", "the-sum"],
)
def test_manager_quota_is_compared_with_the_workers(gpus: int, want: str | None) -> None:
    config = template()
    config["batchplane:teams"]["members"][0]["quotas"] = {
        "default-flavor": {"cpu": 6, "memory": "24Gi", "nvidia.com/gpu": 0},
        "l4": {"cpu": 48, "memory": "192Gi", "nvidia.com/gpu": gpus},
    }
    assert problems(config) == ([want] if want else [])


def test_worker_cluster_role_covers_workloads_and_exactly_the_enabled_dispatched_kinds() -> None:
    role = run().get("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "us-east4-multikueue-access-role")
    ops = stack().config.operators
    assert ops is not None
    assert role.inputs["rules"] == cluster_role_rules(kueue_frameworks(ops))
    resources = [
        (r["apiGroups"][0], r["resources"][0])
        for r in cluster_role_rules(
            ["batch/job", "ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice", "pod"]
        )
    ]
    assert resources == [
        ("kueue.x-k8s.io", "workloads"),
        ("kueue.x-k8s.io", "clusterqueues"),
        ("kueue.x-k8s.io", "workloads/status"),
        ("batch", "jobs"),
        ("batch", "jobs/status"),
        ("ray.io", "rayjobs"),
        ("ray.io", "rayjobs/status"),
        ("ray.io", "rayservices"),
        ("ray.io", "rayservices/status"),
        ("ray.io", "rayclusters"),
        ("ray.io", "rayclusters/status"),
        ("", "pods"),
    ]  # Kueue's script order per framework (registry order); pods has no status rule in the script


def test_manager_secrets_hold_each_workers_kubeconfig_as_a_pulumi_secret_after_its_token() -> None:
    r = run()
    for worker in WORKERS:
        secret = r.get("kubernetes:core/v1:Secret", f"multikueue-{worker}")
        assert secret.inputs["metadata"] == {"name": f"multikueue-{worker}", "namespace": "kueue-system"}
        assert ("stringData",) in secret.secret_paths
        config = yaml.safe_load(secret.inputs["stringData"]["kubeconfig"])
        assert (
            config["clusters"][0]["cluster"]["server"] == "https://203.0.113.10"
        )  # the worker's GKE endpoint
        assert config["users"][0]["user"]["token"] == "secret-placeholder"  # offline: no real token
        gate = next(x for x in r.resources if x.name == f"{worker}-multikueue-access-token-ready")
        assert gate.urn in secret.dependencies
        assert gate.inputs["gate"] == "service-account-token"
        # The manager's provider, not the worker's.
        assert secret.provider_urn == r.get("pulumi:providers:kubernetes", "k8s").urn
        cluster = r.get(
            "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster", f"kueue-multikueuecluster-{worker}"
        )
        assert cluster.inputs["spec"]["clusterSource"]["kubeConfig"]["location"] == f"multikueue-{worker}"
        assert secret.urn in cluster.dependencies


def test_preview_json_never_shows_a_kubeconfig() -> None:
    text = str(run().to_json())
    assert "secret-placeholder" not in text and "[secret]" in text


def test_worker_kubeconfig_refuses_a_ca_that_is_not_base64() -> None:
    with pytest.raises(ValueError):
        worker_kubeconfig("w", "https://w", "not base64!", "t")


def test_graph_draws_the_workers_with_their_pools_behind_the_dispatching_queues() -> None:
    graph = build_graph(stack())
    workers = graph.of_kind("worker")
    assert [w.name for w in workers] == WORKERS
    assert workers[0].lines == (
        "gke batchplane-us-east4 us-east4",
        "pool l4: GKE node pool · cloud.google.com/gke-nodepool=l4 · at most 8 nodes · ProvisioningRequest queued-provisioning.gke.io",
        "ClusterQueues team-a, team-b",
    )
    dispatch = [(e.source, e.target) for e in graph.edges if e.kind == "dispatch"]
    assert dispatch == [(f"ClusterQueue {q}", f"Worker {w}") for q in ("team-a", "team-b") for w in WORKERS]


def with_openshift_worker(**target_changes: Any) -> dict[str, Any]:
    config = template()
    target = copy.deepcopy(read_stack_file(template_path("openshift-ai"))["batchplane:target"])
    target.update(target_changes)
    config["batchplane:multiKueue"]["workers"][2] = {
        "name": "ocp",
        "target": target,
        "server": "https://api.ocp.example.com:6443",
        "teams": config["batchplane:multiKueue"]["workers"][0]["teams"],
    }
    return config


def test_an_openshift_worker_gets_olm_installs_and_the_managers_access_in_the_red_hat_kueue_namespace() -> (
    None
):
    r = run_program(REPO_ROOT, TEMPLATE, with_openshift_worker())
    assert (
        r.get("batchplane:openshift_operators:OpenShiftOperators", "ocp-olm").parent
        == r.get("batchplane:cluster:BatchCluster", "ocp").urn
    )
    sa = r.get("kubernetes:core/v1:ServiceAccount", "ocp-multikueue-access-sa")
    assert sa.inputs["metadata"]["namespace"] == "openshift-kueue-operator"
    role = r.get("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "ocp-multikueue-access-role")
    assert {rule["resources"][0] for rule in role.inputs["rules"]} >= {"rayjobs", "rayclusters", "jobs"}
    secret = r.get("kubernetes:core/v1:Secret", "multikueue-ocp")
    kubeconfig = yaml.safe_load(secret.inputs["stringData"]["kubeconfig"])
    assert kubeconfig["clusters"][0]["cluster"]["server"] == "https://api.ocp.example.com:6443"
    assert [
        x.name for x in r.of_type("kubernetes:helm.sh/v3:Release") if x.name.startswith("ocp-")
    ] == []  # OLM only


def test_an_openshift_worker_without_the_managers_kinds_is_an_error_at_its_frameworks() -> None:
    config = with_openshift_worker(
        openshiftAi={"channel": "stable-3.x", "release": "3.x", "components": {"ray": False}}
    )
    assert problems(config) == [
        "batchplane:multiKueue.workers[2].target.kueue.frameworks: the manager's Kueue manages ray.io/rayjob, "
        "ray.io/rayservice, ray.io/raycluster but this worker's does not: MultiKueue would dispatch such workloads to a worker that "
        "never admits them"
    ]


def test_a_bad_manager_section_is_reported_without_validating_the_workers() -> None:
    # Found by tests/program/test_generated_stacks.py: the workers' validation re-read every section and crashed.
    config = template()
    config["batchplane:environment"] = -1
    assert problems(config) == [
        "batchplane:environment: -1 is not allowed; expected 'dev', 'staging' or 'production'",
    ]


def test_two_clusters_of_one_project_with_one_name_cannot_share_a_created_node_account() -> None:
    config = template()
    config["batchplane:multiKueue"]["workers"][1]["target"]["clusterName"] = "batchplane-us-east4"
    assert problems(config) == [
        'batchplane:multiKueue.workers[1].target.clusterName: worker "europe-west4" would create the node service '
        'account "batchplane-us-east4-nodes" that worker "us-east4" creates in the same project (its id comes from '
        "clusterName): give the clusters different clusterNames, or set nodeServiceAccount"
    ]
    config["batchplane:multiKueue"]["workers"][1]["target"]["nodeServiceAccount"] = (
        "eu-nodes@bp-demo-123456.iam.gserviceaccount.com"
    )
    assert problems(config) == []


def _same_as(index: int, other: dict[str, Any]) -> dict[str, Any]:
    config = template()
    config["batchplane:multiKueue"]["workers"][index]["target"] = copy.deepcopy(other)
    return config


@pytest.mark.parametrize(
    ("config", "want"),
    [
        (
            _same_as(1, template()["batchplane:multiKueue"]["workers"][0]["target"]),
            'batchplane:multiKueue.workers[1].target: worker "europe-west4" is the same cluster as worker "us-east4" '
            "(gke, us-east4, batchplane-us-east4): a worker must be a cluster of its own",
        ),
        (
            _same_as(
                0,
                {
                    **template()["batchplane:target"],
                    "gpuPools": [
                        {
                            **template()["batchplane:multiKueue"]["workers"][0]["target"]["gpuPools"][0],
                            "nodeLocations": ["us-central1-a", "us-central1-b"],
                        }
                    ],
                },
            ),
            'batchplane:multiKueue.workers[0].target: worker "us-east4" is the same cluster as the manager '
            "(gke, us-central1, batchplane-manager): a worker must be a cluster of its own",
        ),
    ],
    ids=["two-workers-one-cluster", "worker-is-the-manager"],
)
def test_a_worker_must_be_a_cluster_of_its_own(config: dict[str, Any], want: str) -> None:
    assert problems(config) == [want]


def test_the_managers_component_name_is_not_a_worker_name() -> None:
    config = template()
    config["batchplane:multiKueue"]["workers"][1]["name"] = "batchplane"
    assert problems(config) == [
        'batchplane:multiKueue: "batchplane" names the manager\'s own cluster in the program: give the worker '
        "another name"
    ]


def test_a_worker_without_its_own_queues_gets_the_managers_sized_to_its_pools() -> None:
    config = template()
    for worker in config["batchplane:multiKueue"]["workers"]:
        worker.pop("teams")
    s = load_stack(config, TEMPLATE)
    east = s.workers["us-east4"].kueue

    def quotas(k: Any, flavor: str) -> dict[str, dict[str, str]]:
        return {
            cq.obj.name: {
                q.name: q.nominal_quota
                for g in cq.obj.resource_groups
                for f in g.flavors
                if f.name == flavor
                for q in f.resources
            }
            for cq in k.cluster_queues
        }

    # The manager's 12 GPUs per team, 2 teams, on an 8-node × 1 L4 pool: 4 each, the proportions kept.
    assert quotas(east, "l4") == {
        team: {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "4"} for team in ("team-a", "team-b")
    }
    assert quotas(east, "default-flavor") == quotas(s.kueue, "default-flavor")  # not pool-backed: unchanged
    assert (
        "warning: batchplane:multiKueue.workers[0].target.gpuPools[0].maxNodes: nvidia.com/gpu quota on the flavor(s) "
        'of GKE node pool "l4" (batchplane:multiKueue.workers[0].target.gpuPools[0]) sized to the pool\'s 8: '
        'ClusterQueue "team-a" 12 → 4; ClusterQueue "team-b" 12 → 4'
    ) in [str(w) for w in s.warnings]
    assert [
        w for w in s.warnings if "more than the workers' combined" in w.message
    ] == []  # 3 × 4 = 12: balanced


def test_quota_a_pool_can_hold_is_left_alone() -> None:
    config = template()
    config["batchplane:teams"]["members"][0]["quotas"]["l4"] = {
        "cpu": 4,
        "memory": "16Gi",
        "nvidia.com/gpu": 1,
    }
    config["batchplane:teams"]["members"][1]["quotas"]["l4"] = {
        "cpu": 4,
        "memory": "16Gi",
        "nvidia.com/gpu": 1,
    }
    for worker in config["batchplane:multiKueue"]["workers"]:
        worker.pop("teams")
    s = load_stack(config, TEMPLATE)
    assert [w for w in s.warnings if "sized to the pool" in w.message] == []


def test_a_missing_worker_server_is_reported_with_errors_of_other_sections() -> None:
    config = with_worker(2, target={"kind": "kind", "clusterName": "w"})
    config["batchplane:webhook"] = {"replicas": "two"}
    found = [p for p in problems(config) if "warning" not in p]
    assert any(
        p.startswith("batchplane:multiKueue.workers[2]: a declared kind worker needs server") for p in found
    )
    assert any(p.startswith("batchplane:webhook.replicas") for p in found)


def _private_endpoint_worker(**more: Any) -> dict[str, Any]:
    target = template()["batchplane:multiKueue"]["workers"][0]["target"]
    private = {"enabled": True, "privateEndpoint": True, "masterIpv4CidrBlock": "172.16.0.32/28"}
    return with_worker(0, target={**target, "privateNodes": private}, **more)


def test_a_gke_worker_with_a_private_endpoint_and_no_server_is_refused_naming_the_key() -> None:
    # The manager in another region cannot reach a private control-plane IP (issue #29, item 17).
    assert problems(_private_endpoint_worker()) == [
        "batchplane:multiKueue.workers[0].target.privateNodes.privateEndpoint: the manager's Kueue cannot reach this "
        "worker's control plane at a private IP (another cluster, another region): set privateEndpoint: false (GKE's "
        "authorized networks still restrict who reaches it), or set multiKueue.workers[0].server to an https URL the "
        "manager reaches (VPN, peering, Connect gateway)"
    ]
    assert problems(_private_endpoint_worker(server="https://10.0.0.2")) == []


def test_workers_sharing_the_managers_region_and_a_named_repository_are_refused() -> None:
    # issue #29, item 13: a repository id the stack names is inherited by every worker; two clusters in one region
    # would both create it (409 on the second)
    worker = copy.deepcopy(template()["batchplane:multiKueue"]["workers"][0]["target"])
    worker["region"] = "us-central1"
    for pool in worker.get("gpuPools", []):
        pool["nodeLocations"] = ["us-central1-a"]
    worker.get("systemPool", {}).pop("nodeLocations", None)
    config = with_worker(0, target=worker)
    config["batchplane:webhook"] = {
        **config.get("batchplane:webhook", {}),
        "build": {"registry": "artifact-registry", "repository": "images"},
    }
    found = problems(config)
    assert any(
        p.startswith("batchplane:webhook.build.repository:") and "us-central1/images" in p for p in found
    ), found
    config["batchplane:webhook"]["build"] = {"registry": "artifact-registry"}  # per-cluster default: no clash
    assert not any("image repository" in p for p in problems(config))

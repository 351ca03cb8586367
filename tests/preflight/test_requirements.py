"""The requirements model: what a stack needs, computed offline from its config."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchplane import __version__
from batchplane.preflight.model import Requirements
from batchplane.preflight.requirements import stack_requirements
from batchplane.stack import load_stack, read_stack_file
from batchplane.targets.gke.machines import FIXED_GPU_MACHINES, MACHINE_SHAPES
from batchplane.targets.gke.requirements import GPU_FAMILIES, QuotaNeed
from tests.conftest import template_path
from tests.preflight.conftest import gke_stack, pool, template, template_with


def _needs(req: Requirements, kind: str) -> dict[tuple[Any, ...], int]:
    out: dict[tuple[Any, ...], int] = {}
    for q in req.quotas:
        if q.kind == kind:
            out[(q.region, q.gpu_family or q.vm_family, q.preemptible)] = q.amount
    return out


def test_gpu_quota_is_max_nodes_times_gpus_per_node_and_per_zone_limits_multiply_by_zones() -> None:
    req = stack_requirements(
        gke_stack(
            [
                pool("a", "on-demand", "g2-standard-24", ["us-central1-a", "us-central1-b"], maxNodes=3),
                pool(
                    "b",
                    "on-demand",
                    "g2-standard-8",
                    ["us-central1-a", "us-central1-b"],
                    maxNodes=2,
                    autoscalingLimits="per-zone",
                ),
            ]
        )
    )
    # a: 3 nodes total × 2 L4; b: 2 per zone × 2 zones × 1 L4
    assert _needs(req, "gpus") == {("us-central1", "NVIDIA_L4", False): 3 * 2 + 2 * 2 * 1}


def test_spot_flex_start_and_queued_pools_need_preemptible_quota_and_reservations_need_none() -> None:
    req = stack_requirements(
        gke_stack(
            [
                pool("spot", "spot", "g2-standard-4", ["us-central1-a"], maxNodes=2),
                pool("flex", "flex-start", "g2-standard-4", ["us-central1-a"], maxNodes=3),
                pool("queued", "queued", "a3-highgpu-8g", ["us-central1-a"], maxNodes=1),
                pool("od", "on-demand", "g2-standard-4", ["us-central1-b"], maxNodes=5),
                pool(
                    "res",
                    "reservation",
                    "g2-standard-4",
                    ["us-central1-b"],
                    maxNodes=7,
                    reservation={"name": "r"},
                ),
            ]
        )
    )
    assert _needs(req, "gpus") == {
        ("us-central1", "NVIDIA_L4", True): 2 + 3,
        ("us-central1", "NVIDIA_H100", True): 8,
        ("us-central1", "NVIDIA_L4", False): 5,
    }
    metrics = {q.metric for q in req.quotas if q.kind == "gpus"}
    assert metrics == {"PREEMPTIBLE_NVIDIA_L4_GPUS", "PREEMPTIBLE_NVIDIA_H100_GPUS", "NVIDIA_L4_GPUS"}
    assert _needs(req, "gpus-all-regions") == {(None, None, False): 5 + 8 + 5}


def test_a3_mega_pools_need_the_h100_mega_family_quota_not_the_h100_one() -> None:
    """a3-megagpu-8g carries nvidia-h100-mega-80gb, whose Compute Engine metrics are the H100 Mega ones (the
    gke-a3-mega-tas template's Spot and DWS rungs: docs/requirements.md)."""
    req = stack_requirements(
        gke_stack(
            [
                pool("spot", "spot", "a3-megagpu-8g", ["us-central1-a"], maxNodes=2),
                pool("od", "on-demand", "a3-megagpu-8g", ["us-central1-b"], maxNodes=1),
            ]
        )
    )
    assert {q.metric for q in req.quotas if q.kind == "gpus"} == {
        "PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS",
        "NVIDIA_H100_MEGA_GPUS",
    }
    assert _needs(req, "gpus")[("us-central1", "NVIDIA_H100_MEGA", True)] == 2 * 8


def test_a_static_pool_counts_node_count_in_every_zone_and_n1_pools_take_their_accelerator() -> None:
    req = stack_requirements(
        gke_stack(
            [
                pool(
                    "t4",
                    "on-demand",
                    "n1-standard-8",
                    ["us-central1-a", "us-central1-b", "us-central1-c"],
                    nodeCount=2,
                    accelerator={"type": "nvidia-tesla-t4", "count": 2},
                )
            ]
        )
    )
    assert _needs(req, "gpus") == {("us-central1", "NVIDIA_T4", False): 2 * 3 * 2}
    assert _needs(req, "cpus")[("us-central1", "N1", False)] == 2 * 3 * 8


def test_vcpus_count_every_pool_at_max_including_the_system_pool_per_machine_family() -> None:
    req = stack_requirements(
        gke_stack(
            [pool("l4", "flex-start", "g2-standard-8", ["us-central1-a"], maxNodes=4)],
            systemPool={"machineType": "e2-standard-8", "maxNodes": 5},
        )
    )
    assert _needs(req, "cpus") == {("us-central1", "E2", False): 5 * 8, ("us-central1", "G2", False): 4 * 8}
    assert _needs(req, "cpus-all-regions") == {(None, None, False): 40 + 32}


def test_quotas_add_up_over_multikueue_workers_per_region_and_over_the_project() -> None:
    req = stack_requirements(template("gke-multiregion-dws"))
    gpus = _needs(req, "gpus")
    assert gpus == {
        ("us-east4", "NVIDIA_L4", True): 8,
        ("europe-west4", "NVIDIA_L4", True): 8,
        ("asia-southeast1", "NVIDIA_L4", True): 8,
    }
    assert _needs(req, "gpus-all-regions") == {(None, None, False): 24}
    all_regions = next(q for q in req.quotas if q.kind == "gpus-all-regions")
    assert "batchplane:multiKueue.workers[1].target.gpuPools[0]" in all_regions.paths
    assert [c.region for c in req.clusters] == ["us-central1", "us-east4", "europe-west4", "asia-southeast1"]


def test_gke_needs_container_compute_and_iam_and_artifact_registry_only_when_building_there() -> None:
    plain = stack_requirements(gke_stack([]))
    assert [a.service for a in plain.apis] == [
        "container.googleapis.com",
        "compute.googleapis.com",
        "iam.googleapis.com",
    ]
    built = gke_stack([])
    config = built.config.model_copy(
        update={"webhook": built.config.webhook.model_copy(update={"build": _ar_build(built)})}
    )
    req = stack_requirements(type(built)(name="b", config=config, kueue=built.kueue))
    assert "artifactregistry.googleapis.com" in [a.service for a in req.apis]
    assert req.images == []  # the stack builds the image: no registry has to serve it beforehand
    assert {r.role for r in req.roles} >= {"roles/artifactregistry.admin", "roles/artifactregistry.reader"}


def test_a_created_node_account_needs_the_deployer_to_create_it_and_grant_its_role_and_only_then() -> None:
    created = template("gke-dev")
    deployer = {r.role for r in stack_requirements(created).roles if r.principal == "deployer"}
    assert {"roles/iam.serviceAccountAdmin", "roles/resourcemanager.projectIamAdmin"} <= deployer
    assert "roles/iam.serviceAccountUser" in deployer  # attaching any account to the node VMs needs actAs
    for setting in ("default", "nodes@bp-demo-123456.iam.gserviceaccount.com"):
        config = copy.deepcopy(read_stack_file(template_path("gke-dev")))
        config["batchplane:target"]["nodeServiceAccount"] = setting
        req = stack_requirements(load_stack(config, "gke-dev"))
        roles = {r.role for r in req.roles}
        assert not roles & {"roles/iam.serviceAccountAdmin", "roles/resourcemanager.projectIamAdmin"}, setting
        assert "roles/iam.serviceAccountUser" in roles
        policies = [p.constraint for p in req.org_policies]
        assert ("iam.automaticIamGrantsForDefaultServiceAccounts" in policies) is (setting == "default")


def _ar_build(stack: Any) -> Any:
    from batchplane.config.webhook import WebhookImageBuild

    return WebhookImageBuild(registry="artifact-registry")


def test_external_ip_policy_matters_only_for_public_nodes() -> None:
    public = stack_requirements(gke_stack([]))
    private = stack_requirements(gke_stack([], privateNodes={"enabled": True}))
    assert "compute.vmExternalIpAccess" in {o.constraint for o in public.org_policies}
    assert "compute.vmExternalIpAccess" not in {o.constraint for o in private.org_policies}
    assert public.clusters[0].public_nodes and not private.clusters[0].public_nodes


def test_a_named_network_is_checked_by_its_short_name_and_default_network_policy_is_not_needed() -> None:
    req = stack_requirements(gke_stack([], network="projects/p/global/networks/ml-vpc"))
    assert req.clusters[0].network == "ml-vpc"
    assert "compute.skipDefaultNetworkCreation" not in {o.constraint for o in req.org_policies}


def test_version_floor_follows_the_pool_modes() -> None:
    flex = stack_requirements(
        gke_stack([pool("f", "flex-start", "g2-standard-4", ["us-central1-a"], maxNodes=1)])
    )
    queued = stack_requirements(
        gke_stack([pool("q", "queued", "g2-standard-4", ["us-central1-a"], maxNodes=1)])
    )
    plain = stack_requirements(
        gke_stack([pool("o", "on-demand", "g2-standard-4", ["us-central1-a"], maxNodes=1)])
    )
    assert flex.clusters[0].version.floor == "1.32.2-gke.1652000"
    assert queued.clusters[0].version.floor == "1.31.1"
    assert plain.clusters[0].version.floor is None


def test_every_pool_zone_must_offer_its_machine_type_and_accelerator() -> None:
    req = stack_requirements(template("gke-prod-dws"))
    offered = {(o.zone, o.machine_type, o.accelerator_type, o.accelerator_count) for o in req.offerings}
    assert offered == {
        ("us-central1-a", "a3-highgpu-8g", "nvidia-h100-80gb", 8),
        ("us-central1-c", "a3-highgpu-8g", "nvidia-h100-80gb", 8),
        ("us-central1-a", "g2-standard-8", "nvidia-l4", 1),
        ("us-central1-b", "g2-standard-8", "nvidia-l4", 1),
    }


def test_a_machine_type_batchplane_cannot_size_is_listed_instead_of_counted_as_zero() -> None:
    req = stack_requirements(
        gke_stack(
            [
                pool(
                    "big",
                    "on-demand",
                    "n1-highmem-16",
                    ["us-central1-a"],
                    maxNodes=2,
                    accelerator={"type": "nvidia-tesla-t4", "count": 4},
                )
            ]
        )
    )
    assert req.unsized == ["batchplane:target.gpuPools[0].machineType"]
    assert ("us-central1", "N1", False) not in _needs(req, "cpus")


def test_openshift_lists_each_subscription_with_its_key_path() -> None:
    req = stack_requirements(template("openshift-ai-gpu"))
    by_package = {p.package: p for p in req.olm_packages}
    assert by_package["kueue-operator"].channel == "stable-v1.4"
    assert by_package["kueue-operator"].path == "batchplane:target.kueue"
    assert by_package["gpu-operator-certified"].source == "certified-operators"
    assert by_package["gpu-operator-certified"].path == "batchplane:target.gpuOperator.nvidia"
    assert [c.context for c in req.contexts] == ["openshift-ai-gpu"]
    assert req.apis == [] and req.quotas == []


def test_kind_needs_its_context_and_docker_to_build_and_load_the_webhook_image() -> None:
    req = stack_requirements(template("kind"))
    assert req.kind is not None and req.kind.cluster_name == "batchplane"
    assert [c.context for c in req.contexts] == ["kind-batchplane"]
    assert req.images == []  # built by the stack: no registry has to serve it
    assert (req.builds_image, req.kind.loads_image) == ("kind", f"quota-webhook:{__version__}")


def test_a_published_webhook_image_must_be_served_by_a_registry() -> None:
    req = stack_requirements(template_with("kind", image="ghcr.io/batchplane/quota-webhook:0.1.0"))
    assert [(i.reference, i.path) for i in req.images] == [
        ("ghcr.io/batchplane/quota-webhook:0.1.0", "batchplane:webhook.image")
    ]
    assert req.builds_image is None and req.kind is not None and req.kind.loads_image is None


@pytest.mark.parametrize("name", ["gke-dev", "gke-dws", "gke-prod-dws", "gke-multiregion-dws"])
def test_gke_templates_need_artifact_registry_because_they_build_the_webhook_image(name: str) -> None:
    req = stack_requirements(template(name))
    assert req.builds_image == "artifact-registry" and req.images == []
    assert ("artifactregistry.googleapis.com", "batchplane:webhook.build.registry") in [
        (a.service, a.path) for a in req.apis
    ]


def test_openshift_needs_the_registry_route_only_when_registry_host_is_omitted() -> None:
    assert (
        stack_requirements(template("openshift-ai")).registry_route == "batchplane:webhook.build.registryHost"
    )
    given = template_with(
        "openshift-ai", build={"registry": "openshift", "registryHost": "registry.example.com"}
    )
    assert stack_requirements(given).registry_route is None


# --- generated pools -------------------------------------------------------------------------------------------

_MACHINES = sorted(m for m in FIXED_GPU_MACHINES if m in MACHINE_SHAPES)
_MODES = ["on-demand", "spot", "flex-start", "queued"]
_pools = st.lists(
    st.tuples(st.sampled_from(_MACHINES), st.sampled_from(_MODES), st.integers(0, 50), st.booleans()),
    min_size=0,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(_pools)
def test_generated_pools_gpu_needs_sum_to_every_pools_max_gpus(
    spec: list[tuple[str, str, int, bool]],
) -> None:
    pools = []
    for i, (machine, mode, most, two_zones) in enumerate(spec):
        zones = ["us-central1-a", "us-central1-b"] if two_zones else ["us-central1-a"]
        pools.append(pool(f"p{i}", mode, machine, zones, maxNodes=most))
    req = stack_requirements(gke_stack(pools))
    expected: dict[tuple[str, bool], int] = {}
    for machine, mode, most, _ in spec:
        fixed = FIXED_GPU_MACHINES[machine]
        key = (GPU_FAMILIES[fixed.accelerator_type], mode != "on-demand")
        expected[key] = expected.get(key, 0) + most * fixed.count
    expected = {k: v for k, v in expected.items() if v}
    got = {(q.gpu_family, q.preemptible): q.amount for q in req.quotas if q.kind == "gpus"}
    assert got == expected
    total = [q.amount for q in req.quotas if q.kind == "gpus-all-regions"]
    assert total == ([sum(expected.values())] if expected else [])
    cpus = sum(q.amount for q in req.quotas if q.kind == "cpus")
    assert cpus == 3 * 4 + sum(most * MACHINE_SHAPES[m].vcpus for m, _, most, _ in spec)
    assert all(isinstance(q, QuotaNeed) and q.amount > 0 for q in req.quotas)


def test_a_worker_in_another_project_is_listed_apart_and_left_out_of_this_projects_quotas() -> None:
    stack = template("gke-multiregion-dws")
    worker = stack.workers["europe-west4"]
    target = worker.config.target.model_copy(update={"project": "bp-europe-777"})
    workers = dict(stack.workers)
    workers["europe-west4"] = type(worker)(
        worker.name, worker.config.model_copy(update={"target": target}), worker.kueue
    )
    moved = type(stack)(
        stack.name, stack.config, stack.kueue, other_config={"gcp:project": "bp-main-123"}, workers=workers
    )
    req = stack_requirements(moved)
    assert req.project == "bp-main-123"
    assert req.other_projects == [("batchplane:multiKueue.workers[1].target.project", "bp-europe-777")]
    assert "europe-west4" not in {q.region for q in req.quotas}
    assert _needs(req, "gpus-all-regions") == {(None, None, False): 16}


# --- the deployer's IAM: roles and exact permissions from the declared resources (issue #29, item 11) ----------


def test_a_template_declaring_the_webhook_firewall_needs_security_admin_not_only_network_admin() -> None:
    req = stack_requirements(
        template("gke-prod-dws")
    )  # private nodes: router, NAT and the webhook firewall rule
    roles = {r.role: r.why for r in req.roles if r.principal == "deployer"}
    assert "firewall" in roles["roles/compute.securityAdmin"]
    assert "firewall" not in roles["roles/compute.networkAdmin"]
    public = {r.role for r in stack_requirements(template("gke-dev")).roles}
    assert not public & {"roles/compute.securityAdmin", "roles/compute.networkAdmin"}


def test_permissions_are_derived_from_the_resources_the_stack_declares_with_their_keys() -> None:
    from batchplane.targets.gke.requirements import RESOURCE_PERMISSIONS

    req = stack_requirements(template("gke-prod-dws"))
    by_type = {p.resource_type: p for p in req.permissions}
    firewall = by_type["gcp:compute/firewall:Firewall"]
    assert firewall.path == "batchplane:target.privateNodes"
    assert (
        "compute.firewalls.create" in firewall.permissions and firewall.role == "roles/compute.securityAdmin"
    )
    assert set(by_type) >= {
        "gcp:container/cluster:Cluster",
        "gcp:container/nodePool:NodePool",
        "gcp:serviceaccount/account:Account",
        "gcp:projects/iAMMember:IAMMember",
        "gcp:compute/router:Router",
        "gcp:compute/routerNat:RouterNat",
        "gcp:artifactregistry/repository:Repository",
    }
    assert all(p.permissions == RESOURCE_PERMISSIONS[p.resource_type].permissions for p in req.permissions)
    dev = {p.resource_type for p in stack_requirements(template("gke-dev")).permissions}
    assert "gcp:compute/firewall:Firewall" not in dev and "gcp:compute/router:Router" not in dev

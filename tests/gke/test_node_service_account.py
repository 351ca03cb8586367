"""The nodes' service account (``target.nodeServiceAccount``): created per cluster with GKE's least-privilege node role
by default, an email used as given, or the Compute Engine default account; the system pool's account may pull the
webhook image the stack builds. Through the real program under the offline mock engine."""

from __future__ import annotations

import copy
import re
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchplane.diff.objects import diff_objects
from batchplane.errors import ConfigValidationError
from batchplane.offline import ProgramRun, read_stack_file, run_program
from batchplane.targets.gke.resources import NODE_ACCOUNT_ID_RE, node_account_id
from tests.conftest import REPO_ROOT, template_path

pytestmark = pytest.mark.slow

ACCOUNT = "gcp:serviceaccount/account:Account"
PROJECT_MEMBER = "gcp:projects/iAMMember:IAMMember"
REPOSITORY_MEMBER = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"
REPOSITORY = "gcp:artifactregistry/repository:Repository"
NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
BUILD = {"registry": "artifact-registry", "repository": "ml-images"}
GIVEN = "ml-nodes@proj-1.iam.gserviceaccount.com"
#: The Compute Engine default service account of the mock project (its number is the mocked getProject's).
COMPUTE_DEFAULT = "123456789012-compute@developer.gserviceaccount.com"


PUBLISHED = "registry.example.com/ml/quota-webhook@sha256:" + "0" * 64


def config(
    node_service_account: str | None = None, *, build: bool = False, published: bool = False
) -> dict[str, Any]:
    """The gke-dev template (it deploys the quota webhook, building its image by default) in project proj-1, cluster
    ml-cluster; ``build`` names the repository, ``published`` runs a published image instead of building."""
    out = copy.deepcopy(read_stack_file(template_path("gke-dev")))
    out["batchplane:target"].update({"project": "proj-1", "clusterName": "ml-cluster"})
    if node_service_account is not None:
        out["batchplane:target"]["nodeServiceAccount"] = node_service_account
    if build:
        out["batchplane:webhook"] = {"build": BUILD}
    if published:
        out["batchplane:webhook"] = {"image": PUBLISHED}
    return out


@cache
def run(node_service_account: str | None = None, build: bool = False, published: bool = False) -> ProgramRun:
    return run_program(
        REPO_ROOT, "nodes", config(node_service_account, build=build, published=published), preview=False
    )


def pool_accounts(program: ProgramRun) -> dict[str, str | None]:
    return {p.name: p.inputs["nodeConfig"].get("serviceAccount") for p in program.of_type(NODE_POOL)}


# --- created (the default) ------------------------------------------------------------------------


def test_an_omitted_node_service_account_creates_one_for_the_cluster_named_after_it() -> None:
    (account,) = run().of_type(ACCOUNT)
    assert account.name == "gke-node-account"
    assert account.inputs["accountId"] == "ml-cluster-nodes"
    assert account.inputs["project"] == "proj-1"
    email = "ml-cluster-nodes@proj-1.iam.gserviceaccount.com"
    assert pool_accounts(run()) == {"gke-system": email, "gke-l4-flex": email}
    assert run().get(CLUSTER, "gke-cluster").inputs["nodeConfig"]["serviceAccount"] == email


def test_the_created_account_gets_only_the_default_node_role_on_the_project() -> None:
    (grant,) = run().of_type(PROJECT_MEMBER)
    assert grant.name == "gke-node-account-role"
    assert grant.inputs == {
        "project": "proj-1",
        "role": "roles/container.defaultNodeServiceAccount",
        "member": "serviceAccount:ml-cluster-nodes@proj-1.iam.gserviceaccount.com",
    }


def test_the_cluster_and_every_pool_wait_for_the_node_role() -> None:
    (grant,) = run().of_type(PROJECT_MEMBER)
    waiters = [*run().of_type(NODE_POOL), run().get(CLUSTER, "gke-cluster")]
    assert [r.name for r in waiters if grant.urn not in r.dependencies] == []


def test_a_pools_own_service_account_overrides_the_clusters_for_that_pool_only() -> None:
    cfg = config()
    cfg["batchplane:target"]["gpuPools"][0]["serviceAccount"] = GIVEN
    program = run_program(REPO_ROOT, "nodes", cfg, preview=False)
    assert pool_accounts(program) == {
        "gke-system": "ml-cluster-nodes@proj-1.iam.gserviceaccount.com",
        "gke-l4-flex": GIVEN,
    }


# --- given email, default ------------------------------------------------------------------------------------


def test_a_given_email_is_used_verbatim_and_granted_nothing_on_the_project() -> None:
    program = run(GIVEN)
    assert pool_accounts(program) == {"gke-system": GIVEN, "gke-l4-flex": GIVEN}
    assert program.get(CLUSTER, "gke-cluster").inputs["nodeConfig"]["serviceAccount"] == GIVEN
    assert program.of_type(ACCOUNT) == []
    assert program.of_type(PROJECT_MEMBER) == []


def test_default_leaves_the_service_account_unset_as_before_the_setting_existed() -> None:
    program = run("default")
    assert pool_accounts(program) == {"gke-system": None, "gke-l4-flex": None}
    assert "nodeConfig" not in program.get(CLUSTER, "gke-cluster").inputs
    assert program.of_type(ACCOUNT) == []
    assert program.of_type(PROJECT_MEMBER) == []


# --- the webhook image's repository ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "member"),
    [
        (None, "serviceAccount:ml-cluster-nodes@proj-1.iam.gserviceaccount.com"),
        (GIVEN, f"serviceAccount:{GIVEN}"),
        ("default", f"serviceAccount:{COMPUTE_DEFAULT}"),
    ],
    ids=["created", "email", "default"],
)
def test_the_system_pools_account_may_read_the_repository_the_stack_builds_into(
    setting: str | None, member: str
) -> None:
    program = run(setting, build=True)
    (grant,) = program.of_type(REPOSITORY_MEMBER)
    (repository,) = program.of_type(REPOSITORY)
    assert grant.name == "webhook-image-repository-reader"
    assert grant.parent == repository.parent  # a child of the image component, beside the repository
    assert grant.inputs == {
        "project": "proj-1",
        "location": "us-central1",
        "repository": "ml-images",
        "role": "roles/artifactregistry.reader",
        "member": member,
    }
    assert repository.urn in grant.dependencies
    assert [g.inputs["role"] for g in program.of_type(PROJECT_MEMBER)] == (
        ["roles/container.defaultNodeServiceAccount"] if setting is None else []
    )


def test_the_webhook_deployment_waits_for_the_reader_grant() -> None:
    program = run(None, build=True)
    (grant,) = program.of_type(REPOSITORY_MEMBER)
    (deployment,) = program.of_type(DEPLOYMENT)
    assert grant.urn in deployment.dependencies


def test_no_repository_grant_with_a_published_image() -> None:
    assert run(published=True).of_type(REPOSITORY_MEMBER) == []
    assert run("default", published=True).of_type(REPOSITORY_MEMBER) == []


# --- validation ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["nodes", "nodes@example.com", "Nodes@p.iam.gserviceaccount.com", "", "DEFAULT"]
)
def test_a_node_service_account_that_is_neither_an_email_nor_default_is_refused_naming_the_key(
    value: str,
) -> None:
    with pytest.raises(ConfigValidationError) as caught:
        run_program(REPO_ROOT, "nodes", config(value), preview=False)
    (error,) = caught.value.errors
    assert str(error).startswith("batchplane:target.nodeServiceAccount: ")
    assert "is not a service account email" in str(error) and '"default"' in str(error)


def test_a_pools_service_account_must_be_a_service_account_email() -> None:
    cfg = config()
    cfg["batchplane:target"]["gpuPools"][0]["serviceAccount"] = "default"
    with pytest.raises(ConfigValidationError) as caught:
        run_program(REPO_ROOT, "nodes", cfg, preview=False)
    assert [str(e).split(": ", 1)[0] for e in caught.value.errors] == [
        "batchplane:target.gpuPools[0].serviceAccount"
    ]


# --- account ids --------------------------------------------------------------------------------------------

CLUSTER_NAMES = st.from_regex(re.compile(r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?", re.ASCII), fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(CLUSTER_NAMES)
def test_the_account_id_of_any_cluster_name_is_a_valid_service_account_id(name: str) -> None:
    account_id = node_account_id(name)
    assert NODE_ACCOUNT_ID_RE.match(account_id), account_id
    assert node_account_id(name) == account_id  # deterministic: the same cluster keeps its account


@settings(max_examples=200, deadline=None)
@given(st.lists(CLUSTER_NAMES, min_size=2, max_size=20, unique=True))
def test_different_cluster_names_get_different_account_ids(names: list[str]) -> None:
    assert len({node_account_id(n) for n in names}) == len(names)


def test_long_cluster_names_keep_a_readable_prefix_and_a_hash_of_the_whole_name() -> None:
    assert node_account_id("a") == "a-nodes"
    assert node_account_id("x" * 24) == "x" * 24 + "-nodes"  # 30 characters: still the readable form
    long_a, long_b = "batchplane-asia-southeast1-a", "batchplane-asia-southeast1-b"
    assert node_account_id(long_a).startswith("batchplane-asia-south-")
    assert node_account_id(long_a) != node_account_id(long_b)
    assert len(node_account_id("y" * 40)) == 30
    assert node_account_id("abcdefghijklmnopqrst-xyz") == "abcdefghijklmnopqrst-xyz-nodes"
    # 21 characters end in a hyphen: it is dropped, not doubled.
    assert node_account_id("abcdefghijklmnopqrst-xyzw").startswith("abcdefghijklmnopqrst-")
    assert "--" not in node_account_id("abcdefghijklmnopqrst-xyzw")


# --- multi-cluster ------------------------------------------------------------------------------------------


def test_a_multikueue_stack_creates_one_account_per_cluster() -> None:
    program = run_program(
        REPO_ROOT,
        "gke-multiregion-dws",
        read_stack_file(template_path("gke-multiregion-dws")),
        preview=False,
    )
    clusters = program.of_type(CLUSTER)
    accounts = program.of_type(ACCOUNT)
    assert len(accounts) == len(clusters) == 4
    ids = sorted(a.inputs["accountId"] for a in accounts)
    assert ids == sorted(node_account_id(c.inputs["name"]) for c in clusters)
    assert len(set(ids)) == 4
    for pool in program.of_type(NODE_POOL):  # each pool runs as its own cluster's account
        (cluster,) = [c for c in clusters if c.inputs["name"] == pool.inputs["cluster"]]
        want = f"{node_account_id(cluster.inputs['name'])}@offline-project.iam.gserviceaccount.com"
        assert pool.inputs["nodeConfig"]["serviceAccount"] == want


# --- an existing stack --------------------------------------------------------------------------------------


def test_moving_from_default_to_the_created_account_replaces_every_pool_and_says_why() -> None:
    before = run_program(REPO_ROOT, "nodes", config("default"), preview=False).resources
    after_config = copy.deepcopy(config("default"))
    del after_config["batchplane:target"]["nodeServiceAccount"]
    after = run_program(REPO_ROOT, "nodes", after_config, preview=False).resources
    changes = diff_objects(before, after)
    pools = {c.urn.rsplit("::", 1)[1]: c for c in changes if c.type == NODE_POOL}
    assert sorted(pools) == ["gke-l4-flex", "gke-system"]
    assert {name: c.replace for name, c in pools.items()} == {
        "gke-l4-flex": ("nodeConfig.serviceAccount",),
        "gke-system": ("nodeConfig.serviceAccount",),
    }
    added = sorted(c.type for c in changes if c.status == "added")
    assert added == [PROJECT_MEMBER, ACCOUNT]

"""Deployed stacks are not replaced by a layout change: every template's resources keep their identity (URN or
alias), type, parent, provider and dependencies against the snapshot taken before issue #15's move
(tests/program/golden/<template>.json, written by ``python -m tests.program.urn_snapshot`` from the program at
492c26c), and their inputs as golden/<template>.inputs.yaml holds them (a changed input fails with the YAML diff of
that object, issue #40)."""

from __future__ import annotations

import copy
import difflib
import json
from functools import cache
from typing import Any

import pytest

from batchplane.offline import read_stack_file, run_program
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES, template_path
from tests.program.urn_snapshot import (
    BEFORE_BATCH_CLUSTER,
    GOLDEN,
    REGENERATE,
    TEMPLATES,
    inputs_yaml,
    load_inputs,
    new_resources,
    snapshot,
)

pytestmark = pytest.mark.slow


@cache
def preview(stack: str) -> dict[str, Any]:
    run = run_program(REPO_ROOT, stack, read_stack_file(template_path(stack)))
    return run.to_json()


def golden(stack: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / f"{stack}.json").read_text(encoding="utf-8"))
    return data


def test_every_template_has_a_snapshot() -> None:
    assert sorted(TEMPLATES) == TEMPLATE_NAMES
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == TEMPLATE_NAMES
    assert sorted(p.name.removesuffix(".inputs.yaml") for p in GOLDEN.glob("*.inputs.yaml")) == TEMPLATE_NAMES


@pytest.mark.parametrize("stack", TEMPLATE_NAMES)
def test_template_resources_keep_their_identity_type_parent_and_dependencies(stack: str) -> None:
    want = golden(stack)
    got = snapshot(preview(stack), set(want))
    assert sorted(set(want) - set(got)) == []  # a resource lost its URN without an alias: replaced
    assert sorted(set(got) - set(want)) == []
    changed = {urn: (want[urn], got[urn]) for urn in want if got[urn] != want[urn]}
    assert changed == {}, f"after a deliberate change: {REGENERATE}, and review the diff"


def inputs_diff(want: dict[str, Any], got: dict[str, Any], golden_name: str) -> str:
    """A unified diff of the YAML of each resource whose inputs differ (``golden_name`` as the old side)."""
    out = []
    for identity in sorted(set(want) | set(got)):
        if want.get(identity) != got.get(identity):
            old = inputs_yaml({identity: want[identity]}) if identity in want else ""
            new = inputs_yaml({identity: got[identity]}) if identity in got else ""
            out += difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                f"{golden_name} (golden)",
                f"{golden_name} (the program now)",
            )
    return "".join(out)


@pytest.mark.parametrize("stack", TEMPLATE_NAMES)
def test_template_resources_keep_their_inputs(stack: str) -> None:
    golden_path = GOLDEN / f"{stack}.inputs.yaml"
    want = load_inputs(golden_path.read_text(encoding="utf-8"))
    got: dict[str, Any] = {}
    snapshot(preview(stack), set(golden(stack)), inputs=got)
    diff = inputs_diff(want, got, f"tests/program/golden/{golden_path.name}")
    assert diff == "", f"resource inputs changed; if deliberate, run {REGENERATE} and review:\n{diff}"


def test_a_changed_input_fails_with_the_yaml_diff_of_that_object_alone() -> None:
    want = load_inputs((GOLDEN / "kind.inputs.yaml").read_text(encoding="utf-8"))
    got = copy.deepcopy(want)
    (identity,) = [i for i in got if i.endswith("ConfigMap::quota-webhook-policy")]
    got[identity]["metadata"]["namespace"] = "elsewhere"
    diff = inputs_diff(want, got, "kind.inputs.yaml")
    changed = [line for line in diff.splitlines()[2:] if line[:1] in "+-"]
    assert changed == ["-    namespace: batchplane-system", "+    namespace: elsewhere"]
    assert "-    namespace: batchplane-system\n+    namespace: elsewhere\n" in diff


#: What building the webhook image adds per cluster, by platform (issue #22 item 2: every template builds it).
WEBHOOK_IMAGE_BUILD = {
    "gke": [
        "gcp:artifactregistry/repository:Repository",
        "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember",  # the nodes' reader grant
    ],
    "kind": ["command:local:Command"],
    "openshift": [
        "kubernetes:core/v1:Namespace",
        "kubernetes:image.openshift.io/v1:ImageStream",
        "kubernetes:core/v1:ServiceAccount",
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
        "kubernetes:core/v1:Secret",
        "pulumi-python:dynamic:Resource",  # the pusher token gate
        "pulumi-python:dynamic:Resource",  # the registry-route gate
    ],
}


@pytest.mark.parametrize("stack", TEMPLATE_NAMES)
def test_every_webhook_runs_an_image_the_stack_builds_and_the_snapshot_pins_the_builds(stack: str) -> None:
    doc = preview(stack)
    kind = read_stack_file(template_path(stack))["batchplane:target"]["kind"]
    webhooks = sum(r["type"] == "batchplane:admission:QuotaWebhook" for r in doc["resources"])
    build = ["batchplane:image:WebhookImage", "docker-build:index:Image", *WEBHOOK_IMAGE_BUILD[kind]]
    assert webhooks >= 1
    # the only resource the snapshot keeps out is the transparent BatchCluster wrapper
    want = ["batchplane:cluster:BatchCluster"] if stack in BEFORE_BATCH_CLUSTER else []
    assert new_resources(doc, set(golden(stack))) == want
    # every build (issue #22 item 2: each template builds its webhook image) is in the snapshot, so pinned by the
    # identity test above: exactly one build per webhook, made of these resources
    pinned = sorted(r["type"] for urn, r in golden(stack).items() if "batchplane:image:WebhookImage" in urn)
    assert pinned == sorted(build * webhooks)


def test_grandchildren_keep_their_urn_through_the_alias_their_parent_carries_down() -> None:
    # "The engine combines a parent's aliases with each child's own name and type" (Pulumi, aliases option):
    # the ClusterQueue declares no alias, yet its old URN is one of its aliases.
    doc = preview("kind")
    old = "urn:pulumi:kind::batchplane::batchplane:kueue:KueueQueues$kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue::kueue-clusterqueue-cluster-queue"
    queue = next(r for r in doc["resources"] if r["name"] == "kueue-clusterqueue-cluster-queue")
    assert queue["engineUrn"] == (
        "urn:pulumi:kind::batchplane::batchplane:cluster:BatchCluster$batchplane:kueue:KueueQueues"
        "$kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue::kueue-clusterqueue-cluster-queue"
    )
    assert queue["aliases"] == [old]


def test_engine_urns_follow_the_whole_parent_chain_without_the_stack() -> None:
    doc = preview("gke-prod-dws")
    by_name = {r["name"]: r for r in doc["resources"]}
    assert (
        by_name["batchplane"]["engineUrn"]
        == "urn:pulumi:gke-prod-dws::batchplane::batchplane:cluster:BatchCluster::batchplane"
    )
    assert by_name["gke-cluster"]["engineUrn"] == (
        "urn:pulumi:gke-prod-dws::batchplane::batchplane:cluster:BatchCluster$batchplane:gke:GkeCluster"
        "$gcp:container/cluster:Cluster::gke-cluster"
    )
    assert by_name["gke-cluster"]["aliases"] == [
        "urn:pulumi:gke-prod-dws::batchplane::batchplane:gke:GkeCluster$gcp:container/cluster:Cluster::gke-cluster"
    ]


def test_dropping_the_aliases_shows_every_resource_as_replaced() -> None:
    doc = copy.deepcopy(preview("kind"))
    for r in doc["resources"]:
        r["aliases"] = []
    want = golden("kind")
    got = snapshot(doc, set(want))
    provider = "urn:pulumi:kind::batchplane::pulumi:providers:kubernetes::k8s"
    # resources added since the layout change (the webhook image build, the observability objects and dashboards of
    # #32, the Kueue storage-migration step of #41) are recorded under their engine URN and need no alias; every other
    # one keeps its identity only through an alias
    added = {r["engineUrn"] for r in doc["resources"]} & set(want)
    new = (
        "WebhookImage",
        "batchplane:observability:Observability",
        "batchplane:observability:Dashboards",
        "operators-kueue-storage-migration",
        "operators-kueue-stored-versions",
    )
    assert sorted(added) == sorted(u for u in want if any(n in u for n in new))
    assert set(want) - set(got) == set(want) - added  # not one older resource keeps its identity
    assert provider in want  # the provider too: replacing it would replace every object it manages


def test_golden_files_are_the_snapshot_format() -> None:
    for stack in TEMPLATE_NAMES:
        for urn, entry in golden(stack).items():
            assert urn.startswith(f"urn:pulumi:{stack}::batchplane::")
            assert sorted(entry) == ["dependencies", "parent", "provider", "type"]
        # the inputs file holds the same identities, each resource's inputs once, and is what inputs_yaml writes
        text = (GOLDEN / f"{stack}.inputs.yaml").read_text(encoding="utf-8")
        inputs = load_inputs(text)
        assert sorted(inputs) == sorted(golden(stack))
        assert inputs_yaml(inputs) == text

"""Bring-up model: every template's resources, walked in dependency order, find what each step needs already
declared before it — the check the mock engine cannot make (it accepts any topology).

A resource *waits for* another when Pulumi cannot create it before the other exists: through
``dependencies`` (``depends_on`` and Outputs used as inputs), through its Kubernetes provider (the GKE
provider waits for the system node pool), or through its parent component's dependencies, transitively.
The rules (issue #12):

* in-cluster resources wait for a node pool (GKE: Helm releases schedule pods, nothing runs without nodes);
* private GKE nodes: every node pool waits for Cloud NAT (image pulls) and, when webhooks are installed, for
  the control-plane → node firewall rule (webhook calls);
* GKE nodes of a service account the stack creates: the cluster (its first, removed, default pool) and every node
  pool wait for the account's ``roles/container.defaultNodeServiceAccount`` grant (no node without its role);
* a webhook image the stack pushes to Artifact Registry: the Deployment waits for the nodes' reader grant on the
  repository (no pull before the nodes may read it);
* Kueue objects wait for the Kueue readiness gate, which waits for the Kueue install (CRDs and webhook);
* cert-manager objects (the quota webhook's Issuer/Certificate) wait for cert-manager;
* the quota webhook's configurations wait for its Deployment and Service (no webhook without endpoints).

Each rule is checked to fail when its prerequisite is removed from the recorded graph.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

import pytest

from batchplane.offline import ProgramRun, read_stack_file, run_program
from batchplane.offline.model import RecordedResource
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES, template_path

Pred = Callable[[RecordedResource], bool]


def of_type(*prefixes: str) -> Pred:
    return lambda r: r.type.startswith(prefixes)


def in_cluster(r: RecordedResource) -> bool:
    return bool(r.custom and r.type.startswith("kubernetes:") and not r.type.startswith("pulumi:"))


NODE_POOL = of_type("gcp:container/nodePool:NodePool")
NAT = of_type("gcp:compute/routerNat:RouterNat")
FIREWALL = of_type("gcp:compute/firewall:Firewall")
KUEUE_OBJECT = of_type("kubernetes:kueue.x-k8s.io/")


def kueue_gate(r: RecordedResource) -> bool:
    return bool(r.type == "pulumi-python:dynamic:Resource" and r.inputs.get("gate") == "kueue-webhook")


CERT_MANAGER_OBJECT = of_type("kubernetes:cert-manager.io/")
WEBHOOK_CONFIG = of_type("kubernetes:admissionregistration.k8s.io/v1:")


def named(fragment: str, pred: Pred) -> Pred:
    return lambda r: pred(r) and fragment in r.name


def kueue_install(r: RecordedResource) -> bool:
    return (
        (r.type == "kubernetes:helm.sh/v3:Release" and "kueue" in r.name)
        or (r.type.endswith(":Subscription") and "kueue" in r.name)
        or (  # Kueue embedded in OpenShift AI 2.x: the DataScienceCluster's kueue component installs it
            r.type.endswith(":DataScienceCluster")
            and ((r.inputs.get("spec") or {}).get("components") or {}).get("kueue", {}).get("managementState")
            == "Managed"
        )
    )


def cert_manager_install(r: RecordedResource) -> bool:
    return (r.type == "kubernetes:helm.sh/v3:Release" and "cert-manager" in r.name) or (
        r.type.endswith(":Subscription") and "cert-manager" in r.name
    )


def quota_serving(r: RecordedResource) -> bool:
    return r.type in ("kubernetes:apps/v1:Deployment", "kubernetes:core/v1:Service") and "quota" in r.urn


@dataclass(frozen=True)
class Rule:
    """``waiter`` resources must wait for at least one ``prerequisite``; applies when ``applies`` holds."""

    name: str
    waiter: Pred
    prerequisite: Pred
    applies: Callable[[list[RecordedResource]], bool] = lambda resources: True


def gke(resources: list[RecordedResource]) -> bool:
    return any(NODE_POOL(r) for r in resources)


def private_gke(resources: list[RecordedResource]) -> bool:
    return any(
        r.type == "gcp:container/cluster:Cluster"
        and (r.inputs.get("privateClusterConfig") or {}).get("enablePrivateNodes")
        for r in resources
    )


def private_gke_with_webhooks(resources: list[RecordedResource]) -> bool:
    return private_gke(resources) and any(WEBHOOK_CONFIG(r) or kueue_install(r) for r in resources)


IMAGE = of_type("docker-build:index:Image")


def quota_deployment(r: RecordedResource) -> bool:
    return r.type == "kubernetes:apps/v1:Deployment" and "quota" in r.urn


def builds_image(resources: list[RecordedResource]) -> bool:
    return any(IMAGE(r) for r in resources)


CLUSTER = of_type("gcp:container/cluster:Cluster")
REPOSITORY_READER = of_type("gcp:artifactregistry/repositoryIamMember:RepositoryIamMember")


def node_role(r: RecordedResource) -> bool:
    return (
        r.type == "gcp:projects/iAMMember:IAMMember"
        and r.inputs.get("role") == "roles/container.defaultNodeServiceAccount"
    )


def creates_node_accounts(resources: list[RecordedResource]) -> bool:
    return any(r.type == "gcp:serviceaccount/account:Account" for r in resources)


def pushes_to_artifact_registry(resources: list[RecordedResource]) -> bool:
    return any(r.type == "gcp:artifactregistry/repository:Repository" for r in resources)


def csv_gate(r: RecordedResource) -> bool:
    return bool(r.type == "pulumi-python:dynamic:Resource" and r.inputs.get("gate") == "olm-csv")


SUBSCRIPTION = of_type("kubernetes:operators.coreos.com/v1alpha1:Subscription")
OPERATOR_CR = of_type(
    "kubernetes:datasciencecluster.opendatahub.io/",
    "kubernetes:kueue.openshift.io/",
    "kubernetes:nfd.openshift.io/",
    "kubernetes:nvidia.com/",
)


RULES = [
    Rule("in-cluster resources wait for a node pool", in_cluster, NODE_POOL, gke),
    Rule("node pools of private nodes wait for Cloud NAT", NODE_POOL, NAT, private_gke),
    Rule("node pools of private nodes wait for the webhook firewall rule", NODE_POOL, FIREWALL, private_gke_with_webhooks),
    Rule("Kueue objects wait for the Kueue readiness gate", KUEUE_OBJECT, kueue_gate),
    Rule("the Kueue readiness gate waits for the Kueue install", kueue_gate, kueue_install),
    Rule("cert-manager objects wait for cert-manager", CERT_MANAGER_OBJECT, cert_manager_install),
    Rule("webhook configurations wait for the webhook's Deployment and Service", WEBHOOK_CONFIG, quota_serving),
    Rule("OLM CSV gates (and the InstallPlans they approve) wait for their Subscription", csv_gate, SUBSCRIPTION),
    Rule("operator CRs wait for an OLM CSV gate", OPERATOR_CR, csv_gate),
    Rule("the webhook Deployment waits for the image the stack builds", quota_deployment, IMAGE, builds_image),
    Rule("node pools wait for their service account's node role", NODE_POOL, node_role, creates_node_accounts),
    Rule("the cluster waits for its nodes' service account's node role", CLUSTER, node_role, creates_node_accounts),
    Rule("the webhook Deployment waits for the nodes' reader grant on the repository", quota_deployment,
         REPOSITORY_READER, pushes_to_artifact_registry),
]  # fmt: skip


def bringup_problems(resources: list[RecordedResource]) -> list[str]:
    """Every (rule, waiter) where the waiter does not wait for any prerequisite that exists."""
    by_urn = {r.urn: r for r in resources}
    children: dict[str, list[str]] = {}
    for r in resources:
        if r.parent:
            children.setdefault(r.parent, []).append(r.urn)

    @cache
    def waits_for(urn: str) -> frozenset[str]:
        found: set[str] = set()
        stack = list(_direct(by_urn[urn], by_urn, children))
        while stack:
            other = stack.pop()
            if other in found or other not in by_urn:
                continue
            found.add(other)
            stack.extend(_direct(by_urn[other], by_urn, children))
        return frozenset(found)

    problems = []
    for rule in RULES:
        if not rule.applies(resources):
            continue
        prerequisites = {r.urn for r in resources if rule.prerequisite(r)}
        for r in resources:
            if rule.waiter(r) and not rule.prerequisite(r) and not prerequisites & waits_for(r.urn):
                problems.append(f"{rule.name}: {r.type} {r.name}")
    return problems


def _direct(
    r: RecordedResource, by_urn: dict[str, RecordedResource], children: dict[str, list[str]]
) -> Iterable[str]:
    yield from r.dependencies
    for urns in r.property_dependencies.values():
        yield from urns
    if r.provider_urn:
        yield r.provider_urn
    if r.parent and r.parent in by_urn and not by_urn[r.parent].custom:
        yield from by_urn[r.parent].dependencies  # a component's depends_on holds its children back
    if not r.custom:  # depending on a component means waiting for its children
        yield from children.get(r.urn, [])


@cache
def template_run(name: str) -> ProgramRun:
    return run_program(REPO_ROOT, name, read_stack_file(template_path(name)), preview=False)


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_every_template_comes_up_in_an_order_where_each_step_has_what_it_needs(template: str) -> None:
    assert bringup_problems(template_run(template).resources) == []


REMOVALS = [
    ("gke-prod-dws", NAT, "node pools of private nodes wait for Cloud NAT"),
    ("gke-prod-dws", FIREWALL, "node pools of private nodes wait for the webhook firewall rule"),
    ("gke-prod-dws", named("system", NODE_POOL), "in-cluster resources wait for a node pool"),
    ("gke-dev", node_role, "node pools wait for their service account's node role"),
    ("gke-multiregion-dws", node_role, "the cluster waits for its nodes' service account's node role"),
    ("kind", kueue_gate, "Kueue objects wait for the Kueue readiness gate"),
    ("kind", kueue_install, "the Kueue readiness gate waits for the Kueue install"),
    ("kind", cert_manager_install, "cert-manager objects wait for cert-manager"),
    ("kind", quota_serving, "webhook configurations wait for the webhook's Deployment and Service"),
    ("openshift-ai", kueue_gate, "Kueue objects wait for the Kueue readiness gate"),
    (
        "openshift-ai",
        SUBSCRIPTION,
        "OLM CSV gates (and the InstallPlans they approve) wait for their Subscription",
    ),
    ("openshift-ai-gpu", csv_gate, "operator CRs wait for an OLM CSV gate"),
]


@pytest.mark.parametrize(
    ("template", "removed", "rule"),
    REMOVALS,
    ids=[f"{t}-without-{rule.split(' wait')[0].split()[-1]}-{i}" for i, (t, _, rule) in enumerate(REMOVALS)],
)
def test_deleting_a_prerequisite_breaks_the_bring_up(template: str, removed: Pred, rule: str) -> None:
    resources = template_run(template).resources
    gone = {r.urn for r in resources if removed(r)}
    assert gone, "the template declares the prerequisite"
    kept = [r for r in resources if r.urn not in gone]
    problems = bringup_problems(kept)
    assert any(p.startswith(rule + ":") for p in problems), problems


def test_a_stack_that_builds_the_webhook_image_deploys_it_only_after_the_push() -> None:
    from tests.gke.test_webhook_image import prod_with_build

    resources = run_program(REPO_ROOT, "gke-prod-dws", prod_with_build(), preview=False).resources
    assert bringup_problems(resources) == []
    image = {r.urn for r in resources if IMAGE(r)}
    assert image
    # Take the push away but keep a built image around: the Deployment would start before its image exists.
    cut = [
        RecordedResource(**{**r.__dict__, "dependencies": [d for d in r.dependencies if d not in image],
                            "property_dependencies": {k: [u for u in v if u not in image]
                                                      for k, v in r.property_dependencies.items()}})
        for r in resources
    ]  # fmt: skip
    assert (
        "the webhook Deployment waits for the image the stack builds: kubernetes:apps/v1:Deployment "
        in " ".join(bringup_problems(cut))
    )


def test_a_stack_that_pushes_the_webhook_image_deploys_it_only_after_the_nodes_may_pull_it() -> None:
    from tests.gke.test_webhook_image import prod_with_build

    resources = run_program(REPO_ROOT, "gke-prod-dws", prod_with_build(), preview=False).resources
    assert bringup_problems(resources) == []
    grants = {r.urn for r in resources if REPOSITORY_READER(r)}
    assert len(grants) == 1
    cut = [
        RecordedResource(**{**r.__dict__, "dependencies": [d for d in r.dependencies if d not in grants],
                            "property_dependencies": {k: [u for u in v if u not in grants]
                                                      for k, v in r.property_dependencies.items()}})
        for r in resources
    ]  # fmt: skip
    assert (
        "the webhook Deployment waits for the nodes' reader grant on the repository: kubernetes:apps/v1:Deployment "
        in " ".join(bringup_problems(cut))
    )


def test_a_production_openshift_stack_approves_only_pinned_csvs_after_each_subscription() -> None:
    config = read_stack_file(template_path("openshift-ai"))
    config["batchplane:environment"] = "production"
    target = config["batchplane:target"]
    for key, csv in (
        ("certManager", "cert-manager-operator.v1.18.0"),
        ("kueue", "kueue-operator.v1.4.1"),
        ("openshiftAi", "rhods-operator.3.5.0"),
    ):
        target[key] = {k: v for k, v in target.get(key, {}).items() if k != "approval"} | {"startingCsv": csv}
    target["openshiftAi"]["jobSetOperator"] = {"startingCsv": "jobset-operator.v1.0.0"}
    resources = run_program(REPO_ROOT, "openshift-ai", config, preview=False).resources
    assert bringup_problems(resources) == []
    gates = {r.inputs["subscription"]: r.inputs.get("approveCsv") for r in resources if csv_gate(r)}
    assert gates == {
        "openshift-cert-manager-operator": "cert-manager-operator.v1.18.0",
        "kueue-operator": "kueue-operator.v1.4.1",
        "rhods-operator": "rhods-operator.3.5.0",
        "job-set": "jobset-operator.v1.0.0",
    }
    subs = [r for r in resources if SUBSCRIPTION(r)]
    assert {r.inputs["spec"]["installPlanApproval"] for r in subs} == {"Manual"}

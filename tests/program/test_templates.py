"""Every shipped template, run through the real program offline: what `preview` and `render` show.

The program runs under the Pulumi SDK's mock engine (batchplane.offline). Rendered Kubernetes
objects are checked against the real upstream CRDs (schema after defaulting + CEL rules).
"""

from __future__ import annotations

import re
from functools import cache

import pytest

from batchplane import __version__
from batchplane.offline import ProgramRun, read_stack_file, run_program
from batchplane.offline.mocks import OFFLINE_REGISTRY_ROUTE_HOST
from batchplane.offline.model import RecordedResource
from batchplane.offline.render import render_resources
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES, template_path
from tests.support.crdcheck import CrdCatalog
from tests.support.stacks import shared_crd_catalog

KUEUE_TYPE = "kubernetes:kueue.x-k8s.io/"  # v1beta2, or v1beta1 (openshift-ai-2: embedded Kueue of RHOAI 2.x)
QUEUES_TOKEN = "batchplane:kueue:KueueQueues"
CLUSTER_TOKEN = "batchplane:cluster:BatchCluster"


@cache
def template_run(name: str, preview: bool = True) -> ProgramRun:
    return run_program(REPO_ROOT, name, read_stack_file(template_path(name)), preview=preview)


@pytest.fixture(scope="module")
def crds() -> CrdCatalog:
    return shared_crd_catalog()


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_rendered_custom_resources_of_every_template_pass_the_crd_check(
    template: str, crds: CrdCatalog
) -> None:
    rendering = render_resources(template_run(template, preview=False).resources)
    known = set(crds.kinds())
    manifests = [r.manifest for r in rendering.objects]
    checked = [o for o in manifests if (o["apiVersion"].rpartition("/")[0], o["kind"]) in known]
    assert any(o["kind"] == "ClusterQueue" for o in checked), f"{template}: no ClusterQueue rendered"
    problems = {
        f"{o['kind']}/{o['metadata'].get('namespace', '')}/{o['metadata']['name']}": [str(i) for i in issues]
        for o in checked
        if (issues := crds.validate(o))
    }
    assert problems == {}


def clusters(run: ProgramRun) -> dict[str, list[RecordedResource]]:
    """Each BatchCluster's resources (its whole subtree), by the BatchCluster's logical name."""
    by_urn = {r.urn: r for r in run.resources}
    out: dict[str, list[RecordedResource]] = {}
    for r in run.resources:
        node: RecordedResource | None = r
        while node is not None and node.type != CLUSTER_TOKEN:
            node = by_urn.get(node.parent or "")
        if node is not None and node is not r:
            out.setdefault(node.name, []).append(r)
    return out


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_every_resource_belongs_to_one_batch_cluster(template: str) -> None:
    run = template_run(template)
    grouped = clusters(run)
    outside = [
        r.urn for r in run.resources if r.type != CLUSTER_TOKEN and all(r not in g for g in grouped.values())
    ]
    assert outside == []
    assert "batchplane" in grouped


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_kueue_objects_are_children_of_their_clusters_queues_component_and_named_after_it(
    template: str,
) -> None:
    for name, resources in clusters(template_run(template)).items():
        (component,) = [r for r in resources if r.type == QUEUES_TOKEN]
        kueue = [r for r in resources if r.type.startswith(KUEUE_TYPE)]
        assert kueue, name
        for res in kueue:
            assert res.parent == component.urn, f"{res.urn} is not parented to {component.urn}"
            kind = res.type.rsplit(":", 1)[1].lower()
            assert res.name.startswith(f"{component.name}-{kind}-"), res.name


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_local_queues_depend_on_their_cluster_queue_and_every_kueue_object_on_the_readiness_gate(
    template: str,
) -> None:
    for name, resources in clusters(template_run(template)).items():
        by_name = {(r.type, r.inputs.get("metadata", {}).get("name")): r for r in resources}
        gates = [r for r in resources if r.type == "pulumi-python:dynamic:Resource"]
        assert gates, f"{template}/{name}: no readiness gate"
        for res in resources:
            if not res.type.startswith(KUEUE_TYPE):
                continue
            assert any(g.urn in res.dependencies for g in gates), (
                f"{res.urn} does not wait for a readiness gate"
            )
            if res.type.endswith(":LocalQueue"):
                version = res.type.rsplit(":", 1)[0]
                cq = by_name[(f"{version}:ClusterQueue", res.inputs["spec"]["clusterQueue"])]
                assert cq.urn in res.dependencies, f"{res.urn} does not depend on {cq.urn}"


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_every_in_cluster_resource_uses_its_clusters_one_kubernetes_provider(template: str) -> None:
    for name, resources in clusters(template_run(template)).items():
        providers = [r for r in resources if r.type == "pulumi:providers:kubernetes"]
        assert [p.name for p in providers] == ["k8s" if name == "batchplane" else f"{name}-k8s"]
        for res in resources:
            if res.custom and res.type.startswith("kubernetes:"):
                assert res.provider_urn == providers[0].urn, f"{res.urn} uses {res.provider}"


@pytest.mark.parametrize(
    ("template", "want_releases"),
    [
        ("kind", {"cert-manager": "v1.21.1", "kuberay-operator": "1.7.0", "kueue": "0.19.2"}),
        (
            "gke-prod-dws",
            {
                "cert-manager": "v1.21.1",
                "kuberay-operator": "1.7.0",
                "kueue": "0.19.2",
                "kubeflow-trainer": "2.3.0",
            },
        ),
        ("gke-dev", {"cert-manager": "v1.21.1", "kuberay-operator": "1.7.0", "kueue": "0.19.2"}),
    ],
    ids=["kind", "gke-prod-dws", "gke-dev"],
)
def test_templates_install_the_pinned_operator_charts(template: str, want_releases: dict[str, str]) -> None:
    releases = template_run(template).of_type("kubernetes:helm.sh/v3:Release")
    got = {r.inputs["chart"].rsplit("/", 1)[-1]: r.inputs["version"] for r in releases}
    assert got == want_releases


def test_openshift_template_installs_through_olm_without_helm() -> None:
    run = template_run("openshift-ai")
    assert run.of_type("kubernetes:helm.sh/v3:Release") == []
    subscriptions = run.of_type("kubernetes:operators.coreos.com/v1alpha1:Subscription")
    assert len(subscriptions) == 4  # with the JobSet Operator (trainer Managed on OpenShift AI 3.x)


WEBHOOK_DEPLOYMENT = "kubernetes:apps/v1:Deployment"
IMAGE_TOKEN = "docker-build:index:Image"
INTERNAL_REGISTRY_REPOSITORY = "image-registry.openshift-image-registry.svc:5000/batchplane/quota-webhook"


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_every_template_builds_the_webhook_image_for_its_platform_and_the_deployment_runs_that_build(
    template: str,
) -> None:
    kind = read_stack_file(template_path(template))["batchplane:target"]["kind"]
    by_cluster = clusters(template_run(template, preview=False))
    deployments = 0
    for cluster, resources in by_cluster.items():
        webhook = [
            r
            for r in resources
            if r.type == WEBHOOK_DEPLOYMENT and r.name.endswith("quota-webhook-deployment")
        ]
        if not webhook:
            continue
        deployments += 1
        (deployment,) = webhook
        (image,) = [r for r in resources if r.type == IMAGE_TOKEN]
        (tag,) = image.inputs["tags"]
        ran = deployment.inputs["spec"]["template"]["spec"]["containers"][0]["image"]
        assert "ghcr.io" not in ran, f"{cluster}: runs the unpublished default image"
        if kind == "kind":  # built into the local engine and loaded into the nodes under its tag
            (load,) = [r for r in resources if r.type == "command:local:Command"]
            assert load.urn in deployment.dependencies and image.urn in load.dependencies
            assert load.inputs["create"] == f"kind load docker-image {tag} --name batchplane"
            assert (image.inputs["push"], image.inputs["load"], ran, tag) == (
                False,
                True,
                tag,
                f"quota-webhook:{__version__}",
            )
            continue
        assert image.urn in deployment.dependencies, f"{cluster}: the Deployment does not wait for the push"
        if kind == "gke":  # pushed to the cluster's own Artifact Registry repository, run by digest
            (repository,) = [r for r in resources if r.type == "gcp:artifactregistry/repository:Repository"]
            host = f"{repository.inputs['location']}-docker.pkg.dev"
            assert (
                tag
                == f"{host}/offline-project/{repository.inputs['repositoryId']}/quota-webhook:{__version__}"
            )
            assert repository.inputs["repositoryId"].endswith("-images")  # <clusterName>-images (issue #29)
            assert re.fullmatch(rf"{re.escape(tag.rsplit(':', 1)[0])}@sha256:[0-9a-f]{{64}}", ran), ran
        else:  # openshift: pushed through the registry's default route, run from its in-cluster address
            assert kind == "openshift"
            route = next(r for r in resources if r.name.endswith("webhook-image-registry-route"))
            assert route.inputs["gate"] == "registry-route" and route.urn in image.dependencies
            assert tag == f"{OFFLINE_REGISTRY_ROUTE_HOST}/batchplane/quota-webhook:{__version__}"
            assert re.fullmatch(rf"{re.escape(INTERNAL_REGISTRY_REPOSITORY)}@sha256:[0-9a-f]{{64}}", ran), ran
    assert deployments >= 1, f"{template}: no quota webhook deployed"

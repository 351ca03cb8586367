"""`webhook.build`: the GKE stack builds the webhook image, pushes it to its own Artifact Registry repository and
runs it by digest — no pre-published image needed (issue #12, item 3)."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import pytest

from batchplane import __version__
from batchplane.errors import ConfigValidationError
from batchplane.offline import ProgramRun, read_stack_file, run_program
from batchplane.stack import load_stack
from tests.conftest import REPO_ROOT, TEMPLATES_DIR, template_path

BUILD = {
    "registry": "artifact-registry",
    "repository": "ml-images",
    "platforms": ["linux/amd64", "linux/arm64"],
}


PINNED = "ghcr.io/batchplane/quota-webhook@sha256:" + "b" * 64


def prod_with_build() -> dict[str, Any]:
    config = copy.deepcopy(read_stack_file(template_path("gke-prod-dws")))
    config.setdefault("batchplane:webhook", {})["build"] = BUILD
    return config


@cache
def build_run() -> ProgramRun:
    return run_program(REPO_ROOT, "gke-prod-dws", prod_with_build(), preview=True)


def test_the_stack_creates_a_docker_repository_in_the_clusters_region() -> None:
    (repository,) = build_run().of_type("gcp:artifactregistry/repository:Repository")
    assert repository.name == "webhook-image-repository"
    assert {k: repository.inputs[k] for k in ("repositoryId", "location", "format")} == {
        "repositoryId": "ml-images",
        "location": "us-central1",
        "format": "DOCKER",
    }


def test_the_image_is_built_from_the_webhook_dockerfile_and_pushed_after_the_repository() -> None:
    run = build_run()
    (image,) = run.of_type("docker-build:index:Image")
    (repository,) = run.of_type("gcp:artifactregistry/repository:Repository")
    assert image.inputs["push"] is True
    assert image.inputs["dockerfile"]["location"] == f"{REPO_ROOT}/webhook/Dockerfile"
    assert image.inputs["platforms"] == ["linux/amd64", "linux/arm64"]
    assert image.inputs["registries"][0]["address"] == "us-central1-docker.pkg.dev"
    assert repository.urn in image.dependencies
    assert image.inputs["tags"] == [
        "us-central1-docker.pkg.dev/offline-project/ml-images/quota-webhook:0.1.0"
    ]
    assert image.secret_paths == (("registries",),)  # the access token never shows in preview or state


def test_the_deployment_runs_the_pushed_image() -> None:
    run = build_run()
    (image,) = run.of_type("docker-build:index:Image")
    (deployment,) = run.of_type("kubernetes:apps/v1:Deployment")
    assert image.urn in deployment.dependencies  # the image reference is an Output of the push
    container = deployment.inputs["spec"]["template"]["spec"]["containers"][0]
    assert (
        container["image"] != "ghcr.io/batchplane/quota-webhook:0.1.0"
    )  # the pushed ref, unknown in preview


def test_a_build_needs_a_gke_target() -> None:
    config = read_stack_file(template_path("kind"))
    config = {**config, "batchplane:webhook": {"build": BUILD}}
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    assert [str(e) for e in caught.value.errors] == [
        "batchplane:webhook.build.registry: registry artifact-registry needs a gke target, not kind: use "
        "artifact-registry on gke, openshift on openshift, kind on kind (docs/webhook.md)"
    ]


def test_the_production_template_builds_into_its_clusters_own_repository_by_default() -> None:
    stack = load_stack(read_stack_file(template_path("gke-prod-dws")))
    assert stack.config.webhook.build is not None
    assert stack.config.webhook.build.registry == "artifact-registry"
    assert "repository" not in stack.config.webhook.build.model_fields_set
    run = run_program(REPO_ROOT, "gke-prod-dws", read_stack_file(template_path("gke-prod-dws")))
    (image,) = run.of_type("docker-build:index:Image")
    (repository,) = run.of_type("gcp:artifactregistry/repository:Repository")
    assert image.inputs["tags"] == [
        f"us-central1-docker.pkg.dev/offline-project/batchplane-prod-images/quota-webhook:{__version__}"
    ]
    assert repository.inputs["repositoryId"] == "batchplane-prod-images"


def test_a_published_image_pinned_by_digest_declares_no_repository_and_no_build() -> None:
    config = copy.deepcopy(read_stack_file(template_path("gke-prod-dws")))
    config["batchplane:webhook"] = {"image": PINNED}
    run = run_program(REPO_ROOT, "gke-prod-dws", config)
    assert run.of_type("docker-build:index:Image") == []
    assert run.of_type("gcp:artifactregistry/repository:Repository") == []
    (deployment,) = run.of_type("kubernetes:apps/v1:Deployment")
    assert deployment.inputs["spec"]["template"]["spec"]["containers"][0]["image"] == PINNED


def test_production_refuses_a_published_image_pinned_only_by_tag_naming_the_key() -> None:
    config = copy.deepcopy(read_stack_file(template_path("gke-prod-dws")))
    config["batchplane:webhook"] = {"image": "ghcr.io/batchplane/quota-webhook:0.1.0"}
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    assert [str(e) for e in caught.value.errors] == [
        'batchplane:webhook.image: "ghcr.io/batchplane/quota-webhook:0.1.0" is a published image pinned only by '
        "tag, which can be moved to other content: in production pin it by digest (name@sha256:…), or omit "
        "batchplane:webhook.image so the stack builds the image itself"
    ]


@pytest.mark.parametrize("environment", ["dev", "staging"])
def test_outside_production_a_published_image_may_be_pinned_by_tag(environment: str) -> None:
    config = copy.deepcopy(read_stack_file(template_path("gke-prod-dws")))
    config["batchplane:environment"] = environment
    config["batchplane:webhook"] = {"image": "ghcr.io/batchplane/quota-webhook:0.1.0"}
    stack = load_stack(config)
    assert stack.config.webhook.build is None
    assert not [w for w in stack.warnings if w.path == "batchplane:webhook.image"]


def test_production_with_a_tag_image_and_a_build_names_the_pushed_version() -> None:
    config = prod_with_build()
    config["batchplane:webhook"]["image"] = "quota-webhook:2.0.0"
    (image,) = run_program(REPO_ROOT, "gke-prod-dws", config, preview=True).of_type(
        "docker-build:index:Image"
    )
    assert image.inputs["tags"] == [
        "us-central1-docker.pkg.dev/offline-project/ml-images/quota-webhook:2.0.0"
    ]


# --- two stacks in one project never declare the same repository (issue #29, item 13) -------------------------


def _repositories(name: str) -> list[tuple[str, str, dict[str, str]]]:
    run = run_program(REPO_ROOT, name, read_stack_file(TEMPLATES_DIR / f"Pulumi.{name}.yaml"))
    return [
        (r.inputs["location"], r.inputs["repositoryId"], r.inputs.get("labels", {}))
        for r in run.of_type("gcp:artifactregistry/repository:Repository")
    ]


def test_the_gke_templates_default_to_one_repository_per_cluster_labelled_with_the_owning_stack() -> None:
    seen: dict[tuple[str, str], str] = {}
    for name in ("gke-dev", "gke-dws", "gke-prod-dws", "gke-multiregion-dws"):
        for location, repository_id, labels in _repositories(name):
            assert (location, repository_id) not in seen, (
                f"{name} and {seen[(location, repository_id)]} collide"
            )
            seen[(location, repository_id)] = name
            assert labels == {"batchplane-stack": name}
    assert ("us-central1", "batchplane-dev-images") in seen
    assert ("us-east4", "batchplane-us-east4-images") in seen  # a MultiKueue worker's own


def test_a_repository_the_stack_names_is_kept() -> None:
    (repository,) = build_run().of_type("gcp:artifactregistry/repository:Repository")
    assert repository.inputs["repositoryId"] == "ml-images"

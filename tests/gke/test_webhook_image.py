"""`webhook.build`: the GKE stack builds the webhook image, pushes it to its own Artifact Registry repository and
runs it by digest — no pre-published image needed (issue #12, item 3)."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.offline import ProgramRun, read_stack_file, run_program
from batchplane.stack import load_stack
from tests.conftest import REPO_ROOT, STACKS_DIR

BUILD = {
    "registry": "artifact-registry",
    "repository": "ml-images",
    "platforms": ["linux/amd64", "linux/arm64"],
}


def prod_with_build() -> dict[str, Any]:
    config = copy.deepcopy(read_stack_file(STACKS_DIR / "Pulumi.gke-prod-dws.yaml"))
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
    config = read_stack_file(STACKS_DIR / "Pulumi.kind.yaml")
    config = {**config, "batchplane:webhook": {"build": BUILD}}
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    assert [str(e) for e in caught.value.errors] == [
        "batchplane:webhook.build.registry: registry artifact-registry needs a gke target, not kind: use "
        "artifact-registry on gke, openshift on openshift, kind on kind (docs/webhook.md)"
    ]


def test_without_build_no_repository_and_no_image_are_declared() -> None:
    run = run_program(REPO_ROOT, "gke-prod-dws", read_stack_file(STACKS_DIR / "Pulumi.gke-prod-dws.yaml"))
    assert run.of_type("docker-build:index:Image") == []
    assert run.of_type("gcp:artifactregistry/repository:Repository") == []

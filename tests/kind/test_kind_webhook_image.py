"""`webhook.build: {registry: kind}` — the kind template's default (issue #22, item 2): the kind stack builds the
webhook image into the local Docker engine and loads it into the cluster's nodes with `kind load docker-image` before
the Deployment starts (issue #12, item 3); a published `webhook.image` without `build` is an explicit choice."""

from __future__ import annotations

import copy
import hashlib
from functools import cache
from typing import Any

import pytest

from batchplane import __version__
from batchplane.errors import ConfigValidationError
from batchplane.offline import ProgramRun, read_stack_file, run_program
from batchplane.stack import load_stack
from tests.conftest import REPO_ROOT, template_path
from tests.program.test_bringup import bringup_problems

TAG = f"quota-webhook:{__version__}"
PUBLISHED = "ghcr.io/batchplane/quota-webhook:0.1.0"


def kind_with_build(**webhook: Any) -> dict[str, Any]:
    config = copy.deepcopy(read_stack_file(template_path("kind")))
    config["batchplane:webhook"] = {"build": {"registry": "kind"}, **webhook}
    return config


@cache
def run(preview: bool) -> ProgramRun:
    """The kind template as shipped: no `batchplane:webhook` key, so the default build."""
    return run_program(REPO_ROOT, "kind", read_stack_file(template_path("kind")), preview=preview)


def test_the_template_builds_into_the_local_engine_under_the_version_tag_and_never_pushes() -> None:
    (image,) = run(True).of_type("docker-build:index:Image")
    assert image.name == "webhook-image-image"
    assert {k: image.inputs[k] for k in ("push", "load", "tags")} == {
        "push": False,
        "load": True,
        "tags": [TAG],
    }
    assert image.inputs["dockerfile"]["location"].endswith("/webhook/Dockerfile")


def test_kind_load_runs_after_the_build_and_again_whenever_the_build_changes() -> None:
    r = run(True)
    (image,) = r.of_type("docker-build:index:Image")
    (load,) = r.of_type("command:local:Command")
    assert load.inputs["create"] == f"kind load docker-image {TAG} --name batchplane"
    assert image.urn in load.dependencies
    assert load.property_dependencies["triggers"] == [image.urn]


def test_the_deployment_runs_the_loaded_tag_only_after_the_load() -> None:
    r = run(False)
    (load,) = r.of_type("command:local:Command")
    deployment = r.get("kubernetes:apps/v1:Deployment", "quota-webhook-deployment")
    assert load.urn in deployment.dependencies
    container = deployment.inputs["spec"]["template"]["spec"]["containers"][0]
    assert (container["image"], container["imagePullPolicy"]) == (TAG, "IfNotPresent")
    assert bringup_problems(r.resources) == []


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            kind_with_build(image="ghcr.io/batchplane/quota-webhook@sha256:" + "a" * 64),
            "batchplane:webhook.image: registry kind builds and loads the image under this name, so it must be pinned "
            "by tag (name:tag), not by digest: ghcr.io/batchplane/quota-webhook@sha256:" + "a" * 64,
        ),
        (
            {
                **copy.deepcopy(read_stack_file(template_path("gke-dev"))),
                "batchplane:webhook": {"build": {"registry": "kind"}},
            },
            "batchplane:webhook.build.registry: registry kind needs a kind target, not gke: use artifact-registry on "
            "gke, openshift on openshift, kind on kind (docs/webhook.md)",
        ),
    ],
    ids=["digest-image", "gke-target"],
)
def test_a_kind_build_needs_a_kind_target_and_a_tag(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    assert [str(e) for e in caught.value.errors] == [message]


def test_a_configured_image_names_the_tag_that_is_built_and_loaded() -> None:
    r = run_program(
        REPO_ROOT, "kind", kind_with_build(image="registry.example.com/ml/webhook:2.0.0"), preview=True
    )
    (image,) = r.of_type("docker-build:index:Image")
    (load,) = r.of_type("command:local:Command")
    assert image.inputs["tags"] == ["registry.example.com/ml/webhook:2.0.0"]
    assert (
        load.inputs["create"]
        == "kind load docker-image registry.example.com/ml/webhook:2.0.0 --name batchplane"
    )


def test_a_published_image_without_build_is_run_as_is_and_nothing_is_built() -> None:
    config = copy.deepcopy(read_stack_file(template_path("kind")))
    config["batchplane:webhook"] = {"image": PUBLISHED}
    r = run_program(REPO_ROOT, "kind", config, preview=False)
    assert r.of_type("docker-build:index:Image") == [] and r.of_type("command:local:Command") == []
    deployment = r.get("kubernetes:apps/v1:Deployment", "quota-webhook-deployment")
    assert deployment.inputs["spec"]["template"]["spec"]["containers"][0]["image"] == PUBLISHED


def test_a_switched_off_webhook_builds_nothing() -> None:
    config = copy.deepcopy(read_stack_file(template_path("kind")))
    config["batchplane:webhook"] = {"enabled": False}
    assert load_stack(config).config.webhook.build is None
    r = run_program(REPO_ROOT, "kind", config, preview=True)
    assert r.of_type("docker-build:index:Image") == []


def test_a_rebuilt_image_under_the_same_tag_rolls_the_pods_through_the_build_context_hash() -> None:
    # kind loads every build under the one tag, so the image reference never changes; the pod template carries the
    # build's context hash instead, and a new hash is a new ReplicaSet
    r = run(False)
    (image,) = r.of_type("docker-build:index:Image")
    deployment = r.get("kubernetes:apps/v1:Deployment", "quota-webhook-deployment")
    annotations = deployment.inputs["spec"]["template"]["metadata"]["annotations"]
    # the offline mock's contextHash: SHA-256 of the image resource's name
    assert annotations["batchplane.dev/image-revision"] == hashlib.sha256(image.name.encode()).hexdigest()
    assert image.urn in deployment.property_dependencies["spec"]
    assert "batchplane.dev/policy-checksum" in annotations  # the policy's own roll trigger is kept


def test_a_digest_pinned_build_needs_no_revision_annotation() -> None:
    # Artifact Registry: the reference is the pushed digest, which changes with every rebuild by itself
    config = copy.deepcopy(read_stack_file(template_path("gke-dev")))
    r = run_program(REPO_ROOT, "gke-dev", config)
    deployment = r.get("kubernetes:apps/v1:Deployment", "quota-webhook-deployment")
    annotations = deployment.inputs["spec"]["template"]["metadata"]["annotations"]
    assert "batchplane.dev/image-revision" not in annotations
    assert "@sha256:" in deployment.inputs["spec"]["template"]["spec"]["containers"][0]["image"]

"""`webhook.build: {registry: kind}`: the kind stack builds the webhook image into the local Docker engine and loads
it into the cluster's nodes with `kind load docker-image` before the Deployment starts (issue #12, item 3)."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.offline import ProgramRun, read_stack_file, run_program
from batchplane.stack import load_stack
from tests.conftest import REPO_ROOT, STACKS_DIR
from tests.program.test_bringup import bringup_problems

TAG = "ghcr.io/batchplane/quota-webhook:0.1.0"


def kind_with_build(**webhook: Any) -> dict[str, Any]:
    config = copy.deepcopy(read_stack_file(STACKS_DIR / "Pulumi.kind.yaml"))
    config["batchplane:webhook"] = {"build": {"registry": "kind"}, **webhook}
    return config


@cache
def run(preview: bool) -> ProgramRun:
    return run_program(REPO_ROOT, "kind", kind_with_build(), preview=preview)


def test_the_image_is_built_into_the_local_engine_under_the_configured_tag_and_never_pushed() -> None:
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
                **copy.deepcopy(read_stack_file(STACKS_DIR / "Pulumi.gke-dev.yaml")),
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

"""`webhook.build: {registry: openshift}`: the OpenShift stack pushes the webhook image to the cluster's internal
registry with a ServiceAccount token it creates, and runs it by digest from the registry's in-cluster address."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import pytest

from batchplane import __version__
from batchplane.errors import ConfigValidationError
from batchplane.offline import ProgramRun, read_stack_file, run_program
from batchplane.offline.mocks import OFFLINE_REGISTRY_ROUTE_HOST
from batchplane.stack import load_stack
from tests.conftest import REPO_ROOT, template_path
from tests.program.test_bringup import bringup_problems

HOST = "default-route-openshift-image-registry.apps.ocp.example.com"


def openshift_with_build(**build: Any) -> dict[str, Any]:
    config = copy.deepcopy(read_stack_file(template_path("openshift-ai")))
    config["batchplane:webhook"] = {"build": {"registry": "openshift", "registryHost": HOST, **build}}
    return config


@cache
def run(preview: bool) -> ProgramRun:
    return run_program(REPO_ROOT, "openshift-ai", openshift_with_build(), preview=preview)


def test_the_project_imagestream_pusher_and_pull_rights_are_declared() -> None:
    r = run(True)
    objects = {
        (x.inputs["kind"], x.inputs["metadata"].get("namespace", ""), x.inputs["metadata"]["name"])
        for x in r.resources
        if x.name.startswith("webhook-image-") and "kind" in x.inputs
    }
    assert objects == {
        ("Namespace", "", "batchplane"),
        ("ImageStream", "batchplane", "quota-webhook"),
        ("ServiceAccount", "batchplane", "batchplane-image-pusher"),
        ("RoleBinding", "batchplane", "batchplane-image-pusher"),
        ("RoleBinding", "batchplane", "batchplane-system-image-puller"),
        ("Secret", "batchplane", "batchplane-image-pusher"),
    }
    pusher = r.get(
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "webhook-image-batchplane-image-pusher"
    )
    assert pusher.inputs["roleRef"]["name"] == "system:image-pusher"
    puller = r.get(
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "webhook-image-batchplane-system-image-puller"
    )
    assert puller.inputs["subjects"] == [
        {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Group",
            "name": "system:serviceaccounts:batchplane-system",
        }
    ]


def test_the_push_goes_through_the_route_with_the_pusher_token_as_a_secret() -> None:
    r = run(True)
    (image,) = r.of_type("docker-build:index:Image")
    assert (image.inputs["push"], image.inputs["tags"]) == (True, [f"{HOST}/batchplane/quota-webhook:0.1.0"])
    (registry,) = image.inputs["registries"]
    assert (registry["address"], registry["username"]) == (HOST, "batchplane-image-pusher")
    assert ("registries", 0, "password") in image.secret_paths or ("registries",) in image.secret_paths
    gate = next(x for x in r.resources if x.name == "webhook-image-pusher-token-ready")
    assert gate.inputs["gate"] == "service-account-token" and gate.urn in image.dependencies


def test_the_deployment_runs_the_pushed_image_by_digest_from_the_internal_registry() -> None:
    r = run(False)
    deployment = r.get("kubernetes:apps/v1:Deployment", "quota-webhook-deployment")
    image = deployment.inputs["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image.startswith(
        "image-registry.openshift-image-registry.svc:5000/batchplane/quota-webhook@sha256:"
    )
    assert bringup_problems(r.resources) == []


def test_registry_host_is_allowed_only_with_the_openshift_registry() -> None:
    config = copy.deepcopy(read_stack_file(template_path("openshift-ai")))
    config["batchplane:webhook"] = {"build": {"registry": "artifact-registry", "registryHost": HOST}}
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    assert [str(e) for e in caught.value.errors] == [
        "batchplane:webhook.build: registryHost is allowed only with registry openshift"
    ]


@cache
def default_run(preview: bool) -> ProgramRun:
    """The openshift-ai template as shipped: no `batchplane:webhook` key, so the default build."""
    config = read_stack_file(template_path("openshift-ai"))
    return run_program(REPO_ROOT, "openshift-ai", config, preview=preview)


def test_without_registry_host_the_push_goes_to_the_default_route_host_read_at_deploy_time() -> None:
    r = default_run(True)
    gate = r.get("pulumi-python:dynamic:Resource", "webhook-image-registry-route")
    assert {k: gate.inputs[k] for k in ("gate", "namespace", "route")} == {
        "gate": "registry-route",
        "namespace": "openshift-image-registry",
        "route": "default-route",
    }
    assert gate.inputs["context"] == "openshift-ai"  # polls through the provider's own connection
    (image,) = r.of_type("docker-build:index:Image")
    assert gate.urn in image.dependencies
    assert image.inputs["tags"] == [f"{OFFLINE_REGISTRY_ROUTE_HOST}/batchplane/quota-webhook:{__version__}"]
    assert image.inputs["registries"][0]["address"] == OFFLINE_REGISTRY_ROUTE_HOST


def test_without_registry_host_the_deployment_still_runs_the_pushed_image_by_digest() -> None:
    r = default_run(False)
    deployment = r.get("kubernetes:apps/v1:Deployment", "quota-webhook-deployment")
    image = deployment.inputs["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image.startswith(
        "image-registry.openshift-image-registry.svc:5000/batchplane/quota-webhook@sha256:"
    )
    assert bringup_problems(r.resources) == []


def test_a_given_registry_host_declares_no_route_gate() -> None:
    assert not [x for x in run(True).resources if x.name == "webhook-image-registry-route"]

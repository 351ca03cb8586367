"""One WebhookImage for every platform: each platform's old image component (its own type token) maps to it through
aliases, so a stack deployed with `webhook.build` keeps every image resource (issue #21)."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import pytest

from batchplane.offline import ProgramRun, read_stack_file, run_program
from tests.conftest import REPO_ROOT, template_path

pytestmark = pytest.mark.slow

HOST = "default-route-openshift-image-registry.apps.ocp.example.com"
BUILDS: dict[str, tuple[str, dict[str, Any], tuple[str, ...]]] = {
    "gke": ("gke-dev", {"registry": "artifact-registry", "repository": "ml-images"}, ("repository", "image")),
    "kind": ("kind", {"registry": "kind"}, ("image", "load")),
    "openshift": ("openshift-ai", {"registry": "openshift", "registryHost": HOST}, ("imagestream", "image")),
}


@cache
def run(platform: str) -> ProgramRun:
    stack, build, _ = BUILDS[platform]
    config = copy.deepcopy(read_stack_file(template_path(stack)))
    config["batchplane:webhook"] = {**config.get("batchplane:webhook", {}), "build": build}
    return run_program(REPO_ROOT, stack, config)


@pytest.mark.parametrize("platform", sorted(BUILDS))
def test_the_old_image_component_urns_map_to_the_one_component(platform: str) -> None:
    stack, _, children = BUILDS[platform]
    r = run(platform)
    component = r.get("batchplane:image:WebhookImage", "webhook-image")
    old_type = f"batchplane:{platform}:WebhookImage"
    head = f"urn:pulumi:{stack}::batchplane::"
    # Deployed after BatchCluster existed (under it), and before (at the top level): both old URNs are aliases.
    assert f"{head}batchplane:cluster:BatchCluster${old_type}::webhook-image" in component.aliases
    assert f"{head}{old_type}::webhook-image" in component.aliases
    for role in children:
        (child,) = [x for x in r.children(component.urn) if x.name == f"webhook-image-{role}"]
        assert f"{head}batchplane:cluster:BatchCluster${old_type}${child.type}::{child.name}" in child.aliases
        assert f"{head}{old_type}${child.type}::{child.name}" in child.aliases


def test_the_openshift_token_gate_polls_the_clusters_own_context() -> None:
    r = run("openshift")
    provider = r.get("pulumi:providers:kubernetes", "k8s")
    gate = next(x for x in r.resources if x.name == "webhook-image-pusher-token-ready")
    assert gate.inputs["context"] == provider.inputs["context"]

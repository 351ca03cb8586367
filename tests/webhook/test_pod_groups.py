"""The quota webhook and pod groups: only Pods labelled kueue.x-k8s.io/pod-group-name reach it (the rendered
objectSelector), and it refuses, at a group's first Pod, a group that can never be admitted."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest

from batchplane.components.quota_webhook.manifests import (
    WebhookDeployment,
    mutating_webhook_configuration,
    validating_webhook_configuration,
)
from batchplane.config.kueue import LabelSelector
from batchplane.config.rules import selector_matches
from batchplane.webhook.decisions import Decider
from tests.frameworks.pod_objects import group_pod
from tests.webhook.conftest import one_queue, review, running_server, write_cert

DEPLOYMENT = WebhookDeployment("{}", "0" * 64, "img@sha256:" + "0" * 64, "batchplane-system", ("team-a",))


def _pod_entry() -> dict[str, object]:
    hooks = validating_webhook_configuration(DEPLOYMENT)["webhooks"]
    (entry,) = [h for h in hooks if any("pods" in r["resources"] for r in h["rules"])]
    return entry


def test_the_pod_entry_reviews_pod_creation_on_validate_in_tenant_namespaces_only() -> None:
    entry = _pod_entry()
    assert entry["name"] == "validate-pod-groups.quota.batchplane.dev"
    assert entry["rules"] == [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "resources": ["pods"],
            "operations": ["CREATE"],
            "scope": "Namespaced",
        }
    ]
    assert entry["clientConfig"]["service"]["path"] == "/validate"  # type: ignore[index]
    assert entry["namespaceSelector"]["matchExpressions"][0]["values"] == ["team-a"]  # type: ignore[index]


def test_the_object_selector_sends_a_group_pod_and_never_a_pod_without_the_group_label() -> None:
    selector = LabelSelector.model_validate(_pod_entry()["objectSelector"])
    labelled = group_pod("p0", {"cpu": "1"})["metadata"]["labels"]
    unlabelled = group_pod("solo", {"cpu": "1"}, group=None)["metadata"]["labels"]
    assert selector_matches(selector, labelled)
    assert not selector_matches(selector, unlabelled)
    assert not selector_matches(selector, {})
    assert selector_matches(selector, {"kueue.x-k8s.io/pod-group-name": ""})  # Exists: any value


def test_no_other_entry_reviews_pods() -> None:
    hooks = validating_webhook_configuration(DEPLOYMENT)["webhooks"]
    others = [h for h in hooks if h["name"] != "validate-pod-groups.quota.batchplane.dev"]
    assert all("pods" not in r["resources"] for h in others for r in h["rules"])


@pytest.mark.slow
def test_over_tls_the_first_pod_of_a_group_that_never_fits_is_refused_and_one_that_fits_is_allowed(
    tmp_path: Path,
) -> None:
    cert, key = write_cert(tmp_path, "webhook")
    policy = one_queue({"cpu": 9}, queue="team-a-queue")
    with (
        running_server(policy, cert, key) as port,
        httpx.Client(
            base_url=f"https://127.0.0.1:{port}", verify=ssl.create_default_context(cafile=str(cert))
        ) as client,
    ):
        never = client.post("/validate", json=review(group_pod("p0", {"cpu": "4"}, total=3), uid="g1"))
        fits = client.post("/validate", json=review(group_pod("p0", {"cpu": "3"}, total=3), uid="g2"))
    refused = never.json()["response"]
    assert (refused["uid"], refused["allowed"]) == ("g1", False)
    message = refused["status"]["message"]
    assert message.startswith("never runs: cq can get at most 9 CPUs on f"), message
    assert "12 CPUs (3 pods × 4)" in message
    assert fits.json()["response"] == {"uid": "g2", "allowed": True}


def test_an_unlabelled_group_pod_is_not_judged_in_the_webhooks_default_queue_which_mutate_never_gives_pods() -> (
    None
):
    decider = Decider(one_queue({"cpu": 9}, queue="lq", default=True))
    pod = group_pod("p0", {"cpu": "4"}, total=3, queue=None)
    (mutating,) = mutating_webhook_configuration(DEPLOYMENT)["webhooks"]
    assert all("pods" not in rule["resources"] for rule in mutating["rules"])  # /mutate never sees a Pod
    assert decider.validate(pod, "team-a").reason == "no-queue-label"
    labelled = group_pod("p0", {"cpu": "4"}, total=3, queue="lq")
    assert decider.validate(labelled, "team-a").reason == "never-admissible"

"""Where the quota webhook's image comes from (batchplane/config/webhook.py, applied by the stack loader): built by
the stack for its platform unless a published image is chosen, digest-pinned in production (issue #22, item 2)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchplane import __version__
from batchplane.config.webhook import (
    BUILT_IMAGE,
    DEFAULT_IMAGE,
    WebhookConfig,
    check_image_choice,
    with_platform_build,
)
from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from tests.config.factories import base_config

OPERATORS = {"certManager": {"enabled": True}}  # the webhook is deployed when the stack installs cert-manager
EXISTING = {"kind": "existing", "context": "prod"}
TAGGED = "registry.example.com/ml/quota-webhook:1.2.3"
PINNED = "registry.example.com/ml/quota-webhook@sha256:" + "c" * 64


def stack_config(target: dict[str, Any] | None = None, **sections: Any) -> dict[str, Any]:
    cfg = copy.deepcopy(base_config())
    cfg["batchplane:operators"] = OPERATORS
    if target is not None:
        cfg["batchplane:target"] = target
    cfg.update({f"batchplane:{key}": value for key, value in sections.items()})
    return cfg


def test_a_deployed_webhook_without_image_or_build_is_built_with_the_platforms_registry() -> None:
    webhook = load_stack(stack_config()).config.webhook
    assert webhook.build is not None and webhook.build.registry == "kind"
    assert webhook.image is None and webhook.resolved_image == f"quota-webhook:{__version__}"


def test_an_existing_cluster_cannot_build_so_it_runs_the_default_published_image_with_a_warning() -> None:
    stack = load_stack(stack_config(EXISTING))
    assert stack.config.webhook.build is None and stack.config.webhook.resolved_image == DEFAULT_IMAGE
    [warning] = [w for w in stack.warnings if w.path == "batchplane:webhook.image"]
    assert warning.severity == "warning"
    assert (
        f"target existing cannot build the webhook image, so the webhook runs {DEFAULT_IMAGE}"
        in warning.message
    )


@pytest.mark.parametrize(
    "sections",
    [
        {"webhook": {"image": TAGGED}},
        {"webhook": {"enabled": False}},
        {"operators": {"certManager": {"enabled": False}}},
    ],
    ids=["image-chosen", "webhook-off", "no-cert-manager"],
)
def test_an_existing_cluster_says_nothing_about_the_image_when_one_is_chosen_or_none_is_deployed(
    sections: dict[str, Any],
) -> None:
    stack = load_stack(stack_config(EXISTING, **sections))
    assert [w for w in stack.warnings if w.path == "batchplane:webhook.image"] == []
    assert stack.config.webhook.build is None


def test_production_refuses_a_tag_only_published_image_on_an_existing_cluster_too() -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(stack_config(EXISTING, environment="production", webhook={"image": TAGGED}))
    assert [e.path for e in caught.value.errors] == ["batchplane:webhook.image"]


def test_production_accepts_a_digest_pinned_published_image() -> None:
    stack = load_stack(stack_config(EXISTING, environment="production", webhook={"image": PINNED}))
    assert stack.config.webhook.resolved_image == PINNED and stack.config.webhook.build is None


def test_a_webhook_that_is_not_deployed_gets_no_build() -> None:
    webhook = load_stack(stack_config(webhook={"enabled": False})).config.webhook
    assert webhook.build is None


_images = st.sampled_from([None, TAGGED, PINNED])
_registries = st.sampled_from([None, "artifact-registry", "openshift", "kind"])
_environments = st.sampled_from(["dev", "staging", "production"])


@settings(max_examples=200, deadline=None)
@given(
    image=_images,
    build=st.booleans(),
    registry=_registries,
    environment=_environments,
    deployed=st.booleans(),
)
def test_generated_choices_build_exactly_when_nothing_is_chosen_and_refuse_only_tag_only_published_images_in_production(
    image: str | None, build: bool, registry: str | None, environment: str, deployed: bool
) -> None:
    raw: dict[str, Any] = {} if image is None else {"image": image}
    if build and registry is not None:
        raw["build"] = {"registry": registry}
    webhook = WebhookConfig.model_validate(raw)
    resolved = with_platform_build(webhook, registry, deployed=deployed)
    issues = check_image_choice(webhook, environment, registry, "x", deployed=deployed)
    chose = image is not None or webhook.build is not None
    # A build is added exactly when the webhook is deployed, nothing was chosen and the platform can build.
    assert (resolved.build is not None) == (
        webhook.build is not None or (deployed and not chose and bool(registry))
    )
    assert resolved.image == webhook.image
    errors = [i for i in issues if i.severity == "error"]
    warnings = [i for i in issues if i.severity == "warning"]
    published = image is not None and webhook.build is None
    assert bool(errors) == (deployed and published and environment == "production" and image == TAGGED)
    assert bool(warnings) == (deployed and not chose and registry is None)
    assert all(i.path == "batchplane:webhook.image" for i in issues)
    if resolved.build is not None:
        assert resolved.resolved_image == (image or BUILT_IMAGE)

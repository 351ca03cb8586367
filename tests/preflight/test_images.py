"""The registry check: image references parsed as Docker does, and the OCI manifest check with an anonymous
token, answered from recordings through a ``requests`` adapter."""

from __future__ import annotations

import pytest
import requests

from batchplane.preflight.images import ImageRef, parse_image, registry_serves
from tests.preflight.replay import Replay, load


@pytest.mark.parametrize(
    ("image", "want"),
    [
        ("ghcr.io/batchplane/quota-webhook:0.1.0", ImageRef("ghcr.io", "batchplane/quota-webhook", "0.1.0")),
        ("busybox:1.37", ImageRef("registry-1.docker.io", "library/busybox", "1.37")),
        ("docker.io/rayproject/ray:2.52.0", ImageRef("registry-1.docker.io", "rayproject/ray", "2.52.0")),
        ("localhost:5000/webhook:1", ImageRef("localhost:5000", "webhook", "1")),
        (
            "us-central1-docker.pkg.dev/p/r/quota-webhook@sha256:" + "a" * 64,
            ImageRef("us-central1-docker.pkg.dev", "p/r/quota-webhook", "sha256:" + "a" * 64),
        ),
    ],
)
def test_references_split_into_registry_repository_and_tag_or_digest(image: str, want: ImageRef) -> None:
    assert parse_image(image) == want


def _session(*recordings: str) -> tuple[requests.Session, Replay]:
    replay = Replay(load(*recordings))
    session = requests.Session()
    session.mount("https://", replay)
    return session, replay


def test_a_published_image_is_found_after_the_anonymous_token_dance() -> None:
    session, replay = _session("images/ghcr-served.json")
    answer = registry_serves("ghcr.io/batchplane/quota-webhook:0.1.0", session)
    assert answer.served is True
    assert [r.split("?")[0] for r in replay.requests] == [
        "HEAD https://ghcr.io/v2/batchplane/quota-webhook/manifests/0.1.0",
        "GET https://ghcr.io/token",
        "HEAD https://ghcr.io/v2/batchplane/quota-webhook/manifests/0.1.0",
    ]


def test_an_unpublished_tag_is_not_served() -> None:
    session, _ = _session("images/ghcr-missing.json")
    answer = registry_serves("ghcr.io/batchplane/quota-webhook:0.1.0", session)
    assert answer.served is False and "404" in answer.detail


def test_an_unreachable_or_unanswering_registry_is_undecided_not_missing() -> None:
    session, _ = _session("gcp/empty.json")
    answer = registry_serves("ghcr.io/batchplane/quota-webhook:0.1.0", session)
    assert answer.served is None and "599" in answer.detail

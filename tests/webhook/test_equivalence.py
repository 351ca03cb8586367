"""The decision path decides exactly as recorded in tests/webhook/golden/decisions.json.gz (1,680 generated reviews
over every template's policy; see tests/webhook/equivalence.py): a faster path must not change one answer."""

from __future__ import annotations

import gzip
import json

from tests.webhook.equivalence import GOLDEN, TEMPLATES, decisions


def test_every_generated_review_gets_the_recorded_decision() -> None:
    want = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    got = decisions()
    assert sorted(got) == sorted(want)
    changed = {key: {"was": want[key], "now": got[key]} for key in want if got[key] != want[key]}
    assert changed == {}


def test_the_recorded_reviews_cover_every_template_and_both_answers() -> None:
    want = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    assert {key.split("/", 1)[0] for key in want} == set(TEMPLATES)
    reasons = {reason for _, reason, _, _ in want.values()}
    assert {"ok", "never-admissible", "unknown-local-queue", "no-queue-label", "no-worker-admits"} <= reasons

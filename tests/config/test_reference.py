"""The committed config reference is exactly what the models generate (it cannot drift)."""

from __future__ import annotations

from batchplane.stack.reference import config_reference
from tests.conftest import REPO_ROOT


def test_committed_config_reference_matches_the_models() -> None:
    committed = (REPO_ROOT / "docs" / "config-reference.md").read_text(encoding="utf-8")
    assert committed == config_reference(), (
        "docs/config-reference.md is stale: run `make docs` (it runs `batchplane config-reference`)"
    )


def test_reference_documents_every_field_of_every_model() -> None:
    text = config_reference()
    for needle in (
        "### ClusterQueue",
        "`nominalQuota`",
        "`borrowWithinCohort`",
        "`localQueueName`",
        "**required**",
    ):
        assert needle in text
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    undocumented = [row for row in rows if row.rstrip().endswith("|  |")]
    assert undocumented == []

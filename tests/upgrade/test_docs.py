"""docs/upgrading.md prints the step table the planner uses: every step, with its release-note link."""

from __future__ import annotations

from pathlib import Path

from batchplane.upgrade.docs import steps_markdown
from batchplane.upgrade.steps import KUEUE_STEPS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "upgrading.md"


def test_the_generated_table_has_one_row_per_step_with_its_citation_in_release_order() -> None:
    rows = [line for line in steps_markdown().splitlines() if line.startswith("| [v")]
    assert len(rows) == len(KUEUE_STEPS)
    for row, step in zip(rows, KUEUE_STEPS, strict=True):
        assert row.startswith(f"| [{step.tag}]({step.source}) | `{step.key}` |")


def test_the_upgrading_page_carries_the_current_table() -> None:
    assert steps_markdown() in PAGE.read_text(encoding="utf-8")

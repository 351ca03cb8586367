"""docs/requirements.md is generated: it must equal `batchplane preflight --requirements`."""

from __future__ import annotations

from typer.testing import CliRunner

from batchplane.cli import app
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES


def test_committed_requirements_page_equals_the_generated_one() -> None:
    result = CliRunner().invoke(app, ["preflight", "--requirements"])
    assert result.exit_code == 0, result.output
    committed = (REPO_ROOT / "docs" / "requirements.md").read_text(encoding="utf-8")
    assert committed == result.stdout, (
        "docs/requirements.md is stale: run `make docs` (it runs `batchplane preflight --requirements`)"
    )


def test_every_template_has_a_section() -> None:
    text = (REPO_ROOT / "docs" / "requirements.md").read_text(encoding="utf-8")
    for name in TEMPLATE_NAMES:
        assert f"## `{name}` (" in text

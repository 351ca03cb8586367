"""The figures docs/ gives about the code are generated (``make docs``, :mod:`batchplane.docfigures`), never typed:
every marked figure on every page equals its measured value, and a stale one fails naming ``make docs``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from batchplane.docfigures import FIGURES, FigureError, main, update_figures
from batchplane.frameworks import FRAMEWORKS
from tests.conftest import REPO_ROOT

PAGES = sorted([REPO_ROOT / "README.md", *(REPO_ROOT / "docs").rglob("*.md")])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_marked_figure_on_the_page_is_current(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert update_figures(text) == text, (
        f"{page.relative_to(REPO_ROOT)} states a figure the code no longer has: run `make docs`"
    )


def test_every_figure_is_marked_on_some_page() -> None:
    text = "".join(page.read_text(encoding="utf-8") for page in PAGES)
    assert [name for name in FIGURES if f"<!-- generated: {name} -->" not in text] == []


def test_a_stale_figure_is_rewritten_to_the_measured_value() -> None:
    stale = "registers the <!-- generated: framework-modules -->0<!-- /generated --> modules"
    assert update_figures(stale) == (
        f"registers the <!-- generated: framework-modules -->{len(FRAMEWORKS)}<!-- /generated --> modules"
    )


def test_unknown_and_unclosed_markers_are_all_reported_with_their_lines() -> None:
    text = (
        "a <!-- generated: no-such-figure -->1<!-- /generated -->\nb <!-- generated: framework-modules -->2\n"
    )
    with pytest.raises(FigureError) as raised:
        update_figures(text)
    message = str(raised.value)
    assert "line 1: unknown figure 'no-such-figure'" in message
    assert "line 2: marker '<!-- generated: framework-modules -->' has no <!-- /generated -->" in message


def test_check_reports_a_stale_page_and_leaves_it_while_a_run_rewrites_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.md"
    stale = "<!-- generated: framework-modules -->0<!-- /generated -->\n"
    page.write_text(stale, encoding="utf-8")
    assert main(["--check", str(page)]) == 1
    assert "stale figures: run `make docs`" in capsys.readouterr().out
    assert page.read_text(encoding="utf-8") == stale
    assert main([str(page)]) == 0
    assert (
        page.read_text(encoding="utf-8")
        == f"<!-- generated: framework-modules -->{len(FRAMEWORKS)}<!-- /generated -->\n"
    )
    assert main(["--check", str(page)]) == 0


def test_make_docs_runs_every_generator_whose_page_a_test_holds() -> None:
    """The pages the tests hold to the code (config reference, requirements, graphs, marked figures) are exactly
    what `make docs` writes: its recipe, dry-run, names each generator and output."""
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "docs"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    recipe = done.stdout
    for step in (
        "batchplane config-reference --output docs/config-reference.md",
        "batchplane preflight --requirements > docs/requirements.md",
        "batchplane graph --config $f --format dot --output docs/graphs/$s.dot",
        "batchplane graph --config $f --format svg --output docs/graphs/$s.svg",
        "python -m batchplane.docfigures README.md docs/*.md",
    ):
        assert step in recipe, f"`make docs` no longer runs {step!r}"
    assert "docker" not in recipe.lower() and "curl" not in recipe and "wget" not in recipe

"""A stack change that replaces Kueue's Helm Release (``operators.kueue.namespace`` changed on the kind template):
``diff`` names the CRDs the uninstall deletes and the number of the stack's Kueue objects, in red, in every view."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.diff import compare
from batchplane.diff.objects import diff_objects
from batchplane.diff.render import print_table, to_json_data, to_markdown
from batchplane.offline.engine import run_program
from batchplane.stack import load_stack_file, read_stack_file
from batchplane.wellknown import KUEUE_CHART_CRDS
from tests.conftest import REPO_ROOT, template_path
from tests.diff.helpers import stack_document, write_document

KUEUE_RELEASE = "operators-kueue-release"


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kind template with Kueue's namespace changed."""
    doc = stack_document("kind")
    doc["config"]["batchplane:operators"]["kueue"]["namespace"] = "kueue"
    return write_document(doc, tmp_path_factory.mktemp("moved") / "Pulumi.kind.yaml")


@pytest.fixture(scope="module")
def runs(moved: Path) -> tuple[list[Any], list[Any]]:
    base = run_program(REPO_ROOT, "kind", read_stack_file(template_path("kind"))).resources
    head = run_program(REPO_ROOT, "kind", read_stack_file(moved)).resources
    return base, head


def _kueue_objects(resources: list[Any]) -> int:
    return sum(r.type.startswith("kubernetes:kueue.x-k8s.io/") for r in resources)


def test_a_kueue_release_moved_to_another_namespace_is_a_replacement_naming_the_crds_and_objects_it_takes(
    runs: tuple[list[Any], list[Any]],
) -> None:
    base, head = runs
    [release] = [c for c in diff_objects(base, head) if c.urn.endswith("::" + KUEUE_RELEASE)]
    assert release.replace == ("namespace",)
    assert release.crds == KUEUE_CHART_CRDS
    assert release.crd_objects == _kueue_objects(base) == 3
    others = [c for c in diff_objects(base, head) if c.crds and c is not release]
    assert [c.urn for c in others if not c.urn.endswith("::" + KUEUE_RELEASE)] == []


def test_a_kueue_release_removed_from_the_stack_names_the_crds_it_deletes(
    runs: tuple[list[Any], list[Any]],
) -> None:
    base, _ = runs
    without = [r for r in base if not r.urn.endswith("::" + KUEUE_RELEASE)]
    [release] = diff_objects(base, without)
    assert (release.status, release.crds, release.crd_objects) == ("removed", KUEUE_CHART_CRDS, 3)


def test_the_json_markdown_and_terminal_views_show_the_deleted_crds_in_red(
    runs: tuple[list[Any], list[Any]], moved: Path
) -> None:
    base, head = runs
    diff = compare(
        load_stack_file(template_path("kind")),
        load_stack_file(moved),
        base_resources=base,
        head_resources=head,
        decisions=False,
    )
    [entry] = [o for o in to_json_data(diff)["objects"] if o["crds"]]
    assert entry["crdObjects"] == 3 and entry["crds"] == list(KUEUE_CHART_CRDS)
    markdown = to_markdown(diff)
    assert "> [!CAUTION]" in markdown
    assert (
        "> **CRDs deleted**: operators-kueue-release would be replaced (namespace changed): its uninstall deletes "
        "the 11 CRDs its chart ships (admissionchecks.kueue.x-k8s.io, " in markdown
    )
    assert "and the stack's 3 objects of those kinds" in markdown
    buffer = io.StringIO()
    print_table(diff, Console(file=buffer, force_terminal=True, color_system="standard", width=400))
    shown = buffer.getvalue()
    assert "\x1b[1;31mCRDs deleted: operators-kueue-release would be replaced" in shown


def test_the_diff_command_reports_the_release_s_crds_in_its_json(moved: Path) -> None:
    import json

    result = CliRunner().invoke(
        app, ["diff", "--base-config", str(template_path("kind")), "--config", str(moved), "--json"]
    )
    assert result.exit_code == 0, result.output
    [entry] = [o for o in json.loads(result.stdout)["objects"] if o["crds"]]
    assert entry["urn"].endswith("::" + KUEUE_RELEASE) and entry["replace"] == ["namespace"]
    assert entry["crdObjects"] == 3

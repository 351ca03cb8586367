"""``from batchplane import …`` is the public surface (docs/api.md): every name resolves, the page lists every
name and its examples run, ``import batchplane`` stays cheap, and the example program uses nothing else."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys

import pytest

import batchplane
from tests.conftest import REPO_ROOT

API_PAGE = (REPO_ROOT / "docs" / "api.md").read_text(encoding="utf-8")


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", API_PAGE, re.S)


def test_every_public_name_resolves_to_what_its_module_defines() -> None:
    assert set(batchplane.__all__) == {"__version__", *batchplane._exports()}
    for name in batchplane._exports():
        value = getattr(batchplane, name)
        assert getattr(value, "__name__", name) == name, f"batchplane.{name} is {value!r}"


def test_each_public_name_is_written_once_in_the_package_init() -> None:
    """The ``if TYPE_CHECKING:`` imports are the one list; ``__all__``, ``dir()`` and the lazy lookup derive from it."""
    source = (REPO_ROOT / "batchplane" / "__init__.py").read_text(encoding="utf-8")
    docstring_end = ast.parse(source).body[0].end_lineno
    source = "\n".join(source.splitlines()[docstring_end:])  # the docstring's prose may name them
    names = set(batchplane._exports())
    assert len(names) == 31 and {"BatchCluster", "load_stack", "create_app"} <= names
    twice = [n for n in sorted(names) if len(re.findall(rf"\b{n}\b", source)) != 2]  # `X as X`, on one line
    assert twice == []
    assert dir(batchplane) == sorted({*dir(batchplane), *names, "__all__"})


def test_star_import_gives_the_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from batchplane import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(batchplane.__all__)


def test_a_name_outside_the_surface_is_an_attribute_error_that_points_at_the_docs() -> None:
    with pytest.raises(AttributeError, match=r"docs/api\.md"):
        batchplane.load_stack_map  # noqa: B018 - the attribute access is the test


def test_the_api_page_lists_every_public_name_and_nothing_else() -> None:
    table = API_PAGE[API_PAGE.index("| use | names |") : API_PAGE.index("The config models mirror")]
    listed = set(re.findall(r"`([A-Za-z_]+)`", table))
    assert listed == set(batchplane._exports())


def test_importing_batchplane_imports_no_pulumi_and_no_stack_loader() -> None:
    probe = "import sys, json, batchplane; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    loaded = json.loads(done.stdout)
    assert [m for m in loaded if m == "pulumi" or m.startswith(("pulumi.", "batchplane.stack"))] == []


@pytest.mark.parametrize("index", [0, 2], ids=["typed-config", "webhook-embedded"])
def test_the_api_pages_examples_run(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO_ROOT)
    exec(compile(_python_blocks()[index], f"docs/api.md block {index}", "exec"), {})


def test_the_component_example_matches_the_example_program_and_uses_only_the_public_surface() -> None:
    """The page's component block is the example program's shape (run under the mock engine by
    tests/examples/test_existing_cluster.py); both import Batchplane only through ``batchplane``."""
    program = (REPO_ROOT / "examples" / "existing-cluster" / "__main__.py").read_text(encoding="utf-8")
    for source in (program, _python_blocks()[1]):
        imported = {
            node.module
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("batchplane")
        }
        assert imported == {"batchplane"}

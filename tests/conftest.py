"""Shared test fixtures: repository paths and the shared/ reference data."""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

#: Hypothesis's per-example deadline (200 ms by default) off for every test: the properties assert behaviour, not
#: speed (speed lives in benchmarks/ and docs/performance.md), and on a loaded 2-core machine an example of the
#: 1,500 in tests/accounting/test_stored_requests.py exceeded it once and failed the run.
settings.register_profile("batchplane", deadline=None)
settings.load_profile("batchplane")

#: ``BATCHPLANE_COMPILED=<dir>`` runs the tests against the mypyc-compiled decision path that
#: ``python -m batchplane.webhook.compile --out <dir>`` wrote (``make test`` does, for tests/webhook, tests/accounting and tests/quantity).
COMPILED = os.environ.get("BATCHPLANE_COMPILED")
if COMPILED:
    # Import the package from the compiled copy before any test module or conftest does: its submodules then come
    # from the package's own directory, whatever order pytest later gives sys.path (it puts the rootdir first).
    sys.path.insert(0, str(Path(COMPILED).resolve()))
    importlib.import_module("batchplane")

from batchplane.stack import layout  # noqa: E402  (after the compiled copy is first on sys.path)

if TYPE_CHECKING:
    from tests.support.crdcheck import CrdCatalog

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = (REPO_ROOT / ".." / "shared").resolve()

# Two kinds of stack file (batchplane/stack/layout.py). Tests that hold the project's own templates to their
# goldens, pictures, README table and pinned facts iterate TEMPLATE_NAMES and open template_path(name); the generic
# checks (tests/stack/test_environments.py: validate, policy pack, offline preview, CRD check) run on every
# ENVIRONMENT_NAMES too, so a team's environment is tested and never fails a template test by being there.
#: The shipped templates: templates/Pulumi.<name>.yaml.
TEMPLATES_DIR = REPO_ROOT / layout.TEMPLATES_DIR
TEMPLATE_NAMES = layout.template_names(REPO_ROOT)
#: The team's environments (Pulumi's stackConfigDir): stacks/Pulumi.<name>.yaml.
STACKS_DIR = REPO_ROOT / layout.STACKS_DIR
ENVIRONMENT_NAMES = layout.environment_names(REPO_ROOT)


def template_path(name: str) -> Path:
    """The shipped template ``templates/Pulumi.<name>.yaml`` (the one helper tests use to open a template)."""
    return layout.template_path(REPO_ROOT, name)


def environment_path(name: str) -> Path:
    """The team's environment ``stacks/Pulumi.<name>.yaml``."""
    return layout.environment_path(REPO_ROOT, name)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared/ reference data beside the repository (CI clones the repo with shared/ beside it)."""
    assert SHARED.is_dir(), f"shared/ reference data not found at {SHARED}"
    return SHARED


def pytest_sessionstart(session: pytest.Session) -> None:
    """In a compiled run, refuse to pass on pure Python: every hot-path module must be the extension module."""
    if not COMPILED:
        return
    from batchplane.webhook.compile import MODULES

    for path in MODULES:
        module = importlib.import_module(path[: -len(".py")].replace("/", "."))
        origin = str(getattr(module, "__file__", ""))
        if not origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            raise pytest.UsageError(f"BATCHPLANE_COMPILED is set but {module.__name__} is {origin}")


@pytest.fixture(scope="session")
def catalog() -> CrdCatalog:
    """The CRD catalog of ``../shared/crds`` (:func:`tests.support.stacks.shared_crd_catalog`), loaded once."""
    from tests.support.stacks import shared_crd_catalog

    return shared_crd_catalog()

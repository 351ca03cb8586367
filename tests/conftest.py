"""Shared test fixtures: repository paths and the shared/ reference data."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = (REPO_ROOT / ".." / "shared").resolve()
STACKS_DIR = REPO_ROOT / "stacks"
TEMPLATE_NAMES = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in STACKS_DIR.glob("Pulumi.*.yaml"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared/ reference data beside the repository (CI clones the repo with shared/ beside it)."""
    assert SHARED.is_dir(), f"shared/ reference data not found at {SHARED}"
    return SHARED

"""Fixtures of the observability tests: Debian's ``prometheus`` package binaries (required in CI)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def _binary(name: str) -> Path:
    """The binary ``name`` from Debian's ``prometheus`` package: a failure when ``CI=true`` and it is missing (CI
    installs it: .ci/run, ``make prometheus``), a skip naming the package elsewhere."""
    found = shutil.which(name)
    if found is None:
        message = f"{name} is missing: install Debian's prometheus package (make prometheus)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return Path(found)


@pytest.fixture(scope="session")
def promtool() -> Path:
    return _binary("promtool")


@pytest.fixture(scope="session")
def prometheus_binary() -> Path:
    return _binary("prometheus")

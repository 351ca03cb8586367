"""The pre-#15 entry point keeps working: ``from batchplane.config import load_stack`` (and its siblings) resolve
to :mod:`batchplane.stack`, lazily, so importing ``batchplane.config`` alone still loads no platform or stack code."""

from __future__ import annotations

import subprocess
import sys

import pytest

import batchplane.config
import batchplane.stack


@pytest.mark.parametrize("name", batchplane.config.__all__)
def test_the_old_names_are_the_new_objects(name: str) -> None:
    assert getattr(batchplane.config, name) is getattr(batchplane.stack, name)


def test_importing_the_config_package_loads_no_stack_or_platform_module() -> None:
    code = (
        "import sys, batchplane.config.kueue;"
        "print(sorted(m for m in sys.modules if m.startswith(('batchplane.stack', 'batchplane.targets'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        batchplane.config.no_such_name  # noqa: B018

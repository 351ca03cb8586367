"""YAML for large test inputs (the upstream CRDs are up to 1.4 MB): PyYAML's libyaml-based safe loader when PyYAML
was built with it, else the pure-Python one. Same safe subset either way; the C loader parses a KubeRay CRD in a
fraction of a second instead of seconds (docs/performance.md, the test suite)."""

from __future__ import annotations

from typing import Any, Final

import yaml

LOADER: Final[type[yaml.SafeLoader]] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)``, with :data:`LOADER`."""
    return yaml.load(text, Loader=LOADER)


def safe_load_all(text: str) -> list[Any]:
    """``list(yaml.safe_load_all(text))``, with :data:`LOADER`."""
    return list(yaml.load_all(text, Loader=LOADER))

"""The package version (pyproject.toml ``version``): one module every layer may import without loading the
public surface in ``batchplane/__init__.py``."""

__version__ = "0.1.0"

"""Batchplane: a GPU batch platform as code.

The package holds everything that runs without Pulumi — the typed stack config, the Kueue object
builders, resource accounting, the quota webhook and the CLI. Importing it never imports Pulumi;
the Pulumi components live in the top-level ``components`` package and the program in ``__main__.py``.
"""

__version__ = "0.1.0"

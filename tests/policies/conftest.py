"""Test setup for the policy pack: make ``policies/batchplane_policies`` importable.

The Pulumi CLI runs the pack with ``policies/`` as its working directory and program path, so the
rules import as the top-level package ``batchplane_policies``; the tests import them the same way.
Builders of validator arguments live in :mod:`tests.policies.factories`.
"""

from __future__ import annotations

import sys
from pathlib import Path

PACK_DIR = Path(__file__).resolve().parents[2] / "policies"

if str(PACK_DIR) not in sys.path:
    sys.path.insert(0, str(PACK_DIR))

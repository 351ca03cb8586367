"""``python -m batchplane.frameworks [PATH]``: write the policy pack's generated framework module to PATH
(default: print it)."""

from __future__ import annotations

import sys
from pathlib import Path

from batchplane.frameworks.policy_pack import render

if len(sys.argv) > 1:
    Path(sys.argv[1]).write_text(render(), encoding="utf-8")
else:
    sys.stdout.write(render())

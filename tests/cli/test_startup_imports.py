"""`import batchplane.cli` and `batchplane --help` load no Pulumi SDK, Grafana SDK or stack loader (issue #37): each
command imports what it uses when it runs. Checked in a fresh interpreter through ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO_ROOT

#: Heavy modules no command may pay for before it runs: the Pulumi SDKs, the Grafana foundation SDK, stack loading.
FORBIDDEN = (
    "pulumi",
    "pulumi_kubernetes",
    "pulumi_gcp",
    "pulumi_policy",
    "grafana_foundation_sdk",
    "batchplane.stack.load",
    "kubernetes",
)

_HELP_PROBE = """
import json, sys
sys.argv = ["batchplane", "--help"]
from batchplane.cli import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write(json.dumps(sorted(sys.modules)))
"""


def _under(name: str, roots: tuple[str, ...]) -> bool:
    return any(name == root or name.startswith(root + ".") for root in roots)


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )


def test_importing_the_cli_loads_no_pulumi_grafana_sdk_or_stack_loader() -> None:
    done = _fresh("import sys, json, batchplane.cli; print(json.dumps(sorted(sys.modules)))")
    loaded: list[str] = json.loads(done.stdout)
    assert [m for m in loaded if _under(m, FORBIDDEN)] == []


def test_help_lists_every_command_and_loads_no_pulumi_grafana_sdk_or_stack_loader() -> None:
    done = _fresh(_HELP_PROBE)
    loaded: list[str] = json.loads(done.stderr)
    assert [m for m in loaded if _under(m, FORBIDDEN)] == []
    import typer.main

    from batchplane.cli import app

    commands = typer.main.get_group(app).commands
    assert len(commands) >= 15
    unlisted = [
        name
        for name, command in sorted(commands.items())
        if f" {name} " not in done.stdout or (command.help or "").split()[0] not in done.stdout
    ]
    assert unlisted == []

"""The webhook process loads only what it runs (issue #21): no stack loading, platform, component, Pulumi or
kubernetes client, measured on a fresh interpreter after importing the server and its command."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from tests.conftest import REPO_ROOT

#: What ``python -m batchplane.webhook serve`` may load of batchplane: its own modules, the accounting and quantity
#: parsing it decides with, the shared config types the policy document is made of, and the sentence generator its
#: denial messages lead with.
ALLOWED = (
    "batchplane._version",
    "batchplane.webhook",
    "batchplane.frameworks",  # the job-framework registry: pure data (its own import contract)
    "batchplane.accounting",
    "batchplane.quantity",
    "batchplane.errors",
    "batchplane.wellknown",
    "batchplane.config",
    "batchplane.config.base",
    "batchplane.config.names",
    "batchplane.config.kueue",
    "batchplane.config.webhook",
    "batchplane.explain",
    "batchplane.explain.sentences",
)
FORBIDDEN = (
    "batchplane.targets",
    "batchplane.stack",
    "batchplane.components",
    "batchplane.cli",
    "pulumi",
    "kubernetes",
)


def _loaded(*modules: str) -> list[str]:
    probe = f"import sys, json, {', '.join(modules)}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def _under(name: str, roots: tuple[str, ...]) -> bool:
    return any(name == root or name.startswith(root + ".") for root in roots)


def test_importing_the_server_loads_no_stack_platform_component_or_pulumi() -> None:
    loaded = _loaded("batchplane.webhook.server", "batchplane.webhook.command")
    assert [m for m in loaded if _under(m, FORBIDDEN)] == []
    ours = [m for m in loaded if _under(m, ("batchplane",))]
    assert [m for m in ours if m != "batchplane" and not _under(m, ALLOWED)] == []
    assert "batchplane.webhook.decisions" in ours and "batchplane.webhook.policy" in ours


def test_docs_state_how_many_batchplane_modules_the_server_loads() -> None:
    """docs/webhook.md gives the figure; `make docs` writes it (batchplane.docfigures), it is measured here again,
    never typed once and left to drift."""
    loaded = _loaded("batchplane.webhook.server", "batchplane.webhook.command")
    ours = [m for m in loaded if _under(m, ("batchplane",))]
    page = (REPO_ROOT / "docs" / "webhook.md").read_text(encoding="utf-8")
    stated = re.search(
        r"it loads <!-- generated: webhook-loaded-modules -->(\d+)<!-- /generated --> batchplane modules",
        page,
    )
    assert stated is not None, (
        "docs/webhook.md no longer states (as a generated figure) how many batchplane modules the server loads"
    )
    assert int(stated.group(1)) == len(ours), (
        f"docs/webhook.md says the server loads {stated.group(1)} batchplane modules, it loads {len(ours)}:"
        " run `make docs`"
    )


def test_rendering_the_policy_still_loads_the_stack() -> None:
    """The probe can fail: the rendering beside the component does load stack loading (and no Pulumi)."""
    loaded = _loaded(
        "batchplane.components.quota_webhook.policy", "batchplane.components.quota_webhook.manifests"
    )
    assert "batchplane.stack.load" in loaded
    assert [m for m in loaded if _under(m, ("pulumi", "pulumi_kubernetes", "kubernetes"))] == []

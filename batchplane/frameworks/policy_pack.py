"""The policy pack's copy of the registry: ``policies/batchplane_policies/frameworks.py``, generated.

The policy pack runs in its own virtualenv, built by the Pulumi CLI from ``policies/requirements.txt``; it never
imports the ``batchplane`` package. So its framework tables are generated from :mod:`batchplane.frameworks` into a
plain module and a test keeps the file equal to :func:`render` (regenerate with
``python -m batchplane.frameworks policies/batchplane_policies/frameworks.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

from batchplane.frameworks import FRAMEWORKS, KUEUE_INTEGRATIONS, KUEUE_TAG

POLICY_PACK_MODULE = Path("policies/batchplane_policies/frameworks.py")
"""Where the generated module lives, relative to the repository root."""


def _tuple(names: list[str]) -> str:
    body = "".join(f"    {json.dumps(name)},\n" for name in names)
    return f"(\n{body})"


def render() -> str:
    """The generated module's source text: the pack's constants ``KUEUE_INTEGRATIONS``,
    ``KUEUE_CHART_DEFAULT_FRAMEWORKS``, ``MULTIKUEUE_DISPATCHED`` and ``RHBOK_NAME_OF_INTEGRATION``."""
    chart = [f.name for f in FRAMEWORKS if f.kueue_chart_default]
    dispatched = [f.name for f in FRAMEWORKS if f.multikueue]
    rhbok = "".join(
        f"    {json.dumps(f.name)}: {json.dumps(f.rhbok_name)},\n" for f in FRAMEWORKS if f.rhbok_name
    )
    return (
        f'"""Kueue job frameworks (Kueue {KUEUE_TAG}) as the policy pack needs them.\n\n'
        "Generated from the batchplane.frameworks registry by\n"
        f"``python -m batchplane.frameworks {POLICY_PACK_MODULE}``; do not edit (a test keeps it equal).\n"
        '"""\n\n'
        f"KUEUE_INTEGRATIONS = {_tuple(list(KUEUE_INTEGRATIONS))}\n"
        '"""Every ``integrations.frameworks`` name Kueue accepts."""\n\n'
        f"KUEUE_CHART_DEFAULT_FRAMEWORKS = {_tuple(chart)}\n"
        '"""``integrations.frameworks`` of the Kueue chart\'s default Configuration (``charts/kueue/values.yaml``)."""\n\n'
        f"MULTIKUEUE_DISPATCHED = {_tuple(dispatched)}\n"
        '"""Integrations MultiKueue dispatches to workers; the others never leave the manager."""\n\n'
        f"RHBOK_NAME_OF_INTEGRATION = {{\n{rhbok}}}\n"
        '"""Kueue integration → its name in the Red Hat build of Kueue\'s ``Kueue`` CR."""\n'
    )

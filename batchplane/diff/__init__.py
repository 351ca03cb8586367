"""``batchplane diff``: what a stack change means — quotas, pools, capacity margin, GPU cost at maximum, objects
replaced and webhook decisions that change (docs/diff.md).

:func:`compare` joins the parts: :mod:`~batchplane.diff.model` (one stack's summary), :mod:`~batchplane.diff.differ`
(before → after), :mod:`~batchplane.diff.objects` (offline program resources by URN),
:mod:`~batchplane.diff.decisions` (webhook decisions on generated shapes) and :mod:`~batchplane.diff.render`
(JSON, Markdown, terminal).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from batchplane.diff.decisions import decision_changes
from batchplane.diff.differ import COST_LABEL, StackDiff, diff_summaries
from batchplane.diff.model import StackSummary, summarize
from batchplane.diff.objects import diff_objects
from batchplane.pricing import PriceTable, load_price_table
from batchplane.stack import Stack


def empty_summary(name: str, environment: str = "dev") -> StackSummary:
    """The summary of a stack that does not exist (a stack file absent at the base ref: everything is added)."""
    return StackSummary(name=name, environment=environment, quotas={}, pools={}, team_costs={})


def compare(
    base: Stack | None,
    head: Stack,
    *,
    prices: PriceTable | None = None,
    base_resources: Sequence[Any] | None = None,
    head_resources: Sequence[Any] | None = None,
    decisions: bool = True,
) -> StackDiff:
    """Diff two validated stacks (``base`` None: the stack is new).

    Args:
        base: the stack before the change, or None when it did not exist.
        head: the stack after the change.
        prices: the price table; defaults to the shipped one.
        base_resources, head_resources: the offline program's recorded resources of each side; when both are
            given the diff lists objects by URN (``objects``), else ``objects`` stays None.
        decisions: judge generated workload shapes with both sides' webhook policy. Defaults to true.
    """
    table = prices if prices is not None else load_price_table()
    head_summary = summarize(head, table)
    base_summary = (
        summarize(base, table) if base is not None else empty_summary(head.name, head.config.environment)
    )
    diff = diff_summaries(base_summary, head_summary)
    if base_resources is not None and head_resources is not None:
        diff.objects = diff_objects(base_resources, head_resources)
    if decisions and base is not None:
        diff.decisions = decision_changes(base, head, base_summary, head_summary)
    return diff


__all__ = [
    "COST_LABEL",
    "StackDiff",
    "StackSummary",
    "compare",
    "diff_summaries",
    "empty_summary",
    "summarize",
]

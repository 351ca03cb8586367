"""Three views of a :class:`~batchplane.diff.differ.StackDiff`: JSON (stable, versioned), Markdown (a PR comment)
and a terminal table (rich).

JSON schema ``batchplane.dev/diff/v1`` (docs/diff.md documents every field)::

    {"schema": "batchplane.dev/diff/v1", "base": str, "head": str, "empty": bool,
     "quotas":   [{"kind", "name", "flavor", "resource", "unit", "field", "status", "before", "after", "delta", "path"}],
     "pools":    [{"pool", "kind", "field", "status", "before", "after"}],
     "capacity": [{"pool", "resource", "unit", "capacity": {"before", "after"}, "quota": {...}, "margin": {...},
                   "unbacked": bool}],
     "costs":    {"label": "list price, maximum, not a bill", "currency": "USD", "per": "hour",
                  "rows": [{"scope": "team"|"pool"|"stack", "name", "pool", "gpus": {"before","after","delta"},
                            "usdPerHour": {"before","after","delta"},
                            "priced": {"before": bool, "after": bool}}],
                  "prices": [{"provider","machineType","region","model","usdPerHour","source","retrieved",
                              "upperBoundFor": null|"flex-start",
                              "staleAgainst": null|{"url","commit","generated"}}]},
     "objects":  null | [{"urn", "type", "status", "fields": [...], "replace": [...], "crds": [...],
                   "crdObjects": int}],
     "decisions": null | [{"shape", "namespace", "queue", "before": {"allowed","reason"}, "after": {...}, "message", "why"}]}

Amounts are JSON numbers in the row's ``unit`` (cores, GiB, GPUs, count); ``null`` means not set (a limit) or absent
on that side (``status`` says which). USD figures are numbers rounded to 4 decimals; ``null`` is "no price".
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from batchplane.diff.differ import COST_LABEL, CostRow, StackDiff
from batchplane.diff.objects import crd_losses

SCHEMA = "batchplane.dev/diff/v1"
COMMENT_MARKER = "<!-- batchplane-diff -->"
"""First line of the Markdown comment; the workflow finds its own comment by it."""


def _num(value: Decimal | None, places: int = 6) -> int | float | None:
    if value is None:
        return None
    rounded = round(value, places)
    if rounded == rounded.to_integral_value():
        return int(rounded)
    return float(rounded)


def _str(value: object) -> Any:
    return _num(value) if isinstance(value, Decimal) else value


def _usd(value: Decimal | None) -> int | float | None:
    return _num(value, 4)


def _pair(before: Decimal | None, after: Decimal | None, places: int = 6) -> dict[str, Any]:
    return {"before": _num(before, places), "after": _num(after, places)}


def to_json_data(diff: StackDiff) -> dict[str, Any]:
    """The diff as the documented JSON structure (module docstring)."""
    return {
        "schema": SCHEMA,
        "base": diff.base,
        "head": diff.head,
        "empty": diff.empty,
        "quotas": [
            {
                "kind": q.kind,
                "name": q.owner,
                "flavor": q.flavor,
                "resource": q.resource,
                "unit": q.unit,
                "field": q.field,
                "status": q.status,
                "before": _num(q.before),
                "after": _num(q.after),
                "delta": _num(q.delta),
                "path": q.path,
            }
            for q in diff.quotas
        ],
        "pools": [
            {
                "pool": p.pool,
                "kind": p.kind,
                "field": p.field,
                "status": p.status,
                "before": _str(p.before),
                "after": _str(p.after),
            }
            for p in diff.pools
        ],
        "capacity": [
            {
                "pool": c.pool,
                "resource": c.resource,
                "unit": c.unit,
                "capacity": _pair(*c.capacity),
                "quota": _pair(*c.quota),
                "margin": _pair(*c.margin),
                "unbacked": c.unbacked,
            }
            for c in diff.capacity
        ],
        "costs": {
            "label": COST_LABEL,
            "currency": "USD",
            "per": "hour",
            "rows": [
                {
                    "scope": c.scope,
                    "name": c.name,
                    "pool": c.pool,
                    "gpus": {**_pair(*c.gpus), "delta": _num(c.delta_gpus)},
                    "usdPerHour": {**_pair(*c.usd, places=4), "delta": _usd(c.delta_usd)},
                    "priced": {"before": c.priced[0], "after": c.priced[1]},
                }
                for c in diff.costs
            ],
            "prices": diff.prices,
        },
        "objects": None
        if diff.objects is None
        else [
            {
                "urn": o.urn,
                "type": o.type,
                "status": o.status,
                "fields": list(o.fields),
                "replace": list(o.replace),
                "crds": list(o.crds),
                "crdObjects": o.crd_objects,
            }
            for o in diff.objects
        ],
        "decisions": None
        if diff.decisions is None
        else [
            {
                "shape": d.shape,
                "namespace": d.namespace,
                "queue": d.queue,
                "before": {"allowed": d.before[0], "reason": d.before[1]},
                "after": {"allowed": d.after[0], "reason": d.after[1]},
                "message": d.message,
                "why": d.why,
            }
            for d in diff.decisions
        ],
    }


def to_json(diff: StackDiff) -> str:
    """:func:`to_json_data` as indented JSON text."""
    return json.dumps(to_json_data(diff), indent=2, sort_keys=False)


# --- text cells ----------------------------------------------------------------------------------------------


def amount(value: Decimal | None, unit: str = "", unset: str = "unset") -> str:
    """``8 GPUs``, ``1800 GiB``, ``2.5 cores``; ``unset`` for None."""
    if value is None:
        return unset
    rounded = round(value, 3)
    text = f"{rounded.normalize():f}" if rounded != 0 else "0"
    return f"{text} {unit}".strip()


def signed(value: Decimal | None, unit: str = "") -> str:
    """``+8 GPUs`` / ``-4 cores`` / ``±0``."""
    if value is None:
        return "n/a"
    if value == 0:
        return "±0"
    sign = "+" if value > 0 else "-"
    return f"{sign}{amount(abs(value), unit)}"


def usd(value: Decimal | None) -> str:
    """``$87.83/h`` or ``no price``."""
    return "no price" if value is None else f"${value:,.2f}/h"


def usd_delta(value: Decimal | None) -> str:
    """``+$87.83/h``, ``-$1.01/h``, ``±$0.00/h`` or ``no price``."""
    if value is None:
        return "no price"
    if value == 0:
        return "±$0.00/h"
    sign = "+" if value > 0 else "-"
    return f"{sign}${abs(value):,.2f}/h"


def _side(row: CostRow, index: int) -> str:
    gpus, money = row.gpus[index], row.usd[index]
    if gpus is None:
        return "—"
    text = f"{amount(gpus, 'GPUs')} · {usd(money) if money is not None or not gpus else 'no price'}"
    if row.scope == "stack" and money is not None and not row.priced[index]:
        text += " (pools without a price left out)"
    return text


def _delta_cell(row: CostRow) -> str:
    text = usd_delta(row.delta_usd)
    if row.scope == "stack" and row.delta_usd is not None and not all(row.priced):
        text += " (priced pools only)"
    return text


def _before_after(before: object, after: object, status: str, unit: str = "") -> tuple[str, str]:
    def cell(value: object) -> str:
        if isinstance(value, Decimal) or value is None:
            return amount(value, unit)
        return str(value)

    b = "—" if status == "added" else cell(before)
    a = "—" if status == "removed" else cell(after)
    return b, a


def sections(diff: StackDiff) -> list[tuple[str, list[str], list[list[str]]]]:
    """The diff as (title, header, rows) tables, shared by the Markdown and terminal views."""
    out: list[tuple[str, list[str], list[list[str]]]] = []
    if diff.quotas:
        rows = []
        for q in diff.quotas:
            b, a = _before_after(q.before, q.after, q.status, q.unit)
            rows.append([f"{q.kind} {q.owner}", q.flavor, q.resource, q.field, b, a, signed(q.delta, q.unit)])
        out.append(("Quotas", ["queue", "flavor", "resource", "field", "before", "after", "Δ"], rows))
    if diff.pools:
        rows = []
        for p in diff.pools:
            b, a = _before_after(p.before, p.after, p.status)
            rows.append([f"{p.kind} {p.pool}", p.field, b, a])
        out.append(("Pools", ["pool", "field", "before", "after"], rows))
    if diff.capacity:
        rows = []
        for c in diff.capacity:
            flag = "⚠ quota the pool can never back" if c.unbacked else ""
            rows.append(
                [
                    c.pool,
                    c.resource,
                    f"{amount(c.capacity[0], c.unit, '—')} → {amount(c.capacity[1], c.unit, '—')}",
                    f"{amount(c.quota[0], c.unit, '—')} → {amount(c.quota[1], c.unit, '—')}",
                    f"{amount(c.margin[0], c.unit, '—')} → {amount(c.margin[1], c.unit, '—')}",
                    flag,
                ]
            )
        out.append(
            (
                "Capacity (pool at max nodes vs nominal quota)",
                ["pool", "resource", "capacity", "quota", "margin", ""],
                rows,
            )
        )
    if diff.costs:
        rows = []
        for cost in diff.costs:
            who = {
                "team": f"team {cost.name} on {cost.pool}",
                "pool": f"pool {cost.name}",
                "stack": f"stack {cost.name}",
            }[cost.scope]
            rows.append(
                [
                    who,
                    _side(cost, 0),
                    _side(cost, 1),
                    signed(cost.delta_gpus, "GPUs"),
                    _delta_cell(cost),
                ]
            )
        out.append(
            (f"GPU cost at maximum ({COST_LABEL})", ["scope", "before", "after", "Δ GPUs", "Δ $/h"], rows)
        )
    if diff.objects:
        rows = [
            [o.status + (" (replace)" if o.replace else ""), o.urn, ", ".join(o.replace or o.fields)]
            for o in diff.objects
        ]
        out.append(("Objects (offline program, by URN)", ["change", "urn", "fields"], rows))
    if diff.decisions:
        rows = [
            [
                d.shape,
                f"{d.namespace}/{d.queue}",
                ("allowed" if d.before[0] else "denied") + f" ({d.before[1]})",
                ("allowed" if d.after[0] else "denied") + f" ({d.after[1]})",
                d.why,
            ]
            for d in diff.decisions
        ]
        out.append(
            ("Webhook decisions that change", ["workload", "namespace/queue", "before", "after", "why"], rows)
        )
    return out


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(diff: StackDiff, title: str | None = None) -> str:
    """A Markdown PR comment: a heading, one table per non-empty section, the price sources."""
    lines = [COMMENT_MARKER, f"### {title or f'batchplane diff: {diff.base} → {diff.head}'}", ""]
    if diff.empty:
        lines.append("No change to quotas, pools, capacity, GPU cost, objects or webhook decisions.")
        return "\n".join(lines) + "\n"
    if diff.unbacked:
        names = ", ".join(f"`{c.pool}` {c.resource}" for c in diff.unbacked)
        lines += [f"> **Warning**: quota that pools can no longer back: {names}.", ""]
    for loss in crd_losses(diff.objects or []):
        lines += ["> [!CAUTION]", f"> **CRDs deleted**: {_md_cell(loss)}.", ""]
    for heading, header, rows in sections(diff):
        lines += [f"#### {heading}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
        lines.append("")
    if diff.prices:
        lines.append("<details><summary>Prices used</summary>")
        lines.append("")
        for p in diff.prices:
            lines.append(
                f"- {p['machineType']} {p['region']} {p['model']}: ${p['usdPerHour']}/h{_price_caveats(p)} — "
                f"[source]({p['source']}), retrieved {p['retrieved']}"
            )
        lines += ["", "</details>", ""]
    lines.append(f"_Costs: {COST_LABEL}. See docs/diff.md._")
    return "\n".join(lines) + "\n"


def print_table(diff: StackDiff, console: Any = None) -> None:
    """Print the diff as rich tables (one per section)."""
    from rich.console import Console
    from rich.table import Table

    out = console or Console()
    if diff.empty:
        out.print(f"batchplane diff {diff.base} → {diff.head}: no change")
        return
    for loss in crd_losses(diff.objects or []):
        out.print(f"CRDs deleted: {loss}.", style="bold red", markup=False)
    for heading, header, rows in sections(diff):
        table = Table(*header, title=heading, title_justify="left")
        for row in rows:
            table.add_row(*row)
        out.print(table)
    for p in diff.prices:
        out.print(
            f"price: {p['machineType']} {p['region']} {p['model']} ${p['usdPerHour']}/h{_price_caveats(p)} "
            f"({p['source']}, {p['retrieved']})",
            markup=False,
        )


def _price_caveats(price: dict[str, Any]) -> str:
    """What a price row used in the diff is not: the rate of the pool's own model, or as new as the dataset."""
    out = ""
    if price.get("upperBoundFor"):
        out += (
            f", the upper bound of {price['upperBoundFor']} (billed at discounted SKUs the price table has no "
            "rate for)"
        )
    stale = price.get("staleAgainst")
    if stale:
        out += (
            f", ⚠ older than the price dataset (commit {stale['commit'][:7]}, generated {stale['generated']}): "
            "refresh the table"
        )
    return out

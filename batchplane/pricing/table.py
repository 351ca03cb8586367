"""The price table: rows of (provider, machine type, region, provisioning model) → USD per node-hour, each sourced.

File format (``batchplane/data/prices/<provider>.csv``, ``#`` lines are comments): a header
``machine_type,region,model,usd_per_hour,source,retrieved,note`` and one row per price. ``model`` is one of
:data:`PRICE_MODELS`; ``usd_per_hour`` a decimal; ``source`` an ``https://`` URL; ``retrieved`` an ISO date
(``YYYY-MM-DD``, the day the figure was read at the source). Every field but ``note`` is required; a row without a
source or a date is an error, so the table never holds an unsourced figure.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path
from typing import Literal

from batchplane.errors import BatchplaneError

PriceModel = Literal["on-demand", "spot", "flex-start"]
"""How a node is bought: ``on-demand`` (list price), ``spot`` (Spot VMs / Spot Instances, preemptible, the price
of the day) or ``flex-start`` (GKE Dynamic Workload Scheduler flex-start and queued provisioning, its own
discounted SKUs)."""

PRICE_MODELS: tuple[PriceModel, ...] = ("on-demand", "spot", "flex-start")
PROVIDERS = ("gcp", "aws")
"""Price files shipped: ``gcp.csv`` (Compute Engine machine types), ``aws.csv`` (EC2 instance types)."""

_COLUMNS = ("machine_type", "region", "model", "usd_per_hour", "source", "retrieved", "note")


class PriceTableError(BatchplaneError):
    """A price file is malformed: a missing column, an unknown model, a bad number, URL or date (names file
    and line)."""


@dataclass(frozen=True)
class PriceRow:
    """One list price.

    Attributes:
        provider: ``gcp`` or ``aws``.
        machine_type: Compute Engine machine type (``a3-highgpu-8g``) or EC2 instance type (``g5.2xlarge``).
        region: ``us-central1``, ``us-east-1`` ...
        model: the provisioning model (:data:`PriceModel`).
        usd_per_hour: USD per node-hour.
        source: the URL the figure was read from.
        retrieved: the day it was read there.
        note: how the figure was obtained, when not verbatim. Defaults to empty.
    """

    provider: str
    machine_type: str
    region: str
    model: PriceModel
    usd_per_hour: Decimal
    source: str
    retrieved: date
    note: str = ""


@dataclass(frozen=True)
class PriceTable:
    """Every price row, looked up by (provider, machine type, region, model)."""

    rows: tuple[PriceRow, ...]

    def lookup(
        self, provider: str, machine_type: str, region: str | None, model: PriceModel
    ) -> PriceRow | None:
        """The row for exactly this machine type, region and model, or None (no price: never estimated)."""
        if region is None:
            return None
        for row in self.rows:
            if (row.provider, row.machine_type, row.region, row.model) == (
                provider,
                machine_type,
                region,
                model,
            ):
                return row
        return None


def parse_price_file(text: str, provider: str, source: str) -> list[PriceRow]:
    """Parse one price file's text.

    Raises:
        PriceTableError: a malformed row (``source:line: what is wrong``); every problem listed.
    """
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#") and line.strip()]
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    if tuple(reader.fieldnames or ()) != _COLUMNS:
        raise PriceTableError(f"{source}: the header must be {','.join(_COLUMNS)}, got {reader.fieldnames}")
    rows: list[PriceRow] = []
    problems: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    for number, record in enumerate(reader, start=2):
        where = f"{source}: row {number - 1}"
        row, why = _row(provider, record)
        if row is None:
            problems.append(f"{where}: {why}")
            continue
        key = (row.machine_type, row.region, row.model)
        if key in seen:
            problems.append(f"{where}: a second price for {' '.join(key)}")
            continue
        seen.add(key)
        rows.append(row)
    if problems:
        raise PriceTableError("; ".join(problems))
    return rows


def _row(provider: str, record: Mapping[str, str | None]) -> tuple[PriceRow | None, str]:
    values = {k: (record.get(k) or "").strip() for k in _COLUMNS}
    missing = [k for k in _COLUMNS[:-1] if not values[k]]
    if missing:
        return None, f"missing {', '.join(missing)}"
    if values["model"] not in PRICE_MODELS:
        return None, f"model {values['model']!r} is not one of {', '.join(PRICE_MODELS)}"
    try:
        usd = Decimal(values["usd_per_hour"])
    except InvalidOperation:
        return None, f"usd_per_hour {values['usd_per_hour']!r} is not a number"
    if not usd.is_finite() or usd < 0:
        return None, f"usd_per_hour {values['usd_per_hour']!r} must be a non-negative number"
    if not values["source"].startswith("https://"):
        return None, f"source {values['source']!r} must be an https:// URL"
    try:
        retrieved = date.fromisoformat(values["retrieved"])
    except ValueError:
        return None, f"retrieved {values['retrieved']!r} is not a YYYY-MM-DD date"
    row = PriceRow(
        provider=provider,
        machine_type=values["machine_type"],
        region=values["region"],
        model=values["model"],  # checked against PRICE_MODELS above
        usd_per_hour=usd,
        source=values["source"],
        retrieved=retrieved,
        note=values["note"],
    )
    return row, ""


def load_price_table(paths: Iterable[Path] | None = None) -> PriceTable:
    """The shipped price table (``batchplane/data/prices/{gcp,aws}.csv``), or the given files (the provider is
    each file's stem).

    Raises:
        PriceTableError: a malformed file.
    """
    rows: list[PriceRow] = []
    if paths is None:
        folder = resources.files("batchplane").joinpath("data", "prices")
        for provider in PROVIDERS:
            text = folder.joinpath(f"{provider}.csv").read_text(encoding="utf-8")
            rows += parse_price_file(text, provider, f"batchplane/data/prices/{provider}.csv")
    else:
        for path in paths:
            rows += parse_price_file(path.read_text(encoding="utf-8"), path.stem, str(path))
    return PriceTable(tuple(rows))

"""The price table: rows of (provider, machine type, region, provisioning model) → USD per node-hour, each sourced.

File format (``batchplane/data/prices/<provider>.csv``, ``#`` lines are comments): a header
``machine_type,region,model,usd_per_hour,source,retrieved,note`` and one row per price. ``model`` is one of
:data:`PRICE_MODELS`; ``usd_per_hour`` a decimal; ``source`` an ``https://`` URL; ``retrieved`` an ISO date
(``YYYY-MM-DD``, the day the figure was read at the source, or the day the dataset it comes from was generated).
Every field but ``note`` is required; a row without a source or a date is an error, so the table never holds an
unsourced figure.

A file refreshed from a maintained dataset (:mod:`batchplane.pricing.refresh`) names it in one comment line,
``# dataset: url=<URL of the file at its commit> commit=<40 hex> generated=<YYYY-MM-DD>``; a row of that provider
read before the dataset was generated, or from another commit of the same dataset, is *stale*
(:meth:`PriceTable.stale`): ``batchplane diff`` flags it.
"""

from __future__ import annotations

import csv
import io
import re
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


_DATASET_LINE = re.compile(
    r"^#\s*dataset:\s+url=(?P<url>https://\S+)\s+commit=(?P<commit>[0-9a-f]{40})\s+generated=(?P<generated>\S+)\s*$"
)


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
class Dataset:
    """The maintained dataset a provider's price file was last refreshed from.

    Attributes:
        url: the dataset file at its commit (``https://github.com/<owner>/<repo>/blob/<commit>/<path>``).
        commit: the 40-hex commit of that file.
        generated: the day the dataset was generated from the provider's catalog (its own ``generated`` field).
    """

    url: str
    commit: str
    generated: date

    @property
    def repository(self) -> str:
        """``https://github.com/<owner>/<repo>``: the part of :attr:`url` every commit of the dataset shares."""
        return self.url.split("/blob/", 1)[0]


@dataclass(frozen=True)
class PriceTable:
    """Every price row, looked up by (provider, machine type, region, model), and the dataset each provider's file
    was refreshed from (absent: no dataset, nothing is stale)."""

    rows: tuple[PriceRow, ...]
    datasets: tuple[tuple[str, Dataset], ...] = ()

    def dataset(self, provider: str) -> Dataset | None:
        """The dataset ``provider``'s file was refreshed from, or None."""
        return dict(self.datasets).get(provider)

    def stale(self, row: PriceRow) -> Dataset | None:
        """The dataset ``row`` is older than, or None: a row is stale when its provider's file names a dataset and
        the row was read before that dataset was generated, or comes from another commit of the same dataset."""
        dataset = self.dataset(row.provider)
        if dataset is None:
            return None
        other_commit = row.source.startswith(dataset.repository + "/") and dataset.commit not in row.source
        return dataset if row.retrieved < dataset.generated or other_commit else None

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


def parse_dataset_line(text: str, source: str) -> Dataset | None:
    """The ``# dataset:`` line of a price file's text, or None when it has none.

    Raises:
        PriceTableError: a malformed dataset line, or more than one.
    """
    found: list[Dataset] = []
    for line in text.splitlines():
        if not re.match(r"^#\s*dataset:", line):
            continue
        match = _DATASET_LINE.match(line)
        if match is None:
            raise PriceTableError(
                f"{source}: the dataset line must read '# dataset: url=https://... commit=<40 hex> "
                f"generated=YYYY-MM-DD', got {line!r}"
            )
        try:
            generated = date.fromisoformat(match["generated"])
        except ValueError:
            raise PriceTableError(
                f"{source}: dataset generated {match['generated']!r} is not a YYYY-MM-DD date"
            ) from None
        if match["commit"] not in match["url"]:
            raise PriceTableError(f"{source}: the dataset url must name its commit {match['commit']}")
        found.append(Dataset(url=match["url"], commit=match["commit"], generated=generated))
    if len(found) > 1:
        raise PriceTableError(f"{source}: more than one dataset line")
    return found[0] if found else None


def load_price_table(paths: Iterable[Path] | None = None) -> PriceTable:
    """The shipped price table (``batchplane/data/prices/{gcp,aws}.csv``), or the given files (the provider is
    each file's stem).

    Raises:
        PriceTableError: a malformed file.
    """
    rows: list[PriceRow] = []
    datasets: list[tuple[str, Dataset]] = []
    files: list[tuple[str, str, str]] = []
    if paths is None:
        folder = resources.files("batchplane").joinpath("data", "prices")
        for provider in PROVIDERS:
            text = folder.joinpath(f"{provider}.csv").read_text(encoding="utf-8")
            files.append((provider, text, f"batchplane/data/prices/{provider}.csv"))
    else:
        files = [(path.stem, path.read_text(encoding="utf-8"), str(path)) for path in paths]
    for provider, text, source in files:
        rows += parse_price_file(text, provider, source)
        dataset = parse_dataset_line(text, source)
        if dataset is not None:
            datasets.append((provider, dataset))
    return PriceTable(tuple(rows), tuple(datasets))

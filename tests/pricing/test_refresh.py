"""`python -m batchplane.pricing.refresh`: the GCP price file regenerated from a pricing.yml (a synthetic one here,
in the dataset's format), every row citing the dataset's commit and generated date; hand rows kept; a row older than
the dataset flagged by the table and in the diff."""

from __future__ import annotations

import dataclasses
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from batchplane.diff import compare
from batchplane.diff.render import to_json_data, to_markdown
from batchplane.pricing import load_price_table
from batchplane.pricing.refresh import (
    DATASET_REPOSITORY,
    RefreshError,
    dataset_of,
    dataset_rows,
    main,
    read_dataset,
    refresh,
)
from batchplane.stack import load_stack_file
from tests.conftest import TEMPLATES_DIR
from tests.diff.helpers import prod_dws_with_team_a_h100, template

FIXTURE = Path(__file__).parent / "fixtures" / "pricing.yml"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
URL = f"{DATASET_REPOSITORY}/blob/{COMMIT}/pricing.yml"
HEADER = "machine_type,region,model,usd_per_hour,source,retrieved,note\n"


def test_the_dataset_is_dated_by_its_timestamp_and_cited_at_its_commit() -> None:
    dataset = dataset_of(read_dataset(str(FIXTURE)), COMMIT)
    assert (dataset.url, dataset.commit, dataset.generated) == (URL, COMMIT, date(2026, 3, 1))


def test_hour_becomes_on_demand_and_hour_spot_spot_for_each_wanted_machine_and_region() -> None:
    doc = read_dataset(str(FIXTURE))
    rows = dataset_rows(
        doc, dataset_of(doc, COMMIT), [("g2-standard-4", "us-central1"), ("g2-standard-4", "us-east4")]
    )
    assert [(r.region, r.model, r.usd_per_hour) for r in rows] == [
        ("us-central1", "on-demand", Decimal("1.25")),
        ("us-central1", "spot", Decimal("0.5")),
        ("us-east4", "on-demand", Decimal("1.5")),  # no hour_spot there: no Spot row, nothing guessed
    ]
    assert {(r.source, r.retrieved) for r in rows} == {(URL, date(2026, 3, 1))}
    assert rows[0].note == "compute.instance.g2-standard-4.cost.us-central1.hour (1 x l4 + 4 vCPU + 16 GiB)"


def test_a_machine_or_region_the_dataset_does_not_price_is_an_error_naming_every_one() -> None:
    doc = read_dataset(str(FIXTURE))
    wanted = [
        ("g2-standard-4", "europe-west4"),
        ("g2-standard-96", "us-central1"),
        ("e2-standard-4", "us-central1"),
    ]
    with pytest.raises(RefreshError) as raised:
        dataset_rows(doc, dataset_of(doc, COMMIT), wanted)
    assert str(raised.value) == (
        f"the dataset at {COMMIT} has no on-demand price for: g2-standard-4 in europe-west4; "
        "g2-standard-96 in us-central1"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [("about: {}\n", "no `compute.instance`"), ("- 1\n", "no `about`")],
)
def test_a_file_that_is_not_a_pricing_yml_is_refused(tmp_path: Path, text: str, problem: str) -> None:
    (tmp_path / "p.yml").write_text(text)
    with pytest.raises(RefreshError, match=problem):
        read_dataset(str(tmp_path / "p.yml"))


def test_a_commit_that_is_not_40_hex_is_refused() -> None:
    with pytest.raises(RefreshError, match="not a 40-hex"):
        dataset_of(read_dataset(str(FIXTURE)), "fd66b26")


def test_refresh_prices_the_stacks_pools_replaces_old_dataset_rows_and_keeps_hand_rows(
    tmp_path: Path,
) -> None:
    old_commit = "f" * 40
    current = (
        HEADER
        + f"a3-highgpu-8g,us-central1,on-demand,1,{DATASET_REPOSITORY}/blob/{old_commit}/pricing.yml,2025-01-01,\n"
        + "a3-highgpu-8g,us-central1,flex-start,7,https://x.example/bill,2026-06-01,a hand row\n"
    )
    text = refresh(current, read_dataset(str(FIXTURE)), COMMIT, [TEMPLATES_DIR / "Pulumi.gke-dev.yaml"])
    (tmp_path / "gcp.csv").write_text(text)
    table = load_price_table([tmp_path / "gcp.csv"])
    keys = {(r.machine_type, r.region, r.model): r for r in table.rows}
    assert set(keys) == {
        ("a3-highgpu-8g", "us-central1", "on-demand"),  # refreshed: the old commit's row is replaced
        ("a3-highgpu-8g", "us-central1", "spot"),
        ("a3-highgpu-8g", "us-central1", "flex-start"),  # kept: not the dataset's
        ("g2-standard-4", "us-central1", "on-demand"),  # gke-dev's flex-start L4 pool
        ("g2-standard-4", "us-central1", "spot"),
    }
    assert keys[("a3-highgpu-8g", "us-central1", "on-demand")].usd_per_hour == Decimal("100.125")
    assert keys[("a3-highgpu-8g", "us-central1", "flex-start")].note == "a hand row"
    assert table.dataset("gcp") == dataset_of(read_dataset(str(FIXTURE)), COMMIT)
    assert [r.model for r in table.rows if table.stale(r)] == []  # the hand row was read after 2026-03-01


def test_a_row_read_before_the_dataset_or_from_another_commit_of_it_is_stale(tmp_path: Path) -> None:
    text = refresh(HEADER, read_dataset(str(FIXTURE)), COMMIT, [])
    text += "g2-standard-8,us-central1,on-demand,2,https://x.example/card,2026-02-28,read before\n"
    text += (
        f"g2-standard-8,us-east4,on-demand,2,{DATASET_REPOSITORY}/blob/{'e' * 40}/pricing.yml,2026-03-01,\n"
    )
    text += "g2-standard-8,europe-west4,on-demand,2,https://x.example/card,2026-03-01,read that day\n"
    (tmp_path / "gcp.csv").write_text(text)
    table = load_price_table([tmp_path / "gcp.csv"])
    assert sorted(r.region for r in table.rows if table.stale(r)) == ["us-central1", "us-east4"]


def test_a_table_without_a_dataset_line_has_no_stale_row(tmp_path: Path) -> None:
    (tmp_path / "gcp.csv").write_text(
        HEADER + "g2-standard-8,us-central1,on-demand,2,https://x.example/c,2020-01-01,\n"
    )
    table = load_price_table([tmp_path / "gcp.csv"])
    assert table.dataset("gcp") is None and table.stale(table.rows[0]) is None


def test_a_malformed_dataset_line_is_refused(tmp_path: Path) -> None:
    from batchplane.pricing import PriceTableError

    (tmp_path / "gcp.csv").write_text(f"# dataset: url={URL} commit=abc generated=2026-03-01\n" + HEADER)
    with pytest.raises(PriceTableError, match="the dataset line must read"):
        load_price_table([tmp_path / "gcp.csv"])


def test_the_diff_flags_a_price_older_than_the_dataset(tmp_path: Path) -> None:
    """gke-prod-dws's on-demand L4 pool priced from a row read before the dataset was generated."""
    text = refresh(HEADER, read_dataset(str(FIXTURE)), COMMIT, [])
    text += "g2-standard-8,us-central1,on-demand,0.9,https://x.example/card,2026-01-15,read before\n"
    (tmp_path / "gcp.csv").write_text(text)
    table = load_price_table([tmp_path / "gcp.csv"])
    head = load_stack_file(prod_dws_with_team_a_h100(tmp_path, nominal=4))
    diff = compare(template("gke-prod-dws"), head, prices=table, decisions=False)
    (used,) = [p for p in to_json_data(diff)["costs"]["prices"] if p["machineType"] == "g2-standard-8"]
    assert used["staleAgainst"] == {"url": URL, "commit": COMMIT, "generated": "2026-03-01"}
    assert "⚠ older than the price dataset (commit 0123456, generated 2026-03-01)" in to_markdown(diff)


def test_the_diff_says_a_flex_start_pool_is_priced_at_its_on_demand_ceiling(tmp_path: Path) -> None:
    head = load_stack_file(prod_dws_with_team_a_h100(tmp_path, nominal=4))
    diff = compare(template("gke-prod-dws"), head, decisions=False)
    (h100,) = [p for p in to_json_data(diff)["costs"]["prices"] if p["machineType"] == "a3-highgpu-8g"]
    assert (h100["model"], h100["upperBoundFor"], h100["staleAgainst"]) == ("on-demand", "flex-start", None)
    assert "the upper bound of flex-start" in to_markdown(diff)


def test_main_writes_the_file_taking_the_commit_from_the_url_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "gcp.csv"
    out.write_text(HEADER)
    dataset = (
        tmp_path / COMMIT / "pricing.yml"
    )  # a path naming the commit, as a raw.githubusercontent URL does
    dataset.parent.mkdir()
    dataset.write_bytes(FIXTURE.read_bytes())
    assert (
        main(
            [
                "--dataset",
                str(dataset),
                "--output",
                str(out),
                "--stacks",
                str(TEMPLATES_DIR / "Pulumi.gke-dev.yaml"),
            ]
        )
        == 0
    )
    assert f"# dataset: url={URL} commit={COMMIT} generated=2026-03-01" in out.read_text()
    assert "2 rows" in capsys.readouterr().out


def test_main_without_a_commit_is_a_usage_error_and_a_missing_price_exit_1(tmp_path: Path) -> None:
    out = tmp_path / "gcp.csv"
    out.write_text(HEADER)
    with pytest.raises(SystemExit) as usage:
        main(["--dataset", str(FIXTURE), "--output", str(out)])
    assert usage.value.code == 2
    multi = (
        TEMPLATES_DIR / "Pulumi.gke-multiregion-dws.yaml"
    )  # europe-west4, asia-southeast1: not in the fixture
    assert (
        main(["--dataset", str(FIXTURE), "--commit", COMMIT, "--output", str(out), "--stacks", str(multi)])
        == 1
    )
    assert out.read_text() == HEADER  # nothing written


def test_the_shipped_gcp_file_is_what_refresh_writes_from_its_own_rows() -> None:
    """The committed file is the script's output: re-rendering its dataset rows gives the same text."""
    from batchplane.pricing.refresh import render_price_file

    path = Path(__file__).resolve().parents[2] / "batchplane" / "data" / "prices" / "gcp.csv"
    table = load_price_table([path])
    dataset = table.dataset("gcp")
    assert dataset is not None
    rows = [dataclasses.replace(r, provider="gcp") for r in table.rows]
    assert render_price_file(dataset, rows) == path.read_text(encoding="utf-8")

"""The price table: every shipped row sourced and dated; exact look-ups only; malformed rows refused."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from batchplane.pricing import PRICE_MODELS, PriceTableError, load_price_table
from batchplane.pricing.refresh import DATASET_REPOSITORY
from batchplane.pricing.table import parse_price_file
from batchplane.targets.gke.machines import MACHINE_SHAPES
from batchplane.targets.openshift.aws_instances import INSTANCE_SHAPES

HEADER = "machine_type,region,model,usd_per_hour,source,retrieved,note\n"


def test_every_shipped_row_has_an_https_source_a_past_date_and_a_known_model() -> None:
    table = load_price_table()
    assert table.rows, "the shipped table is empty"
    for row in table.rows:
        assert row.source.startswith("https://"), row
        assert date(2020, 1, 1) <= row.retrieved <= date.today(), row
        assert row.model in PRICE_MODELS
        assert row.usd_per_hour > 0


def test_every_shipped_machine_type_is_one_batchplane_knows() -> None:
    for row in load_price_table().rows:
        known = MACHINE_SHAPES if row.provider == "gcp" else INSTANCE_SHAPES
        assert row.machine_type in known, row.machine_type


def test_lookup_is_exact_on_machine_type_region_and_model() -> None:
    table = load_price_table()
    row = table.lookup("gcp", "a3-highgpu-8g", "us-central1", "on-demand")
    # the dataset's figure, bundled local SSD included (issue #30: $88.49 on-demand, $50.61 Spot)
    assert row is not None and row.usd_per_hour == Decimal("88.4899999025753")
    spot = table.lookup("gcp", "a3-highgpu-8g", "us-central1", "spot")
    assert spot is not None and spot.usd_per_hour == Decimal("50.6095408219178")
    assert table.lookup("gcp", "a3-highgpu-8g", "europe-west4", "on-demand") is None
    assert table.lookup("gcp", "a3-highgpu-8g", "us-central1", "flex-start") is None  # not in the dataset
    assert table.lookup("aws", "a3-highgpu-8g", "us-central1", "on-demand") is None
    assert table.lookup("gcp", "a3-highgpu-8g", None, "on-demand") is None


def test_every_gcp_row_comes_from_the_one_dataset_at_the_commit_the_file_names() -> None:
    table = load_price_table()
    dataset = table.dataset("gcp")
    assert dataset is not None and dataset.repository == DATASET_REPOSITORY
    gcp = [r for r in table.rows if r.provider == "gcp"]
    assert gcp
    for row in gcp:
        assert (row.source, row.retrieved) == (dataset.url, dataset.generated), row
        assert table.stale(row) is None


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("g2-standard-4,us-central1,on-demand,0.7,,2026-01-01,", "missing source"),
        ("g2-standard-4,us-central1,on-demand,0.7,https://x.example/p,,", "missing retrieved"),
        ("g2-standard-4,us-central1,on-demand,0.7,http://x.example/p,2026-01-01,", "https://"),
        ("g2-standard-4,us-central1,reserved,0.7,https://x.example/p,2026-01-01,", "model 'reserved'"),
        ("g2-standard-4,us-central1,on-demand,cheap,https://x.example/p,2026-01-01,", "not a number"),
        ("g2-standard-4,us-central1,on-demand,-1,https://x.example/p,2026-01-01,", "non-negative"),
        ("g2-standard-4,us-central1,on-demand,0.7,https://x.example/p,26/01/2026,", "YYYY-MM-DD"),
    ],
)
def test_a_row_without_source_date_or_a_valid_figure_is_refused(row: str, problem: str) -> None:
    with pytest.raises(PriceTableError, match=problem):
        parse_price_file(HEADER + row + "\n", "gcp", "t.csv")


def test_a_second_price_for_the_same_key_is_refused() -> None:
    row = "g2-standard-4,us-central1,on-demand,0.7,https://x.example/p,2026-01-01,\n"
    with pytest.raises(PriceTableError, match="a second price"):
        parse_price_file(HEADER + row + row, "gcp", "t.csv")


def test_a_table_from_given_files_takes_the_provider_from_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "aws.csv"
    path.write_text(
        "# a comment\n" + HEADER + "g5.2xlarge,us-east-1,on-demand,1.5,https://x.example/p,2026-01-02,n\n"
    )
    table = load_price_table([path])
    row = table.lookup("aws", "g5.2xlarge", "us-east-1", "on-demand")
    assert row is not None and row.note == "n" and row.retrieved == date(2026, 1, 2)


def test_every_template_pool_has_a_price_row_and_the_docs_list_none_as_unpriced() -> None:
    """Issue #30: every pool of every template priced; openshift-ai-gpu's g5.2xlarge was the last "no price"."""
    from batchplane.diff.model import summarize
    from tests.conftest import REPO_ROOT, TEMPLATE_NAMES
    from tests.diff.helpers import template

    table = load_price_table()
    missing = {
        (name, pool.machine_type, pool.region)
        for name in TEMPLATE_NAMES
        for pool in summarize(template(name), table).pools.values()
        if pool.price is None and pool.machine_type is not None and pool.price_model is not None
    }
    assert missing == set()
    docs = (REPO_ROOT / "docs" / "diff.md").read_text(encoding="utf-8")
    assert "**Not priced" not in docs, "every template pool is priced: the docs must not list one as unpriced"


def test_every_gcp_pool_of_every_template_is_priced_on_demand_and_spot_from_the_dataset() -> None:
    """Issue #30: gke-dev, gke-dws and gke-multiregion-dws printed "no price"."""
    from batchplane.diff.model import summarize
    from tests.conftest import TEMPLATE_NAMES
    from tests.diff.helpers import template

    table = load_price_table()
    pools = [
        (name, pool)
        for name in TEMPLATE_NAMES
        for pool in summarize(template(name), table).pools.values()
        if pool.provider == "gcp" and pool.price_model is not None  # reservation pools have no list price
    ]
    assert {p.region for _, p in pools} >= {"us-central1", "us-east4", "europe-west4", "asia-southeast1"}
    for name, pool in pools:
        assert pool.price is not None, (name, pool.name)
        for model in ("on-demand", "spot"):
            assert table.lookup("gcp", pool.machine_type or "", pool.region, model) is not None, (name, model)


def test_a_flex_start_pool_is_priced_at_its_on_demand_ceiling_and_says_so() -> None:
    from batchplane.diff.model import summarize
    from tests.diff.helpers import template

    pool = summarize(template("gke-dws"), load_price_table()).pools["gpu-node-pool"]
    assert (pool.price_model, pool.price_is_upper_bound) == ("flex-start", True)
    assert pool.price is not None and (pool.price.model, pool.price.region) == ("on-demand", "us-east4")
    assert pool.price.usd_per_hour == Decimal("0.704517808")
    on_demand = summarize(template("gke-prod-dws"), load_price_table()).pools["l4"]
    assert (on_demand.price_model, on_demand.price_is_upper_bound) == ("on-demand", False)

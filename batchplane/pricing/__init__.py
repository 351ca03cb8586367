"""List prices of GPU nodes, from a dated price table shipped as package data.

The table (``batchplane/data/prices/<provider>.csv``) holds one row per machine type, region and provisioning
model: USD per node-hour, the URL the figure was read from and the date it was read. A machine type, region or
model without a row has *no price* — nothing is estimated or interpolated. ``gcp.csv`` is generated from one
maintained dataset (Cyclenerd/google-cloud-pricing-cost-calculator ``pricing.yml``) by
``python -m batchplane.pricing.refresh`` (:mod:`batchplane.pricing.refresh`). docs/diff.md says what the numbers
mean (list price, maximum capacity, not a bill) and how to refresh the table.
"""

from batchplane.pricing.table import (
    PRICE_MODELS,
    Dataset,
    PriceModel,
    PriceRow,
    PriceTable,
    PriceTableError,
    load_price_table,
)

__all__ = [
    "PRICE_MODELS",
    "Dataset",
    "PriceModel",
    "PriceRow",
    "PriceTable",
    "PriceTableError",
    "load_price_table",
]

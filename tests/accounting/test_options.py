"""Reading Kueue's ``Configuration.resources`` section into ResourceOptions."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from batchplane.accounting import (
    AccountingError,
    ResourceOptions,
    ResourceTransformation,
    resource_options_from_mapping,
)


def test_resources_section_becomes_resource_options() -> None:
    section = {
        "excludeResourcePrefixes": ["example.com/"],
        "quotaCheckStrategy": "IgnoreUndeclared",
        "transformations": [
            {
                "input": "nvidia.com/gpu",
                "outputs": {"example.com/accelerator-memory": "40Ki", "example.com/credits": 100},
            },
            {
                "input": "nvidia.com/vgpucores",
                "strategy": "Replace",
                "multiplyBy": "nvidia.com/vgpu",
                "outputs": {},
            },
        ],
    }
    assert resource_options_from_mapping(section) == ResourceOptions(
        exclude_resource_prefixes=("example.com/",),
        transformations=(
            ResourceTransformation(
                "nvidia.com/gpu",
                {"example.com/accelerator-memory": Decimal(40960), "example.com/credits": Decimal(100)},
            ),
            ResourceTransformation("nvidia.com/vgpucores", {}, "Replace", "nvidia.com/vgpu"),
        ),
    )


@pytest.mark.parametrize("section", [None, {}], ids=["none", "empty"])
def test_missing_resources_section_means_defaults(section: dict[str, Any] | None) -> None:
    assert resource_options_from_mapping(section) == ResourceOptions()


ERROR_CASES = [
    ("unknown-key", {"excludePrefixes": []}, 'Configuration "resources": excludePrefixes: unknown field'),
    (
        "prefixes-not-strings",
        {"excludeResourcePrefixes": [1]},
        'Configuration "resources": excludeResourcePrefixes: must be a list of strings',
    ),
    (
        "bad-strategy",
        {"transformations": [{"input": "a", "strategy": "Drop"}]},
        "Configuration \"resources\": transformations[0].strategy: must be Retain or Replace, not 'Drop'",
    ),
    (
        "missing-input",
        {"transformations": [{"outputs": {"b": "1"}}]},
        'Configuration "resources": transformations[0].input: is required',
    ),
    (
        "duplicate-input",
        {"transformations": [{"input": "a"}, {"input": "a"}]},
        'Configuration "resources": transformations[1].input: "a" is transformed twice',
    ),
    (
        "bad-output-quantity",
        {"transformations": [{"input": "a", "outputs": {"b": "1 Gi"}}]},
        'Configuration "resources": transformations[0].outputs[b]: "1 Gi" is not a Kubernetes quantity',
    ),
]


@pytest.mark.parametrize(
    ("section", "exp_message"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES]
)
def test_malformed_resources_section_is_rejected(section: dict[str, Any], exp_message: str) -> None:
    with pytest.raises(AccountingError) as excinfo:
        resource_options_from_mapping(section)
    assert str(excinfo.value) == exp_message

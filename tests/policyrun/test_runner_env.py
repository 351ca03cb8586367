"""The environment a policy pack starts with stays within the kernel's limits, whatever the stack size."""

from __future__ import annotations

import json

from batchplane.policyrun.runner import PULUMI_CONFIG_ENV_MAX_BYTES, bounded_config, pack_environment


def test_small_config_is_passed_whole() -> None:
    strings = {"batchplane:environment": "production", "gcp:project": "p-123456"}
    assert bounded_config(strings) == strings


def test_large_config_keeps_the_small_keys_policies_read_and_stays_under_the_bound() -> None:
    strings = {
        "batchplane:environment": "production",
        "batchplane:kueue": json.dumps({"localQueues": [{"name": f"q{i}"} for i in range(5000)]}),
    }
    env = pack_environment(project="p", stack="s", config={}, organization=None)
    kept = bounded_config(strings)
    assert kept == {"batchplane:environment": "production"}
    assert len(json.dumps(kept).encode()) <= PULUMI_CONFIG_ENV_MAX_BYTES
    assert "PULUMI_CONFIG" not in env  # an empty config is left out, as the CLI does

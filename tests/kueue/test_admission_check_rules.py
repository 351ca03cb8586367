"""Kueue's rules on a ClusterQueue's admission checks that keep the queue inactive (``kubernetes-sigs/kueue`` v0.19.2
``pkg/cache/scheduler/clusterqueue.go`` L334-348), refused at the config key."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from tests.config.factories import base_config


def _queue_with(*checks: str) -> dict[str, Any]:
    config = base_config()
    kueue = config["batchplane:kueue"]
    kueue["admissionChecks"] = [
        {"name": "mk", "controllerName": "kueue.x-k8s.io/multikueue"},
        {"name": "prov", "provisioningRequestConfig": "prov"},
    ]
    kueue["provisioningRequestConfigs"] = [
        {"name": "prov", "provisioningClassName": "queued-provisioning.gke.io"}
    ]
    kueue["clusterQueues"][0]["admissionChecks"] = list(checks)
    return config


def test_a_multikueue_check_with_a_provisioning_request_check_on_one_queue_is_refused() -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(_queue_with("mk", "prov"))
    assert [str(e) for e in caught.value.errors] == [
        "batchplane:kueue.clusterQueues[0].admissionChecks: mk (MultiKueue) and prov (ProvisioningRequest) on one "
        'ClusterQueue: Kueue keeps it inactive ("Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks '
        "together\"); put the ProvisioningRequest check on the worker clusters' ClusterQueues"
    ]


@pytest.mark.parametrize("checks", [("mk",), ("prov",)])
def test_either_check_alone_is_accepted(checks: tuple[str, ...]) -> None:
    load_stack(_queue_with(*checks))

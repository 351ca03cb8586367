"""The capacity ladder of ``templates/Pulumi.gke-a3-mega-tas.yaml``: each team's ClusterQueue tries the reservation
rung, then DWS, then Spot; falls to the next rung rather than borrowing (``flavorFungibility``); and only the DWS rung
carries the ProvisioningRequest check (``admissionChecksStrategy.admissionChecks[].onFlavors``). Field meanings:
``kubernetes-sigs/kueue`` v0.19.2 ``apis/kueue/v1beta2/clusterqueue_types.go`` (FlavorFungibility L455-476,
AdmissionChecksStrategy)."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.kueue import kueue_objects
from batchplane.stack import load_stack_file
from tests.conftest import template_path


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return kueue_objects(load_stack_file(template_path("gke-a3-mega-tas")).kueue)


def _queues(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == "ClusterQueue"]


def test_each_team_tries_the_reservation_then_dws_then_spot(objects: list[dict[str, Any]]) -> None:
    for queue in _queues(objects):
        [group] = queue["spec"]["resourceGroups"]
        assert [f["name"] for f in group["flavors"]] == [
            "default-flavor",
            "h100-res",
            "h100-dws",
            "h100-spot",
        ]
        gpus = {f["name"]: f["resources"][2] for f in group["flavors"]}
        assert gpus["h100-res"] == {"name": "nvidia.com/gpu", "nominalQuota": "16"}


def test_only_the_dws_rung_carries_the_provisioning_request_check(objects: list[dict[str, Any]]) -> None:
    for queue in _queues(objects):
        assert queue["spec"]["admissionChecksStrategy"] == {
            "admissionChecks": [{"name": "h100-dws-dws", "onFlavors": ["h100-dws"]}]
        }
    [check] = [o for o in objects if o["kind"] == "AdmissionCheck"]
    assert check["spec"]["controllerName"] == "kueue.x-k8s.io/provisioning-request"


def test_a_team_falls_to_the_next_rung_instead_of_borrowing_or_preempting(
    objects: list[dict[str, Any]],
) -> None:
    for queue in _queues(objects):
        assert queue["spec"]["flavorFungibility"] == {
            "whenCanBorrow": "TryNextFlavor",
            "whenCanPreempt": "TryNextFlavor",
        }


def test_only_the_reservation_rung_is_topology_aware(objects: list[dict[str, Any]]) -> None:
    flavors = {o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "ResourceFlavor"}
    assert {name for name, spec in flavors.items() if "topologyName" in spec} == {"h100-res"}
    assert flavors["h100-res"]["topologyName"] == "gke-default"

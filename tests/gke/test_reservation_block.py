"""A reservation pool consuming one block of a reservation: ``reservation.block`` → the reservation affinity value
``<reservation>/reservationBlocks/<block>``, the form GKE's ``--reservation`` takes for a block (xpk's
``parse_reservation`` and GKE's node-pool client read the same path)."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from batchplane.targets.gke.config import GkeTarget
from batchplane.targets.gke.resources import node_pool_args
from tests.gke.conftest import a3_ultra_with

P = "target__gpuPools__0__"


def _reservation_pool(reservation: dict[str, Any]) -> dict[str, Any]:
    return a3_ultra_with(**{P + "reservation": reservation})


def _affinity(reservation: dict[str, Any]) -> Any:
    target = load_stack(_reservation_pool(reservation)).config.target
    assert isinstance(target, GkeTarget)
    return node_pool_args(target, target.gpu_pools[0])["node_config"]["reservation_affinity"]


@pytest.mark.parametrize(
    ("reservation", "value"),
    [
        ({"name": "a3u"}, "a3u"),
        ({"name": "a3u", "block": "a3u-block-0001"}, "a3u/reservationBlocks/a3u-block-0001"),
        (
            {"name": "a3u", "project": "shared-proj", "block": "a3u-block-0001"},
            "projects/shared-proj/reservations/a3u/reservationBlocks/a3u-block-0001",
        ),
    ],
)
def test_a_block_is_appended_to_the_reservation_name(reservation: dict[str, Any], value: str) -> None:
    assert _affinity(reservation) == {
        "consume_reservation_type": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": [value],
    }


def test_a_block_without_a_named_reservation_is_refused_at_its_key() -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(_reservation_pool({"affinity": "ANY_RESERVATION", "block": "b-0001"}))
    assert [str(e) for e in caught.value.errors] == [
        "batchplane:target.gpuPools[0].reservation.block: only with affinity SPECIFIC_RESERVATION: a block belongs "
        "to a named reservation"
    ]

"""Private nodes' way out (Cloud NAT) and way in (control plane → webhook ports): the pure builders."""

from __future__ import annotations

import pytest

from batchplane.stack import load_stack
from batchplane.targets.gke.config import GkeTarget
from batchplane.targets.gke.network import private_network_args, webhook_ports
from tests.gke.conftest import gke_with


@pytest.mark.parametrize(
    ("kueue", "quota", "training", "want"),
    [
        (True, 8443, False, [8082, 8443, 9443]),
        (False, None, False, []),
        (False, None, True, [9443]),
        (True, 10250, False, [8082, 9443]),  # GKE already opens 10250 (and 443)
        (False, 443, False, []),
    ],
    ids=["kueue-and-quota-webhook", "nothing", "training-only", "port-gke-opens", "https-port"],
)
def test_only_webhook_ports_gke_does_not_open_are_allowed(
    kueue: bool, quota: int | None, training: bool, want: list[int]
) -> None:
    assert webhook_ports(kueue=kueue, quota_webhook_port=quota, training=training) == want


def test_public_nodes_need_no_router() -> None:
    target = load_stack(gke_with()).config.target
    assert isinstance(target, GkeTarget)
    assert private_network_args(target, [9443]) is None


def test_private_zonal_cluster_routes_in_the_zones_region_on_its_network() -> None:
    config = gke_with(
        target__privateNodes={"masterIpv4CidrBlock": "172.16.8.0/28"},
        target__zone="us-central1-b",
        target__network="ml-vpc",
    )
    del config["batchplane:target"]["region"]
    target = load_stack(config).config.target
    assert isinstance(target, GkeTarget)
    args = private_network_args(target, [])
    assert args is not None
    assert args["router"]["region"] == "us-central1" and args["router"]["network"] == "ml-vpc"
    assert "firewall" not in args  # no webhook port to open

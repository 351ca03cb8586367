"""What private GKE nodes need to come up: a way out (Cloud Router + Cloud NAT) and a way in for webhooks.

Plain keyword-argument dicts for ``gcp.compute.Router``, ``gcp.compute.RouterNat`` and ``gcp.compute.Firewall``
(pulumi-gcp 10.2.0), built only for a target with ``privateNodes.enabled``:

* **Cloud NAT.** Private nodes have no external IP address, so without NAT they cannot pull
  ``quay.io/jetstack``, ``quay.io/kuberay``, ``registry.k8s.io/kueue`` or ``ghcr.io`` images and the first
  Helm release times out (GKE "Creating a private cluster": "private nodes do not have outbound internet
  access"; Cloud NAT "NAT for GKE"). One regional router on the cluster's network and one NAT gateway for
  all subnet ranges, addresses allocated automatically, errors logged.
* **Control plane → node firewall.** On private clusters GKE opens only 443 and 10250 from the control
  plane's range to the nodes. Admission webhooks on other ports time out: Kueue's webhook (9443), Kueue's
  visibility API server (8082), the quota webhook's container port, and the Kubeflow training operator's
  webhook (9443). cert-manager's webhook listens on 10250 for exactly this reason (its chart's values.yaml).
  The rule allows TCP on :func:`webhook_ports` from ``masterIpv4CidrBlock`` to nodes tagged
  :func:`node_tag` (every pool carries the tag).
"""

from __future__ import annotations

from typing import Any

from batchplane.targets.gke.config import GkeTarget

Kwargs = dict[str, Any]

#: Ports the GKE control plane may reach on private nodes without a rule (GKE's own firewall rules).
GKE_OPEN_PORTS = frozenset({443, 10250})
#: Kueue's webhook server port (chart ``webhook.port``) and visibility API server port.
KUEUE_WEBHOOK_PORT = 9443
KUEUE_VISIBILITY_PORT = 8082


def node_tag(target: GkeTarget) -> str:
    """The network tag every node pool of the cluster carries (``node_config.tags``), targeted by the rule."""
    return f"{target.cluster_name}-node"


def webhook_ports(*, kueue: bool, quota_webhook_port: int | None, training: bool) -> list[int]:
    """The TCP ports the control plane must reach on nodes for the webhooks the stack installs, sorted,
    without the ports GKE already opens."""
    ports: set[int] = set()
    if kueue:
        ports |= {KUEUE_WEBHOOK_PORT, KUEUE_VISIBILITY_PORT}
    if training:
        ports.add(KUEUE_WEBHOOK_PORT)  # the training operator's webhook listens on 9443 too
    if quota_webhook_port is not None:
        ports.add(quota_webhook_port)
    return sorted(ports - GKE_OPEN_PORTS)


def private_network_args(target: GkeTarget, ports: list[int]) -> dict[str, Kwargs] | None:
    """``{"router": ..., "nat": ..., "firewall": ...}`` keyword arguments for a private-node cluster, else None.

    ``nat`` lacks ``router`` (the router resource's name, known once declared); ``firewall`` is None when
    ``ports`` is empty. Names derive from the cluster name (≤ 40 characters, so every name fits GCE's 63).
    """
    if target.private_nodes is None or not target.private_nodes.enabled:
        return None
    network = target.network or "default"
    common: Kwargs = {"project": target.project} if target.project is not None else {}
    region = target.cluster_region()
    out: dict[str, Kwargs] = {
        "router": {"name": f"{target.cluster_name}-router", "network": network, "region": region, **common},
        "nat": {
            "name": f"{target.cluster_name}-nat",
            "region": region,
            "nat_ip_allocate_option": "AUTO_ONLY",
            "source_subnetwork_ip_ranges_to_nat": "ALL_SUBNETWORKS_ALL_IP_RANGES",
            "log_config": {"enable": True, "filter": "ERRORS_ONLY"},
            **common,
        },
    }
    if ports:
        out["firewall"] = {
            "name": f"{target.cluster_name}-webhooks",
            "network": network,
            "direction": "INGRESS",
            "description": "GKE control plane to admission webhooks on private nodes (Batchplane)",
            "source_ranges": [target.private_nodes.master_ipv4_cidr_block],
            "target_tags": [node_tag(target)],
            "allows": [{"protocol": "tcp", "ports": [str(port) for port in ports]}],
            **common,
        }
    return out

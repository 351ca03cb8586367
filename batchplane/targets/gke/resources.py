"""Pure builders: a validated GKE target → pulumi-gcp 10.2.0 keyword arguments (no Pulumi here).

:func:`cluster_args` returns the keyword arguments of ``gcp.container.Cluster`` and
:func:`node_pool_args` those of one ``gcp.container.NodePool``, as plain snake_case dicts (the SDK
accepts ``*ArgsDict`` TypedDicts for every nested block; https://github.com/pulumi/pulumi-gcp/tree/v10.2.0). The
component :class:`batchplane.targets.gke.cluster.GkeCluster` adds what is only known at deploy time
(the cluster reference, the Workload Identity pool of the project). The wire form the engine,
policies and ``batchplane preview --json`` see is the camelCase of these names
(``queuedProvisioning.enabled``, ``autoscaling.totalMinNodeCount`` ...).

Per provisioning mode (sources: https://cloud.google.com/kubernetes-engine/docs/concepts/dws, and Cluster
Toolkit's ``gke-node-pool`` preconditions,
https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/main/modules/compute/gke-node-pool/main.tf):

=============  ==============================================================================
``queued``     ``queued_provisioning.enabled``; autoscaling ``total_min_node_count 0``,
               ``total_max_node_count N``, ``location_policy ANY``; ``initial_node_count 0``;
               ``reservation_affinity NO_RESERVATION``; ``management.auto_repair false``
``flex-start`` ``node_config.flex_start``; the same autoscaling, initial count, reservation
               affinity and auto-repair settings; ``queued_provisioning`` when asked for;
               optional ``node_config.max_run_duration``
``on-demand``  autoscaling (total or per-zone limits) or a static ``node_count``
``spot``       ``node_config.spot``, otherwise as on-demand
``reservation`` ``reservation_affinity`` ``SPECIFIC_RESERVATION`` (key
               ``compute.googleapis.com/reservation-name``) or ``ANY_RESERVATION``
=============  ==============================================================================
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from batchplane.targets.gke.config import GkeTarget, GpuPool, SystemPool
from batchplane.targets.gke.network import node_tag
from batchplane.targets.gke.node_pools import GPU_TAINT

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
"""OAuth scope of node VMs; access is then governed by IAM (GKE's recommendation)."""
RESERVATION_NAME_KEY = "compute.googleapis.com/reservation-name"
"""``reservation_affinity.key`` for a SPECIFIC_RESERVATION by name (pulumi-gcp docstring)."""

INSTALL_HINT = "Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin"
"""Shown by kubectl/the provider when the exec plugin is missing."""

NODE_ROLE = "roles/container.defaultNodeServiceAccount"
"""The project role of a node service account: GKE's least-privilege node role (logs, metrics, ...; GKE "Harden
your cluster's security", "Use least privilege IAM service accounts")."""
REGISTRY_READER_ROLE = "roles/artifactregistry.reader"
"""The role the system pool's account gets on the stack's Artifact Registry repository (pull the webhook image)."""

NODE_ACCOUNT_ID_RE = re.compile(r"^[a-z](?:[-a-z0-9]{4,28}[a-z0-9])$")
"""A service account id: 6 to 30 characters, lowercase letters, digits and hyphens, starting with a letter and not
ending with a hyphen (IAM ``projects.serviceAccounts.create`` ``accountId``; the pattern pulumi-gcp
``serviceaccount.Account`` documents for ``account_id``)."""
_NODE_ACCOUNT_SUFFIX = "-nodes"
_ACCOUNT_ID_MAX = 30
_HASH_CHARS = 8

_EFFECTS = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}

Kwargs = dict[str, Any]

#: ``node_config.shielded_instance_config`` of ``target.secureBoot`` (pulumi-gcp 10.2.0
#: ``NodePoolNodeConfigShieldedInstanceConfigArgs``).
SHIELDED_SECURE_BOOT: Kwargs = {"enable_secure_boot": True, "enable_integrity_monitoring": True}


def cluster_args(target: GkeTarget, environment: str, *, ray_addon: bool = False) -> Kwargs:
    """Keyword arguments of ``gcp.container.Cluster`` (without ``workload_identity_config``, which
    needs the project; see :func:`workload_pool`).

    ``ray_addon`` turns on GKE's managed Ray operator add-on (``addons_config.ray_operator_configs``,
    pulumi-gcp 10.2.0 ``ClusterAddonsConfigArgs``) — ``batchplane:operators.kuberay.gkeRayAddon``,
    which config validation makes mutually exclusive with the KubeRay Helm install. Defaults to off.

    The default node pool is removed (``remove_default_node_pool`` with ``initial_node_count 1``, as
    the pulumi-gcp docstring asks) because every pool is a separate ``NodePool``.
    """
    args: Kwargs = {
        "name": target.cluster_name,
        "location": target.location(),
        "remove_default_node_pool": True,
        "initial_node_count": 1,
        "release_channel": {"channel": target.release_channel},
        "deletion_protection": target.resolved_deletion_protection(environment),
        # GKE Dataplane V2 (Cilium): enforces NetworkPolicy, which the quota webhook's policy relies on; the
        # legacy dataplane ignores NetworkPolicy unless Calico is enabled
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/network-policy).
        "datapath_provider": "ADVANCED_DATAPATH",
    }
    if ray_addon:
        args["addons_config"] = {"ray_operator_configs": [{"enabled": True}]}
    if target.project is not None:
        args["project"] = target.project
    if target.min_master_version is not None:
        args["min_master_version"] = target.min_master_version
    if target.network is not None:
        args["network"] = target.network
    if target.subnetwork is not None:
        args["subnetwork"] = target.subnetwork
    email = node_service_account(target)
    if email is not None:
        # The default node pool GKE creates with the cluster (and the stack removes) runs as the nodes' account too
        # (GkeCluster ignores later changes of this block: it only ever describes that removed pool).
        args["node_config"] = {"service_account": email, "oauth_scopes": [CLOUD_PLATFORM_SCOPE]}
    if target.secure_boot:
        # That default pool's VMs are created too, so compute.requireShieldedVm refuses them without Secure Boot.
        args["node_config"] = {
            **args.get("node_config", {}),
            "shielded_instance_config": dict(SHIELDED_SECURE_BOOT),
        }
    if target.private_nodes is not None and target.private_nodes.enabled:
        args["networking_mode"] = "VPC_NATIVE"
        args["ip_allocation_policy"] = {}
        args["private_cluster_config"] = {
            "enable_private_nodes": True,
            "enable_private_endpoint": target.private_nodes.private_endpoint,
            "master_ipv4_cidr_block": target.private_nodes.master_ipv4_cidr_block,
        }
    return args


def workload_pool(project: str) -> str:
    """The Workload Identity pool of a project: ``<project>.svc.id.goog``."""
    return f"{project}.svc.id.goog"


def node_account_id(cluster_name: str) -> str:
    """The id of the service account the stack creates for a cluster's nodes (``target.nodeServiceAccount``
    omitted), derived from the cluster name alone, so it is stable across runs and distinct per cluster name.

    ``<cluster name>-nodes`` when that fits in 30 characters (cluster names up to 24 characters); else the first 21
    characters of the name (trailing hyphens dropped), ``-`` and the first 8 hex digits of the name's SHA-256. The
    two forms never meet: the first ends in ``s``, the second in a hex digit. Always matches
    :data:`NODE_ACCOUNT_ID_RE` for a valid cluster name (``[a-z]([-a-z0-9]*[a-z0-9])?``, 1 to 40 characters).
    """
    short = f"{cluster_name}{_NODE_ACCOUNT_SUFFIX}"
    if len(short) <= _ACCOUNT_ID_MAX:
        return short
    digest = hashlib.sha256(cluster_name.encode()).hexdigest()[:_HASH_CHARS]
    prefix = cluster_name[: _ACCOUNT_ID_MAX - _HASH_CHARS - 1].rstrip("-")
    return f"{prefix}-{digest}"


def node_account_args(target: GkeTarget) -> Kwargs | None:
    """Keyword arguments of the ``gcp.serviceaccount.Account`` the stack creates for the cluster's nodes, or None
    when ``nodeServiceAccount`` names an account (an email, or ``default``)."""
    if target.node_account_mode() != "create":
        return None
    args: Kwargs = {
        "account_id": node_account_id(target.cluster_name),
        "display_name": f"GKE nodes of {target.cluster_name}",
        "description": f"Node service account of the GKE cluster {target.cluster_name} (Batchplane); "
        f"granted {NODE_ROLE} on the project",
    }
    if target.project is not None:
        args["project"] = target.project
    return args


def node_service_account(target: GkeTarget) -> str | None:
    """The email every pool runs as when ``nodeServiceAccount`` is one; None when the stack creates the account
    (the component fills it in) or for ``default`` (``node_config.service_account`` unset)."""
    return target.node_service_account if target.node_account_mode() == "email" else None


def _base_node_config(target: GkeTarget, machine_type: str, disk_size_gb: int | None) -> Kwargs:
    config: Kwargs = {"machine_type": machine_type, "oauth_scopes": [CLOUD_PLATFORM_SCOPE]}
    email = node_service_account(target)
    if email is not None:
        config["service_account"] = email
    if target.private_nodes is not None and target.private_nodes.enabled:
        # The control-plane → webhook firewall rule targets this tag (batchplane.targets.gke.network).
        config["tags"] = [node_tag(target)]
    if target.workload_identity:
        config["workload_metadata_config"] = {"mode": "GKE_METADATA"}
    if target.secure_boot:
        config["shielded_instance_config"] = dict(SHIELDED_SECURE_BOOT)
    if disk_size_gb is not None:
        config["disk_size_gb"] = disk_size_gb
    return config


def system_pool_args(target: GkeTarget) -> Kwargs:
    """Keyword arguments of the system CPU ``NodePool`` (without ``cluster``): autoscaled with total
    limits, one node per zone at creation, auto-repair and auto-upgrade on, no taints."""
    pool: SystemPool = target.system_pool
    args: Kwargs = {
        "name": pool.name,
        "location": target.location(),
        "autoscaling": {"total_min_node_count": pool.min_nodes, "total_max_node_count": pool.max_nodes},
        # One node per zone at creation, so the first Helm releases schedule without waiting for the
        # autoscaler (the default pool is removed, so nothing else runs them).
        "initial_node_count": 1,
        "management": {"auto_repair": True, "auto_upgrade": True},
        "node_config": _base_node_config(target, pool.machine_type, pool.disk_size_gb),
    }
    if pool.node_locations:
        args["node_locations"] = list(pool.node_locations)
    if target.project is not None:
        args["project"] = target.project
    return args


def _autoscaling(pool: GpuPool) -> Kwargs | None:
    if pool.node_count is not None or pool.max_nodes is None:
        return None
    if pool.autoscaling_limits == "per-zone":
        scaling: Kwargs = {"min_node_count": pool.min_nodes, "max_node_count": pool.max_nodes}
    else:
        scaling = {"total_min_node_count": pool.min_nodes, "total_max_node_count": pool.max_nodes}
    policy = pool.location_policy or ("ANY" if pool.dws_like() else None)
    if policy is not None:
        scaling["location_policy"] = policy
    return scaling


def _reservation_affinity(pool: GpuPool) -> Kwargs | None:
    if pool.dws_like():
        return {"consume_reservation_type": "NO_RESERVATION"}
    if pool.provisioning != "reservation" or pool.reservation is None:
        return None
    res = pool.reservation
    if res.affinity == "ANY_RESERVATION":
        return {"consume_reservation_type": "ANY_RESERVATION"}
    value = f"projects/{res.project}/reservations/{res.name}" if res.project else str(res.name)
    if res.block:
        value += f"/reservationBlocks/{res.block}"
    return {
        "consume_reservation_type": "SPECIFIC_RESERVATION",
        "key": RESERVATION_NAME_KEY,
        "values": [value],
    }


def _gpu_node_config(target: GkeTarget, pool: GpuPool) -> Kwargs:
    config = _base_node_config(target, pool.machine_type, pool.disk_size_gb)
    accelerator = pool.resolved_accelerator()
    if accelerator is not None:
        config["guest_accelerators"] = [
            {
                "type": accelerator.type,
                "count": accelerator.count,
                "gpu_driver_installation_config": {
                    "gpu_driver_version": pool.resolved_gpu_driver(target.gpu_operator)
                },
            }
        ]
    if pool.labels:
        config["labels"] = dict(pool.labels)
    taints = [
        (GPU_TAINT.key, GPU_TAINT.value, GPU_TAINT.effect),
        *((t.key, t.value, t.effect) for t in pool.taints),
    ]
    config["taints"] = [
        {"key": key, "value": value or "", "effect": _EFFECTS[effect]} for key, value, effect in taints
    ]
    affinity = _reservation_affinity(pool)
    if affinity is not None:
        config["reservation_affinity"] = affinity
    if pool.provisioning == "spot":
        config["spot"] = True
    if pool.provisioning == "flex-start":
        config["flex_start"] = True
        if pool.max_run_duration_seconds is not None:
            config["max_run_duration"] = f"{pool.max_run_duration_seconds}s"
    if pool.disk_type is not None:
        config["disk_type"] = pool.disk_type
    if pool.service_account is not None:
        config["service_account"] = pool.service_account
    return config


def node_pool_args(target: GkeTarget, pool: GpuPool) -> Kwargs:
    """Keyword arguments of one GPU ``NodePool`` (without ``cluster``), per provisioning mode (see
    the module docstring)."""
    args: Kwargs = {
        "name": pool.name,
        "location": target.location(),
        "node_locations": list(pool.node_locations),
        "management": {"auto_repair": pool.resolved_auto_repair(), "auto_upgrade": pool.auto_upgrade},
        "node_config": _gpu_node_config(target, pool),
    }
    if target.project is not None:
        args["project"] = target.project
    scaling = _autoscaling(pool)
    if scaling is not None:
        args["autoscaling"] = scaling
    if pool.node_count is not None:
        args["node_count"] = pool.node_count
    initial = (
        pool.initial_node_count if pool.initial_node_count is not None else (0 if pool.dws_like() else None)
    )
    if initial is not None:
        args["initial_node_count"] = initial
    if pool.is_queued():
        args["queued_provisioning"] = {"enabled": True}
    if pool.placement is not None:
        placement: Kwargs = {"type": pool.placement.type}
        if pool.placement.policy_name is not None:
            placement["policy_name"] = pool.placement.policy_name
        args["placement_policy"] = placement
    return args


def kubeconfig(cluster_name: str, endpoint: str, ca_certificate: str) -> dict[str, Any]:
    """A kubeconfig document for a GKE cluster that authenticates with ``gke-gcloud-auth-plugin``
    (the exec plugin gcloud installs; pulumi/examples ``gcp-py-gke``). Context and user are named
    after the cluster.

    Args:
        cluster_name: the GKE cluster name.
        endpoint: the control plane's IP or host name (``Cluster.endpoint``).
        ca_certificate: base64 CA certificate (``master_auth.cluster_ca_certificate``).
    """
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster_name,
                "cluster": {"certificate-authority-data": ca_certificate, "server": f"https://{endpoint}"},
            }
        ],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
        "current-context": cluster_name,
        "preferences": {},
        "users": [
            {
                "name": cluster_name,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "gke-gcloud-auth-plugin",
                        "installHint": INSTALL_HINT,
                        "provideClusterInfo": True,
                    }
                },
            }
        ],
    }

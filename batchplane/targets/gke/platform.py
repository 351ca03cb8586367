"""The GKE platform (:class:`~batchplane.targets.platform.Platform`): a cluster the stack declares, its GPU node
pools back ResourceFlavors, operators installed with Helm on the system pool (its toleration by default), the GKE
Ray add-on, and the webhook image pushed to an Artifact Registry repository the stack owns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.backed_pools import BackedPool, NodeGroup, check_empty_flavor_capacity
from batchplane.config.operators import GKE_SYSTEM_NODE_TOLERATION, OperatorHost
from batchplane.config.rules import ExpandedKueue
from batchplane.config.settings import Setting
from batchplane.config.webhook import WebhookConfig
from batchplane.errors import ConfigIssue
from batchplane.targets.gke.config import GkeTarget, check_gke_target
from batchplane.targets.gke.image import repository_id
from batchplane.targets.gke.node_pools import gke_backed_pools, machine_resources
from batchplane.targets.gke.resources import node_account_id
from batchplane.targets.platform import Connection, Platform, PoolMachine


class GkePlatform(Platform):
    """A GKE Standard cluster Batchplane declares (``target: {kind: gke}``)."""

    kind = "gke"
    operator_host = OperatorHost(
        kind="gke", ray_addon=True, default_tolerations=(GKE_SYSTEM_NODE_TOLERATION,)
    )
    image_registry = "artifact-registry"
    monitoring = "managed-prometheus"
    declares_cluster = True
    dashboard_delivery = "cloud-monitoring"
    dashboard_deliveries = ("cloud-monitoring", "grafana-operator", "configmap")

    def __init__(self, target: GkeTarget) -> None:
        self.target = target

    def check_target(self, environment: str, kueue: ExpandedKueue) -> list[ConfigIssue]:
        """:func:`~batchplane.targets.gke.config.check_gke_target`: the cluster's and its pools' rules; then the
        empty flavors' CPU and memory quota against every node the cluster can have
        (:func:`~batchplane.backed_pools.check_empty_flavor_capacity`, the system pool plus the GPU pools)."""
        system = self.target.system_pool
        base = NodeGroup(
            f'GKE system pool "{system.name}"',
            machine_resources(system.machine_type),
            system.max_nodes,
            "batchplane:target.systemPool.maxNodes",
        )
        return check_gke_target(self.target, environment) + check_empty_flavor_capacity(
            kueue, gke_backed_pools(self.target), base
        )

    def backed_pools(self) -> list[BackedPool]:
        """The GPU node pools (:func:`~batchplane.targets.gke.node_pools.gke_backed_pools`)."""
        return gke_backed_pools(self.target)

    def pool_names(self) -> list[str]:
        """``gpuPools[].name`` in config order."""
        return [pool.name for pool in self.target.gpu_pools]

    def pool_machine(self, name: str) -> PoolMachine | None:
        """The GPU pool's machine type and region (the cluster's region; a zonal cluster's zone's region)."""
        for pool in self.target.gpu_pools:
            if pool.name == name:
                return PoolMachine(pool.machine_type, self.target.cluster_region(), pool.provisioning, "gcp")
        return None

    def cluster_identity(self) -> tuple[str, ...]:
        """``("gke", <location>, <cluster name>)``."""
        return ("gke", self.target.location(), self.target.cluster_name)

    def image_repository(self, webhook: WebhookConfig) -> tuple[str | None, str, str] | None:
        """``(target.project, region, id)`` of the Artifact Registry repository of ``webhook.build``
        (:func:`~batchplane.targets.gke.image.repository_id`), or ``None`` when the stack builds no image."""
        build = webhook.build
        if build is None or build.registry != "artifact-registry":
            return None
        return (self.target.project, self.target.cluster_region(), repository_id(self.target, build))

    def private_endpoint_key(self) -> str | None:
        """``privateNodes.privateEndpoint`` when it is true (the control plane has only its private IP)."""
        private = self.target.private_nodes
        if private is not None and private.enabled and private.private_endpoint:
            return "privateNodes.privateEndpoint"
        return None

    def monitoring_cluster_name(self) -> str | None:
        """``target.clusterName``: Managed Service for Prometheus labels every series ``cluster=<cluster name>``, and
        one project's store holds every cluster of the project."""
        return self.target.cluster_name

    def cloud_monitoring_project(self) -> str | None:
        """``target.project``: Managed Service for Prometheus stores the cluster's metrics in its project."""
        return self.target.project

    def created_node_account(self) -> tuple[str | None, str] | None:
        """``(target.project, <id>)`` when ``nodeServiceAccount`` is omitted
        (:func:`~batchplane.targets.gke.resources.node_account_id` of the cluster name), else ``None``."""
        if self.target.node_account_mode() != "create":
            return None
        return (self.target.project, node_account_id(self.target.cluster_name))

    def connection(self) -> Connection | None:
        """None: the stack declares the cluster; its provider uses the kubeconfig the cluster outputs."""
        return None

    def environment_settings(
        self, env: str, config: Mapping[str, Any], target: Mapping[str, Any]
    ) -> list[Setting]:
        """The GCP project, the region or zone (the pools' ``nodeLocations`` follow it), the cluster name (default: the
        environment's) and, for private nodes, the control plane's /28."""
        t = "batchplane:target"
        where = "region" if "region" in target else "zone"
        out = [
            Setting("gcp:project", (), "GCP project id", config.get("gcp:project"), "project"),
            Setting(
                t,
                (where,),
                f"GKE {where} of the cluster",
                target.get(where),
                "region",
                "each pool's nodeLocations move to the same zone letters there: check that the GPU is offered "
                "(batchplane preflight)",
            ),
            Setting(t, ("clusterName",), "GKE cluster name", env, "cluster_name"),
        ]
        private = target.get("privateNodes")
        if isinstance(private, Mapping) and "masterIpv4CidrBlock" in private:
            cidr = private["masterIpv4CidrBlock"]
            question = "control plane's /28 range (unused in your VPC)"
            out.append(Setting(t, ("privateNodes", "masterIpv4CidrBlock"), question, cidr))
        return out

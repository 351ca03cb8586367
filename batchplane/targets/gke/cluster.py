"""GkeCluster: a GKE Standard cluster, its system CPU pool and its GPU pools (pulumi-gcp 10.2.0).

Children (all ``parent=self``, named ``<name>-<role>``):

* ``<name>-node-account`` — the nodes' ``gcp.serviceaccount.Account`` and ``<name>-node-account-role``, its
  ``gcp.projects.IAMMember`` of ``roles/container.defaultNodeServiceAccount``, when the stack creates the account
  (``target.nodeServiceAccount`` omitted); the cluster and every pool wait for the grant, so no node starts
  without its role;
* ``<name>-cluster`` — ``gcp.container.Cluster`` with the default pool removed, the release
  channel, Workload Identity (``<project>.svc.id.goog``), optional private nodes and
  ``deletion_protection``;
* ``<name>-<system pool>`` — the system CPU ``gcp.container.NodePool`` (operators, webhooks, Ray
  heads);
* ``<name>-<gpu pool>`` — one ``gcp.container.NodePool`` per GPU pool, with the exact arguments of
  its provisioning mode (:mod:`batchplane.targets.gke.resources`).

Output :attr:`GkeCluster.kubeconfig` (secret) authenticates with ``gke-gcloud-auth-plugin``; the
program builds the one Kubernetes provider every in-cluster component receives from it. The GCP
provider is not built here: children use the provider the caller passes (or Pulumi's default one,
configured by the ``gcp:project`` / ``gcp:region`` stack config).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi
import pulumi_gcp as gcp
import yaml

from batchplane.lookups import Unchecked, is_canned, not_checked
from batchplane.targets.gke.config import GkeTarget
from batchplane.targets.gke.network import private_network_args
from batchplane.targets.gke.resources import (
    CLOUD_PLATFORM_SCOPE,
    NODE_ROLE,
    cluster_args,
    kubeconfig,
    node_account_args,
    node_pool_args,
    system_pool_args,
    workload_pool,
)
from batchplane.targets.gke.versions import EngineVersions, deploy_version_problems

TYPE_TOKEN = "batchplane:gke:GkeCluster"
#: pulumi-gcp's invoke of ``projects.locations.getServerConfig`` (``gcp.container.get_engine_versions``).
ENGINE_VERSIONS_LOOKUP = "gcp:container/getEngineVersions:getEngineVersions"


@dataclass(frozen=True)
class GkeClusterArgs:
    """Inputs of :class:`GkeCluster`: keyword arguments of the pulumi-gcp resources. Build them from the public
    target model with :meth:`from_target`; replace a piece to bring your own (``dataclasses.replace(args,
    cluster={**args.cluster, "network": my_vpc.id, "subnetwork": my_subnet.id})``)."""

    cluster: dict[str, Any]
    """Required. ``gcp.container.Cluster`` keyword arguments
    (:func:`~batchplane.targets.gke.resources.cluster_args`); values may be ``pulumi.Input``."""
    system_pool: dict[str, Any]
    """Required. The system pool's ``gcp.container.NodePool`` keyword arguments, without ``cluster``
    (:func:`~batchplane.targets.gke.resources.system_pool_args`)."""
    gpu_pools: list[dict[str, Any]] = field(default_factory=list)
    """GPU pools' ``NodePool`` keyword arguments, without ``cluster``. Defaults to none."""
    workload_identity: bool = True
    """Enable Workload Identity (``workload_identity_config``). Defaults to true."""
    project: pulumi.Input[str] | None = None
    """The GCP project, for the Workload Identity pool. Defaults to the GCP provider's project
    (``gcp.organizations.get_client_config``)."""
    network: dict[str, dict[str, Any]] | None = None
    """Private nodes' Cloud Router, Cloud NAT and control-plane → webhook firewall rule keyword arguments
    (:func:`~batchplane.targets.gke.network.private_network_args`); every node pool waits for them, so no
    image pull or webhook call happens before the way out and the way in exist. Defaults to none."""
    node_account: dict[str, Any] | None = None
    """``gcp.serviceaccount.Account`` keyword arguments of a service account the component creates for the nodes
    (:func:`~batchplane.targets.gke.resources.node_account_args`) and grants ``roles/container.defaultNodeServiceAccount``
    on the project; the cluster's default pool and every pool whose ``node_config`` names no ``service_account`` run
    as it. Defaults to none: pools run as the account their ``node_config`` names, else the Compute Engine default
    service account."""
    version_check: Callable[[EngineVersions], list[str]] | None = None
    """Checked against the versions the cluster's location offers when ``pulumi up`` runs (pulumi-gcp's
    ``gcp.container.get_engine_versions``): each returned message is a reason the cluster cannot be created, and
    the program stops with all of them before anything is created
    (:func:`~batchplane.targets.gke.versions.deploy_version_problems` for a target). Defaults to none."""

    @classmethod
    def from_target(
        cls,
        target: GkeTarget,
        *,
        environment: str = "dev",
        ray_addon: bool = False,
        webhook_ports: Sequence[int] = (),
    ) -> GkeClusterArgs:
        """The inputs of a validated ``kind: gke`` target model.

        Args:
            target: the public target model (:class:`~batchplane.targets.gke.config.GkeTarget`).
            environment: ``dev``, ``staging`` or ``production`` (deletion protection). Defaults to ``dev``.
            ray_addon: enable the GKE Ray add-on. Defaults to false.
            webhook_ports: TCP ports the control plane must reach on private nodes
                (:func:`~batchplane.targets.gke.network.webhook_ports`). Defaults to none.
        """
        return cls(
            cluster=cluster_args(target, environment, ray_addon=ray_addon),
            system_pool=system_pool_args(target),
            gpu_pools=[node_pool_args(target, pool) for pool in target.gpu_pools],
            workload_identity=target.workload_identity,
            network=private_network_args(target, list(webhook_ports)),
            node_account=node_account_args(target),
            version_check=partial(deploy_version_problems, target),
        )


class GkeCluster(pulumi.ComponentResource):
    """A GKE cluster with a system pool and GPU pools.

    Attributes:
        cluster: the ``gcp.container.Cluster``.
        system_pool: the system CPU ``gcp.container.NodePool``.
        gpu_pools: GPU ``gcp.container.NodePool`` resources by pool name.
        network: the private nodes' router, NAT and firewall rule (empty for public nodes).
        node_account: the nodes' service account the component created, or None.
        node_role: its ``roles/container.defaultNodeServiceAccount`` grant on the project, or None.
        kubeconfig: kubeconfig YAML (secret) using ``gke-gcloud-auth-plugin``; context = cluster name.
    """

    cluster: gcp.container.Cluster
    system_pool: gcp.container.NodePool
    gpu_pools: dict[str, gcp.container.NodePool]
    kubeconfig: pulumi.Output[str]

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        cluster_kwargs = dict(args.cluster)
        self._project: pulumi.Input[str] | None = args.project or cluster_kwargs.get("project")
        if args.workload_identity:
            cluster_kwargs["workload_identity_config"] = {
                "workload_pool": pulumi.Output.from_input(self._gcp_project()).apply(workload_pool)
            }
        if args.version_check is not None:
            cluster_kwargs["min_master_version"] = self._checked_version(cluster_kwargs, args.version_check)
        self.node_account: gcp.serviceaccount.Account | None = None
        self.node_role: gcp.projects.IAMMember | None = None
        grants: list[pulumi.Resource] = []
        if args.node_account is not None:
            self.node_account = gcp.serviceaccount.Account(
                f"{name}-node-account", **args.node_account, opts=child
            )
            self.node_role = gcp.projects.IAMMember(
                f"{name}-node-account-role",
                project=self._gcp_project(),
                role=NODE_ROLE,
                member=self.node_account.member,
                opts=child,
            )
            grants = [self.node_role]
            node_config = dict(cluster_kwargs.get("node_config") or {})
            if node_config.get("service_account") is None:
                cluster_kwargs["node_config"] = {
                    "service_account": self.node_account.email,
                    "oauth_scopes": [CLOUD_PLATFORM_SCOPE],
                    **node_config,
                }
        # The cluster's node_config describes only the default pool, which is removed once the cluster exists: later
        # changes of it are ignored, so they never replace the cluster (cluster-toolkit's gke-cluster does the same).
        self.cluster = gcp.container.Cluster(
            f"{name}-cluster",
            **cluster_kwargs,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=grants,
                ignore_changes=["nodeConfig"] if "node_config" in cluster_kwargs else None,
            ),
        )
        self.network: list[pulumi.Resource] = []
        network = args.network
        if network is not None:
            router = gcp.compute.Router(f"{name}-router", **network["router"], opts=child)
            nat = gcp.compute.RouterNat(f"{name}-nat", router=router.name, **network["nat"], opts=child)
            self.network = [router, nat]
            if network.get("firewall") is not None:
                self.network.append(
                    gcp.compute.Firewall(f"{name}-webhooks", **network["firewall"], opts=child)
                )
        pool_opts = pulumi.ResourceOptions(parent=self, depends_on=[*self.network, *grants])

        def pool(kwargs: dict[str, Any]) -> gcp.container.NodePool:
            kwargs = self._with_node_account(kwargs)
            return gcp.container.NodePool(
                f"{name}-{kwargs['name']}", cluster=self.cluster.name, **kwargs, opts=pool_opts
            )

        self._system_pool_account: pulumi.Input[str] | None = self._with_node_account(args.system_pool)[
            "node_config"
        ].get("service_account")
        self.system_pool = pool(args.system_pool)
        self.gpu_pools = {kwargs["name"]: pool(kwargs) for kwargs in args.gpu_pools}
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(self.cluster.name, self.cluster.endpoint, self.cluster.master_auth).apply(
                lambda parts: yaml.safe_dump(
                    kubeconfig(parts[0], parts[1], parts[2]["cluster_ca_certificate"]), sort_keys=False
                )
            )
        )
        self.register_outputs(
            {"kubeconfig": self.kubeconfig, "name": self.cluster.name, "endpoint": self.cluster.endpoint}
        )

    def _gcp_project(self) -> pulumi.Input[str]:
        """The project: as given, else the GCP provider's (``gcp.organizations.get_client_config``), looked up once."""
        if self._project is None:
            self._project = gcp.organizations.get_client_config_output(
                opts=pulumi.InvokeOutputOptions(parent=self)
            ).project
        return self._project

    def _with_node_account(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """A pool's keyword arguments running as the created node account unless its ``node_config`` names one."""
        config = dict(kwargs.get("node_config") or {})
        if self.node_account is None or config.get("service_account") is not None:
            return kwargs
        return {**kwargs, "node_config": {**config, "service_account": self.node_account.email}}

    def system_pool_member(self) -> pulumi.Output[str]:
        """The IAM member (``serviceAccount:<email>``) the system pool's nodes run as — where the operators and the
        quota webhook run: the created node account, the account ``node_config`` names, or the Compute Engine
        default service account ``<project number>-compute@developer.gserviceaccount.com`` (its number read with
        ``gcp.organizations.get_project``; Compute Engine "Default service account")."""
        if self._system_pool_account is not None:
            return pulumi.Output.concat("serviceAccount:", self._system_pool_account)
        number = gcp.organizations.get_project_output(
            project_id=self._gcp_project(), opts=pulumi.InvokeOutputOptions(parent=self)
        ).number
        return pulumi.Output.concat("serviceAccount:", number, "-compute@developer.gserviceaccount.com")

    def _checked_version(
        self, cluster_kwargs: dict[str, Any], check: Callable[[EngineVersions], list[str]]
    ) -> pulumi.Output[Any]:
        """``min_master_version`` (as configured, or none) once the location's versions pass ``check``; the
        cluster waits for it, so a failed check stops ``pulumi up`` (and ``pulumi preview``) before it is created."""
        versions = gcp.container.get_engine_versions_output(
            location=cluster_kwargs.get("location"),
            project=cluster_kwargs.get("project"),
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        configured = cluster_kwargs.get("min_master_version")

        def checked(result: Any) -> Any:
            if is_canned(ENGINE_VERSIONS_LOOKUP):
                # Offline: one canned answer for every location is no fact about this one (batchplane.lookups).
                wanted = (
                    f'minMasterVersion "{configured}"'
                    if configured
                    else "the release channel's default version"
                )
                key = "minMasterVersion" if configured else "releaseChannel"
                item = Unchecked(
                    f"whether GKE offers {wanted} in {cluster_kwargs.get('location')}, at least what the pools need",
                    f"batchplane:target.{key}",
                    ENGINE_VERSIONS_LOOKUP,
                    "version",
                )
                pulumi.log.info(not_checked(item), resource=self)
                return configured
            problems = check(EngineVersions.from_result(result))
            if problems:
                raise VersionUnavailableError(problems)
            return configured

        return versions.apply(checked)


class VersionUnavailableError(ValueError):
    """The GKE versions the location offers cannot create the cluster as configured; ``problems`` names each key."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems

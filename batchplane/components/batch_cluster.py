"""BatchCluster: one cluster of a stack, brought up in order — cluster → provider → operators → Kueue → webhook.

The component a Pulumi program instantiates once per cluster (``__main__.py`` once today; a MultiKueue
manager and each worker under issue #13). Given a validated :class:`~batchplane.stack.Stack`, it declares:

1. **the cluster** — on GKE a :class:`~batchplane.targets.gke.cluster.GkeCluster` (``<name>-gke``: cluster,
   system and GPU pools, and for private nodes the Cloud Router, NAT and webhook firewall rule); other
   targets are existing clusters;
2. **the Kubernetes provider** of that cluster (``<name>-k8s``): on GKE from the generated kubeconfig, after
   the system pool exists; otherwise from the target's kubeconfig context, upserting existing objects on
   OpenShift (OLM and OpenShift AI pre-create namespaces and the ``Kueue`` CR). It is built here, not passed
   in, because the cluster it reaches is declared here; pass ``provider`` for an existing cluster that the
   caller already reaches;
3. **the operators** and the Kueue readiness gate: :class:`~batchplane.components.operators.Operators`
   (``<name>-operators``; Helm installs on kind / existing / GKE) or, on OpenShift,
   :class:`~batchplane.targets.openshift.operators.OpenShiftOperators` (``<name>-olm``) and the GPU
   MachineSets :class:`~batchplane.targets.openshift.gpu_capacity.OpenShiftGpuCapacity` (``<name>-gpu``);
4. **MultiKueue**: on a manager, one Secret per declared worker's kubeconfig (``<name>-multikueue-<worker>``, in
   Kueue's namespace, after the gate); on a declared worker, the manager's access
   (:class:`~batchplane.components.multikueue.MultiKueueWorkerAccess`, ``<name>-multikueue-access``);
5. **the Kueue objects** and tenant namespaces, :class:`~batchplane.components.kueue_queues.KueueQueues`
   (``<name>-kueue``), after the gate and the MultiKueue Secrets;
6. **the quota webhook**, :class:`~batchplane.components.quota_webhook.component.QuotaWebhook` (``<name>-quota-webhook``),
   after the gate (cert-manager precedes it), with the image the stack builds on GKE when ``webhook.build`` is
   set (:class:`~batchplane.targets.gke.webhook_image.WebhookImage`, ``<name>-webhook-image``).

**Stacks deployed before this component existed** declared those children at the top level under their bare
roles (``gke``, ``k8s``, ``operators``, ``kueue``, …). ``adopt_single_cluster_layout=True`` keeps those names
and gives each direct child ``Alias(parent=ROOT_STACK_RESOURCE)``; Pulumi carries a parent's aliases down to
its children, so every resource of a deployed stack maps to its old URN and ``pulumi up`` replaces nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from batchplane.components.kueue_queues import KueueQueues, KueueQueuesArgs
from batchplane.components.multikueue import MultiKueueWorkerAccess
from batchplane.components.operators import Operators
from batchplane.components.quota_webhook.component import QuotaWebhook, QuotaWebhookArgs
from batchplane.components.quota_webhook.manifests import webhook_deployment, webhook_enabled
from batchplane.config.rules import tenant_namespaces
from batchplane.kueue import kueue_objects, namespaces
from batchplane.multikueue import with_multikueue
from batchplane.operators import install_plan
from batchplane.stack import Stack
from batchplane.stack.load import kueue_integrations
from batchplane.targets.gke.cluster import GkeCluster, GkeClusterArgs
from batchplane.targets.gke.config import GkeTarget
from batchplane.targets.gke.image import image_build
from batchplane.targets.gke.network import private_network_args, webhook_ports
from batchplane.targets.gke.resources import cluster_args, node_pool_args, system_pool_args
from batchplane.targets.gke.webhook_image import WebhookImage, WebhookImageArgs
from batchplane.targets.kind.config import KindTarget
from batchplane.targets.kind.image import kind_image_build
from batchplane.targets.kind.webhook_image import KindWebhookImage, KindWebhookImageArgs
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.gpu_capacity import OpenShiftGpuCapacity
from batchplane.targets.openshift.image import openshift_image_build
from batchplane.targets.openshift.machines import gpu_capacity_plan
from batchplane.targets.openshift.olm import openshift_plan
from batchplane.targets.openshift.operators import OpenShiftOperators
from batchplane.targets.openshift.webhook_image import OpenShiftWebhookImage, OpenShiftWebhookImageArgs

TYPE_TOKEN = "batchplane:cluster:BatchCluster"


class BatchClusterArgs(TypedDict):
    """Inputs of :class:`BatchCluster`."""

    stack: Stack
    """Required. The validated stack (:func:`batchplane.stack.load_stack`); its target is the cluster."""
    project_dir: NotRequired[str]
    """The Pulumi project directory: the Docker build context of ``webhook.build`` (holds
    ``webhook/Dockerfile``). Defaults to the current working directory (where ``pulumi up`` runs)."""
    provider: NotRequired[k8s.Provider | None]
    """An existing cluster's Kubernetes provider to use instead of building one from the target (not for a
    GKE target, whose cluster this component declares). Defaults to none (built from the target)."""
    multikueue_kubeconfigs: NotRequired[Mapping[str, pulumi.Input[str]]]
    """This cluster is a MultiKueue manager: declared worker name → the kubeconfig (secret) its Kueue reaches the
    worker with (:attr:`multikueue_kubeconfig` of the worker's BatchCluster). Each becomes the Secret its
    MultiKueueCluster names, in Kueue's namespace, before the Kueue objects. Defaults to none."""
    multikueue_worker: NotRequired[str | None]
    """This cluster is the declared MultiKueue worker of this name: declare the manager's access on it
    (:class:`~batchplane.components.multikueue.MultiKueueWorkerAccess`) and expose :attr:`multikueue_kubeconfig`.
    Defaults to none."""
    multikueue_server: NotRequired[pulumi.Input[str] | None]
    """The https URL at which the manager reaches this worker's API server. Defaults to the GKE cluster's
    endpoint; required for other targets."""
    adopt_single_cluster_layout: NotRequired[bool]
    """Keep the child names and, through aliases, the URNs of a one-cluster stack deployed before
    BatchCluster existed (top-level ``gke``, ``k8s``, ``olm``, ``gpu``, ``operators``, ``kueue``,
    ``webhook-image``, ``quota-webhook``). Defaults to false: children are named ``<name>-<role>``."""


def kueue_namespace(stack: Stack) -> str:
    """Kueue's namespace on the stack's cluster: ``openshift-kueue-operator`` on OpenShift (the Red Hat build of
    Kueue), else ``operators.kueue.namespace`` (``kueue-system`` by default)."""
    if isinstance(stack.config.target, OpenShiftTarget):
        return "openshift-kueue-operator"
    ops = stack.config.operators
    return ops.kueue.namespace if ops is not None else "kueue-system"


def stack_webhook_ports(stack: Stack) -> list[int]:
    """:func:`~batchplane.targets.gke.network.webhook_ports` for what a validated stack installs (Kueue, the
    training operator, the quota webhook): the ports the control plane must reach on private GKE nodes."""
    ops = stack.config.operators
    return webhook_ports(
        kueue=ops is not None and ops.kueue.enabled,
        quota_webhook_port=stack.config.webhook.port if webhook_enabled(stack) else None,
        training=ops is not None and ops.training.kind != "none",
    )


class BatchCluster(pulumi.ComponentResource):
    """One cluster of a stack with everything the stack declares on it, in bring-up order.

    Attributes:
        gke: the GKE cluster component, or ``None`` for targets that are existing clusters.
        provider: the cluster's Kubernetes provider (every in-cluster child uses it).
        kubeconfig: the kubeconfig the provider and readiness gates use (secret Output on GKE; a path or
            ``None`` for existing clusters).
        kueue_ready: what Kueue objects wait for (the Kueue webhook readiness gate); empty without a Kueue
            install.
        queues: the Kueue objects and tenant namespaces.
        quota_webhook: the quota webhook, or ``None`` when the stack does not deploy it.
        multikueue_kubeconfig: on a declared MultiKueue worker, the manager's kubeconfig for it (secret); else
            ``None``.
    """

    gke: GkeCluster | None
    provider: k8s.Provider
    kubeconfig: pulumi.Input[str] | None
    kueue_ready: list[pulumi.Resource]
    queues: KueueQueues
    quota_webhook: QuotaWebhook | None
    multikueue_kubeconfig: pulumi.Output[str] | None

    def __init__(self, name: str, args: BatchClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        stack = args["stack"]
        target = stack.config.target
        adopt = args.get("adopt_single_cluster_layout", False)
        aliases = [pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)] if adopt else None

        def role(role: str) -> str:
            return role if adopt else f"{name}-{role}"

        def child(**kwargs: object) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(parent=self, aliases=aliases, **kwargs)  # type: ignore[arg-type]

        # 1–2. The cluster and its provider; the readiness gates reach it the way the provider does.
        self.gke = None
        context: str | None = None
        if isinstance(target, GkeTarget):
            ops = stack.config.operators
            self.gke = GkeCluster(
                role("gke"),
                GkeClusterArgs(
                    cluster=cluster_args(
                        target, stack.config.environment, ray_addon=ops is not None and ops.gke_ray_addon
                    ),
                    system_pool=system_pool_args(target),
                    gpu_pools=[node_pool_args(target, pool) for pool in target.gpu_pools],
                    workload_identity=target.workload_identity,
                    network=private_network_args(target, stack_webhook_ports(stack)),
                ),
                opts=child(),
            )
            self.kubeconfig = self.gke.kubeconfig
            self.provider = k8s.Provider(
                role("k8s"), kubeconfig=self.kubeconfig, opts=child(depends_on=[self.gke.system_pool])
            )
        else:
            self.kubeconfig = getattr(target, "kubeconfig", None)
            context = target.kube_context()
            given = args.get("provider")
            self.provider = given or k8s.Provider(
                role("k8s"),
                context=context,
                kubeconfig=self.kubeconfig,
                upsert_existing_objects=True if isinstance(target, OpenShiftTarget) else None,
                opts=child(),
            )
        in_cluster = child(providers=[self.provider])

        # 3. Operators and the Kueue readiness gate (cert-manager → job operators → Kueue → gate).
        self.kueue_ready = []
        if isinstance(target, OpenShiftTarget):
            self.kueue_ready = OpenShiftOperators(
                role("olm"),
                {
                    "plan": openshift_plan(target),
                    "context": context,
                    "kubeconfig": self.kubeconfig,
                    "timeout_seconds": target.csv_gate.timeout_seconds,
                    "interval_seconds": target.csv_gate.interval_seconds,
                    "resource_flavor_api_version": stack.kueue.api_version,
                },
                opts=in_cluster,
            ).kueue_ready
            if target.gpu_pools:  # GPU MachineSets scaled from zero by the Cluster Autoscaler
                plan = gpu_capacity_plan(target)
                OpenShiftGpuCapacity(
                    role("gpu"),
                    {
                        "pools": plan.pools,
                        "machine_sets": plan.machine_sets,
                        "machine_autoscalers": plan.machine_autoscalers,
                        "cluster_autoscaler": plan.cluster_autoscaler,
                    },
                    opts=in_cluster,
                )
        elif stack.config.operators is not None:
            installs = install_plan(
                stack.config.operators, target.kind, [ns.name for ns in tenant_namespaces(stack.kueue)]
            )
            self.kueue_ready = Operators(
                role("operators"),
                {"plan": installs, "context": context, "kubeconfig": self.kubeconfig},
                opts=in_cluster,
            ).kueue_ready

        # 4. MultiKueue: the manager's worker kubeconfig Secrets (before the MultiKueueClusters naming them), or
        # on a declared worker the manager's ServiceAccount, ClusterRole, binding and token.
        before_queues = list(self.kueue_ready)
        kubeconfigs = args.get("multikueue_kubeconfigs") or {}
        section = stack.config.multi_kueue
        for worker, kubeconfig in kubeconfigs.items():
            assert section is not None, "multikueue_kubeconfigs needs a multiKueue section"
            declared = next(w for w in section.workers if w.name == worker)
            before_queues.append(
                k8s.core.v1.Secret(
                    role(f"multikueue-{worker}"),
                    metadata={
                        "name": section.kubeconfig_secret(declared),
                        "namespace": kueue_namespace(stack),
                    },
                    string_data={"kubeconfig": pulumi.Output.secret(kubeconfig)},
                    opts=child(providers=[self.provider], depends_on=self.kueue_ready),
                )
            )
        self.multikueue_kubeconfig = None
        worker_name = args.get("multikueue_worker")
        if worker_name:
            server = args.get("multikueue_server")
            if server is None and self.gke is not None:
                server = pulumi.Output.concat("https://", self.gke.cluster.endpoint)
            if server is None:
                raise ValueError(f"MultiKueue worker {worker_name}: multikueue_server is required off GKE")
            self.multikueue_kubeconfig = MultiKueueWorkerAccess(
                role("multikueue-access"),
                {
                    "worker": worker_name,
                    "kueue_namespace": kueue_namespace(stack),
                    "frameworks": kueue_integrations(stack.config) or [],
                    "server": server,
                    "context": context,
                    "kubeconfig": self.kubeconfig,
                    "depends_on": self.kueue_ready,
                },
                opts=in_cluster,
            ).kubeconfig

        # 5. Kueue objects and tenant namespaces, after the gate (and the MultiKueue Secrets).
        self.queues = KueueQueues(
            role("kueue"),
            KueueQueuesArgs(
                objects=with_multikueue(
                    kueue_objects(stack.kueue), stack.config.multi_kueue, stack.kueue.api_version
                ),
                namespaces=namespaces(stack.kueue),
                kueue_ready=before_queues,
            ),
            opts=in_cluster,
        )

        # 6. The quota webhook (cert-manager precedes the gate), with the image the stack builds (webhook.build).
        self.quota_webhook = None
        if webhook_enabled(stack):
            image = self._webhook_image(
                role("webhook-image"), stack, args.get("project_dir", "."), context, child(), in_cluster
            )
            self.quota_webhook = QuotaWebhook(
                role("quota-webhook"),
                QuotaWebhookArgs(
                    deployment=webhook_deployment(stack), depends_on=self.kueue_ready, image=image
                ),
                opts=in_cluster,
            )
        self.register_outputs(
            {"quotaWebhook": self.quota_webhook.service_name if self.quota_webhook is not None else None}
        )

    def _webhook_image(
        self,
        name: str,
        stack: Stack,
        build_context: str,
        kube_context: str | None,
        outside: pulumi.ResourceOptions,
        in_cluster: pulumi.ResourceOptions,
    ) -> pulumi.Input[str] | None:
        """The image the stack builds for the webhook (``webhook.build``) on its target, or None (``webhook.image``
        runs as given): pushed to Artifact Registry on GKE, to the internal registry on OpenShift, loaded on kind."""
        target, webhook = stack.config.target, stack.config.webhook
        if isinstance(target, GkeTarget) and (gke := image_build(target, webhook)) is not None:
            args = WebhookImageArgs(build=gke, context=build_context, project=target.project)
            return WebhookImage(name, args, opts=outside).ref
        if isinstance(target, OpenShiftTarget) and (ocp := openshift_image_build(webhook)) is not None:
            ocp_args = OpenShiftWebhookImageArgs(
                build=ocp, context=build_context, kube_context=kube_context, kubeconfig=self.kubeconfig
            )
            return OpenShiftWebhookImage(name, ocp_args, opts=in_cluster).ref
        if isinstance(target, KindTarget) and (kind := kind_image_build(target, webhook)) is not None:
            return KindWebhookImage(
                name, KindWebhookImageArgs(build=kind, context=build_context), opts=outside
            ).ref
        return None

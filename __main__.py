"""The Batchplane Pulumi program: stack config → cluster → provider → operators → queues → webhook.

Thin by design: validation and object building live in the ``batchplane`` package, resources in
``components/``. Run with ``pulumi up -s <stack>``, or offline with ``batchplane preview``.
"""

from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from batchplane.config import load_stack
from batchplane.config.gke import GkeTarget
from batchplane.config.openshift import OpenShiftTarget
from batchplane.config.pulumi_source import pulumi_config_map
from batchplane.config.stack import tenant_namespaces
from batchplane.kueue import kueue_objects, namespaces
from batchplane.multikueue import with_multikueue
from batchplane.operators import install_plan, openshift_plan
from batchplane.platform.gke_image import image_build
from batchplane.platform.gke_network import private_network_args, stack_webhook_ports
from batchplane.platform.gke_resources import cluster_args, node_pool_args, system_pool_args
from batchplane.platform.openshift import gpu_capacity_plan
from batchplane.webhook.manifests import webhook_deployment, webhook_enabled
from components.gke_cluster import GkeCluster, GkeClusterArgs
from components.kueue_queues import KueueQueues, KueueQueuesArgs
from components.openshift_gpu_capacity import OpenShiftGpuCapacity
from components.openshift_operators import OpenShiftOperators
from components.operators import Operators
from components.quota_webhook import QuotaWebhook, QuotaWebhookArgs
from components.webhook_image import WebhookImage, WebhookImageArgs

# Validate everything before declaring anything: a bad config registers no resource.
stack = load_stack(pulumi_config_map(), pulumi.get_stack())
for warning in stack.warnings:
    pulumi.log.warn(str(warning))
target = stack.config.target

# --- Stage 1: cluster and the one Kubernetes provider every in-cluster component receives --------
# The readiness gates reach the cluster the way the provider does (same kubeconfig and context).
if isinstance(target, GkeTarget):
    # GKE: the cluster and its pools (default gcp provider from gcp:project / gcp:region), reached
    # through the generated kubeconfig (gke-gcloud-auth-plugin) once the system pool exists.
    gke = GkeCluster(
        "gke",
        GkeClusterArgs(
            cluster=cluster_args(
                target,
                stack.config.environment,
                ray_addon=stack.config.operators is not None and stack.config.operators.gke_ray_addon,
            ),
            system_pool=system_pool_args(target),
            gpu_pools=[node_pool_args(target, pool) for pool in target.gpu_pools],
            workload_identity=target.workload_identity,
            network=private_network_args(target, stack_webhook_ports(stack)),
        ),
    )
    kubeconfig: pulumi.Input[str] | None = gke.kubeconfig
    context: str | None = None  # the generated kubeconfig's current-context
    provider = k8s.Provider(
        "k8s", kubeconfig=kubeconfig, opts=pulumi.ResourceOptions(depends_on=[gke.system_pool])
    )
    pulumi.export("gkeCluster", gke.cluster.name)
    pulumi.export("kubeconfig", kubeconfig)
else:
    kubeconfig = getattr(target, "kubeconfig", None)
    context = target.kube_context()
    # On OpenShift, OLM and OpenShift AI pre-create objects (namespaces, the Kueue CR): adopt them.
    provider = k8s.Provider(
        "k8s",
        context=context,
        kubeconfig=kubeconfig,
        upsert_existing_objects=True if isinstance(target, OpenShiftTarget) else None,
    )
k8s_opts = pulumi.ResourceOptions(providers=[provider])

# --- Stage 2: operators and the Kueue readiness gate ------------------------------------------
# cert-manager → job-operator CRDs/operators → Kueue → webhook gate; Kueue objects wait for the gate.
kueue_ready: list[pulumi.Resource] = []
if isinstance(target, OpenShiftTarget):
    kueue_ready = OpenShiftOperators(
        "olm",
        {
            "plan": openshift_plan(target),
            "context": context,
            "kubeconfig": kubeconfig,
            "timeout_seconds": target.csv_gate.timeout_seconds,
            "interval_seconds": target.csv_gate.interval_seconds,
            "resource_flavor_api_version": stack.kueue.api_version,
        },
        opts=k8s_opts,
    ).kueue_ready
    if target.gpu_pools:  # GPU MachineSets scaled from zero by the Cluster Autoscaler
        gpu_plan = gpu_capacity_plan(target)
        OpenShiftGpuCapacity(
            "gpu",
            {
                "pools": gpu_plan.pools,
                "machine_sets": gpu_plan.machine_sets,
                "machine_autoscalers": gpu_plan.machine_autoscalers,
                "cluster_autoscaler": gpu_plan.cluster_autoscaler,
            },
            opts=k8s_opts,
        )
elif stack.config.operators is not None:
    plan = install_plan(
        stack.config.operators, target.kind, [ns.name for ns in tenant_namespaces(stack.kueue)]
    )
    kueue_ready = Operators(
        "operators", {"plan": plan, "context": context, "kubeconfig": kubeconfig}, opts=k8s_opts
    ).kueue_ready

# --- Stage 3: Kueue objects and tenant namespaces ----------------------------------------------
queues = KueueQueues(
    "kueue",
    KueueQueuesArgs(
        objects=with_multikueue(
            kueue_objects(stack.kueue), stack.config.multi_kueue, stack.kueue.api_version
        ),
        namespaces=namespaces(stack.kueue),
        kueue_ready=kueue_ready,
    ),
    opts=k8s_opts,
)

# --- Stage 4: quota admission webhook (needs cert-manager, which precedes the stage-2 gate) -------
if webhook_enabled(stack):
    # GKE with `webhook.build`: the stack builds the image and pushes it to its own Artifact Registry.
    build = image_build(target, stack.config.webhook) if isinstance(target, GkeTarget) else None
    built = None
    if build is not None:
        built = WebhookImage(
            "webhook-image",
            WebhookImageArgs(
                build=build, context=str(Path(__file__).resolve().parent), project=target.project
            ),
        ).ref
    quota_webhook = QuotaWebhook(
        "quota-webhook",
        QuotaWebhookArgs(deployment=webhook_deployment(stack), depends_on=kueue_ready, image=built),
        opts=k8s_opts,
    )
    pulumi.export("quotaWebhook", quota_webhook.service_name)

# --- Exports -----------------------------------------------------------------------------------
pulumi.export("clusterQueues", [cq.obj.name for cq in stack.kueue.cluster_queues])
pulumi.export("localQueues", [f"{lq.obj.namespace}/{lq.obj.name}" for lq in stack.kueue.local_queues])

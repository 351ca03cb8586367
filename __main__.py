"""The Batchplane Pulumi program: stack config → cluster → providers → operators → queues → webhook.

Thin by design: validation and object building live in the ``batchplane`` package, resources in
``components/``. Run with ``pulumi up -s <stack>``, or offline with ``batchplane preview``.
"""

import pulumi
import pulumi_kubernetes as k8s

from batchplane.config import load_stack
from batchplane.config.pulumi_source import pulumi_config_map
from batchplane.config.target import ExistingTarget
from batchplane.kueue import kueue_objects, namespaces
from components.kueue_queues import KueueQueues, KueueQueuesArgs

# Validate everything before declaring anything: a bad config registers no resource.
stack = load_stack(pulumi_config_map(), pulumi.get_stack())
for warning in stack.warnings:
    pulumi.log.warn(str(warning))
target = stack.config.target

# --- Stage 1: cluster and the Kubernetes provider every in-cluster component receives ----------
provider = k8s.Provider(
    "k8s",
    context=target.kube_context(),
    kubeconfig=target.kubeconfig if isinstance(target, ExistingTarget) else None,
)
k8s_opts = pulumi.ResourceOptions(providers=[provider])

# --- Stage 2: operators (cert-manager, job operators, Kueue) and the Kueue readiness gate -------
kueue_ready: list[pulumi.Resource] = []

# --- Stage 3: Kueue objects and tenant namespaces ----------------------------------------------
queues = KueueQueues(
    "kueue",
    KueueQueuesArgs(objects=kueue_objects(stack.kueue), namespaces=namespaces(stack.kueue), kueue_ready=kueue_ready),
    opts=k8s_opts,
)

# --- Stage 4: quota admission webhook ------------------------------------------------------------

# --- Exports -----------------------------------------------------------------------------------
pulumi.export("clusterQueues", [cq.obj.name for cq in stack.kueue.cluster_queues])
pulumi.export("localQueues", [f"{lq.obj.namespace}/{lq.obj.name}" for lq in stack.kueue.local_queues])

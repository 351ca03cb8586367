"""The Batchplane Pulumi program: stack config → one BatchCluster (cluster → provider → operators → queues → webhook).

Thin by design: validation and object building live in the ``batchplane`` package, the bring-up order in
:class:`batchplane.components.batch_cluster.BatchCluster`. Run with ``pulumi up -s <stack>``, or offline with
``batchplane preview``.
"""

from pathlib import Path

import pulumi

from batchplane.components.batch_cluster import BatchCluster, BatchClusterArgs
from batchplane.components.quota_webhook.manifests import deployment_problems
from batchplane.errors import ConfigValidationError
from batchplane.multikueue.config import PRIMARY_CLUSTER
from batchplane.stack import load_stack
from batchplane.stack.pulumi_source import pulumi_config_map

# Validate everything before declaring anything: a bad config registers no resource.
stack = load_stack(pulumi_config_map(), pulumi.get_stack())
if problems := deployment_problems(stack):  # the same check as `batchplane validate`
    raise ConfigValidationError(stack.warnings + problems)
for warning in stack.warnings:
    pulumi.log.warn(str(warning))

project_dir = str(Path(__file__).resolve().parent)

# MultiKueue workers this program declares: one BatchCluster each (named after the worker), each yielding the
# kubeconfig (secret) the manager's Kueue reaches it with.
workers = {
    name: BatchCluster(
        name,
        BatchClusterArgs(
            stack=worker_stack,
            project_dir=project_dir,
            multikueue_worker=name,
            multikueue_server=stack.config.multi_kueue.worker(name).server
            if stack.config.multi_kueue
            else None,
        ),
    )
    for name, worker_stack in stack.workers.items()
}

# This stack's own cluster (the MultiKueue manager when there are workers). `adopt_single_cluster_layout` keeps
# the names and (through aliases) the URNs that stacks deployed before BatchCluster existed have, so `pulumi up`
# on them replaces nothing.
cluster = BatchCluster(
    PRIMARY_CLUSTER,
    BatchClusterArgs(
        stack=stack,
        project_dir=project_dir,
        adopt_single_cluster_layout=True,
        multikueue_kubeconfigs={
            name: worker.multikueue_kubeconfig
            for name, worker in workers.items()
            if worker.multikueue_kubeconfig is not None
        },
    ),
)

# --- Exports -----------------------------------------------------------------------------------
if cluster.cluster is not None:  # a cluster the stack declares (GKE): its name and kubeconfig
    pulumi.export("gkeCluster", cluster.cluster_name)
    pulumi.export("kubeconfig", cluster.kubeconfig)
if cluster.quota_webhook is not None:
    pulumi.export("quotaWebhook", cluster.quota_webhook.service_name)
pulumi.export("clusterQueues", [cq.obj.name for cq in stack.kueue.cluster_queues])
if workers:
    pulumi.export(
        "multiKueueWorkers",
        {name: w.cluster_name if w.cluster_name is not None else name for name, w in workers.items()},
    )
pulumi.export("localQueues", [f"{lq.obj.namespace}/{lq.obj.name}" for lq in stack.kueue.local_queues])

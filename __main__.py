"""The Batchplane Pulumi program: stack config → one BatchCluster (cluster → provider → operators → queues → webhook).

Thin by design: validation and object building live in the ``batchplane`` package, the bring-up order in
:class:`batchplane.components.batch_cluster.BatchCluster`. Run with ``pulumi up -s <stack>``, or offline with
``batchplane preview``.
"""

from pathlib import Path

import pulumi

from batchplane.components.batch_cluster import BatchCluster, BatchClusterArgs
from batchplane.stack import load_stack
from batchplane.stack.pulumi_source import pulumi_config_map

# Validate everything before declaring anything: a bad config registers no resource.
stack = load_stack(pulumi_config_map(), pulumi.get_stack())
for warning in stack.warnings:
    pulumi.log.warn(str(warning))

# One cluster per stack. `adopt_single_cluster_layout` keeps the names and (through aliases) the URNs that
# stacks deployed before BatchCluster existed have, so `pulumi up` on them replaces nothing.
cluster = BatchCluster(
    "batchplane",
    BatchClusterArgs(
        stack=stack,
        project_dir=str(Path(__file__).resolve().parent),
        adopt_single_cluster_layout=True,
    ),
)

# --- Exports -----------------------------------------------------------------------------------
if cluster.gke is not None:
    pulumi.export("gkeCluster", cluster.gke.cluster.name)
    pulumi.export("kubeconfig", cluster.kubeconfig)
if cluster.quota_webhook is not None:
    pulumi.export("quotaWebhook", cluster.quota_webhook.service_name)
pulumi.export("clusterQueues", [cq.obj.name for cq in stack.kueue.cluster_queues])
pulumi.export("localQueues", [f"{lq.obj.namespace}/{lq.obj.name}" for lq in stack.kueue.local_queues])

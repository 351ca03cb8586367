"""Batchplane's components in a Pulumi program of your own, outside Batchplane's ``__main__.py``.

The program owns the way to its cluster — here a Kubernetes provider built from a kubeconfig it holds as a secret
(``pulumi config set --secret existing-cluster:kubeconfig "$(cat kubeconfig)"``), as it would from another stack's
output or a cluster it declares itself — and hands Batchplane that provider *with* the kubeconfig and context it was
built from (:class:`batchplane.ClusterConnection`), so the readiness gates poll the very cluster
the provider deploys to. The stack is written with Batchplane's public config models instead of a
``Pulumi.<stack>.yaml``; :class:`batchplane.BatchCluster` validates them with every rule
of the loader and refuses the program (every error listed) before anything is declared.

Run: ``pulumi stack init dev``, ``pulumi config set existing-cluster:context <context>``, the secret above, then
``pulumi up``.
"""

import pulumi
import pulumi_kubernetes as k8s

from batchplane import (
    BatchCluster,
    BatchClusterArgs,
    ClusterConnection,
    ExistingTarget,
    KueueConfig,
    OperatorsConfig,
    ResourceFlavor,
    StackConfig,
    Team,
    TeamsConfig,
)

config = pulumi.Config("existing-cluster")
context = config.require("context")
kubeconfig = config.require_secret("kubeconfig")

# This program's own piece: the provider of a cluster it already reaches.
provider = k8s.Provider("platform-cluster", kubeconfig=kubeconfig, context=context)

ml = BatchCluster(
    "ml",
    BatchClusterArgs(
        config=StackConfig(
            environment="staging",
            target=ExistingTarget(kind="existing", context=context),
            operators=OperatorsConfig(),  # cert-manager, KubeRay, Kueue at their pinned versions
            kueue=KueueConfig(resource_flavors=[ResourceFlavor(name="default-flavor")]),
            teams=TeamsConfig(
                members=[
                    Team(name="vision", quotas={"default-flavor": {"cpu": 16, "memory": "64Gi"}}),
                    Team(name="speech", quotas={"default-flavor": {"cpu": 8, "memory": "32Gi"}}),
                ]
            ),
        ),
        connection=ClusterConnection(provider, kubeconfig=kubeconfig, context=context),
    ),
)

pulumi.export("clusterQueues", [cq.obj.name for cq in ml.stack.kueue.cluster_queues])
pulumi.export("localQueues", [f"{lq.obj.namespace}/{lq.obj.name}" for lq in ml.stack.kueue.local_queues])

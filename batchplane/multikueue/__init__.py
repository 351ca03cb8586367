"""MultiKueue on the manager cluster: the ``batchplane:multiKueue`` section and the objects it becomes.

Kueue's MultiKueue (kueue.x-k8s.io/v1beta2 ``MultiKueueCluster``, ``MultiKueueConfig``, and an AdmissionCheck
with ``controllerName: kueue.x-k8s.io/multikueue``) copies each workload admitted by a manager ClusterQueue to
worker clusters; the first worker that admits it runs it (Kueue docs, "MultiKueue" concept and "Setup a
MultiKueue environment"). This module covers the manager side for workers that already exist and are reached
through a kubeconfig Secret in Kueue's namespace (key ``kubeconfig``, as Kueue's
``create-multikueue-kubeconfig.sh`` writes it). Imports no Pulumi.
"""

from batchplane.multikueue.config import MultiKueueSection, MultiKueueWorker
from batchplane.multikueue.objects import (
    expand_multikueue,
    multikueue_objects,
    with_multikueue,
)
from batchplane.wellknown import MULTIKUEUE_CONTROLLER

__all__ = [
    "MULTIKUEUE_CONTROLLER",
    "MultiKueueSection",
    "MultiKueueWorker",
    "expand_multikueue",
    "multikueue_objects",
    "with_multikueue",
]

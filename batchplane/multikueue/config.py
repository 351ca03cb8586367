"""The ``batchplane:multiKueue`` section (manager side, existing workers)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from batchplane.config.base import ConfigModel, DnsSubdomain


class MultiKueueWorker(ConfigModel):
    """One worker cluster, as a ``MultiKueueCluster`` of the manager."""

    name: DnsSubdomain
    """Required. The MultiKueueCluster's name (listed in the MultiKueueConfig, in this order)."""
    kubeconfig_secret: DnsSubdomain
    """Required. Secret in Kueue's namespace on the manager holding the worker's kubeconfig under the key
    ``kubeconfig`` (``spec.clusterSource.kubeConfig`` with ``locationType: Secret``). The stack does not create
    it: Kueue's ``create-multikueue-kubeconfig.sh`` makes one from a worker ServiceAccount token."""


class MultiKueueSection(ConfigModel):
    """``batchplane:multiKueue``: dispatch the manager's workloads to worker clusters (Kueue MultiKueue)."""

    name: DnsSubdomain = "multikueue"
    """Name of the AdmissionCheck and of the MultiKueueConfig it points to. Defaults to ``multikueue``."""
    workers: Annotated[list[MultiKueueWorker], Field(min_length=1, max_length=20)]
    """Required. 1–20 workers (the MultiKueueConfig ``clusters`` limit), most preferred first: Kueue's
    incremental dispatcher nominates them in this order."""
    cluster_queues: list[DnsSubdomain] | None = None
    """Manager ClusterQueues that dispatch (they get the MultiKueue admission check). Defaults to every
    ClusterQueue of the stack."""

    @model_validator(mode="after")
    def _unique_workers(self) -> MultiKueueSection:
        names = [w.name for w in self.workers]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"worker names must be unique: {', '.join(duplicates)} listed more than once")
        return self

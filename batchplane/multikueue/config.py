"""The ``batchplane:multiKueue`` section: this stack's cluster is the manager; workers are existing clusters
(reached through a kubeconfig Secret) or clusters declared in the same program (a ``target`` of their own)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, model_validator

from batchplane.config.base import ConfigModel, DnsLabel, DnsSubdomain
from batchplane.multikueue.kubeconfig import is_valid_hostname

#: The name of the stack's own BatchCluster in the program (``__main__.py``), with or without MultiKueue (its
#: resource name, so it stays in every URN); with MultiKueue it is the manager, and a worker may not take it.
PRIMARY_CLUSTER = "batchplane"
#: Kueue's MultiKueueConfig ``spec.clusters`` allows 1–20 entries (kueue v0.19.2 CRD ``maxItems: 20``).
MAX_WORKERS = 20


def _kueue_accepts_host(server: str) -> str:
    if not is_valid_hostname(server):
        raise ValueError(
            "Kueue refuses this worker kubeconfig server (untrusted server endpoint): its host must be an IP "
            "address or a DNS name (lowercase letters, digits, '-' and '.')"
        )
    return server


class MultiKueueWorker(ConfigModel):
    """One worker cluster, a ``MultiKueueCluster`` of the manager: an existing cluster (``kubeconfigSecret``) or
    a cluster this program declares and brings up (``target``, and optionally its own ``kueue``/``teams``)."""

    name: DnsLabel
    """Required. The MultiKueueCluster's name (listed in the MultiKueueConfig, in this order); a declared worker's
    resources are named after it (``<name>-gke``, ``<name>-kueue``, …)."""
    kubeconfig_secret: DnsSubdomain | None = None
    """An existing worker: the Secret in Kueue's namespace on the manager holding the worker's kubeconfig under
    the key ``kubeconfig`` (``spec.clusterSource.kubeConfig``, ``locationType: Secret``). The stack does not
    create it (Kueue's ``create-multikueue-kubeconfig.sh`` makes one). Exactly one of ``kubeconfigSecret`` and
    ``target``."""
    target: dict[str, Any] | None = None
    """A declared worker: its cluster, a ``batchplane:target`` object (same schema: ``gke`` with its own DWS
    ``gpuPools``, ``kind``, ``existing``, ``openshift``). The worker gets the manager's operators, webhook and —
    unless overridden below — the manager's ``kueue`` and ``teams`` (Kueue requires the same namespaces and
    LocalQueues on every worker), validated as a stack of its own. The program creates the worker's MultiKueue
    ServiceAccount, ClusterRole, binding and token, and the manager's kubeconfig Secret from them."""
    kueue: dict[str, Any] | None = None
    """A declared worker's own ``batchplane:kueue`` (same schema). Defaults to the manager's; when neither ``kueue``
    nor ``teams`` is given, nominal quota on flavors backed by this worker's pools is scaled down to what the pools
    hold, keeping the queues' proportions (a warning lists each change)."""
    teams: dict[str, Any] | None = None
    """A declared worker's own ``batchplane:teams`` (same schema). Defaults to the manager's, sized to this
    worker's pools as for ``kueue``."""
    server: (
        Annotated[
            str,
            Field(pattern=r"^https://[^\s/]+(/\S*)?$", max_length=2048),
            AfterValidator(_kueue_accepts_host),
        ]
        | None
    ) = None
    """The URL at which the manager's Kueue reaches a declared worker's API server; its host an IP address or a DNS
    name, as Kueue v0.19.2 requires of a worker kubeconfig. Defaults to the GKE cluster's endpoint
    (``https://<endpoint>``); required for other declared targets."""

    @model_validator(mode="after")
    def _one_source(self) -> MultiKueueWorker:
        if (self.kubeconfig_secret is None) == (self.target is None):
            raise ValueError(
                "give exactly one of kubeconfigSecret (an existing worker) and target (a declared one)"
            )
        if self.target is None:
            extra = [
                k
                for k, v in (("kueue", self.kueue), ("teams", self.teams), ("server", self.server))
                if v is not None
            ]
            if extra:
                raise ValueError(f"{', '.join(extra)} only apply to a declared worker (one with a target)")
        return self


class MultiKueueSection(ConfigModel):
    """``batchplane:multiKueue``: dispatch the manager's workloads to worker clusters (Kueue MultiKueue)."""

    name: DnsSubdomain = "multikueue"
    """Name of the AdmissionCheck and of the MultiKueueConfig it points to. Defaults to ``multikueue``."""
    workers: Annotated[list[MultiKueueWorker], Field(min_length=1, max_length=MAX_WORKERS)]
    """Required. 1–20 workers (the MultiKueueConfig ``clusters`` limit), most preferred first: with the incremental
    dispatcher (``operators.kueue.configuration.multiKueue.dispatcherName``) Kueue nominates them in this order;
    the default all-at-once dispatcher copies the workload to all of them."""
    cluster_queues: list[DnsSubdomain] | None = None
    """Manager ClusterQueues that dispatch (they get the MultiKueue admission check). Defaults to every
    ClusterQueue of the stack."""

    @model_validator(mode="after")
    def _unique_workers(self) -> MultiKueueSection:
        names = [w.name for w in self.workers]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"worker names must be unique: {', '.join(duplicates)} listed more than once")
        if PRIMARY_CLUSTER in names:
            raise ValueError(
                f'"{PRIMARY_CLUSTER}" names the manager\'s own cluster in the program: give the worker another name'
            )
        return self

    def declared(self) -> list[tuple[int, MultiKueueWorker]]:
        """The workers this program declares (with a ``target``), with their index in ``workers``."""
        return [(i, w) for i, w in enumerate(self.workers) if w.target is not None]

    def worker(self, name: str) -> MultiKueueWorker:
        """The worker of that name.

        Raises:
            KeyError: no worker has that name.
        """
        for worker in self.workers:
            if worker.name == name:
                return worker
        raise KeyError(name)

    def kubeconfig_secret(self, worker: MultiKueueWorker) -> str:
        """The manager-side Secret that holds ``worker``'s kubeconfig: the given one for an existing worker,
        ``<section name>-<worker>`` for a declared one (the program creates it)."""
        return worker.kubeconfig_secret or f"{self.name}-{worker.name}"

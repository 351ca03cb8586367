"""The bring-up stages of one cluster, in order: the one list :class:`~batchplane.components.batch_cluster.BatchCluster`
follows and docs/architecture.md prints (``make docs`` writes it there from :data:`BRING_UP_STAGES`).

Plain data, no Pulumi: the docs generator imports it without the Pulumi SDK.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BRING_UP_STAGES", "Stage", "stages_markdown"]


@dataclass(frozen=True)
class Stage:
    """One stage of :class:`~batchplane.components.batch_cluster.BatchCluster`."""

    numbers: tuple[int, ...]
    """The stage numbers it covers (``(1, 2)``: one method declares the cluster and its provider)."""
    method: str
    """The private method of ``BatchCluster`` that declares it (``__init__`` calls them in this order)."""
    declares: str
    """What it declares, after what (Markdown, one paragraph)."""


BRING_UP_STAGES: tuple[Stage, ...] = (
    Stage(
        (1, 2),
        "_declare_cluster",
        "**the cluster and its Kubernetes provider** (``<name>-k8s``): ``PlatformDeploy.declare_cluster`` — on GKE "
        "``GkeCluster`` (``<name>-gke``: cluster, system and GPU pools; for private nodes the Cloud Router, NAT and "
        "webhook firewall rule) and a provider from its kubeconfig after the system pool; elsewhere a provider "
        "from the target's kubeconfig context — or the caller's ``ClusterConnection``",
    ),
    Stage(
        (3,),
        "_declare_operators",
        "**the operators** and the Kueue readiness gate: ``PlatformDeploy.declare_operators`` — ``Operators`` "
        "(``<name>-operators``, Helm) on kind, existing and GKE; ``OpenShiftOperators`` (``<name>-olm``) and "
        "``OpenShiftGpuCapacity`` (``<name>-gpu``) on OpenShift",
    ),
    Stage(
        (4,),
        "_declare_multikueue",
        "**MultiKueue**: on a manager, one Secret per declared worker's kubeconfig (``<name>-multikueue-<worker>``) "
        "after the gate; on a declared worker, ``MultiKueueWorkerAccess`` (``<name>-multikueue-access``)",
    ),
    Stage(
        (5,),
        "_declare_queues",
        "**the Kueue objects** and tenant namespaces, ``KueueQueues`` (``<name>-kueue``), after the gate and the "
        "MultiKueue Secrets",
    ),
    Stage(
        (6,),
        "_declare_webhook",
        "**the quota webhook**: ``WebhookImage`` (``<name>-webhook-image``, ``webhook.build`` into the platform's "
        "registry) and ``QuotaWebhook`` (``<name>-quota-webhook``) after the gate (cert-manager precedes it)",
    ),
    Stage(
        (7,),
        "_declare_observability",
        "**the scrape objects and alert rules**, ``Observability`` (``<name>-observability``), after the Kueue gate "
        "and the webhook",
    ),
    Stage(
        (8,),
        "_declare_dashboards",
        "**the dashboards**, ``Dashboards`` (``<name>-dashboards``: sidecar ConfigMaps, GrafanaDashboard CRs or "
        "Cloud Monitoring, as ``observability.dashboards`` and the platform say), after them",
    ),
)
"""The stages in bring-up order; ``BatchCluster.__init__`` calls the methods in this order (a test holds it)."""


def stages_markdown() -> str:
    """The stages as a Markdown table (docs/architecture.md): stage numbers, what, the method."""
    rows = ["", "| stage | declares | `BatchCluster` method |", "|---|---|---|"]
    for stage in BRING_UP_STAGES:
        numbers = "–".join(str(n) for n in (stage.numbers[0], stage.numbers[-1])[: len(stage.numbers)])
        rows.append(f"| {numbers} | {stage.declares.replace('``', '`')} | `{stage.method}` |")
    return "\n".join(rows) + "\n"

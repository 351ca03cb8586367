"""Dashboards: the stack's generated dashboards, delivered the way its platform (or ``dashboards.delivery``) says.

:func:`batchplane.observability.dashboards.dashboards_plan` decides what is delivered (pure); this component declares
it, one child per dashboard, named ``<name>-<dashboard key>``:

* ``openshift-console`` — a ``v1 ConfigMap`` in ``openshift-config-managed`` labelled
  ``console.openshift.io/dashboard: "true"`` (the OpenShift console's Observe → Dashboards);
* ``configmap`` — a ``v1 ConfigMap`` labelled ``grafana_dashboard: "1"`` (the Grafana sidecar's label in
  kube-prometheus-stack) in ``dashboards.namespace`` or Kueue's namespace, through the cluster's provider;
* ``grafana-operator`` — a ``grafana.integreatly.org/v1beta1 GrafanaDashboard`` (Grafana Operator v5) there;
* ``cloud-monitoring`` — a ``gcp.monitoring.Dashboard`` (pulumi-gcp) with the Cloud Monitoring JSON in the GKE
  target's project.

The plan's ``note`` (which delivery, and what it needs) is logged once, so ``pulumi preview`` shows it.

Type token ``batchplane:observability:Dashboards``. Outputs: ``delivery`` and ``dashboards`` (the uids / keys).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from batchplane.kubernetes_object import KubernetesObject
from batchplane.observability.dashboards import DashboardsPlan

TYPE_TOKEN = "batchplane:observability:Dashboards"


@dataclass(frozen=True)
class DashboardsArgs:
    """Inputs of :class:`Dashboards`.

    Attributes:
        plan: what to deliver (:func:`~batchplane.observability.dashboards.dashboards_plan`).
        provider: the cluster's Kubernetes provider (ConfigMaps and CRs; unused for Cloud Monitoring).
        depends_on: what the in-cluster objects wait for (Kueue's install, which creates its namespace). Defaults to
            none.
    """

    plan: DashboardsPlan
    provider: pulumi.ProviderResource | None = None
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class Dashboards(pulumi.ComponentResource):
    """The stack's dashboards as ConfigMaps, GrafanaDashboard CRs or Cloud Monitoring dashboards.

    Attributes:
        resources: the child per dashboard (key → resource), in plan order.
    """

    resources: dict[str, pulumi.Resource]

    def __init__(self, name: str, args: DashboardsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        plan = args.plan
        self.resources = {}
        if plan.note:
            pulumi.log.info(plan.note, resource=self)
        for key, board in plan.cloud_dashboards:
            self.resources[key] = gcp.monitoring.Dashboard(
                f"{name}-{key}",
                dashboard_json=json.dumps(board, sort_keys=True),
                project=plan.project,
                opts=pulumi.ResourceOptions(parent=self),
            )
        in_cluster = pulumi.ResourceOptions(
            parent=self,
            providers=[args.provider] if args.provider is not None else None,
            depends_on=list(args.depends_on),
        )
        for key, obj in plan.objects:
            self.resources[key] = KubernetesObject(f"{name}-{key}", obj, opts=in_cluster)
        self.register_outputs({"delivery": plan.delivery, "dashboards": list(self.resources)})

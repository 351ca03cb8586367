"""Observability: a cluster's scrape objects, the Kueue metrics reader's credentials and the alert rules, as Pulumi
resources (type token ``batchplane:observability:Observability``; docs/observability.md).

Declares what :func:`batchplane.observability.scrape.scrape_objects` and
:func:`~batchplane.observability.scrape.rule_objects` build for the stack's platform — ``PodMonitoring`` and
``ClusterRules`` on GKE, ``ServiceMonitor`` and ``PrometheusRule`` elsewhere — and, on kind and existing clusters with
``observability.prometheus: kube-prometheus-stack``, the pinned kube-prometheus-stack Helm release first.

Ordering: every object waits for ``depends_on`` (the Kueue install's readiness gate and the quota webhook: the
namespaces, the chart's ``kueue-metrics-reader`` ClusterRole and the webhook's Service exist) and for the
kube-prometheus-stack release when the stack installs it (its CRDs); the monitors wait for the credentials they name.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

import pulumi

from batchplane.kubernetes_object import KubernetesObject
from batchplane.observability.scrape import ScrapeInputs, rule_objects, scrape_objects
from batchplane.operators.helm_operator import HelmOperator, HelmOperatorArgs
from batchplane.operators.installs import HelmInstall

TYPE_TOKEN = "batchplane:observability:Observability"
#: Kinds the monitors reference (declared before them).
_CREDENTIALS = frozenset({"ServiceAccount", "Secret", "ClusterRoleBinding", "Role", "RoleBinding"})


class ObservabilityArgs(TypedDict):
    """Inputs of :class:`Observability`."""

    inputs: ScrapeInputs
    """Required. What to scrape and the rule groups (:func:`batchplane.observability.scrape.scrape_inputs`)."""
    kube_prometheus_stack: NotRequired[HelmInstall | None]
    """The kube-prometheus-stack release to install first
    (:func:`batchplane.observability.scrape.kube_prometheus_stack_install`). Defaults to none."""
    depends_on: NotRequired[list[pulumi.Resource]]
    """What the objects wait for: the Kueue readiness gate and the quota webhook. Defaults to none."""


class Observability(pulumi.ComponentResource):
    """The observability objects of one cluster.

    Attributes:
        objects: the declared objects by child name (``<name>-<kind>-<object name>``).
        kube_prometheus_stack: the kube-prometheus-stack release, or ``None``.

    Outputs: ``scrapeObjects`` and ``ruleObjects`` (``Kind/namespace/name``).
    """

    objects: dict[str, pulumi.Resource]
    kube_prometheus_stack: HelmOperator | None

    def __init__(
        self, name: str, args: ObservabilityArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        inputs = args["inputs"]
        ready = list(args.get("depends_on", []))
        self.kube_prometheus_stack = None
        kps = args.get("kube_prometheus_stack")
        if kps is not None:
            helm: HelmOperatorArgs = {
                "chart": kps.chart,
                "version": kps.version,
                "namespace": kps.namespace,
                "release_name": kps.release_name,
                "values": kps.values,
                "repository": kps.repository,
            }
            self.kube_prometheus_stack = HelmOperator(
                f"{name}-{kps.role}", helm, pulumi.ResourceOptions(parent=self, depends_on=list(ready))
            )
            ready.append(self.kube_prometheus_stack)
        self.objects = {}
        credentials: list[pulumi.Resource] = []
        scrape = scrape_objects(inputs)
        rules = rule_objects(inputs)
        for obj in [*scrape, *rules]:
            meta = obj["metadata"]
            child = f"{name}-{obj['kind'].lower()}-{meta['name']}"
            deps = list(ready) if obj["kind"] in _CREDENTIALS else [*ready, *credentials]
            resource = KubernetesObject(child, obj, pulumi.ResourceOptions(parent=self, depends_on=deps))
            if obj["kind"] in _CREDENTIALS:
                credentials.append(resource)
            self.objects[child] = resource

        def ident(obj: dict[str, object]) -> str:
            meta = obj["metadata"]
            assert isinstance(meta, dict)
            return f"{obj['kind']}/{meta.get('namespace', '')}/{meta['name']}"

        self.register_outputs(
            {
                "scrapeObjects": [ident(o) for o in scrape if o["kind"] not in _CREDENTIALS],
                "ruleObjects": [ident(o) for o in rules],
            }
        )

"""The scrape and rule objects of a stack, per platform (pure builders; docs/observability.md).

What each platform gets (:attr:`~batchplane.targets.platform.Platform.monitoring`):

* ``managed-prometheus`` (GKE): Google Cloud Managed Service for Prometheus ``PodMonitoring`` objects
  (``monitoring.googleapis.com/v1``) for Kueue's controller and the quota webhook, and one ``ClusterRules`` with
  every rule group;
* ``user-workload-monitoring`` (OpenShift): a ``ServiceMonitor`` (``monitoring.coreos.com/v1``) for the webhook and
  a ``PrometheusRule`` per rule group, read by the cluster's user-workload monitoring; Kueue's own ``ServiceMonitor``
  only where the platform's Kueue install does not declare one (the Red Hat build of Kueue does);
* ``prometheus-operator`` (kind, existing): ``ServiceMonitor`` objects and a ``PrometheusRule`` per group, for a
  Prometheus Operator on the cluster or the pinned kube-prometheus-stack release the stack installs.

Kueue's metrics endpoint (``:8443``, HTTPS) authenticates and authorizes every scrape (controller-runtime's
``WithAuthenticationAndAuthorization``): a bearer token whose identity may ``get`` the non-resource URL
``/metrics`` — the chart's ClusterRole ``<release>-metrics-reader`` (Kueue v0.19.2
``charts/kueue/templates/rbac/metrics_reader_role.yaml``). The stack therefore declares a ServiceAccount
``batchplane-metrics-reader`` in Kueue's namespace, its long-lived token Secret and a ClusterRoleBinding to that
ClusterRole, and the scrape objects send the token. On GKE the Managed Service for Prometheus collector
(ServiceAccount ``collector`` in ``gmp-system``) reads the token Secret, so a Role and RoleBinding grant it ``get``
on that one Secret. The chart's metrics Service: ``<release>-controller-manager-metrics-service``, port ``https``
(8443), labels ``app.kubernetes.io/component: metrics-service`` and ``app.kubernetes.io/name: kueue``; the
manager's container port is named ``metrics`` (``charts/kueue/templates/manager/manager.yaml``).

The quota webhook serves ``/metrics`` on its HTTPS port with no authentication (what it exposes: counters of
answered reviews; docs/webhook.md); its Service names that port ``metrics`` too, and the ``ServiceMonitor``
verifies its serving certificate with the cert-manager CA in the webhook's TLS Secret.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from batchplane.observability.alerts import RuleGroup, cluster_rules, prometheus_rule
from batchplane.targets.platform import Monitoring

if TYPE_CHECKING:
    from batchplane.config.observability import ObservabilityConfig
    from batchplane.operators.installs import HelmInstall
    from batchplane.stack import Stack

Object = dict[str, Any]

#: The objects Batchplane adds for Kueue's authenticated metrics endpoint.
READER_NAME = "batchplane-metrics-reader"
READER_TOKEN_KEY = "token"
#: Managed Service for Prometheus's collector identity (it reads the scrape targets' credential Secrets).
GMP_COLLECTOR = {"kind": "ServiceAccount", "name": "collector", "namespace": "gmp-system"}
MANAGED_LABELS = {
    "app.kubernetes.io/managed-by": "batchplane",
    "app.kubernetes.io/part-of": "batchplane-observability",
}


@dataclass(frozen=True)
class WebhookTarget:
    """The quota webhook as a scrape target.

    Attributes:
        namespace: its namespace.
        name: the base name of its objects (Service, Deployment, ``<name>-tls`` Secret).
        selector: its pods' and Service's labels.
    """

    namespace: str
    name: str
    selector: Mapping[str, str]

    @property
    def tls_secret(self) -> str:
        """The cert-manager Secret holding ``ca.crt``."""
        return f"{self.name}-tls"


@dataclass(frozen=True)
class ScrapeInputs:
    """Everything the builders need (plain data).

    Attributes:
        monitoring: the platform's :data:`~batchplane.targets.platform.Monitoring`.
        kueue_namespace: Kueue's namespace.
        kueue_release: Kueue's Helm release name (its chart's fullname prefix).
        scrape_kueue: declare Kueue's scrape (false where the platform's Kueue install declares its own).
        webhook: the webhook target, or ``None`` when the stack does not deploy it.
        interval: the scrape interval (a Prometheus duration).
        groups: the rule groups (:func:`batchplane.observability.alerts.rule_groups`).
        labels: labels put on every ServiceMonitor and PrometheusRule (a Prometheus Operator's selectors).
    """

    monitoring: Monitoring
    kueue_namespace: str
    kueue_release: str
    scrape_kueue: bool
    webhook: WebhookTarget | None
    interval: str
    groups: Sequence[RuleGroup]
    labels: Mapping[str, str] = field(default_factory=dict)


def _meta(name: str, namespace: str | None, extra: Mapping[str, str] | None = None) -> Object:
    meta: Object = {"name": name, "labels": {**MANAGED_LABELS, **(extra or {})}}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def kueue_reader_objects(inputs: ScrapeInputs) -> list[Object]:
    """The ServiceAccount, its token Secret and the ClusterRoleBinding to Kueue's ``<release>-metrics-reader``;
    on Managed Service for Prometheus also the Role and RoleBinding letting its collector read the token."""
    ns = inputs.kueue_namespace
    objects: list[Object] = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(READER_NAME, ns)},
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                **_meta(f"{READER_NAME}-token", ns),
                "annotations": {"kubernetes.io/service-account.name": READER_NAME},
            },
            "type": "kubernetes.io/service-account-token",
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(f"{READER_NAME}-{ns}", None),
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": f"{inputs.kueue_release}-metrics-reader",
            },
            "subjects": [{"kind": "ServiceAccount", "name": READER_NAME, "namespace": ns}],
        },
    ]
    if inputs.monitoring == "managed-prometheus":
        objects += [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": _meta(f"{READER_NAME}-token-reader", ns),
                "rules": [
                    {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [f"{READER_NAME}-token"],
                     "verbs": ["get", "list", "watch"]}
                ],
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": _meta(f"{READER_NAME}-token-reader", ns),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                            "name": f"{READER_NAME}-token-reader"},
                "subjects": [dict(GMP_COLLECTOR)],
            },
        ]  # fmt: skip
    return objects


def _kueue_pod_monitoring(inputs: ScrapeInputs) -> Object:
    return {
        "apiVersion": "monitoring.googleapis.com/v1",
        "kind": "PodMonitoring",
        "metadata": _meta("kueue-controller-manager", inputs.kueue_namespace),
        "spec": {
            "selector": {
                "matchLabels": {"control-plane": "controller-manager", "app.kubernetes.io/name": "kueue"}
            },
            "endpoints": [
                {
                    "port": "metrics",
                    "scheme": "https",
                    "path": "/metrics",
                    "interval": inputs.interval,
                    "tls": {"insecureSkipVerify": True},
                    "authorization": {
                        "type": "Bearer",
                        "credentials": {"secret": {"name": f"{READER_NAME}-token", "key": READER_TOKEN_KEY}},
                    },
                }
            ],
        },
    }


def _webhook_pod_monitoring(inputs: ScrapeInputs, webhook: WebhookTarget) -> Object:
    return {
        "apiVersion": "monitoring.googleapis.com/v1",
        "kind": "PodMonitoring",
        "metadata": _meta(webhook.name, webhook.namespace),
        "spec": {
            "selector": {"matchLabels": dict(webhook.selector)},
            "endpoints": [
                {
                    "port": "https",
                    "scheme": "https",
                    "path": "/metrics",
                    "interval": inputs.interval,
                    # The collector verifies no in-cluster CA here: reading the webhook's TLS Secret would need a
                    # grant on a Secret that also holds the serving key.
                    "tls": {"insecureSkipVerify": True},
                }
            ],
        },
    }


def _kueue_service_monitor(inputs: ScrapeInputs) -> Object:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": _meta("kueue-controller-manager", inputs.kueue_namespace, inputs.labels),
        "spec": {
            "selector": {
                "matchLabels": {
                    "app.kubernetes.io/component": "metrics-service",
                    "app.kubernetes.io/name": "kueue",
                }
            },
            "endpoints": [
                {
                    "port": "https",
                    "scheme": "https",
                    "path": "/metrics",
                    "interval": inputs.interval,
                    "tlsConfig": {"insecureSkipVerify": True},
                    "authorization": {
                        "type": "Bearer",
                        "credentials": {"name": f"{READER_NAME}-token", "key": READER_TOKEN_KEY},
                    },
                }
            ],
        },
    }


def _webhook_service_monitor(inputs: ScrapeInputs, webhook: WebhookTarget) -> Object:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": _meta(webhook.name, webhook.namespace, inputs.labels),
        "spec": {
            "selector": {"matchLabels": dict(webhook.selector)},
            "endpoints": [
                {
                    "port": "metrics",
                    "scheme": "https",
                    "path": "/metrics",
                    "interval": inputs.interval,
                    "tlsConfig": {
                        "ca": {"secret": {"name": webhook.tls_secret, "key": "ca.crt"}},
                        "serverName": f"{webhook.name}.{webhook.namespace}.svc",
                    },
                }
            ],
        },
    }


def scrape_objects(inputs: ScrapeInputs) -> list[Object]:
    """The scrape objects (and the Kueue metrics reader's credentials) of the platform, Kueue's first.

    Returns:
        Plain Kubernetes objects, in apply order (credentials before the monitors that name them).
    """
    objects: list[Object] = []
    managed = inputs.monitoring == "managed-prometheus"
    if inputs.scrape_kueue:
        objects += kueue_reader_objects(inputs)
        objects.append(_kueue_pod_monitoring(inputs) if managed else _kueue_service_monitor(inputs))
    if inputs.webhook is not None:
        webhook = inputs.webhook
        objects.append(
            _webhook_pod_monitoring(inputs, webhook) if managed else _webhook_service_monitor(inputs, webhook)
        )
    return objects


def rule_objects(inputs: ScrapeInputs) -> list[Object]:
    """The rule objects: one ``ClusterRules`` on Managed Service for Prometheus, else a ``PrometheusRule`` per group
    in the namespace whose metrics it reads. None without rule groups."""
    if not inputs.groups:
        return []
    if inputs.monitoring == "managed-prometheus":
        rules = cluster_rules(inputs.groups)
        rules["metadata"]["labels"] = dict(MANAGED_LABELS)
        return [rules]
    out = []
    for group in inputs.groups:
        rule = prometheus_rule(group, {**MANAGED_LABELS, **inputs.labels})
        out.append(rule)
    return out


def scrape_inputs(stack: Stack) -> ScrapeInputs | None:
    """The builders' inputs for a validated stack, or ``None`` when it declares no scrape or rule object
    (``observability.enabled: false``, or ``prometheus: none`` where the platform has a Prometheus Operator)."""
    from batchplane.components.quota_webhook.manifests import APP_LABELS, webhook_deployment
    from batchplane.observability.alerts import alert_inputs, rule_groups
    from batchplane.operators.installs import KUEUE_RELEASE_NAME
    from batchplane.stack.model import webhook_enabled

    section = stack.config.observability
    platform = stack.platform
    if not section.enabled or (platform.monitoring == "prometheus-operator" and section.prometheus == "none"):
        return None
    webhook = None
    if webhook_enabled(stack):
        d = webhook_deployment(stack)
        webhook = WebhookTarget(d.namespace, d.name, dict(APP_LABELS))
    return ScrapeInputs(
        monitoring=platform.monitoring,
        kueue_namespace=platform.kueue_namespace(stack.config.operators),
        kueue_release=KUEUE_RELEASE_NAME,
        scrape_kueue=not platform.kueue_scrape_declared(),
        webhook=webhook,
        interval=section.scrape_interval,
        groups=rule_groups(alert_inputs(stack)),
        labels=dict(section.monitor_labels),
    )


def kube_prometheus_stack_install(stack: Stack) -> HelmInstall | None:
    """The pinned kube-prometheus-stack release the stack installs (``observability.prometheus:
    kube-prometheus-stack`` on a platform with a Prometheus Operator), or ``None``.

    Its Prometheus selects every ``ServiceMonitor``, ``PodMonitor`` and ``PrometheusRule`` of the cluster (the chart's
    ``*SelectorNilUsesHelmValues: false``), so the stack's objects need no release label; the raw
    ``kubePrometheusStack.values`` are deep-merged over that.
    """
    section: ObservabilityConfig = stack.config.observability
    if (
        not section.enabled
        or stack.platform.monitoring != "prometheus-operator"
        or section.prometheus != "kube-prometheus-stack"
    ):
        return None
    from batchplane.config.observability import KUBE_PROMETHEUS_STACK_REPO
    from batchplane.operators.installs import HelmInstall
    from batchplane.yamlfile import deep_merge

    kps = section.kube_prometheus_stack
    selectors = {
        f"{kind}SelectorNilUsesHelmValues": False
        for kind in ("serviceMonitor", "podMonitor", "rule", "probe")
    }
    values = deep_merge({"prometheus": {"prometheusSpec": selectors}}, dict(kps.values))
    return HelmInstall(
        "kube-prometheus-stack",
        "kube-prometheus-stack",
        "kube-prometheus-stack",
        kps.version,
        kps.namespace,
        values,
        repository=KUBE_PROMETHEUS_STACK_REPO,
    )

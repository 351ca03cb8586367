"""Preflight of what the stack's observability objects need on the cluster (docs/observability.md).

* OpenShift: user-workload monitoring is on — ``enableUserWorkload: true`` in ``config.yaml`` of ConfigMap
  ``cluster-monitoring-config`` in ``openshift-monitoring`` (OpenShift's "Enabling monitoring for user-defined
  projects"); otherwise nothing reads the stack's ``ServiceMonitor``/``PrometheusRule`` in user namespaces: a warning
  with the command that turns it on.
* kind / existing with ``observability.prometheus: operator``: the Prometheus Operator's ``ServiceMonitor`` and
  ``PrometheusRule`` CRDs exist; otherwise ``pulumi up`` fails on the first of them (no such kind): a blocker.
* dashboards delivered as ``GrafanaDashboard`` CRs (``grafana-operator``, OpenShift's default): the Grafana Operator's
  ``grafanadashboards.grafana.integreatly.org`` CRD exists (else ``pulumi up`` fails on the first dashboard: a
  blocker), and some ``Grafana`` instance in any namespace carries the labels the dashboards select
  (``dashboards.grafanaSelector``; the CRs allow cross-namespace import) — else they are created and nothing
  imports them: a warning.

Both read the cluster through the kubernetes client with the stack's kubeconfig context, like the OLM checks
(:mod:`batchplane.preflight.kube`). Offline (``batchplane check``/``preview``) neither is checked.
"""

from __future__ import annotations

from typing import Any

import yaml

from batchplane.preflight.report import Report

MONITORING_NAMESPACE = "openshift-monitoring"
MONITORING_CONFIG = "cluster-monitoring-config"
#: The Grafana Operator v5 API of the stack's GrafanaDashboards and of the Grafana instances that import them
#: (https://github.com/grafana/grafana-operator/tree/v5.24.0/config/crd/bases).
GRAFANA_GROUP, GRAFANA_VERSION = "grafana.integreatly.org", "v1beta1"
GRAFANA_DASHBOARD_CRD = f"grafanadashboards.{GRAFANA_GROUP}"
#: The Prometheus Operator CRDs the stack's objects are instances of.
PROMETHEUS_OPERATOR_CRDS = ("servicemonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com")
ENABLE_USER_WORKLOAD = (
    "oc -n openshift-monitoring patch configmap cluster-monitoring-config --type merge -p "
    '\'{"data":{"config.yaml":"enableUserWorkload: true\\n"}}\' (or create the ConfigMap with that config.yaml; '
    "merge by hand if it holds other settings)"
)


def user_workload_enabled(config_map: dict[str, Any] | None) -> bool | None:
    """Whether a ``cluster-monitoring-config`` ConfigMap turns user-workload monitoring on: ``True``/``False``, or
    ``None`` when its ``config.yaml`` is not YAML. A missing ConfigMap or key is ``False`` (OpenShift's default)."""
    data = (config_map or {}).get("data") or {}
    text = data.get("config.yaml")
    if not isinstance(text, str):
        return False
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return isinstance(config, dict) and config.get("enableUserWorkload") is True


def check_user_workload_monitoring(path: str, api_client: Any, report: Report) -> None:
    """OpenShift: a warning naming ``path`` and the fix when user-workload monitoring is off (or unreadable).

    Args:
        path: the key path the finding names (``batchplane:observability``).
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go.
    """
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    where = f"ConfigMap {MONITORING_NAMESPACE}/{MONITORING_CONFIG}"
    try:
        answer = client.CoreV1Api(api_client).read_namespaced_config_map(
            MONITORING_CONFIG, MONITORING_NAMESPACE
        )
        config_map = api_client.sanitize_for_serialization(answer)
    except ApiException as exc:
        if exc.status != 404:
            report.warning("monitoring", path, f"{where} not checked: {exc.status} {exc.reason}")
            return
        config_map = None
    except (HTTPError, OSError) as exc:
        report.warning("monitoring", path, f"{where} not checked: {exc}")
        return
    report.ran("monitoring")
    enabled = user_workload_enabled(config_map)
    if enabled is None:
        report.warning(
            "monitoring", path, f"{where}: config.yaml is not YAML; user-workload monitoring not checked"
        )
    elif not enabled:
        report.warning(
            "monitoring",
            path,
            f"user-workload monitoring is off ({where} does not set enableUserWorkload: true): the webhook's "
            "ServiceMonitor and the stack's PrometheusRules will not be read",
            ENABLE_USER_WORKLOAD,
        )


def _crd_present(name: str, path: str, api_client: Any, report: Report) -> bool | None:
    """Whether CustomResourceDefinition ``name`` exists; ``None`` (with a "not checked" warning at ``path``) when the
    answer is neither the CRD nor 404."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    try:
        client.ApiextensionsV1Api(api_client).read_custom_resource_definition(name)
    except ApiException as exc:
        if exc.status == 404:
            return False
        report.warning("monitoring", path, f"CRD {name} not checked: {exc.status} {exc.reason}")
        return None
    except (HTTPError, OSError) as exc:
        report.warning("monitoring", path, f"CRD {name} not checked: {exc}")
        return None
    return True


def check_prometheus_operator_crds(path: str, api_client: Any, report: Report) -> None:
    """kind / existing: a blocker naming ``path`` when a Prometheus Operator CRD the stack declares objects of is
    missing, a warning when it cannot be read.

    Args:
        path: the key path (``batchplane:observability.prometheus``).
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go.
    """
    missing = []
    for name in PROMETHEUS_OPERATOR_CRDS:
        present = _crd_present(name, path, api_client, report)
        if present is None:
            return
        if not present:
            missing.append(name)
    report.ran("monitoring")
    if missing:
        report.blocker(
            "monitoring",
            path,
            f"no Prometheus Operator on the cluster (missing CRDs: {', '.join(missing)}): pulumi up cannot create "
            "the stack's ServiceMonitors and PrometheusRules",
            "install the Prometheus Operator, or set observability.prometheus: kube-prometheus-stack (the stack "
            "installs it) or none",
        )


def _selector(labels: dict[str, str]) -> str:
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()))


def check_grafana_operator(path: str, selector: dict[str, str], api_client: Any, report: Report) -> None:
    """``grafana-operator`` dashboard delivery: a blocker naming ``path`` when the GrafanaDashboard CRD is missing,
    a warning when no ``Grafana`` instance carries ``selector``'s labels (or either cannot be read).

    Args:
        path: the key path (``batchplane:observability.dashboards``).
        selector: ``spec.instanceSelector.matchLabels`` of the stack's GrafanaDashboards (label → value).
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go (check class ``monitoring``).
    """
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    present = _crd_present(GRAFANA_DASHBOARD_CRD, path, api_client, report)
    if present is None:
        return
    if not present:
        report.ran("monitoring")
        report.blocker(
            "monitoring",
            f"{path}.delivery",
            f"no Grafana Operator on the cluster (missing CRD {GRAFANA_DASHBOARD_CRD}): pulumi up cannot create the "
            "stack's GrafanaDashboards",
            "install the Grafana Operator v5 (OperatorHub: the community grafana-operator package), or set "
            "observability.dashboards.delivery: configmap, or observability.dashboards.enabled: false",
        )
        return
    wanted = _selector(selector)
    try:
        answer = client.CustomObjectsApi(api_client).list_cluster_custom_object(
            GRAFANA_GROUP, GRAFANA_VERSION, "grafanas", label_selector=wanted
        )
    except ApiException as exc:
        report.warning(
            "monitoring", path, f"Grafana instances labelled {wanted} not checked: {exc.status} {exc.reason}"
        )
        return
    except (HTTPError, OSError) as exc:
        report.warning("monitoring", path, f"Grafana instances labelled {wanted} not checked: {exc}")
        return
    report.ran("monitoring")
    if not (isinstance(answer, dict) and answer.get("items")):
        report.warning(
            "monitoring",
            f"{path}.grafanaSelector",
            f"no Grafana instance ({GRAFANA_GROUP}/{GRAFANA_VERSION}) in any namespace is labelled {wanted}: the "
            "stack's GrafanaDashboards are created but no Grafana imports them",
            f"label the Grafana that should show them (oc label grafana <name> -n <namespace> {wanted.replace(',', ' ')}), "
            "or set observability.dashboards.grafanaSelector to its labels",
        )

"""Preflight of what the stack's observability objects need on the cluster (docs/observability.md).

* OpenShift: user-workload monitoring is on — ``enableUserWorkload: true`` in ``config.yaml`` of ConfigMap
  ``cluster-monitoring-config`` in ``openshift-monitoring`` (OpenShift's "Enabling monitoring for user-defined
  projects"); otherwise nothing reads the stack's ``ServiceMonitor``/``PrometheusRule`` in user namespaces: a warning
  with the command that turns it on.
* kind / existing with ``observability.prometheus: operator``: the Prometheus Operator's ``ServiceMonitor`` and
  ``PrometheusRule`` CRDs exist; otherwise ``pulumi up`` fails on the first of them (no such kind): a blocker.

Both read the cluster through the kubernetes client with the stack's kubeconfig context, like the OLM checks
(:mod:`batchplane.preflight.kube`). Offline (``batchplane check``/``preview``) neither is checked.
"""

from __future__ import annotations

from typing import Any

import yaml

from batchplane.preflight.report import Report

MONITORING_NAMESPACE = "openshift-monitoring"
MONITORING_CONFIG = "cluster-monitoring-config"
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


def check_prometheus_operator_crds(path: str, api_client: Any, report: Report) -> None:
    """kind / existing: a blocker naming ``path`` when a Prometheus Operator CRD the stack declares objects of is
    missing, a warning when it cannot be read.

    Args:
        path: the key path (``batchplane:observability.prometheus``).
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go.
    """
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    api = client.ApiextensionsV1Api(api_client)
    missing = []
    for name in PROMETHEUS_OPERATOR_CRDS:
        try:
            api.read_custom_resource_definition(name)
        except ApiException as exc:
            if exc.status != 404:
                report.warning("monitoring", path, f"CRD {name} not checked: {exc.status} {exc.reason}")
                return
            missing.append(name)
        except (HTTPError, OSError) as exc:
            report.warning("monitoring", path, f"CRD {name} not checked: {exc}")
            return
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

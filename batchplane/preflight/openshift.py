"""Preflight for what an OpenShift cluster must already be before ``pulumi up``: its feature gates and the Red Hat
build of Kueue's ``Kueue`` CR, read with the user's kubeconfig through the kubernetes client.

* :func:`check_feature_gates` — ``featuregates.config.openshift.io/cluster``: each gate the stack needs must be
  enabled for every version in ``status.featureGates`` (:func:`batchplane.operators.readiness.read_feature_gate`,
  the same reading as ``pulumi up``'s ``feature-gate`` gate). A disabled gate is a blocker naming ``featureSet`` and
  the irreversible fix; a FeatureGate that cannot be read is a warning that says it was not checked.
* :func:`check_kueue_api` — a Kueue that already runs must serve the ``kueue.x-k8s.io`` version the stack renders
  (the Red Hat build of Kueue 1.0-1.2 serves ``v1beta1`` only), and a ClusterQueue ``default`` the stack does not
  declare (OpenShift AI 3.0-3.4 create one sized to the whole cluster) is reported.
* :func:`check_kueue_cr` — ``kueue.openshift.io/v1`` ``Kueue`` ``cluster``: an existing CR without the frameworks the
  stack needs is reported (a warning: ``pulumi up`` applies them server-side; until then those jobs are not
  queued). No CR yet is fine (the operator or the stack creates it).
"""

from __future__ import annotations

from typing import Any

from batchplane.operators.readiness import (
    CLUSTER_FEATURE_GATE,
    CONFIG_API,
    enable_feature_set_fix,
    read_feature_gate,
)
from batchplane.preflight.report import Report
from batchplane.preflight.requirements import FeatureGateNeed, KueueApiNeed, KueueCrNeed

KUEUE_CR_API = "kueue.openshift.io/v1"


def _get_cluster_object(api_client: Any, api_version: str, plural: str, name: str) -> tuple[Any, Any]:
    """``(object or None on 404, ApiException or None)``."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    group, _, version = api_version.partition("/")
    try:
        return client.CustomObjectsApi(api_client).get_cluster_custom_object(
            group, version, plural, name
        ), None
    except ApiException as exc:
        if exc.status == 404:
            return None, None
        return None, exc


def check_feature_gates(needs: list[FeatureGateNeed], api_client: Any, report: Report) -> None:
    """Every feature gate the stack needs against the cluster's FeatureGate ``cluster``.

    Args:
        needs: the gates (:attr:`~batchplane.preflight.requirements.Requirements.feature_gates`).
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go (check class ``feature-gate``).
    """
    if not needs:
        return
    obj, error = _get_cluster_object(api_client, CONFIG_API, "featuregates", CLUSTER_FEATURE_GATE)
    if error is not None:
        for need in needs:
            report.warning(
                "feature-gate",
                need.path,
                f"not checked: FeatureGate {CLUSTER_FEATURE_GATE} could not be read ({error.status} {error.reason}); "
                f"{need.why} needs {need.gate}",
                "run preflight with a user who can get featuregates.config.openshift.io",
            )
        return
    report.ran("feature-gate")
    for need in needs:
        reading = read_feature_gate(obj if isinstance(obj, dict) else None, need.gate, need.enabling_sets)
        if reading.state == "enabled":
            continue
        if reading.state in ("rolling-out", "pending"):
            report.warning(
                "feature-gate", need.path, f"{reading.detail}; {need.why} waits until it is enabled", ""
            )
            continue
        report.blocker(
            "feature-gate",
            need.path,
            f"{reading.detail}: {need.why} never becomes Active and its ClusterQueues admit nothing",
            enable_feature_set_fix(need.enabling_sets) + "; or set provisioning: none on the GPU pools",
        )


def check_kueue_cr(need: KueueCrNeed | None, api_client: Any, report: Report) -> None:
    """An existing ``Kueue`` CR ``cluster`` that lacks frameworks the stack needs (a warning naming them).

    Args:
        need: the frameworks (:attr:`~batchplane.preflight.requirements.Requirements.kueue_cr`), or None.
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go (check class ``kueue-cr``).
    """
    if need is None:
        return
    obj, error = _get_cluster_object(api_client, KUEUE_CR_API, "kueues", "cluster")
    if error is not None:
        report.warning(
            "kueue-cr",
            need.path,
            f"not checked: Kueue CR cluster could not be read ({error.status} {error.reason})",
            "run preflight with a user who can get kueues.kueue.openshift.io",
        )
        return
    report.ran("kueue-cr")
    if not isinstance(obj, dict):
        return
    integrations = ((obj.get("spec") or {}).get("config") or {}).get("integrations") or {}
    present = {str(n) for n in integrations.get("frameworks") or []}
    missing = [name for name in need.frameworks if name not in present]
    if missing:
        report.warning(
            "kueue-cr",
            need.path,
            f"the existing Kueue CR cluster enables {', '.join(sorted(present)) or 'no framework'}, not "
            f"{', '.join(missing)}: until pulumi up applies them (server-side, the CR's other frameworks stay) those "
            "jobs are not queued",
            "pulumi up adds them; or oc patch kueue cluster --type merge with the frameworks listed",
        )


def check_kueue_api(need: KueueApiNeed | None, api_client: Any, report: Report) -> None:
    """The served ``kueue.x-k8s.io`` versions (API discovery) against the stack's, and an undeclared ClusterQueue
    ``default``. Nothing when Kueue is not installed yet (the stack installs it).

    Args:
        need: :attr:`~batchplane.preflight.requirements.Requirements.kueue_api`, or None.
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go (check class ``kueue-api``).
    """
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    if need is None:
        return
    group, _, version = need.api_version.partition("/")
    try:
        served = client.ApisApi(api_client).get_api_versions()
    except ApiException as exc:
        report.warning(
            "kueue-api", need.path, f"not checked: API discovery failed ({exc.status} {exc.reason})", ""
        )
        return
    report.ran("kueue-api")
    versions = [v.version for g in served.groups or [] if g.name == group for v in g.versions or []]
    if not versions:
        return  # Kueue is not installed yet
    if version not in versions:
        report.blocker(
            "kueue-api",
            need.path,
            f"the cluster's Kueue serves {group} {', '.join(versions)}, not {version}: every Kueue object of the stack "
            "would be refused",
            f"set kueue.apiVersion to {group}/{versions[0]}, or subscribe a Red Hat build of Kueue that serves {version}",
        )
        return
    if "default" in need.cluster_queues:
        return
    cq, error = _get_cluster_object(api_client, need.api_version, "clusterqueues", "default")
    if error is None and isinstance(cq, dict):
        report.warning(
            "kueue-api",
            need.queues_path,
            'the cluster has a ClusterQueue "default" the stack does not declare (OpenShift AI 3.0-3.4 create one '
            'sized to the whole cluster, and a LocalQueue "default" in every managed namespace): jobs that reach it '
            "run around the stack's quotas",
            "use OpenShift AI 3.5+ (autoCreateQueues: false) and delete it, and set webhook.refuseUndeclaredQueues: true",
        )

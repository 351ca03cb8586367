"""What MultiKueue needs on a declared worker, and the kubeconfig the manager reaches it with (pure builders).

Kueue's "Setup a MultiKueue environment" page and its ``create-multikueue-kubeconfig.sh``
(kubernetes-sigs/kueue ``site/static/examples/multikueue/``) give the manager, on each worker, a ServiceAccount
in Kueue's namespace, a ClusterRole and binding that let it create, delete and watch Workloads and the jobs it
dispatches (``get`` on their ``status``; ``get``/``patch``/``update`` on ``workloads/status``), and a long-lived
``kubernetes.io/service-account-token`` Secret whose token goes into a kubeconfig that the manager stores in a
Secret under the key ``kubeconfig``. Batchplane grants the job rules only for the Kueue integrations the worker
enables (the manager runs the same set), not for every kind the script lists.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

#: The ServiceAccount (and ClusterRole/ClusterRoleBinding/token Secret name) on each declared worker.
SERVICE_ACCOUNT = "batchplane-multikueue"

#: Kueue integration → (API group, resource) that MultiKueue creates and watches on a worker, from Kueue's
#: create-multikueue-kubeconfig.sh (main, 2026) and, for TrainJob, Kueue's MultiKueue e2e setup
#: (hack/multikueue/…). Integrations MultiKueue does not dispatch (ray.io/rayservice, deployment, statefulset,
#: leaderworkerset, sparkapplication, jaxjob) need no rule.
DISPATCHED_RESOURCES: dict[str, tuple[str, str]] = {
    "batch/job": ("batch", "jobs"),
    "pod": ("", "pods"),
    "jobset.x-k8s.io/jobset": ("jobset.x-k8s.io", "jobsets"),
    "kubeflow.org/mpijob": ("kubeflow.org", "mpijobs"),
    "kubeflow.org/paddlejob": ("kubeflow.org", "paddlejobs"),
    "kubeflow.org/pytorchjob": ("kubeflow.org", "pytorchjobs"),
    "kubeflow.org/tfjob": ("kubeflow.org", "tfjobs"),
    "kubeflow.org/xgboostjob": ("kubeflow.org", "xgboostjobs"),
    "ray.io/rayjob": ("ray.io", "rayjobs"),
    "ray.io/raycluster": ("ray.io", "rayclusters"),
    "trainer.kubeflow.org/trainjob": ("trainer.kubeflow.org", "trainjobs"),
    "workload.codeflare.dev/appwrapper": ("workload.codeflare.dev", "appwrappers"),
}

_MANAGE = ["create", "delete", "get", "list", "watch"]


def cluster_role_rules(frameworks: Iterable[str]) -> list[dict[str, Any]]:
    """The ClusterRole rules for a worker whose Kueue enables ``frameworks`` (Kueue integration names):
    Workloads always, then each dispatched kind in :data:`DISPATCHED_RESOURCES` order."""
    enabled = set(frameworks)
    rules: list[dict[str, Any]] = [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": list(_MANAGE)},
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads/status"],
            "verbs": ["get", "patch", "update"],
        },
    ]
    for framework, (group, resource) in DISPATCHED_RESOURCES.items():
        if framework in enabled:
            rules.append({"apiGroups": [group], "resources": [resource], "verbs": list(_MANAGE)})
            rules.append({"apiGroups": [group], "resources": [f"{resource}/status"], "verbs": ["get"]})
    return rules


def worker_access_objects(kueue_namespace: str, frameworks: Iterable[str]) -> list[dict[str, Any]]:
    """The worker-side objects, in creation order: ServiceAccount, ClusterRole, ClusterRoleBinding and the
    service-account token Secret (the token controller fills ``data.token`` and ``data["ca.crt"]``)."""
    labels = {"app.kubernetes.io/managed-by": "batchplane", "app.kubernetes.io/component": "multikueue"}
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": SERVICE_ACCOUNT, "namespace": kueue_namespace, "labels": labels},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": SERVICE_ACCOUNT, "labels": labels},
            "rules": cluster_role_rules(frameworks),
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": SERVICE_ACCOUNT, "labels": labels},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": SERVICE_ACCOUNT,
            },
            "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": kueue_namespace}],
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/service-account-token",
            "metadata": {
                "name": SERVICE_ACCOUNT,
                "namespace": kueue_namespace,
                "labels": labels,
                "annotations": {"kubernetes.io/service-account.name": SERVICE_ACCOUNT},
            },
        },
    ]


def worker_kubeconfig(worker: str, server: str, ca_data: str, token: str) -> dict[str, Any]:
    """The kubeconfig the manager's Kueue uses for ``worker``: ``server``, the cluster CA (``ca_data``, base64
    PEM as in a kubeconfig's ``certificate-authority-data``) and the ServiceAccount token (plain text)."""
    base64.b64decode(ca_data, validate=True)  # a kubeconfig needs base64 here; fail early otherwise
    user = f"{worker}-{SERVICE_ACCOUNT}"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": worker, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": worker, "context": {"cluster": worker, "user": user}}],
        "current-context": worker,
        "preferences": {},
    }

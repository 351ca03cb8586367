"""What MultiKueue needs on a declared worker, and the kubeconfig the manager reaches it with (pure builders).

Kueue's "Setup a MultiKueue environment" page and its ``create-multikueue-kubeconfig.sh``
(kubernetes-sigs/kueue ``site/static/examples/multikueue/``) give the manager, on each worker, a ServiceAccount
in Kueue's namespace, a ClusterRole and binding that let it create, delete and watch Workloads and the jobs it
dispatches (``get`` on their ``status``; ``update``/``patch`` on Workloads and RayClusters; read access to the
queues), and a long-lived ``kubernetes.io/service-account-token`` Secret whose token goes into a kubeconfig that the
manager stores in a Secret under the key ``kubeconfig``. The rules come from the job-framework registry
(:mod:`batchplane.frameworks`), rule for rule as the script at Kueue v0.19.2
(https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/site/static/examples/multikueue/create-multikueue-kubeconfig.sh);
Batchplane grants the job rules only for the Kueue integrations the worker enables (the manager runs the same set),
not for every kind the script lists.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

from batchplane.frameworks import FRAMEWORKS, worker_cluster_role_rules
from batchplane.multikueue.kubeconfig import check_kubeconfig

#: The ServiceAccount (and ClusterRole/ClusterRoleBinding/token Secret name) on each declared worker.
SERVICE_ACCOUNT = "batchplane-multikueue"

#: Kueue integrations MultiKueue dispatches to workers (the registry's ``multikueue`` frameworks); the others
#: never leave the manager, so a worker needs neither them nor RBAC for them.
DISPATCHED_INTEGRATIONS: frozenset[str] = frozenset(f.name for f in FRAMEWORKS if f.multikueue)


def cluster_role_rules(frameworks: Iterable[str]) -> list[dict[str, Any]]:
    """The ClusterRole rules for a worker whose Kueue enables ``frameworks`` (Kueue integration names), rule for
    rule as Kueue's ``create-multikueue-kubeconfig.sh`` at v0.19.2 grants them
    (:func:`batchplane.frameworks.worker_cluster_role_rules`): Workloads, queues and Workload status always, then
    each enabled framework's rules.

    Raises:
        KeyError: a name that is not a Kueue integration.
    """
    return list(worker_cluster_role_rules(frameworks))


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
    PEM as in a kubeconfig's ``certificate-authority-data``) and the ServiceAccount token (plain text).

    Raises:
        binascii.Error: ``ca_data`` is not base64.
        InsecureKubeConfigError: Kueue v0.19.2 would refuse the kubeconfig
            (:func:`batchplane.multikueue.kubeconfig.check_kubeconfig`), e.g. a server host that is neither an IP
            nor a DNS name.
    """
    base64.b64decode(ca_data, validate=True)  # a kubeconfig needs base64 here; fail early otherwise
    user = f"{worker}-{SERVICE_ACCOUNT}"
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": worker, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": worker, "context": {"cluster": worker, "user": user}}],
        "current-context": worker,
        "preferences": {},
    }
    check_kubeconfig(worker, kubeconfig)
    return kubeconfig

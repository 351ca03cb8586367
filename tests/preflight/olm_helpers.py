"""A kubeconfig file for the kubernetes-client tests."""

from __future__ import annotations

from pathlib import Path

import yaml


def kubeconfig(directory: Path, server: str, context: str) -> Path:
    """Write a kubeconfig with one context (token auth) pointing at `server`; returns its path."""
    path = directory / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "sha256~recorded"}}],
                "contexts": [{"name": context, "context": {"cluster": "c", "user": "u"}}],
                "current-context": context,
            }
        ),
        encoding="utf-8",
    )
    return path


#: What every OpenShift preflight reads besides the check under test and the OLM catalog, recorded as a fresh, ready cluster answers: the
#: registry route, the operator namespaces and worker MachineSets the deploy-time lookups read, the FeatureGate with
#: ProvisioningRequestAvailable, no Kueue yet, user-workload monitoring on, the Grafana Operator with a labelled
#: Grafana. A test adds its own recordings first
#: (the first match answers).
CLUSTER_DEFAULTS = (
    "openshift/registry-route.json",
    "openshift/fresh-operator-namespaces.json",
    "openshift/worker-machinesets.json",
    "openshift/featuregate-dev-preview.json",
    "openshift/no-kueue-cr.json",
    "openshift/apis-no-kueue.json",
    "openshift/user-workload-monitoring.json",
    "monitoring/grafana-operator.json",
)
#: :data:`CLUSTER_DEFAULTS` with the OLM catalog of the templates' packages (tests of the catalog pass their own).
OPENSHIFT_DEFAULTS = ("olm/catalog.json", *CLUSTER_DEFAULTS)

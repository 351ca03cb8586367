"""What an OpenShift target needs before ``pulumi up`` (offline, from its validated config): the OLM packages and
channels its catalog must carry, what it declares in each operator namespace, the ``Manual`` Subscriptions' target
CSVs, the GPU pools that copy a worker MachineSet, the feature gates, the ``Kueue`` CR's frameworks and the Kueue API
the stack renders. :mod:`batchplane.targets.openshift.preflight` checks them against the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

from batchplane.operators.olm_lookup import StackInstall
from batchplane.operators.readiness import OlmCatalog
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.olm import openshift_plan

#: The stack's own target section (key paths of OLM settings that have no worker-specific path).
TARGET = "batchplane:target"


@dataclass(frozen=True)
class OlmPackage:
    """An operator the cluster's OLM catalog must carry.

    Attributes:
        package: the OLM package name (Subscription ``spec.name``).
        channel: the channel (``spec.channel``).
        source: the CatalogSource name (``spec.source``).
        source_namespace: its namespace (``spec.sourceNamespace``).
        starting_csv: ``spec.startingCSV``, or None.
        path: the config key path of the subscription settings.
    """

    package: str
    channel: str
    source: str
    source_namespace: str
    starting_csv: str | None
    path: str


@dataclass(frozen=True)
class FeatureGateNeed:
    """An OpenShift feature gate the stack depends on (``featuregates.config.openshift.io/cluster``).

    Attributes:
        gate: the gate's name (``ProvisioningRequestAvailable``).
        enabling_sets: the feature sets under which what it gates works (``DevPreviewNoUpgrade``).
        path: the config key path that makes the stack need it (``batchplane:target.featureSet``).
        why: what needs it, for messages.
    """

    gate: str
    enabling_sets: tuple[str, ...]
    path: str
    why: str


@dataclass(frozen=True)
class KueueCrNeed:
    """The frameworks the Red Hat build of Kueue's ``Kueue`` CR ``cluster`` must enable.

    Attributes:
        frameworks: the CR's ``spec.config.integrations.frameworks`` names the stack needs.
        path: the config key path they come from (``batchplane:target.kueue.frameworks``).
    """

    frameworks: tuple[str, ...]
    path: str


@dataclass(frozen=True)
class KueueApiNeed:
    """The ``kueue.x-k8s.io`` objects the stack declares on an existing cluster.

    Attributes:
        api_version: the rendered ``kueue.x-k8s.io`` version (``kueue.x-k8s.io/v1beta2``).
        cluster_queues: the ClusterQueue names the stack declares.
        path: the key the version comes from (``batchplane:kueue.apiVersion``).
        queues_path: the key that decides whether the platform creates queues of its own
            (``batchplane:target.openshiftAi``).
    """

    api_version: str
    cluster_queues: tuple[str, ...]
    path: str
    queues_path: str


#: The key path of each OLM install's settings, by its role.
_OLM_PATHS = {
    "cert-manager": f"{TARGET}.certManager",
    "kueue": f"{TARGET}.kueue",
    "openshift-ai": f"{TARGET}.openshiftAi",
    "jobset-operator": f"{TARGET}.openshiftAi.jobSetOperator",
    "nfd": f"{TARGET}.gpuOperator.nfd",
    "gpu-operator": f"{TARGET}.gpuOperator.nvidia",
}


def olm_packages(target: OpenShiftTarget) -> list[OlmPackage]:
    """The OLM packages an OpenShift target subscribes to, with the key path of each subscription's settings."""
    paths = _OLM_PATHS
    out: list[OlmPackage] = []
    for install in openshift_plan(target).installs:
        spec = install.subscription["spec"]
        out.append(
            OlmPackage(
                package=str(spec["name"]),
                channel=str(spec["channel"]),
                source=str(spec["source"]),
                source_namespace=str(spec["sourceNamespace"]),
                # a startingCSV rendered from targetCsv is checked as the target (check_upgrade_targets)
                starting_csv=None
                if install.target_key == "targetCsv" and spec.get("startingCSV") == install.approve_csv
                else spec.get("startingCSV"),
                path=paths.get(install.role, TARGET),
            )
        )
    return out


@dataclass(frozen=True)
class UpgradeTarget:
    """A ``Manual``-approval Subscription's target CSV (what the CSV gate brings the operator to).

    Attributes:
        namespace: the operator's namespace.
        catalog: its package, channel and CatalogSource.
        target: the target CSV (``targetCsv``, else ``startingCsv``).
        path: the config key path (``….targetCsv``, or ``….startingCsv`` when that is the target).
    """

    namespace: str
    catalog: OlmCatalog
    target: str
    path: str


def upgrade_targets(target: OpenShiftTarget, environment: str = "dev") -> list[UpgradeTarget]:
    """The target CSVs of an OpenShift target's ``Manual``-approval Subscriptions."""
    out: list[UpgradeTarget] = []
    for install in openshift_plan(target, environment).installs:
        if install.approve_csv is None:
            continue
        spec = install.subscription["spec"]
        catalog = OlmCatalog(
            str(spec["name"]), str(spec["channel"]), str(spec["source"]), str(spec["sourceNamespace"])
        )
        path = _OLM_PATHS.get(install.role, TARGET)
        key = install.target_key or "targetCsv"
        out.append(UpgradeTarget(install.namespace_name, catalog, install.approve_csv, f"{path}.{key}"))
    return out


def olm_namespaces(target: OpenShiftTarget, environment: str = "dev") -> list[tuple[StackInstall, str]]:
    """What an OpenShift target declares in each operator namespace, with its settings' key path."""
    out: list[tuple[StackInstall, str]] = []
    for install in openshift_plan(target, environment).installs:
        spec = install.subscription["spec"]
        out.append(
            (
                StackInstall(
                    install.namespace_name,
                    str(spec["name"]),
                    str(spec["channel"]),
                    str(install.operator_group["metadata"]["name"]),
                    dict(install.operator_group.get("spec") or {}),
                    install.subscription_name,
                    install.adopt,
                ),
                _OLM_PATHS.get(install.role, TARGET),
            )
        )
    return out

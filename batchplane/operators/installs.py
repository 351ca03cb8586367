"""``batchplane:operators`` → the installs of stage 2, with pinned charts, sources and Helm values.

Sources (each project's install docs at the pinned tag):

* cert-manager: chart ``oci://quay.io/jetstack/charts/cert-manager``, ``crds.enabled=true``;
* KubeRay: CRDs from ``ray-operator/config/crd`` at the release tag (applied server-side, so an upgrade
  upgrades them; Helm never does), then chart ``kuberay-operator`` from
  ``https://ray-project.github.io/kuberay-helm/`` with ``skip_crds``;
* Kubeflow Trainer v2: chart ``oci://ghcr.io/kubeflow/charts/kubeflow-trainer`` with ``jobset.install``;
* Training Operator v1: kustomize ``manifests/overlays/standalone`` of kubeflow/trainer at the tag;
* Kueue: chart ``oci://registry.k8s.io/kueue/charts/kueue``, release name ``kueue`` (so the webhook
  Service is ``kueue-webhook-service``), Configuration in ``managerConfig.controllerManagerConfigYaml``;
* AppWrapper: the release's ``install.yaml``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from batchplane.config.kueue import Toleration
from batchplane.config.kueue_configuration import KUEUE_CONFIG_API_VERSION
from batchplane.config.operators import (
    OperatorHost,
    OperatorsConfig,
    kueue_frameworks,
)
from batchplane.wellknown import KUEUE_CHART_CRDS, NAMESPACE_NAME_LABEL
from batchplane.yamlfile import deep_merge

CERT_MANAGER_CHART = "oci://quay.io/jetstack/charts/cert-manager"
KUBERAY_CHART = "kuberay-operator"
KUBERAY_REPO = "https://ray-project.github.io/kuberay-helm/"
KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
TRAINER_CHART = "oci://ghcr.io/kubeflow/charts/kubeflow-trainer"
KUEUE_RELEASE_NAME = "kueue"
"""Helm release name of Kueue; the chart's fullname, hence its Service names, derive from it."""
KUEUE_WEBHOOK_SERVICE = f"{KUEUE_RELEASE_NAME}-webhook-service"
"""Kueue's webhook Service (``<fullname>-webhook-service``:
``charts/kueue/templates/webhook/`` at https://github.com/kubernetes-sigs/kueue/tree/v0.19.2)."""


def kuberay_crds_source(version: str) -> str:
    """Kustomize remote target of KubeRay's CRDs at chart ``version`` (tag ``v<version>``)."""
    return f"https://github.com/ray-project/kuberay//ray-operator/config/crd?ref=v{version}"


def training_operator_v1_source(version: str) -> str:
    """Kustomize remote target of the v1 Training Operator's standalone overlay at ``version`` (a tag)."""
    return f"https://github.com/kubeflow/trainer//manifests/overlays/standalone?ref={version}"


def appwrapper_source(version: str) -> str:
    """URL of AppWrapper's release manifest for ``version`` (a tag)."""
    return f"https://github.com/project-codeflare/appwrapper/releases/download/{version}/install.yaml"


@dataclass(frozen=True)
class HelmInstall:
    """One Helm release.

    Attributes:
        role: the install's role, used in resource names (``cert-manager``, ``kueue`` ...).
        release_name: the Helm release name.
        chart: chart name (with ``repository``) or an ``oci://`` reference.
        version: pinned chart version.
        namespace: release namespace (created by the release).
        values: the final values (typed options with the raw ``values`` deep-merged over them).
        repository: chart repository URL for non-OCI charts, else ``None``.
        skip_crds: skip the chart's ``crds/`` directory (applied separately).
        template_crds: the CRDs the chart ships as templates (a ``helm uninstall`` deletes them, and every object
            of their kinds); when any, the release is retained on delete (:class:`HelmOperator`).
    """

    role: str
    release_name: str
    chart: str
    version: str
    namespace: str
    values: dict[str, Any]
    repository: str | None = None
    skip_crds: bool = False
    template_crds: tuple[str, ...] = ()


@dataclass(frozen=True)
class ManifestInstall:
    """Manifests applied server-side from a pinned remote source.

    Attributes:
        role: the install's role, used in resource names.
        kind: ``kustomize`` (a kustomize remote target) or ``manifest`` (one YAML file URL).
        source: the pinned URL.
        version: the pinned version (tag) inside ``source``.
    """

    role: str
    kind: Literal["kustomize", "manifest"]
    source: str
    version: str


@dataclass(frozen=True)
class WebhookGateSpec:
    """What the Kueue readiness gate checks: the webhook Service's ready endpoints, then a dry-run
    create of a ResourceFlavor through the API server (which calls the webhooks).

    Attributes:
        namespace: Kueue's namespace.
        service: the webhook Service, or ``None`` to skip the endpoints check (dry run only).
        resource_flavor_api_version: apiVersion of the dry-run ResourceFlavor.
        version: the Kueue version (a change re-runs the gate on update).
        timeout_seconds: give up after this long.
        interval_seconds: pause between checks.
    """

    namespace: str
    service: str | None
    resource_flavor_api_version: str
    version: str
    timeout_seconds: int
    interval_seconds: int


@dataclass(frozen=True)
class OperatorInstalls:
    """Every install of stage 2, ``None`` where not installed. Declared in this order:
    cert-manager → KubeRay CRDs → KubeRay → training → Kueue → webhook gate → AppWrapper.

    Attributes:
        frameworks: Kueue's ``integrations.frameworks`` (derived plus configured).
        configuration: Kueue's manager Configuration document (also inside ``kueue.values``).
    """

    cert_manager: HelmInstall | None
    kuberay_crds: ManifestInstall | None
    kuberay: HelmInstall | None
    training: HelmInstall | ManifestInstall | None
    kueue: HelmInstall | None
    kueue_gate: WebhookGateSpec | None
    appwrapper: ManifestInstall | None
    frameworks: list[str] = field(default_factory=list)
    configuration: dict[str, Any] = field(default_factory=dict)

    def helm_installs(self) -> list[HelmInstall]:
        """The Helm releases, in install order."""
        out = [self.cert_manager, self.kuberay, self.training, self.kueue]
        return [i for i in out if isinstance(i, HelmInstall)]


def _tolerations(given: Sequence[Toleration] | None, host: OperatorHost) -> list[dict[str, Any]]:
    chosen = list(given) if given is not None else list(host.default_tolerations)
    return [t.model_dump(by_alias=True, exclude_none=True) for t in chosen]


def _placement(tolerations: list[dict[str, Any]], node_selector: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if tolerations:
        out["tolerations"] = tolerations
    if node_selector:
        out["nodeSelector"] = dict(node_selector)
    return out


def kueue_configuration_document(
    ops: OperatorsConfig, tenant_namespaces: Sequence[str], frameworks: Sequence[str]
) -> dict[str, Any]:
    """Kueue's manager Configuration (``config.kueue.x-k8s.io/v1beta2``) for ``ops``.

    The chart's own defaults (health, metrics and webhook ports, leader election, controller
    concurrency, client QPS; ``charts/kueue/values.yaml``) are kept, the typed fields are added, and
    ``managedJobsNamespaceSelector`` is derived from ``tenant_namespaces`` when not configured.

    Args:
        ops: the operators config.
        tenant_namespaces: namespaces of the stack's LocalQueues (see ``tenant_namespaces``).
        frameworks: ``integrations.frameworks`` (see :func:`~batchplane.config.operators.kueue_frameworks`).
    """
    c = ops.kueue.configuration

    def dump(model: Any) -> Any:
        return model.model_dump(by_alias=True, exclude_none=True)

    doc: dict[str, Any] = {
        "apiVersion": KUEUE_CONFIG_API_VERSION,
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {
            "groupKindConcurrency": {
                "Job.batch": 5,
                "Pod": 5,
                "Workload.kueue.x-k8s.io": 5,
                "LocalQueue.kueue.x-k8s.io": 1,
                "ClusterQueue.kueue.x-k8s.io": 1,
                "ResourceFlavor.kueue.x-k8s.io": 1,
            }
        },
        "clientConnection": {"qps": 50, "burst": 100},
        "manageJobsWithoutQueueName": c.manage_jobs_without_queue_name,
    }
    if c.metrics.enable_cluster_queue_resources:
        doc["metrics"]["enableClusterQueueResources"] = True
    if c.managed_jobs_namespace_selector is not None:
        doc["managedJobsNamespaceSelector"] = _selector(dump(c.managed_jobs_namespace_selector))
    elif tenant_namespaces:
        doc["managedJobsNamespaceSelector"] = {
            "matchExpressions": [
                {
                    "key": NAMESPACE_NAME_LABEL,
                    "operator": "In",
                    "values": sorted(set(tenant_namespaces)),
                }
            ]
        }
    for key, value in (
        ("waitForPodsReady", c.wait_for_pods_ready),
        ("fairSharing", c.fair_sharing),
        ("admissionFairSharing", c.admission_fair_sharing),
        ("resources", c.resources),
        ("multiKueue", c.multi_kueue),
    ):
        if value is not None:
            doc[key] = _drop_empty(dump(value))
    integrations: dict[str, Any] = {"frameworks": list(frameworks)}
    if c.integrations.external_frameworks:
        integrations["externalFrameworks"] = list(c.integrations.external_frameworks)
    if c.integrations.label_keys_to_copy:
        integrations["labelKeysToCopy"] = list(c.integrations.label_keys_to_copy)
    doc["integrations"] = integrations
    if c.feature_gates:
        doc["featureGates"] = dict(c.feature_gates)
    if c.object_retention_policies is not None:
        doc["objectRetentionPolicies"] = {"workloads": dump(c.object_retention_policies)}
    return doc


def _selector(sel: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in sel.items() if v}


def _drop_empty(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v not in ({}, [])}


def operator_installs(
    ops: OperatorsConfig, host: OperatorHost, tenant_namespaces: Sequence[str]
) -> OperatorInstalls:
    """Turn a validated ``batchplane:operators`` section into the installs of stage 2.

    Args:
        ops: the section (already checked by :func:`~batchplane.config.operators.check_operators`).
        host: what the stack's platform offers (``Platform.operator_host``): its default tolerations (GKE: the
            system-node toleration) go to every install that sets none.
        tenant_namespaces: namespaces of the stack's LocalQueues, for ``managedJobsNamespaceSelector``.

    Returns:
        The plan; every Helm install carries its final values.
    """
    cm = ops.cert_manager
    cert_manager = None
    if cm.enabled:
        placement = _placement(_tolerations(cm.tolerations, host), cm.node_selector)
        typed: dict[str, Any] = {"crds": {"enabled": True}, **placement}
        for part in ("webhook", "cainjector", "startupapicheck"):
            if placement:
                typed[part] = dict(placement)
        cert_manager = HelmInstall(
            "cert-manager",
            "cert-manager",
            CERT_MANAGER_CHART,
            cm.version,
            cm.namespace,
            deep_merge(typed, cm.values),
        )
    kr = ops.kuberay
    kuberay_crds = kuberay = None
    if kr.enabled:
        kuberay_crds = ManifestInstall(
            "kuberay-crds", "kustomize", kuberay_crds_source(kr.version), kr.version
        )
        values = deep_merge(_placement(_tolerations(kr.tolerations, host), kr.node_selector), kr.values)
        kuberay = HelmInstall(
            "kuberay",
            "kuberay-operator",
            KUBERAY_CHART,
            kr.version,
            kr.namespace,
            values,
            repository=KUBERAY_REPO,
            skip_crds=True,
        )
    tr = ops.training
    training: HelmInstall | ManifestInstall | None = None
    version = tr.resolved_version()
    if tr.kind == "trainer-v2" and version is not None:
        training = HelmInstall(
            "trainer",
            "kubeflow-trainer",
            TRAINER_CHART,
            version,
            tr.resolved_namespace(),
            deep_merge({"jobset": {"install": True}}, tr.values),
        )
    elif tr.kind == "training-operator-v1" and version is not None:
        training = ManifestInstall(
            "training-operator", "kustomize", training_operator_v1_source(version), version
        )
    frameworks = kueue_frameworks(ops)
    configuration = kueue_configuration_document(ops, tenant_namespaces, frameworks)
    kq = ops.kueue
    kueue = gate = None
    if kq.enabled:
        controller: dict[str, Any] = {
            "replicas": kq.replicas,
            **_placement(_tolerations(kq.tolerations, host), kq.node_selector),
        }
        typed = {
            "enableCertManager": ops.kueue_uses_cert_manager(),
            "enablePrometheus": kq.enable_prometheus,
            "controllerManager": controller,
            "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(configuration, sort_keys=False)},
        }
        kueue = HelmInstall(
            "kueue",
            KUEUE_RELEASE_NAME,
            KUEUE_CHART,
            kq.version,
            kq.namespace,
            deep_merge(typed, kq.values),
            template_crds=KUEUE_CHART_CRDS,
        )
        gate = WebhookGateSpec(
            kq.namespace,
            KUEUE_WEBHOOK_SERVICE,
            "kueue.x-k8s.io/v1beta2",
            kq.version,
            kq.readiness_gate.timeout_seconds,
            kq.readiness_gate.interval_seconds,
        )
    aw = ops.appwrapper
    appwrapper = (
        ManifestInstall("appwrapper", "manifest", appwrapper_source(aw.version), aw.version)
        if aw.enabled
        else None
    )
    return OperatorInstalls(
        cert_manager, kuberay_crds, kuberay, training, kueue, gate, appwrapper, frameworks, configuration
    )

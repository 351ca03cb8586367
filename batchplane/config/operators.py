"""The ``batchplane:operators`` section: the in-cluster operators a kind / existing / GKE stack installs.

cert-manager, KubeRay (or the GKE-managed Ray add-on), Kueue with a typed manager Configuration,
a Kubeflow training operator (Trainer v2 or the deprecated v1 Training Operator) and the optional
AppWrapper controller. Every install is pinned to a version from an allow-list (the error lists the
allowed ones; each project's release tags on GitHub), has typed options, and takes raw Helm ``values`` as an
escape hatch (deep-merged last). OpenShift stacks install operators through OLM instead
(:mod:`batchplane.targets.openshift.config`) and must not set this section.

Per-field syntax is checked by pydantic; rules that span fields or need the target and the Kueue
objects (mutually exclusive Ray installs, feature gates, frameworks) are in :func:`check_operators`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from batchplane.config.base import ConfigModel, DnsLabel, LabelValue, QualifiedName
from batchplane.config.kueue import Toleration
from batchplane.config.kueue_configuration import (
    KUEUE_FEATURE_GATES,
    KUEUE_FRAMEWORKS,
    KueueConfiguration,
    feature_gate_problem,
)
from batchplane.errors import ConfigIssue
from batchplane.frameworks import ALWAYS_ON, INTEGRATIONS_OF_OPERATOR, JOB_OPERATOR_NAMES, JobOperator

# --- pinned versions (allow-lists) -------------------------------------------------------------

CERT_MANAGER_VERSIONS: tuple[str, ...] = ("v1.21.1",)
"""cert-manager chart versions (the chart version carries the ``v``:
https://github.com/cert-manager/cert-manager/releases/tag/v1.21.1)."""
KUBERAY_VERSIONS: tuple[str, ...] = ("1.7.0",)
"""``kuberay-operator`` chart versions (= KubeRay release without ``v``)."""
KUEUE_VERSIONS: tuple[str, ...] = ("0.19.2",)
"""Kueue chart versions (no ``v``). Feature gates are validated per version."""
TRAINER_V2_VERSIONS: tuple[str, ...] = ("2.3.0",)
"""``kubeflow-trainer`` chart versions (Kubeflow Trainer v2, bundles JobSet 0.12.0)."""
TRAINING_OPERATOR_V1_VERSIONS: tuple[str, ...] = ("v1.9.4",)
"""Git tags of the v1 Training Operator's kustomize manifests (kubeflow/trainer ``release-1.9``)."""
APPWRAPPER_VERSIONS: tuple[str, ...] = ("v1.2.1",)
"""AppWrapper release tags (``install.yaml`` release asset)."""

GKE_SYSTEM_NODE_TOLERATION = Toleration(
    key="components.gke.io/gke-managed-components", operator="Equal", value="true", effect="NoSchedule"
)
"""The toleration Cluster Toolkit, xpk and accelerated-platforms give the Kueue controller so it can
run on GKE system nodes (https://github.com/GoogleCloudPlatform/cluster-toolkit,
https://github.com/AI-Hypercomputer/xpk, https://github.com/GoogleCloudPlatform/accelerated-platforms)."""


@dataclass(frozen=True)
class OperatorHost:
    """What a platform offers the ``batchplane:operators`` section; each platform supplies its own
    (:attr:`batchplane.targets.platform.Platform.operator_host`), so no rule here names a platform.

    Attributes:
        kind: the target's ``kind`` tag, named in messages (``kind``, ``existing``, ``gke``, ``openshift``).
        helm_refusal: why this platform refuses Helm installs (it installs the operators itself, e.g. through
            OLM), reported at ``batchplane:operators``; ``None`` (the default) when Helm installs are allowed.
        ray_addon: whether the platform's cluster offers the GKE Ray add-on (``kuberay.gkeRayAddon``).
            Defaults to false.
        default_tolerations: the tolerations an install gets when its section sets none (GKE: the system-node
            toleration). Defaults to none.
    """

    kind: str
    helm_refusal: str | None = None
    ray_addon: bool = False
    default_tolerations: tuple[Toleration, ...] = ()


def _pinned(project: str, allowed: tuple[str, ...]) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(
                f'"{value}" is not a supported {project} version; supported: {", ".join(allowed)}'
            )
        return value

    return check


NodeSelector = dict[QualifiedName, LabelValue]


class CertManagerInstall(ConfigModel):
    """cert-manager from ``oci://quay.io/jetstack/charts/cert-manager`` with ``crds.enabled=true``."""

    enabled: bool = True
    """Install cert-manager. Defaults to true (Kueue's webhook certificates come from it)."""
    version: Annotated[str, AfterValidator(_pinned("cert-manager", CERT_MANAGER_VERSIONS))] = "v1.21.1"
    """Chart version, one of :data:`CERT_MANAGER_VERSIONS`. Defaults to ``v1.21.1``."""
    namespace: DnsLabel = "cert-manager"
    """Release namespace (created). Defaults to ``cert-manager``."""
    tolerations: list[Toleration] | None = None
    """Tolerations for every cert-manager pod. Omitted: the GKE system-node toleration on GKE, none elsewhere."""
    node_selector: NodeSelector = {}
    """nodeSelector for every cert-manager pod. Defaults to none."""
    values: dict[str, Any] = {}
    """Raw Helm values, deep-merged over the typed ones (escape hatch). Defaults to none."""


class KubeRayInstall(ConfigModel):
    """The KubeRay operator: chart ``kuberay-operator`` from ``https://ray-project.github.io/kuberay-helm/``.

    Its CRDs are applied separately (server-side, pinned to the same tag) before the chart, because
    Helm never upgrades CRDs (docs/operators.md, "Upgrades").
    """

    enabled: bool = True
    """Install KubeRay with Helm. Defaults to true. Set false with ``gkeRayAddon: true``."""
    version: Annotated[str, AfterValidator(_pinned(JOB_OPERATOR_NAMES["kuberay"], KUBERAY_VERSIONS))] = (
        "1.7.0"
    )
    """Chart version, one of :data:`KUBERAY_VERSIONS`. Defaults to ``1.7.0``."""
    namespace: DnsLabel = "kuberay-system"
    """Release namespace (created); the operator watches all namespaces. Defaults to ``kuberay-system``."""
    gke_ray_addon: bool = False
    """Use the GKE-managed Ray operator add-on (``addons_config.ray_operator_config``, GKE target
    only) instead of a self-installed KubeRay; the GKE cluster component reads
    :attr:`OperatorsConfig.gke_ray_addon`. Mutually exclusive with ``enabled``. Defaults to false."""
    tolerations: list[Toleration] | None = None
    """Tolerations for the operator pod. Omitted: the GKE system-node toleration on GKE, none elsewhere."""
    node_selector: NodeSelector = {}
    """nodeSelector for the operator pod. Defaults to none."""
    values: dict[str, Any] = {}
    """Raw Helm values, deep-merged over the typed ones. Defaults to none."""


class ReadinessGateSettings(ConfigModel):
    """How long the Kueue webhook readiness gate waits, and how often it checks."""

    timeout_seconds: Annotated[int, Field(ge=10, le=3600, strict=True)] = 600
    """Give up (and fail the deployment with the last check's result) after this many seconds. Defaults to 600."""
    interval_seconds: Annotated[int, Field(ge=1, le=60, strict=True)] = 5
    """Seconds between checks. Defaults to 5."""


class KueueInstall(ConfigModel):
    """Kueue from ``oci://registry.k8s.io/kueue/charts/kueue`` with a typed manager Configuration."""

    enabled: bool = True
    """Install Kueue. Defaults to true. False on clusters where Kueue is installed another way."""
    version: Annotated[str, AfterValidator(_pinned("Kueue", KUEUE_VERSIONS))] = "0.19.2"
    """Chart version, one of :data:`KUEUE_VERSIONS`. Defaults to ``0.19.2``."""
    namespace: DnsLabel = "kueue-system"
    """Release namespace (created). Defaults to ``kueue-system``."""
    replicas: Annotated[int, Field(ge=1, le=10, strict=True)] = 1
    """Controller-manager replicas: each serves Kueue's admission webhooks, leader election picks the one that
    schedules. Defaults to 1; production stacks should run 2 (a warning otherwise: the webhooks fail closed)."""
    use_cert_manager: bool | None = None
    """Chart ``enableCertManager``: webhook certificates from cert-manager instead of Kueue's internal
    rotator. Omitted: true when this stack installs cert-manager."""
    enable_prometheus: bool = False
    """Chart ``enablePrometheus`` (a ServiceMonitor; needs the Prometheus operator CRDs). Defaults to false."""
    configuration: KueueConfiguration = KueueConfiguration()
    """The manager Configuration. Defaults to Kueue's defaults plus the derived frameworks and namespace selector."""
    tolerations: list[Toleration] | None = None
    """Controller tolerations. Omitted: the GKE system-node toleration on GKE, none elsewhere."""
    node_selector: NodeSelector = {}
    """Controller nodeSelector. Defaults to none."""
    readiness_gate: ReadinessGateSettings = ReadinessGateSettings()
    """The webhook readiness gate's timeout and polling interval."""
    values: dict[str, Any] = {}
    """Raw Helm values, deep-merged over the typed ones. Feature gates given here as
    ``controllerManager.featureGates`` (the ``--feature-gates`` flag) are validated like
    ``configuration.featureGates`` and must not be combined with them. Defaults to none."""


TrainingKind = Literal["trainer-v2", "training-operator-v1", "none"]


class TrainingInstall(ConfigModel):
    """A Kubeflow training operator.

    ``trainer-v2``: Kubeflow Trainer v2 (TrainJob), chart ``oci://ghcr.io/kubeflow/charts/kubeflow-trainer``
    with its JobSet dependency. ``training-operator-v1``: the v1 Training Operator (PyTorchJob, TFJob,
    ...), kustomize manifests ``manifests/overlays/standalone`` at a pinned tag applied server-side;
    **deprecated** — maintenance-only on kubeflow/trainer ``release-1.9``, its Kueue integrations are
    off by default since Kueue 0.19 and slated for removal in 0.20, and it is obsolete in OpenShift AI
    3.6. ``none``: no training operator.
    """

    kind: TrainingKind = "none"
    """Which operator. Defaults to ``none``."""
    version: str | None = None
    """Version: one of :data:`TRAINER_V2_VERSIONS` (default ``2.3.0``) for ``trainer-v2``, one of
    :data:`TRAINING_OPERATOR_V1_VERSIONS` (default ``v1.9.4``) for ``training-operator-v1``."""
    namespace: DnsLabel | None = None
    """Namespace. Omitted: ``kubeflow-system`` (Trainer v2), ``kubeflow`` (fixed by the v1 manifests)."""
    values: dict[str, Any] = {}
    """Raw Helm values for ``trainer-v2`` (the v1 operator has no chart). Defaults to none."""

    def resolved_version(self) -> str | None:
        """The version to install: the configured one or the kind's default (``None`` for ``none``)."""
        if self.kind == "none":
            return None
        return self.version or (
            TRAINER_V2_VERSIONS[0] if self.kind == "trainer-v2" else TRAINING_OPERATOR_V1_VERSIONS[0]
        )

    def resolved_namespace(self) -> str:
        """The namespace the operator runs in."""
        return self.namespace or ("kubeflow-system" if self.kind == "trainer-v2" else "kubeflow")


class AppWrapperInstall(ConfigModel):
    """The AppWrapper controller (successor of the MCAD gang dispatcher), from its release ``install.yaml``."""

    enabled: bool = False
    """Install AppWrapper (needs Kueue). Defaults to false."""
    version: Annotated[
        str, AfterValidator(_pinned(JOB_OPERATOR_NAMES["appwrapper"], APPWRAPPER_VERSIONS))
    ] = "v1.2.1"
    """Release tag, one of :data:`APPWRAPPER_VERSIONS`. Defaults to ``v1.2.1``."""


class OperatorsConfig(ConfigModel):
    """``batchplane:operators``: what the program's operators stage installs, in the order
    cert-manager → job-operator CRDs and operators → Kueue → Kueue webhook gate → AppWrapper."""

    cert_manager: CertManagerInstall = CertManagerInstall()
    """cert-manager. Defaults to installed."""
    kuberay: KubeRayInstall = KubeRayInstall()
    """KubeRay. Defaults to installed with Helm."""
    kueue: KueueInstall = KueueInstall()
    """Kueue. Defaults to installed."""
    training: TrainingInstall = TrainingInstall()
    """Kubeflow training operator. Defaults to none."""
    appwrapper: AppWrapperInstall = AppWrapperInstall()
    """AppWrapper. Defaults to not installed."""

    @property
    def gke_ray_addon(self) -> bool:
        """True when the GKE cluster should enable its managed Ray operator add-on."""
        return self.kuberay.gke_ray_addon

    @property
    def ray_installed(self) -> bool:
        """True when a Ray operator (Helm KubeRay or the GKE add-on) runs in the cluster."""
        return self.kuberay.enabled or self.kuberay.gke_ray_addon

    def installed_namespaces(self) -> dict[str, str]:
        """``{operator: namespace}`` of every operator this config installs (Helm releases and manifests
        create these namespaces). AppWrapper's ``install.yaml`` uses ``appwrapper-system``."""
        found: dict[str, str] = {}
        if self.cert_manager.enabled:
            found["certManager"] = self.cert_manager.namespace
        if self.kuberay.enabled:
            found["kuberay"] = self.kuberay.namespace
        if self.kueue.enabled:
            found["kueue"] = self.kueue.namespace
        if self.training.kind != "none":
            found["training"] = self.training.resolved_namespace()
        if self.appwrapper.enabled:
            found["appwrapper"] = "appwrapper-system"
        return found

    def kueue_uses_cert_manager(self) -> bool:
        """Chart ``enableCertManager``: the explicit setting, else whether cert-manager is installed."""
        k = self.kueue.use_cert_manager
        return self.cert_manager.enabled if k is None else k


# --- derived Kueue integrations ------------------------------------------------------------------


def installed_job_operators(ops: OperatorsConfig) -> list[JobOperator]:
    """The job operators the stack runs: ``kuberay`` with KubeRay or the GKE Ray add-on, the training operator of
    ``operators.training.kind`` (unless ``none``), ``appwrapper`` when enabled."""
    found: list[JobOperator] = []
    if ops.ray_installed:
        found.append("kuberay")
    if ops.training.kind != "none":
        found.append(ops.training.kind)
    if ops.appwrapper.enabled:
        found.append("appwrapper")
    return found


def derived_frameworks(ops: OperatorsConfig) -> list[str]:
    """The ``integrations.frameworks`` implied by what the stack installs, before user additions.

    :data:`~batchplane.frameworks.ALWAYS_ON` (``batch/job``), then each installed job operator's integrations as
    the framework registry states them (:data:`~batchplane.frameworks.INTEGRATIONS_OF_OPERATOR`): RayJob,
    RayCluster and RayService with KubeRay; TrainJob and JobSet with Trainer v2 (it installs JobSet); PyTorchJob
    with the v1 Training Operator (off by default since Kueue 0.19, so it must be listed); AppWrapper.

    Returns:
        Names in :data:`~batchplane.config.kueue_configuration.KUEUE_FRAMEWORKS` order.
    """
    names = set(ALWAYS_ON)
    for operator in installed_job_operators(ops):
        names.update(INTEGRATIONS_OF_OPERATOR[operator])
    return [n for n in KUEUE_FRAMEWORKS if n in names]


def kueue_frameworks(ops: OperatorsConfig) -> list[str]:
    """Derived frameworks plus the user's ``configuration.integrations.frameworks``, in canonical order.

    Assumes :func:`check_operators` passed (known names, no duplicates).
    """
    wanted = set(derived_frameworks(ops)) | set(ops.kueue.configuration.integrations.frameworks)
    return [n for n in KUEUE_FRAMEWORKS if n in wanted]


def helm_flag_feature_gates(values: Mapping[str, Any]) -> list[Any]:
    """The ``controllerManager.featureGates`` list of raw Kueue Helm values (the ``--feature-gates`` flag)."""
    cm = values.get("controllerManager")
    gates = cm.get("featureGates") if isinstance(cm, Mapping) else None
    return list(gates) if isinstance(gates, list) else []


# --- cross-field rules ----------------------------------------------------------------------------

_BASE = "batchplane:operators"


def check_operators(
    ops: OperatorsConfig,
    host: OperatorHost,
    kueue_api_version: str | None = None,
    *,
    environment: str | None = None,
) -> list[ConfigIssue]:
    """Every rule of ``batchplane:operators`` that spans fields or needs the target.

    Args:
        ops: the validated section.
        host: what the stack's platform offers the installs (its ``Platform.operator_host``).
        kueue_api_version: ``batchplane:kueue.apiVersion`` (``v1beta1`` on an installed Kueue 0.19 gets
            a migration warning). Defaults to not checked.
        environment: ``batchplane:environment``; in ``production`` a single Kueue replica gets a warning, in
            ``staging`` and ``production`` the deprecated v1 Training Operator does. Defaults to not checked.

    Returns:
        All issues, with exact key paths (empty when the section is valid).
    """
    issues: list[ConfigIssue] = []

    def error(path: str, message: str) -> None:
        issues.append(ConfigIssue(f"{_BASE}.{path}", message))

    if host.helm_refusal is not None:
        return [ConfigIssue(_BASE, host.helm_refusal)]
    if ops.kuberay.gke_ray_addon:
        if ops.kuberay.enabled:
            error(
                "kuberay.gkeRayAddon",
                "the GKE Ray add-on and a Helm-installed KubeRay are mutually exclusive "
                "(both run a KubeRay operator with the same CRDs); set kuberay.enabled: false",
            )
        if not host.ray_addon:
            error("kuberay.gkeRayAddon", f"the GKE Ray add-on needs target kind gke, not {host.kind}")
    _check_training(ops.training, error)
    # A dev stack (the kind default: its PyTorchJob end-to-end run and that run's offline checks use the v1 CRDs)
    # keeps v1 without a warning on every command; the deprecation is in the config reference and
    # docs/operators.md. Where a stack is meant to last (staging, production) it is a warning.
    if ops.training.kind == "training-operator-v1" and environment in ("staging", "production"):
        issues.append(
            ConfigIssue(
                f"{_BASE}.training.kind",
                "the v1 Training Operator is deprecated (maintenance only; "
                "its Kueue integration is off by default since Kueue 0.19 and slated for removal "
                "in 0.20): plan the move to trainer-v2 (docs/operators.md)",
                "warning",
            )
        )
    if ops.kueue.enabled and kueue_api_version == "kueue.x-k8s.io/v1beta1":
        issues.append(
            ConfigIssue(
                "batchplane:kueue.apiVersion",
                f"Kueue {ops.kueue.version} stores v1beta2 and only "
                "converts deprecated v1beta1 objects through its webhook: emit v1beta2 and run the "
                "storage migration (docs/operators.md)",
                "warning",
            )
        )
    kueue = ops.kueue
    if kueue.use_cert_manager and not ops.cert_manager.enabled:
        error(
            "kueue.useCertManager",
            "needs cert-manager: set certManager.enabled: true (or omit useCertManager)",
        )
    if ops.appwrapper.enabled and not kueue.enabled:
        error("appwrapper.enabled", "AppWrapper needs Kueue installed first: set kueue.enabled: true")
    _check_feature_gates(kueue, error)
    issues += _check_incremental_dispatcher(kueue)
    if environment == "production" and kueue.enabled and kueue.replicas < 2:
        issues.append(
            ConfigIssue(
                f"{_BASE}.kueue.replicas",
                "one Kueue replica in production: Kueue's admission webhooks fail closed (failurePolicy: Fail in "
                "its v0.19.2 chart), so while that pod restarts or moves no Job, RayJob or workload can be created "
                "or updated; set replicas: 2 (every replica serves the webhooks, leader election picks one "
                "scheduler)",
                "warning",
            )
        )
    _check_frameworks(ops, error)
    if kueue.configuration.resources is not None:
        inputs = [t.input for t in kueue.configuration.resources.transformations]
        for i, name in enumerate(inputs):
            if inputs.index(name) != i:
                error(
                    f"kueue.configuration.resources.transformations[{i}].input",
                    f'duplicate transformation input "{name}" (Kueue keys transformations by input)',
                )
    return issues


def _check_training(training: TrainingInstall, error: Callable[[str, str], None]) -> None:
    if training.kind == "none":
        if training.version is not None:
            error("training.version", "no training operator is installed (kind: none); remove version")
        return
    allowed = TRAINER_V2_VERSIONS if training.kind == "trainer-v2" else TRAINING_OPERATOR_V1_VERSIONS
    if training.version is not None and training.version not in allowed:
        project = "Kubeflow Trainer v2" if training.kind == "trainer-v2" else "Training Operator v1"
        error(
            "training.version",
            f'"{training.version}" is not a supported {project} version; supported: {", ".join(allowed)}',
        )
    if training.kind == "training-operator-v1":
        if training.values:
            error(
                "training.values",
                "the v1 Training Operator has no Helm chart (kustomize manifests only); "
                "values apply to trainer-v2",
            )
        if training.namespace not in (None, "kubeflow"):
            error(
                "training.namespace", "the v1 Training Operator's standalone manifests install into kubeflow"
            )


def _check_feature_gates(kueue: KueueInstall, error: Callable[[str, str], None]) -> None:
    in_config = kueue.configuration.feature_gates
    for name, enabled in in_config.items():
        why = feature_gate_problem(kueue.version, name, enabled)
        if why is not None:
            error(f"kueue.configuration.featureGates.{name}", why)
    flags = helm_flag_feature_gates(kueue.values)
    path = "kueue.values.controllerManager.featureGates"
    flag_names: list[str] = []
    for i, gate in enumerate(flags):
        if (
            not isinstance(gate, Mapping)
            or not isinstance(gate.get("name"), str)
            or not isinstance(gate.get("enabled"), bool)
        ):
            error(f"{path}[{i}]", "expected {name: <gate>, enabled: true|false}")
            continue
        flag_names.append(gate["name"])
        why = feature_gate_problem(kueue.version, gate["name"], gate["enabled"])
        if why is not None:
            error(f"{path}[{i}]", why)
    if flag_names and in_config:
        both = sorted(set(flag_names) & set(in_config))
        detail = f" ({', '.join(both)} in both)" if both else ""
        error(
            path,
            f"feature gates are set both as the --feature-gates flag and in "
            f"configuration.featureGates{detail}; Kueue refuses to start with both "
            f'("feature gates for CLI and configuration cannot both specified"): use configuration.featureGates',
        )


def _check_incremental_dispatcher(kueue: KueueInstall) -> list[ConfigIssue]:
    """Kueue's own rule on ``multiKueue.incrementalDispatcherConfig`` (``pkg/config/validation.go`` lines 221–229
    at https://github.com/kubernetes-sigs/kueue/tree/v0.19.2: only with the incremental dispatcher), and a warning
    where the ``MultiKueueIncrementalDispatcherConfig`` gate is off, which makes Kueue ignore the step."""
    options = kueue.configuration.multi_kueue
    if options is None or options.incremental_dispatcher_config is None:
        return []
    path = f"{_BASE}.kueue.configuration.multiKueue.incrementalDispatcherConfig"
    if options.dispatcher_name != "kueue.x-k8s.io/multikueue-dispatcher-incremental":
        return [
            ConfigIssue(
                path,
                "only valid with dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-incremental (Kueue refuses "
                "the Configuration otherwise and the manager does not start)",
            )
        ]
    gate = KUEUE_FEATURE_GATES[kueue.version]["MultiKueueIncrementalDispatcherConfig"]
    if not kueue.configuration.feature_gates.get(gate.name, gate.default):
        return [
            ConfigIssue(
                path,
                f"ignored: the {gate.name} feature gate is off, so Kueue nominates 3 workers per round; "
                f"enable the gate or remove the step",
                "warning",
            )
        ]
    return []


def _check_frameworks(ops: OperatorsConfig, error: Callable[[str, str], None]) -> None:
    extra = ops.kueue.configuration.integrations.frameworks
    derived = set(derived_frameworks(ops))
    counts = Counter(extra)
    seen: set[str] = set()
    for i, name in enumerate(extra):
        path = f"kueue.configuration.integrations.frameworks[{i}]"
        if name not in KUEUE_FRAMEWORKS:
            error(path, f'unknown framework "{name}"; Kueue accepts: {", ".join(KUEUE_FRAMEWORKS)}')
        elif counts[name] > 1 and name in seen:
            error(path, f'duplicate framework "{name}" (Kueue rejects duplicates)')
        elif name in derived:
            error(path, f'"{name}" is already enabled because of what this stack installs; remove it')
        seen.add(name)

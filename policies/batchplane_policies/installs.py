"""Install policies: pinned and supported chart versions and manifest sources, Kueue integrations that
cover the installed job operators, cert-manager wherever something relies on it, and Kueue objects
that wait for the Kueue readiness gate.

Resources: ``kubernetes:helm.sh/v3:Release`` and ``kubernetes:helm.sh/v4:Chart`` (``chart``,
``version``, ``values``), ``kubernetes:kustomize/v2:Directory`` (``directory``),
``kubernetes:yaml/v2:ConfigFile`` (``file``), OLM ``Subscription``s, the RHBoK ``Kueue`` CR and the
DataScienceCluster (https://github.com/opendatahub-io/opendatahub-operator), cert-manager objects and webhook
configurations.
Kueue's manager Configuration is read from the Kueue release's
``values.managerConfig.controllerManagerConfigYaml`` (chart ``values.yaml``,
https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/charts/kueue/values.yaml); without it the chart's default
framework list of Kueue 0.19.2 applies.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from batchplane.config import operators
from batchplane.frameworks import (
    BY_NAME,
    INTEGRATIONS_OF_OPERATOR,
    JOB_OPERATOR_NAMES,
    JobOperator,
    batch_job,
)
from batchplane.frameworks import KUEUE_CHART_DEFAULT_FRAMEWORKS as _CHART_DEFAULT_FRAMEWORKS
from batchplane.targets.openshift.dsc import DSC_COMPONENT_OPERATORS
from batchplane_policies._support import (
    ReportViolation,
    ResourceView,
    config_value,
    depends_on,
    describe,
    flag,
    get,
    kueue_kind,
    mapping,
    per_cluster,
    string_list,
    text,
)

HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")
MANIFEST_SOURCES = {
    "kubernetes:kustomize/v2:Directory": "directory",
    "kubernetes:yaml/v2:ConfigFile": "file",
    "kubernetes:yaml:ConfigFile": "file",
}
"""Remote-manifest resource types and the input that holds their source."""
SUBSCRIPTION = "kubernetes:operators.coreos.com/v1alpha1:Subscription"
DYNAMIC = "pulumi-python:dynamic:Resource"

SUPPORTED_CHART_VERSIONS: dict[str, list[str]] = {
    "cert-manager": list(operators.CERT_MANAGER_VERSIONS),
    "kuberay-operator": list(operators.KUBERAY_VERSIONS),
    "kueue": list(operators.KUEUE_VERSIONS),
    "kubeflow-trainer": list(operators.TRAINER_V2_VERSIONS),
}
"""Chart (last path segment of ``chart``) → supported versions: Batchplane's allow-lists
(:mod:`batchplane.config.operators`), the one statement of them."""

SUPPORTED_SOURCE_VERSIONS: dict[str, list[str]] = {
    "github.com/ray-project/kuberay": [
        f"v{v}" for v in operators.KUBERAY_VERSIONS
    ],  # the CRDs' ref (v<version>)
    "github.com/kubeflow/trainer": list(operators.TRAINING_OPERATOR_V1_VERSIONS),
    "github.com/project-codeflare/appwrapper": list(operators.APPWRAPPER_VERSIONS),
}
"""Remote manifest repository → supported refs/release tags (KubeRay CRDs, v1 Training Operator,
AppWrapper): Batchplane's allow-lists (:mod:`batchplane.config.operators`)."""

KUEUE_CHART_DEFAULT_FRAMEWORKS = _CHART_DEFAULT_FRAMEWORKS
"""``integrations.frameworks`` of the Kueue 0.19.2 chart's default Configuration (``values.yaml``);
``kubeflow.org/pytorchjob`` is off by default since 0.19."""

READINESS_GATE = "kueue-webhook"
"""``gate`` input of Batchplane's Kueue readiness gate (a dynamic resource that waits until Kueue's
webhook answers)."""

_PINNED_VERSION = re.compile(r"^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$")
_TRAINING_V1 = re.compile(
    r"kubeflow/(trainer|training-operator)(\.git)?//manifests/overlays/(standalone|kubeflow)"
)
"""Kustomize overlays of the v1 Training Operator (kubeflow/trainer ``release-1.9``; Trainer v2 uses others)."""
_FLOATING_REFS = frozenset({"main", "master", "HEAD", "head", "latest", "trunk", "develop"})


def chart_key(chart: str) -> str:
    """The chart's name: the last path segment (``oci://quay.io/jetstack/charts/cert-manager`` →
    ``cert-manager``, ``jetstack/cert-manager`` → ``cert-manager``)."""
    return chart.rstrip("/").rsplit("/", 1)[-1]


# --- helm-chart-versions-supported ------------------------------------------------------------------


def _chart_versions(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type not in HELM_TYPES:
        return
    chart = text(get(args.props, "chart"))
    if chart is None:
        return  # a local chart path given as an asset/archive: nothing to pin
    version = get(args.props, "version")
    key = chart_key(chart)
    if not isinstance(version, str) or not version:
        report_violation(f'chart "{chart}" has no version: Helm would install whatever is newest')
        return
    if not _PINNED_VERSION.match(version):
        report_violation(f'chart "{chart}" version "{version}" is not an exact version')
        return
    supported = mapping(config_value(args.get_config(), "supportedVersions", SUPPORTED_CHART_VERSIONS))
    allowed = string_list(supported.get(key))
    if allowed and version not in allowed:
        report_violation(
            f'chart "{key}" version "{version}" is not supported; supported: {", ".join(allowed)}'
        )


helm_chart_versions_supported = ResourceValidationPolicy(
    name="helm-chart-versions-supported",
    description="Helm charts must be pinned to an exact version, and known charts to a supported one.",
    validate=_chart_versions,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "supportedVersions": {
                "type": "object",
                "additionalProperties": {"type": "array", "items": {"type": "string"}},
                "default": {k: list(v) for k, v in SUPPORTED_CHART_VERSIONS.items()},
                "description": "Chart name → allowed versions; charts not listed only need an exact version.",
            }
        }
    ),
    remediation_steps=(
        "Set the release's version to one of the supported versions (batchplane:operators.<operator>.version); "
        "upgrade the allow-list together with the tests when moving to a new release."
    ),
)


# --- remote-manifests-pinned ------------------------------------------------------------------------


def source_problem(source: str, supported: Mapping[str, Any], *, kustomize: bool = False) -> str | None:
    """Why a remote manifest source is not pinned to a supported ref, or ``None``.

    Args:
        source: the ``directory``/``file`` input.
        supported: ``host/owner/repo`` → allowed refs or release tags.
        kustomize: the source is a kustomize remote target, which needs ``?ref=<tag or commit>``.

    URLs must not follow a branch (``main``, ``master``, ``HEAD``) or ``latest``; known repositories
    must use a supported ref (or release tag, for ``/releases/download/<tag>/`` assets).
    """
    if not source.startswith(("http://", "https://", "github.com/", "git@", "ssh://")):
        return None  # a local path: versioned with the repository
    parts = urlsplit(source if "://" in source else f"https://{source}")
    segments = [s for s in parts.path.split("/") if s]
    ref = (parse_qs(parts.query).get("ref") or [""])[0]
    if (kustomize or "//" in parts.path.lstrip("/")) and not ref:
        return f'"{source}" has no ?ref=: kustomize would fetch the default branch'
    floating = sorted((set(segments) | {ref}) & _FLOATING_REFS)
    if floating:
        return f'"{source}" follows "{floating[0]}", not a tag or commit'
    repo = f"{parts.netloc}/{'/'.join(segments[:2])}"
    allowed = string_list(supported.get(repo))
    if allowed:
        version = ref or next((segments[i + 1] for i, s in enumerate(segments[:-1]) if s == "download"), "")
        if version not in allowed:
            return f'"{source}" uses {repo} at "{version}", which is not supported; supported: {", ".join(allowed)}'
    return None


def _manifests_pinned(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    key = MANIFEST_SOURCES.get(args.resource_type)
    source = text(get(args.props, key)) if key else None
    if source is None:
        return
    supported = mapping(config_value(args.get_config(), "supportedVersions", SUPPORTED_SOURCE_VERSIONS))
    problem = source_problem(source, supported, kustomize=key == "directory")
    if problem is not None:
        report_violation(problem)


remote_manifests_pinned = ResourceValidationPolicy(
    name="remote-manifests-pinned",
    description="Remote kustomize/YAML sources must be pinned to a tag or commit, and known ones to a supported tag.",
    validate=_manifests_pinned,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "supportedVersions": {
                "type": "object",
                "additionalProperties": {"type": "array", "items": {"type": "string"}},
                "default": {k: list(v) for k, v in SUPPORTED_SOURCE_VERSIONS.items()},
                "description": "host/owner/repo → allowed refs or release tags.",
            }
        }
    ),
    remediation_steps="Add ?ref=<release tag> (or download a release asset by tag) from the supported list.",
)


# --- kueue-integrations-cover-operators ---------------------------------------------------------------


def _helm_charts(resources: list[Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for r in resources:
        if r.resource_type in HELM_TYPES and (chart := text(get(r.props, "chart"))):
            out.setdefault(chart_key(chart), []).append(r)
    return out


def _sources(resources: list[Any]) -> list[str]:
    out = []
    for r in resources:
        key = MANIFEST_SOURCES.get(r.resource_type)
        if key and (source := text(get(r.props, key))):
            out.append(source)
    return out


OPERATOR_INTEGRATIONS: dict[str, tuple[str, ...]] = {
    JOB_OPERATOR_NAMES[operator]: names for operator, names in INTEGRATIONS_OF_OPERATOR.items()
}
"""Job operator (as messages name it) → the Kueue integrations whose jobs bypass Kueue when the operator is installed
and the integration is off: the framework registry's statement (:data:`batchplane.frameworks.INTEGRATIONS_OF_OPERATOR`),
the same one the program switches them on from."""


def required_frameworks(resources: list[Any]) -> dict[str, list[str]]:
    """Installed job operator → the Kueue ``integrations.frameworks`` it needs, from what the stack
    installs (Helm charts and remote manifests)."""
    charts = _helm_charts(resources)
    sources = _sources(resources)
    installed: dict[JobOperator, bool] = {
        "kuberay": "kuberay-operator" in charts,
        "training-operator-v1": any(_TRAINING_V1.search(s) for s in sources)
        or ("training-operator" in charts),
        "trainer-v2": "kubeflow-trainer" in charts,
        "appwrapper": any("project-codeflare/appwrapper" in s for s in sources),
    }
    return {
        JOB_OPERATOR_NAMES[operator]: list(INTEGRATIONS_OF_OPERATOR[operator])
        for operator, present in installed.items()
        if present
    }


def kueue_frameworks(release: ResourceView) -> list[str] | str:
    """``integrations.frameworks`` of a Kueue release's Configuration, or a problem description.

    Without ``managerConfig.controllerManagerConfigYaml`` the chart's defaults apply
    (:data:`KUEUE_CHART_DEFAULT_FRAMEWORKS`); an empty list means Kueue's default ``[batch/job]``.
    """
    import yaml

    raw = get(release.props, "values", "managerConfig", "controllerManagerConfigYaml")
    if raw is None:
        return list(KUEUE_CHART_DEFAULT_FRAMEWORKS)
    if not isinstance(raw, str):
        return "values.managerConfig.controllerManagerConfigYaml is not a string"
    try:
        document = yaml.safe_load(raw)
    except yaml.YAMLError:
        return "values.managerConfig.controllerManagerConfigYaml is not YAML"
    frameworks = string_list(get(document, "integrations", "frameworks"))
    return frameworks or [batch_job.FRAMEWORK.name]  # Kueue's default when the list is empty


def _rhbok_names(operator: str) -> list[str]:
    """The RHBoK ``Kueue`` CR names of the integrations ``operator`` needs (:data:`OPERATOR_INTEGRATIONS`)."""
    return [rhbok for name in OPERATOR_INTEGRATIONS[operator] if (rhbok := BY_NAME[name].rhbok_name)]


#: DataScienceCluster component → the job operator it deploys (as messages name it): the program's statement
#: (:data:`batchplane.targets.openshift.dsc.DSC_COMPONENT_OPERATORS`), which its ``Kueue`` CR is derived from.
_DSC_COMPONENTS = {
    component: JOB_OPERATOR_NAMES[operator] for component, operator in DSC_COMPONENT_OPERATORS.items()
}


def _integrations(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    resources = list(args.resources)
    need = required_frameworks(resources)
    for release in _helm_charts(resources).get("kueue", []):
        found = kueue_frameworks(release)
        if isinstance(found, str):
            report_violation(f"Kueue release: {found}", release.urn)
            continue
        for operator, frameworks in need.items():
            absent = [f for f in frameworks if f not in found]
            if absent:
                report_violation(
                    f"{operator} is installed but Kueue's integrations.frameworks lacks {', '.join(absent)}: "
                    "its jobs would bypass Kueue",
                    release.urn,
                )
    # OpenShift: the Red Hat build of Kueue's Kueue CR vs the DataScienceCluster's managed components.
    dsc_need = {
        operator: _rhbok_names(operator)
        for r in resources
        if r.resource_type.endswith(":DataScienceCluster")
        for component, operator in _DSC_COMPONENTS.items()
        if text(get(r.props, "spec", "components", component, "managementState")) == "Managed"
    }
    for cr in (
        r
        for r in resources
        if r.resource_type.startswith("kubernetes:kueue.openshift.io/") and r.resource_type.endswith(":Kueue")
    ):
        found_names = string_list(get(cr.props, "spec", "config", "integrations", "frameworks"))
        for operator, frameworks in dsc_need.items():
            absent = [f for f in frameworks if f not in found_names]
            if absent:
                report_violation(
                    f"{operator} is managed by the DataScienceCluster but the Kueue CR's "
                    f"spec.config.integrations.frameworks lacks {', '.join(absent)}",
                    cr.urn,
                )


kueue_integrations_cover_operators = StackValidationPolicy(
    name="kueue-integrations-cover-operators",
    description="Kueue's integrations.frameworks must cover every job operator the stack installs.",
    validate=per_cluster(_integrations),
    enforcement_level=EnforcementLevel.MANDATORY,
    remediation_steps=(
        "Enable the framework in Kueue's Configuration (batchplane derives it from batchplane:operators; add it to "
        "operators.kueue.configuration.integrations.frameworks if you override the Configuration). Kueue 0.19 "
        "disables kubeflow.org/pytorchjob by default."
    ),
)


# --- cert-manager-present ---------------------------------------------------------------------------


def is_cert_manager_install(resource: ResourceView) -> bool:
    """A cert-manager install: the Helm chart ``cert-manager`` or an OLM Subscription to cert-manager."""
    if resource.resource_type in HELM_TYPES:
        return chart_key(text(get(resource.props, "chart")) or "") == "cert-manager"
    if resource.resource_type == SUBSCRIPTION:
        return "cert-manager" in (text(get(resource.props, "spec", "name")) or "")
    return False


def cert_manager_users(resources: list[Any]) -> list[tuple[Any, str]]:
    """Resources that rely on cert-manager, each with the reason."""
    users: list[tuple[Any, str]] = []
    for r in resources:
        if r.resource_type.startswith("kubernetes:cert-manager.io/"):
            users.append((r, "is a cert-manager object"))
        elif r.resource_type.endswith("WebhookConfiguration") and text(
            get(r.props, "metadata", "annotations", "cert-manager.io/inject-ca-from")
        ):
            users.append((r, "gets its CA bundle from cert-manager's CA injector"))
        elif (
            r.resource_type in HELM_TYPES
            and chart_key(text(get(r.props, "chart")) or "") == "kueue"
            and flag(get(r.props, "values", "enableCertManager")) is True
        ):
            users.append((r, "sets enableCertManager"))
    return users


def _cert_manager(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    resources = list(args.resources)
    users = cert_manager_users(resources)
    if not users:
        return
    installs = [r for r in resources if is_cert_manager_install(r)]
    preinstalled = flag(config_value(args.get_config(), "preinstalled", False)) is True
    for user, why in users:
        if installs:
            if not depends_on(user, is_cert_manager_install):
                report_violation(
                    f"{describe(user)} {why} but does not depend on the cert-manager install", user.urn
                )
        elif not preinstalled:
            report_violation(f"{describe(user)} {why} but the stack installs no cert-manager", user.urn)


cert_manager_present = StackValidationPolicy(
    name="cert-manager-present",
    description="Whatever relies on cert-manager (certificates, CA injection, Kueue's enableCertManager) needs "
    "cert-manager installed by the stack first.",
    validate=per_cluster(_cert_manager),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "preinstalled": {
                "type": "boolean",
                "default": False,
                "description": "cert-manager is installed outside the stack (only the ordering is then unchecked).",
            }
        }
    ),
    remediation_steps=(
        "Enable batchplane:operators.certManager (or the OpenShift cert-manager operator) and make the dependent "
        "objects depend on it; set preinstalled: true in the policy config when the cluster already runs it."
    ),
)


# --- kueue-objects-wait-for-readiness-gate --------------------------------------------------------------


def is_readiness_gate(resource: ResourceView) -> bool:
    """Batchplane's Kueue readiness gate: a dynamic resource with ``gate: kueue-webhook``."""
    return resource.resource_type == DYNAMIC and text(get(resource.props, "gate")) == READINESS_GATE


def _installs_kueue(resources: list[Any]) -> bool:
    return bool(_helm_charts(resources).get("kueue")) or any(
        r.resource_type == SUBSCRIPTION and text(get(r.props, "spec", "name")) == "kueue-operator"
        for r in resources
    )


def _readiness(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    resources = list(args.resources)
    has_gate = any(is_readiness_gate(r) for r in resources)
    if not has_gate and not _installs_kueue(resources):
        return  # Kueue is managed outside the stack
    for r in resources:
        if kueue_kind(r.resource_type) is None:
            continue
        if not has_gate:
            report_violation(f"{describe(r)}: the stack installs Kueue but has no readiness gate", r.urn)
        elif not depends_on(r, is_readiness_gate):
            report_violation(f"{describe(r)} does not depend on the Kueue readiness gate", r.urn)


kueue_objects_wait_for_readiness_gate = StackValidationPolicy(
    name="kueue-objects-wait-for-readiness-gate",
    description="Kueue objects must depend on the Kueue readiness gate when the stack installs Kueue.",
    validate=per_cluster(_readiness),
    enforcement_level=EnforcementLevel.MANDATORY,
    remediation_steps=(
        "Create Kueue objects with depends_on=[the readiness gate] (KueueQueuesArgs.kueue_ready): the Helm "
        "release is 'ready' before Kueue's webhook serves, and creating objects then fails."
    ),
)

POLICIES = [
    helm_chart_versions_supported,
    remote_manifests_pinned,
    kueue_integrations_cover_operators,
    cert_manager_present,
    kueue_objects_wait_for_readiness_gate,
]
"""The install policies, in the order the pack lists them."""

"""Admission webhook policies: fail-closed webhooks stay out of system namespaces, TLS comes from
cert-manager, webhook pods run as non-root, and production webhooks are highly available.

Resources: ``kubernetes:admissionregistration.k8s.io/v1:{Validating,Mutating}WebhookConfiguration``
(``webhooks[].failurePolicy`` — ``Fail`` when unset in v1 —, ``namespaceSelector``,
``clientConfig.service``), the ``Service`` a webhook calls, the ``Deployment`` whose pods that
Service selects, and ``PodDisruptionBudget``s. The CA-injection annotation
``cert-manager.io/inject-ca-from: <namespace>/<Certificate>`` is cert-manager's cainjector
(cert-manager docs "CA Injector").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from batchplane.wellknown import NAMESPACE_NAME_LABEL as NAME_LABEL
from batchplane_policies._support import (
    PRODUCTION_ENVIRONMENTS,
    ReportViolation,
    config_value,
    depends_on,
    describe,
    flag,
    get,
    integer,
    is_production,
    items,
    mapping,
    object_name,
    per_cluster,
    string_list,
    text,
)

DEFAULT_SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "cert-manager", "kueue-system")
"""Namespaces a fail-closed webhook must never reach (besides its own namespace): the control
plane's and those of the operators the webhook's TLS and Kueue depend on."""

INJECT_ANNOTATIONS = ("cert-manager.io/inject-ca-from", "cert-manager.io/inject-ca-from-secret")
SERVICE = "kubernetes:core/v1:Service"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
PDB = "kubernetes:policy/v1:PodDisruptionBudget"
CERTIFICATE_PREFIX = "kubernetes:cert-manager.io/"


def is_webhook_configuration(resource_type: str) -> bool:
    """``kubernetes:admissionregistration.k8s.io/<v>:{Validating,Mutating}WebhookConfiguration``."""
    return resource_type.startswith("kubernetes:admissionregistration.k8s.io/") and resource_type.endswith(
        ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
    )


def selector_matches(selector: Any, labels: Mapping[str, str]) -> bool:
    """Whether a ``metav1.LabelSelector`` matches ``labels`` (an absent or empty selector matches all)."""
    for key, value in mapping(get(selector, "matchLabels")).items():
        if labels.get(key) != value:
            return False
    for expression in items(get(selector, "matchExpressions")):
        key = text(get(expression, "key")) or ""
        operator = text(get(expression, "operator"))
        values = string_list(get(expression, "values"))
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _namespace(props: Mapping[str, Any]) -> str:
    return text(get(props, "metadata", "namespace")) or "default"


def _webhooks(props: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    for i, hook in enumerate(items(get(props, "webhooks"))):
        yield f'webhooks[{i}] "{text(get(hook, "name")) or "?"}"', hook


# --- webhook-fail-closed-scoped -------------------------------------------------------------------------


def _fail_closed(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if not is_webhook_configuration(args.resource_type):
        return
    system = string_list(config_value(args.get_config(), "systemNamespaces", list(DEFAULT_SYSTEM_NAMESPACES)))
    for where, hook in _webhooks(args.props):
        if (text(get(hook, "failurePolicy")) or "Fail") != "Fail":
            continue
        own = text(get(hook, "clientConfig", "service", "namespace"))
        guarded = [*system, *([own] if own and own not in system else [])]
        reached = [ns for ns in guarded if selector_matches(get(hook, "namespaceSelector"), {NAME_LABEL: ns})]
        if reached:
            report_violation(
                f"{where}: failurePolicy Fail, but its namespaceSelector does not exclude {', '.join(reached)}: "
                "an unavailable webhook would block those namespaces"
            )


webhook_fail_closed_scoped = ResourceValidationPolicy(
    name="webhook-fail-closed-scoped",
    description="Webhooks with failurePolicy Fail must have a namespaceSelector that excludes system namespaces "
    "and the webhook's own namespace.",
    validate=_fail_closed,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "systemNamespaces": {
                "type": "array",
                "items": {"type": "string"},
                "default": list(DEFAULT_SYSTEM_NAMESPACES),
                "description": "Namespaces a fail-closed webhook must not reach (its own namespace is always added).",
            }
        }
    ),
    remediation_steps=(
        "Scope the webhook with namespaceSelector matchExpressions [{key: kubernetes.io/metadata.name, operator: In, "
        "values: [<tenant namespaces>]}] (or NotIn the system namespaces), or use failurePolicy Ignore."
    ),
)


# --- webhook-tls-via-cert-manager ----------------------------------------------------------------------


def _tls(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    certificates = {
        f"{_namespace(r.props)}/{name}"
        for r in args.resources
        if r.resource_type.startswith(CERTIFICATE_PREFIX)
        and r.resource_type.endswith(":Certificate")
        and (name := object_name(r.props))
    }
    for r in args.resources:
        if not is_webhook_configuration(r.resource_type):
            continue
        if not any(get(hook, "clientConfig", "service") is not None for _, hook in _webhooks(r.props)):
            continue  # URL webhooks run outside the cluster; their TLS is not cert-manager's business
        annotations = mapping(get(r.props, "metadata", "annotations"))
        source = text(annotations.get(INJECT_ANNOTATIONS[0]))
        if source is None and text(annotations.get(INJECT_ANNOTATIONS[1])) is None:
            report_violation(
                f"{describe(r)} calls an in-cluster Service but has no cert-manager.io/inject-ca-from annotation",
                r.urn,
            )
        elif source is not None and source not in certificates:
            report_violation(
                f'{describe(r)} injects the CA of Certificate "{source}", which the stack does not define',
                r.urn,
            )


webhook_tls_via_cert_manager = StackValidationPolicy(
    name="webhook-tls-via-cert-manager",
    description="In-cluster webhooks must get their CA bundle from a cert-manager Certificate of the stack "
    "(cert-manager.io/inject-ca-from), not a hand-made caBundle.",
    validate=per_cluster(_tls),
    enforcement_level=EnforcementLevel.MANDATORY,
    remediation_steps=(
        "Issue the serving certificate with a cert-manager Certificate and annotate the webhook configuration "
        "with cert-manager.io/inject-ca-from: <namespace>/<certificate>."
    ),
)


# --- webhook backends ---------------------------------------------------------------------------------


def webhook_backends(resources: list[Any]) -> list[tuple[Any, Any]]:
    """``(webhook configuration, Deployment)`` pairs: the Deployments whose pods the Services that
    in-cluster webhooks call select (same namespace, template labels matching the Service selector)."""
    services = {
        (_namespace(r.props), object_name(r.props)): r for r in resources if r.resource_type == SERVICE
    }
    deployments = [r for r in resources if r.resource_type == DEPLOYMENT]
    pairs: list[tuple[Any, Any]] = []
    seen: set[tuple[str, str]] = set()
    for config in (r for r in resources if is_webhook_configuration(r.resource_type)):
        for _, hook in _webhooks(config.props):
            ref = get(hook, "clientConfig", "service")
            key = (text(get(ref, "namespace")) or "default", text(get(ref, "name")))
            service = services.get(key)
            selector = mapping(get(service.props, "spec", "selector")) if service is not None else {}
            if not selector:
                continue
            for deployment in deployments:
                labels = mapping(get(deployment.props, "spec", "template", "metadata", "labels"))
                matches = all(labels.get(k) == v for k, v in selector.items())
                if (
                    _namespace(deployment.props) == key[0]
                    and matches
                    and (config.urn, deployment.urn) not in seen
                ):
                    seen.add((config.urn, deployment.urn))
                    pairs.append((config, deployment))
    return pairs


def backend_deployments(resources: list[Any]) -> list[Any]:
    """The Deployments that serve any in-cluster webhook of the stack, each once, in stack order."""
    seen: set[str] = set()
    out = []
    for _, deployment in webhook_backends(resources):
        if deployment.urn not in seen:
            seen.add(deployment.urn)
            out.append(deployment)
    return out


def root_problems(pod_spec: Any) -> list[str]:
    """Containers of a pod spec that may run as root or privileged (pod-level settings inherited)."""
    pod = get(pod_spec, "securityContext")
    problems = []
    for container in [*items(get(pod_spec, "initContainers")), *items(get(pod_spec, "containers"))]:
        name = text(get(container, "name")) or "?"
        own = get(container, "securityContext")
        non_root = flag(get(own, "runAsNonRoot"))
        non_root = flag(get(pod, "runAsNonRoot")) if non_root is None else non_root
        user = integer(get(own, "runAsUser"))
        user = integer(get(pod, "runAsUser")) if user is None else user
        if user == 0:
            problems.append(f'container "{name}" runs as user 0')
        elif non_root is not True and user is None:
            problems.append(f'container "{name}" does not set runAsNonRoot: true')
        if flag(get(own, "privileged")) is True:
            problems.append(f'container "{name}" is privileged')
    return problems


def _non_root(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for deployment in backend_deployments(list(args.resources)):
        for problem in root_problems(get(deployment.props, "spec", "template", "spec")):
            report_violation(f"{describe(deployment)} serves a webhook: {problem}", deployment.urn)


webhook_runs_as_non_root = StackValidationPolicy(
    name="webhook-runs-as-non-root",
    description="Pods that serve admission webhooks must run as non-root and unprivileged.",
    validate=per_cluster(_non_root),
    enforcement_level=EnforcementLevel.MANDATORY,
    remediation_steps=(
        "Set securityContext.runAsNonRoot: true (pod or every container) with a non-zero runAsUser, and no "
        "privileged containers."
    ),
)


def _high_availability(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    config = args.get_config()
    if not is_production(config, args.stack_tags):
        return
    minimum = integer(config_value(config, "minReplicas", 2)) or 2
    resources = list(args.resources)
    pdbs = [r for r in resources if r.resource_type == PDB]
    for deployment in backend_deployments(resources):
        props = deployment.props
        replicas = integer(get(props, "spec", "replicas"))
        replicas = 1 if replicas is None else replicas  # the Deployment default
        if replicas < minimum:
            report_violation(
                f"{describe(deployment)} serves a webhook with {replicas} replica(s); at least {minimum} required",
                deployment.urn,
            )
        labels = mapping(get(props, "spec", "template", "metadata", "labels"))
        if not any(
            _namespace(p.props) == _namespace(props)
            and selector_matches(get(p.props, "spec", "selector"), labels)
            and get(p.props, "spec", "selector") is not None
            for p in pdbs
        ):
            report_violation(
                f"{describe(deployment)} serves a webhook but no PodDisruptionBudget covers its pods",
                deployment.urn,
            )


webhook_high_availability = StackValidationPolicy(
    name="webhook-high-availability",
    description="On production stacks, webhook Deployments need at least 2 replicas and a PodDisruptionBudget.",
    validate=per_cluster(_high_availability),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "minReplicas": {
                "type": "integer",
                "minimum": 1,
                "default": 2,
                "description": "Fewest replicas allowed.",
            },
            "productionEnvironments": {
                "type": "array",
                "items": {"type": "string"},
                "default": list(PRODUCTION_ENVIRONMENTS),
                "description": "Values of the stack config batchplane:environment this policy applies to.",
            },
        }
    ),
    remediation_steps="Set batchplane:webhook.replicas ≥ 2; the webhook component adds a PodDisruptionBudget.",
)

# --- webhook-image-published ---------------------------------------------------------------------

QUOTA_WEBHOOK_LABEL = ("app.kubernetes.io/name", "batchplane-quota-webhook")
DEFAULT_PUBLISHED = ["ghcr.io/batchplane/quota-webhook"]
_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
_VERSION_TAG = re.compile(r":v?\d+\.\d+\.\d+$")


def _image_published(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    resources = list(args.resources)
    built = {r.urn for r in resources if r.resource_type == "docker-build:index:Image"}
    config = args.get_config()
    published = string_list(config_value(config, "publishedRepositories", DEFAULT_PUBLISHED))
    production = is_production(config, args.stack_tags)
    key, value = QUOTA_WEBHOOK_LABEL
    for deployment in resources:
        if deployment.resource_type != "kubernetes:apps/v1:Deployment":
            continue
        if text(get(deployment.props, "metadata", "labels", key)) != value:
            continue
        if built and depends_on(deployment, lambda r: r.urn in built):
            continue  # the stack builds the image and the Deployment runs what it built
        for container in items(get(deployment.props, "spec", "template", "spec", "containers")):
            image = text(get(container, "image"))
            if image is None:
                continue
            if _repository(image) in published and _DIGEST.search(image):
                continue
            if _repository(image) in published and _VERSION_TAG.search(image):
                if not production:
                    continue
                report_violation(
                    f"{describe(deployment)} runs {image} on a production stack: a published image must be pinned by "
                    "digest there (@sha256:…), so that what was reviewed is what runs — or let the stack build it "
                    "(omit webhook.image)",
                    deployment.urn,
                )
                continue
            report_violation(
                f"{describe(deployment)} runs {image}, which neither this stack builds (webhook.build) nor the "
                f"release workflow publishes ({', '.join(published)} at a version tag or digest): the pods would sit "
                "in ImagePullBackOff while failurePolicy Fail rejects tenant jobs",
                deployment.urn,
            )


def _repository(image: str) -> str:
    """``registry[:port]/path/name`` of an image reference, without its tag or digest."""
    name = image.split("@", 1)[0]
    return name[: name.rfind(":")] if name.rfind(":") > name.rfind("/") else name


webhook_image_published = StackValidationPolicy(
    name="webhook-image-published",
    description=(
        "The quota webhook's Deployment runs an image the stack builds (webhook.build) or one the release workflow "
        "publishes (a version tag or digest of a published repository; on production stacks a digest only)."
    ),
    validate=per_cluster(_image_published),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "publishedRepositories": {
                "type": "array",
                "items": {"type": "string"},
                "default": DEFAULT_PUBLISHED,
                "description": "Image repositories a release workflow publishes (your fork's ghcr.io/<owner>/quota-webhook).",
            },
            "productionEnvironments": {
                "type": "array",
                "items": {"type": "string"},
                "default": list(PRODUCTION_ENVIRONMENTS),
                "description": "Values of the stack config batchplane:environment on which a digest is required.",
            },
        }
    ),
    remediation_steps=(
        "Set batchplane:webhook.build (artifact-registry on GKE, openshift, kind), or push the image with the "
        "release workflow and list its repository in publishedRepositories."
    ),
)


POLICIES = [
    webhook_fail_closed_scoped,
    webhook_tls_via_cert_manager,
    webhook_runs_as_non_root,
    webhook_high_availability,
    webhook_image_published,
]
"""The webhook policies, in the order the pack lists them."""

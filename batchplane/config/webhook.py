"""The ``batchplane:webhook`` section: the bundled quota admission webhook and per-namespace limits.

The webhook (``batchplane/webhook``, deployed by ``batchplane/components/quota_webhook.py``) reads a policy
document rendered from the whole stack config; this section holds what only the webhook needs:
its image and deployment knobs, how it fails, and workload limits per tenant namespace. Team
limits (``batchplane:teams.members[].limits``) use the same :class:`WorkloadLimits` model.
See docs/webhook.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from batchplane._version import __version__
from batchplane.config.base import ConfigModel, DnsLabel, DnsSubdomain, NonNegativeQuantity, QualifiedName
from batchplane.errors import ConfigIssue
from batchplane.wellknown import DEFAULT_GPU_RESOURCES

IMAGE_NAME = "quota-webhook"
"""The image's name in every registry the stack pushes to (and in the local Docker engine on kind)."""
BUILD_TAG = re.sub(r"[^A-Za-z0-9_.-]", "-", __version__)
"""The tag of the image the stack builds when ``webhook.image`` is omitted: the Batchplane version (a Docker tag:
any character other than ``[A-Za-z0-9_.-]`` becomes ``-``)."""
BUILT_IMAGE = f"{IMAGE_NAME}:{BUILD_TAG}"
"""The name the stack builds the image under when ``webhook.image`` is omitted (``quota-webhook:<version>``; kind
loads it into the nodes under this name, registries push it under their own host and path with this tag)."""
DEFAULT_IMAGE = f"ghcr.io/batchplane/{IMAGE_NAME}:0.1.0"
"""The published image the webhook runs on a platform where the stack cannot build (target ``existing``) when
``webhook.image`` is omitted — nothing publishes it unless you run the release workflow (docs/webhook.md)."""
DEFAULT_NAMESPACE = "batchplane-system"
DEFAULT_PORT = 8443
DEFAULT_REPLICAS = 2
DEFAULT_TIMEOUT_SECONDS = 3

#: Namespaces the webhook never acts on: Kubernetes' own and the operators' (cert-manager, Kueue,
#: KubeRay, Kubeflow, OpenShift). A webhook with ``failurePolicy: Fail`` on these can deadlock the
#: cluster (the operators could not start while the webhook is down).
SYSTEM_NAMESPACES = frozenset(
    {
        "kube-system", "kube-public", "kube-node-lease", "cert-manager", "kueue-system",
        "openshift-kueue-operator", "kuberay-system", "ray-system", "kubeflow", "kubeflow-system",
        "redhat-ods-applications", "redhat-ods-operator", "opendatahub", "local-path-storage",
        "gke-managed-system", "gmp-system", "gmp-public", "cert-manager-operator",
    }
)  # fmt: skip
SYSTEM_NAMESPACE_PREFIXES = ("kube-", "openshift-", "gke-")

_IMAGE_RE = re.compile(
    r"^(?P<repo>[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*)"
    r"(:(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(@(?P<digest>sha256:[a-f0-9]{64}))?$"
)


def image_problem(image: str) -> str | None:
    """Why ``image`` is not a pinned image reference (a tag other than ``latest``, or a digest), or None."""
    match = _IMAGE_RE.match(image)
    if match is None:
        return f'"{image}" is not an image reference (registry/repository:tag or @sha256:digest)'
    if match.group("digest") is None and match.group("tag") in (None, "latest"):
        return f'"{image}" is not pinned: give a version tag (not "latest") or an @sha256 digest'
    return None


def _check_image(value: str) -> str:
    why = image_problem(value)
    if why is not None:
        raise ValueError(why)
    return value


def is_system_namespace(name: str) -> bool:
    """True for Kubernetes' and the operators' namespaces (:data:`SYSTEM_NAMESPACES`, ``kube-*`` ...)."""
    return name in SYSTEM_NAMESPACES or name.startswith(SYSTEM_NAMESPACE_PREFIXES)


class WorkloadLimits(ConfigModel):
    """Limits on one workload (a Job, RayJob, PyTorchJob ...) submitted in a namespace.

    Checked by the quota webhook against the workload's Kueue-exact requests (all PodSets, all pods).
    Every field defaults to "no limit".
    """

    max_gpus_per_workload: Annotated[int, Field(ge=0, le=2**31 - 1, strict=True)] | None = None
    """Most GPUs one workload may request in total (sum of ``webhook.gpuResources`` over all pods).
    Defaults to none (no limit)."""
    max_workload_requests: dict[QualifiedName, NonNegativeQuantity] = {}
    """Most of each resource one workload may request in total, e.g. ``{cpu: 64, memory: 256Gi}``
    (CPU cores, memory bytes, device counts). Defaults to none (no limit)."""
    allowed_priority_classes: Annotated[list[DnsSubdomain], Field(max_length=64)] | None = None
    """WorkloadPriorityClass (label ``kueue.x-k8s.io/priority-class``) or pod PriorityClass names a
    workload may use; a workload without one is always allowed. Defaults to none (any class)."""


class WebhookNamespace(ConfigModel):
    """A namespace the webhook acts on, with optional limits (team namespaces are included anyway)."""

    name: DnsLabel
    """Required. Namespace name; never a system or operator namespace."""
    limits: WorkloadLimits | None = None
    """Workload limits in this namespace. Defaults to none (for a team namespace: the team's limits)."""


class WebhookImageBuild(ConfigModel):
    """Build the webhook image in the stack and make it available to the cluster: GKE pushes it to an Artifact
    Registry repository the stack owns and runs it by digest; OpenShift pushes it to the cluster's internal registry
    and runs it by digest; kind loads it into the nodes.

    No image has to be published beforehand. Needs Docker (BuildKit) where ``pulumi up`` runs,
    and for ``kind`` the ``kind`` binary.
    """

    registry: Literal["artifact-registry", "openshift", "kind"]
    """Required. ``artifact-registry`` (GKE targets): a Docker repository in the cluster's region and project,
    created by the stack (``gcp.artifactregistry.Repository``); the Deployment runs
    ``<region>-docker.pkg.dev/<project>/<repository>/quota-webhook@sha256:…``. ``kind`` (kind targets): the image is
    built into the local Docker engine as ``webhook.image`` (which must be pinned by tag; ``quota-webhook:<Batchplane
    version>`` when omitted) and loaded into the cluster's nodes with ``kind load docker-image`` (pulumi-command),
    reloaded whenever the build changes. ``openshift`` (OpenShift targets): pushed through the internal registry's
    default route (``registryHost``, else found at deploy time) into an ImageStream of project ``repository``, with a
    ServiceAccount token the stack creates (``system:image-pusher``); the Deployment runs
    ``image-registry.openshift-image-registry.svc:5000/<repository>/quota-webhook@sha256:…``."""
    repository: DnsLabel = "batchplane"
    """Artifact Registry repository id, or on OpenShift the project (namespace, created by the stack) that holds the
    ImageStream. Defaults on GKE to ``<clusterName>-images`` (one repository per cluster, so two stacks in one project
    and region never declare the same one; set ``batchplane`` to keep the repository of a stack deployed before this
    default), elsewhere to ``batchplane``."""
    registry_host: (
        Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?$", max_length=253)]
        | None
    ) = None
    """OpenShift: the host ``pulumi up`` pushes to, the internal registry's route. Defaults to none: ``pulumi up``
    reads the host of Route ``default-route`` in ``openshift-image-registry`` (``.spec.host``) from the cluster,
    waiting for it, and fails naming the fix when the registry is not exposed: ``oc patch
    configs.imageregistry.operator.openshift.io/cluster --type merge -p '{"spec":{"defaultRoute":true}}'`` (a
    cluster-wide setting the stack never changes itself). The Docker engine must trust the route's certificate.
    Allowed only with ``openshift``."""
    platforms: Annotated[list[Literal["linux/amd64", "linux/arm64"]], Field(min_length=1, max_length=2)] = [
        "linux/amd64"
    ]
    """Image platforms. Defaults to ``linux/amd64`` (GKE's x86 node pools); add ``linux/arm64`` for Arm pools."""
    in_cluster: bool = False
    """OpenShift: build in the cluster instead of with Docker where ``pulumi up`` runs — a ``build.openshift.io/v1``
    BuildConfig with a binary source and the Docker strategy (``webhook/Dockerfile``) whose output is the ImageStream
    tag; ``pulumi up`` uploads the build context as ``oc start-build --from-dir`` does (``instantiatebinary``) and
    waits for the Build, then the Deployment runs the pushed digest. No Docker engine, no registry route, no pusher
    token. The build runs on the cluster's architecture (``platforms`` does not apply). Allowed only with
    ``openshift``, not with ``registryHost``. Defaults to false."""

    @model_validator(mode="after")
    def _registry_host(self) -> WebhookImageBuild:
        if self.registry != "openshift" and self.registry_host is not None:
            raise ValueError("registryHost is allowed only with registry openshift")
        if self.in_cluster and self.registry != "openshift":
            raise ValueError("inCluster is allowed only with registry openshift")
        if self.in_cluster and self.registry_host is not None:
            raise ValueError(
                "inCluster builds in the cluster and pushes through no route: remove registryHost"
            )
        return self


class WebhookConfig(ConfigModel):
    """``batchplane:webhook``: the quota admission webhook (docs/webhook.md)."""

    enabled: bool | None = None
    """Deploy the webhook. It needs cert-manager for its serving certificate, so when omitted it is
    deployed exactly when the stack installs cert-manager (``operators.certManager``, or the OpenShift
    cert-manager operator). Set true when cert-manager is preinstalled, false to never deploy it."""
    image: Annotated[str, AfterValidator(_check_image)] | None = None
    """Container image, pinned by tag or digest (``latest`` is rejected). Without ``build`` it is a published image
    the cluster pulls as is (in ``environment: production`` pinned by ``@sha256:`` digest); with ``build`` its tag
    names the version the stack builds. Defaults to none: the stack builds the image for its platform (as if
    ``build: {registry: <the platform's>}`` were set) under ``quota-webhook:<Batchplane version>``; on a platform
    that cannot build (target ``existing``) the webhook runs ``ghcr.io/batchplane/quota-webhook:0.1.0``, with a
    warning, which must be published first (docs/webhook.md). Read it through :attr:`resolved_image`."""
    namespace: DnsLabel = DEFAULT_NAMESPACE
    """Namespace the webhook runs in (created by the stack). Defaults to ``batchplane-system``."""
    replicas: Annotated[int, Field(ge=1, le=10, strict=True)] = DEFAULT_REPLICAS
    """Pod replicas (a PodDisruptionBudget keeps one up). Defaults to 2."""
    port: Annotated[int, Field(ge=1024, le=65535, strict=True)] = DEFAULT_PORT
    """HTTPS container port (non-root, so ≥ 1024). Defaults to 8443."""
    failure_policy: Literal["Fail", "Ignore"] = "Fail"
    """``failurePolicy`` of the webhook configurations' CREATE reviews: ``Fail`` rejects new tenant workloads while
    the webhook is unreachable; ``Ignore`` admits them unchecked. Defaults to ``Fail``."""
    update_failure_policy: Literal["Fail", "Ignore"] = "Ignore"
    """``failurePolicy`` of the UPDATE review of queued jobs (its own webhook entry): ``Ignore`` lets updates
    through unchecked while the webhook is unreachable; ``Fail`` refuses them — and Kueue starts an admitted job by
    updating it (``spec.suspend: false``, its nodeSelectors), KubeRay's autoscaler scales a RayCluster by updating
    it, so ``Fail`` holds every admitted job in tenant namespaces until a webhook pod answers. Defaults to
    ``Ignore``."""
    timeout_seconds: Annotated[int, Field(ge=1, le=5, strict=True)] = DEFAULT_TIMEOUT_SECONDS
    """``timeoutSeconds`` of the webhook configurations (1–5). Defaults to 3."""
    on_internal_error: Literal["Allow", "Deny"] = "Allow"
    """What a review gets when the webhook itself fails on it (a bug, never a malformed request):
    ``Allow`` admits it with a warning (Kueue still enforces quota), ``Deny`` rejects it. Defaults to
    ``Allow``: the webhook must never block a workload Kueue could admit."""
    default_queue_label: bool = True
    """Mutating webhook: give unlabeled workloads in a tenant namespace the queue label of the
    namespace's default LocalQueue (``default: true``) unless Kueue's own defaulting applies (a
    LocalQueue named ``default`` exists there). Defaults to true."""
    refuse_undeclared_queues: bool = False
    """Validating webhook: refuse an unlabeled workload in a tenant namespace that has no stack-declared LocalQueue
    named ``default``, because Kueue's LocalQueueDefaulting would put it into a ``default`` LocalQueue the stack does
    not declare — OpenShift AI 3.0-3.4 creates one on a ClusterQueue sized to the whole cluster in every managed
    namespace (docs/openshift.md). A workload labelled with an undeclared LocalQueue is refused either way. Defaults
    to false (such a workload is admitted with a warning)."""
    gpu_resources: Annotated[list[QualifiedName], Field(min_length=1, max_length=16)] = list(
        DEFAULT_GPU_RESOURCES
    )
    """Resources counted as GPUs by ``maxGpusPerWorkload``. Defaults to ``nvidia.com/gpu``, ``amd.com/gpu``."""
    namespaces: list[WebhookNamespace] = []
    """Extra namespaces (beyond every LocalQueue namespace) the webhook acts on, with limits.
    Defaults to none."""
    build: WebhookImageBuild | None = None
    """Build and push the image in the stack (:class:`WebhookImageBuild`); ``image``'s tag names the pushed
    version. Defaults to none, which means: when ``image`` is omitted too and the webhook is deployed, the stack
    builds with its platform's registry (``artifact-registry`` on GKE, ``openshift``, ``kind``; the loaded stack
    holds that ``build``); when ``image`` is given, ``image`` is a published image (the release workflow publishes
    ``ghcr.io/batchplane/quota-webhook:<version>`` on a ``webhook-v<version>`` tag)."""

    @property
    def resolved_image(self) -> str:
        """The image name the stack runs or builds: ``image`` when given; else, when the stack builds (``build``),
        :data:`BUILT_IMAGE` (``quota-webhook:<version>``); else the published :data:`DEFAULT_IMAGE`."""
        if self.image is not None:
            return self.image
        return BUILT_IMAGE if self.build is not None else DEFAULT_IMAGE

    def limits_by_namespace(self) -> dict[str, WorkloadLimits | None]:
        """``namespaces[]`` as name → its ``limits`` (``None`` = none set there), in declaration order."""
        return {ns.name: ns.limits for ns in self.namespaces}


def with_platform_build(webhook: WebhookConfig, registry: str | None, *, deployed: bool) -> WebhookConfig:
    """``webhook`` with the default build made explicit: when the webhook is deployed and neither ``image`` nor
    ``build`` is given, a copy with ``build: {registry: <registry>}`` (the platform's
    :attr:`~batchplane.targets.platform.Platform.image_registry`); else ``webhook`` itself.

    Args:
        webhook: the validated section.
        registry: the registry the target's platform builds with (``artifact-registry``, ``openshift``, ``kind``),
            or ``None`` when it builds none (``existing``).
        deployed: whether the stack deploys the webhook.

    Returns:
        The section the stack deploys.
    """
    if not deployed or webhook.image is not None or webhook.build is not None or registry is None:
        return webhook
    build = WebhookImageBuild.model_validate({"registry": registry})
    return webhook.model_copy(update={"build": build})


def check_image_choice(
    webhook: WebhookConfig, environment: str, registry: str | None, platform: str, *, deployed: bool
) -> list[ConfigIssue]:
    """Rules on where the webhook's image comes from (all issues, none raised).

    Args:
        webhook: the validated section, as written (before :func:`with_platform_build`).
        environment: ``batchplane:environment``.
        registry: the registry the target's platform builds with, or ``None`` when it builds none.
        platform: the target's kind, for messages.
        deployed: whether the stack deploys the webhook (nothing is checked otherwise).

    Returns:
        An error on ``batchplane:webhook.image`` for a published image (``image`` without ``build``) not pinned by
        ``@sha256:`` digest in ``production`` (a tag can be moved to other content); a warning on
        ``batchplane:webhook.image`` when neither is given on a platform that cannot build: the webhook then
        runs :data:`DEFAULT_IMAGE`, which someone must publish.
    """
    if not deployed or webhook.build is not None:
        return []
    if webhook.image is None:
        if registry is not None:
            return []
        return [
            ConfigIssue(
                "batchplane:webhook.image",
                f"target {platform} cannot build the webhook image, so the webhook runs {DEFAULT_IMAGE}, which "
                "nobody publishes for you: push it to a registry the cluster pulls from (docs/webhook.md) and set "
                "batchplane:webhook.image to it (pinned by @sha256 digest in production)",
                severity="warning",
            )
        ]
    if environment == "production" and "@sha256:" not in webhook.image:
        return [
            ConfigIssue(
                "batchplane:webhook.image",
                f'"{webhook.image}" is a published image pinned only by tag, which can be moved to other content: '
                "in production pin it by digest (name@sha256:…), or omit batchplane:webhook.image so the stack "
                "builds the image itself",
            )
        ]
    return []


def check_webhook(
    webhook: WebhookConfig, tenant_namespaces: list[str], operator_namespaces: Mapping[str, str] | None = None
) -> list[ConfigIssue]:
    """Cross-field rules of ``batchplane:webhook`` (all issues, none raised).

    Args:
        webhook: the validated section.
        tenant_namespaces: every namespace a LocalQueue of the stack lives in.
        operator_namespaces: ``{operator: namespace}`` of the operators the stack installs
            (:meth:`~batchplane.config.operators.OperatorsConfig.installed_namespaces`). Defaults to none.

    Returns:
        Errors for a listed namespace that is a system/operator namespace or listed twice, and
        for a webhook namespace that is also a tenant namespace.
    """
    issues: list[ConfigIssue] = []
    if webhook.enabled is not False:
        owner = {ns: op for op, ns in (operator_namespaces or {}).items()}.get(webhook.namespace)
        if owner is not None:
            issues.append(
                ConfigIssue(
                    "batchplane:webhook.namespace",
                    f'"{webhook.namespace}" is where operators.{owner} is installed; its release already '
                    "creates that Namespace: run the webhook in its own namespace",
                )
            )
        elif is_system_namespace(webhook.namespace):
            issues.append(
                ConfigIssue(
                    "batchplane:webhook.namespace",
                    f'"{webhook.namespace}" is a system or operator namespace; run the webhook in its own '
                    f"namespace (default {DEFAULT_NAMESPACE})",
                )
            )
    seen: set[str] = set()
    for i, ns in enumerate(webhook.namespaces):
        path = f"batchplane:webhook.namespaces[{i}].name"
        if is_system_namespace(ns.name):
            issues.append(
                ConfigIssue(
                    path, f'"{ns.name}" is a system or operator namespace; the webhook never acts there'
                )
            )
        if ns.name in seen:
            issues.append(ConfigIssue(path, f'"{ns.name}" is listed twice'))
        seen.add(ns.name)
        if ns.name == webhook.namespace:
            issues.append(ConfigIssue(path, f'"{ns.name}" is the webhook\'s own namespace'))
    if webhook.enabled is not False and webhook.namespace in set(tenant_namespaces):
        issues.append(
            ConfigIssue(
                "batchplane:webhook.namespace",
                f'"{webhook.namespace}" is a tenant namespace (it has LocalQueues); run the webhook in its own namespace',
            )
        )
    return issues


def check_webhook_tenants(
    webhook: WebhookConfig, local_queues: Sequence[tuple[str, str]]
) -> list[ConfigIssue]:
    """A LocalQueue in a system or operator namespace (:func:`is_system_namespace`) would be a tenant the quota
    webhook silently skips: its configurations exclude those namespaces (``NotIn``), so that a webhook outage with
    ``failurePolicy: Fail`` can never block the operators. That team's workloads would be neither checked nor
    given the default queue label. Refused while the webhook is not switched off.

    Args:
        webhook: the validated section.
        local_queues: ``(namespace, key path of the LocalQueue's namespace)`` for every LocalQueue of the stack.

    Returns:
        One error per LocalQueue in a system namespace (empty when ``webhook.enabled: false``).
    """
    if webhook.enabled is False:
        return []
    return [
        ConfigIssue(
            path,
            f'"{namespace}" is a system or operator namespace, which the quota webhook never acts on (so that its '
            "outage cannot block the operators): this LocalQueue's workloads would be neither checked nor labelled; "
            "put it in the team's own namespace, or set batchplane:webhook.enabled: false",
        )
        for namespace, path in local_queues
        if is_system_namespace(namespace)
    ]

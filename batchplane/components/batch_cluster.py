"""BatchCluster: one cluster of a stack, brought up in the stages of
:data:`batchplane.components.stages.BRING_UP_STAGES`, in that order (docs/architecture.md prints them).

The component a Pulumi program instantiates once per cluster (``__main__.py``: one for the stack's cluster,
the MultiKueue manager when there are workers, and one per declared MultiKueue worker), given a validated
:class:`~batchplane.stack.Stack`. Pass ``connection`` (a :class:`~batchplane.targets.deploy.ClusterConnection`: the
provider *and* the kubeconfig and context it was built from) for an existing cluster the caller already reaches —
every readiness gate then polls that cluster.

Each stage is a private method. The cluster, its provider, the operator install path and the image registry come
from the target's platform (:class:`~batchplane.targets.deploy.PlatformDeploy`, looked up by the target's ``kind``
in the one platform registry, :data:`batchplane.targets.registry.REGISTRY`); nothing here tests a target's type.

**Stacks deployed before this component existed** declared those children at the top level under their bare
roles (``gke``, ``k8s``, ``operators``, ``kueue``, …). ``adopt_single_cluster_layout=True`` keeps those names
and gives each direct child ``Alias(parent=ROOT_STACK_RESOURCE)``; Pulumi carries a parent's aliases down to
its children, so every resource of a deployed stack maps to its old URN and ``pulumi up`` replaces nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from batchplane.components.dashboards import Dashboards, DashboardsArgs
from batchplane.components.kueue_queues import KueueQueues, KueueQueuesArgs
from batchplane.components.multikueue import MultiKueueWorkerAccess
from batchplane.components.observability import Observability
from batchplane.components.quota_webhook.component import QuotaWebhook, QuotaWebhookArgs
from batchplane.components.quota_webhook.manifests import deployment_problems, webhook_deployment
from batchplane.components.webhook_image import WebhookImage
from batchplane.config.rules import tenant_namespaces
from batchplane.errors import ConfigValidationError
from batchplane.kueue import kueue_objects, namespaces
from batchplane.multikueue import with_multikueue
from batchplane.observability.dashboards import dashboards_plan
from batchplane.observability.scrape import kube_prometheus_stack_install, scrape_inputs
from batchplane.stack import Stack, StackConfig, load_stack_config
from batchplane.stack.load import kueue_integrations
from batchplane.stack.model import webhook_enabled
from batchplane.stack.observability import dashboards_config
from batchplane.targets.deploy import ClusterConnection, ClusterNeeds, Placement, PlatformDeploy
from batchplane.targets.registry import descriptor

TYPE_TOKEN = "batchplane:cluster:BatchCluster"


@dataclass(frozen=True)
class BatchClusterArgs:
    """Inputs of :class:`BatchCluster`: the stack — as typed public config models (``config``) or an already
    loaded :class:`~batchplane.stack.Stack` (``stack``) — and how the cluster is reached and wired.

    Raises:
        ValueError: neither or both of ``stack`` and ``config`` given, or a ``multikueue_kubeconfigs`` key that
            names no declared worker (when the component is built).
    """

    config: StackConfig | None = None
    """The stack's typed ``batchplane:`` sections (:class:`~batchplane.stack.StackConfig` built from the public
    models: ``GkeTarget``/``ExistingTarget``…, ``KueueConfig``, ``TeamsConfig``, ``OperatorsConfig``,
    ``WebhookConfig``). The component validates them with every rule of the loader
    (:func:`~batchplane.stack.load_stack_config`) and raises
    :class:`~batchplane.errors.ConfigValidationError` listing every error. Give this or ``stack``."""
    stack: Stack | None = None
    """An already validated stack (:func:`batchplane.stack.load_stack`), as the Batchplane program passes it. Give
    this or ``config``."""
    stack_name: str | None = None
    """The stack's name for ``config`` (it names the MultiKueue workers' stacks). Defaults to the component's
    name."""
    project_dir: str = "."
    """The Pulumi project directory: the Docker build context of ``webhook.build`` (holds
    ``webhook/Dockerfile``). Defaults to the current working directory (where ``pulumi up`` runs)."""
    connection: ClusterConnection | None = None
    """An existing cluster the caller already reaches: its Kubernetes provider and the kubeconfig and context that
    provider was built from (every readiness gate polls with them, so they watch the cluster the provider deploys
    to). Not for a GKE target, whose cluster this component declares. Defaults to none (built from the target)."""
    multikueue_kubeconfigs: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    """This cluster is a MultiKueue manager: declared worker name → the kubeconfig (secret) its Kueue reaches the
    worker with (:attr:`multikueue_kubeconfig` of the worker's BatchCluster). Each becomes the Secret its
    MultiKueueCluster names, in Kueue's namespace, before the Kueue objects. Defaults to none."""
    multikueue_worker: str | None = None
    """This cluster is the declared MultiKueue worker of this name: declare the manager's access on it
    (:class:`~batchplane.components.multikueue.MultiKueueWorkerAccess`) and expose :attr:`multikueue_kubeconfig`.
    Defaults to none."""
    multikueue_server: pulumi.Input[str] | None = None
    """The https URL at which the manager reaches this worker's API server. Defaults to the GKE cluster's
    endpoint; required for other targets."""
    adopt_single_cluster_layout: bool = False
    """Keep the child names and, through aliases, the URNs of a one-cluster stack deployed before
    BatchCluster existed (top-level ``gke``, ``k8s``, ``olm``, ``gpu``, ``operators``, ``kueue``,
    ``webhook-image``, ``quota-webhook``). Defaults to false: children are named ``<name>-<role>``."""

    def resolve(self, name: str) -> Stack:
        """The validated stack: ``stack``, or ``config`` validated with the loader's rules.

        Raises:
            ValueError: neither or both of ``stack`` and ``config``; a ``multikueue_kubeconfigs`` key that is not a
                worker the stack's ``multiKueue`` section declares.
            ConfigValidationError: ``config`` breaks a rule, or the stack's rendered deployment would be refused
                (:func:`~batchplane.components.quota_webhook.manifests.deployment_problems`: the webhook's policy
                document over the ConfigMap limit) — the same checks as ``batchplane validate``, every error listed.
        """
        if self.stack is not None and self.config is None:
            stack = self.stack
        elif self.config is not None and self.stack is None:
            stack = load_stack_config(self.config, self.stack_name or name)
        else:
            raise ValueError(
                "BatchClusterArgs: give exactly one of config (typed models) and stack (a loaded Stack)"
            )
        if problems := deployment_problems(stack):
            raise ConfigValidationError(problems)
        self._check_multikueue_kubeconfigs(stack)
        return stack

    def _check_multikueue_kubeconfigs(self, stack: Stack) -> None:
        """Every key of ``multikueue_kubeconfigs`` must be a worker the stack's ``multiKueue`` section declares.

        Raises:
            ValueError: the stack has no ``multiKueue`` section, or a key names no declared worker (all listed).
        """
        if not self.multikueue_kubeconfigs:
            return
        section = stack.config.multi_kueue
        if section is None:
            raise ValueError(
                "BatchClusterArgs.multikueue_kubeconfigs: the stack declares no multiKueue section, so it has no "
                f"workers (got {', '.join(sorted(self.multikueue_kubeconfigs))})"
            )
        declared = {worker.name for worker in section.workers}
        unknown = sorted(set(self.multikueue_kubeconfigs) - declared)
        if unknown:
            raise ValueError(
                f"BatchClusterArgs.multikueue_kubeconfigs: {', '.join(unknown)} not among the declared "
                f"multiKueue.workers ({', '.join(sorted(declared)) or 'none'})"
            )


def kueue_namespace(stack: Stack) -> str:
    """Kueue's namespace on the stack's cluster (:meth:`~batchplane.targets.platform.Platform.kueue_namespace`):
    ``openshift-kueue-operator`` on OpenShift (the Red Hat build of Kueue), else ``operators.kueue.namespace``
    (``kueue-system`` by default)."""
    return stack.platform.kueue_namespace(stack.config.operators)


def cluster_needs(stack: Stack) -> ClusterNeeds:
    """What a validated stack needs of its platform's cluster (plain data for :class:`PlatformDeploy`)."""
    return ClusterNeeds(
        environment=stack.config.environment,
        operators=stack.config.operators,
        kueue_api_version=stack.kueue.api_version,
        tenant_namespaces=tuple(ns.name for ns in tenant_namespaces(stack.kueue)),
        webhook=stack.config.webhook,
        webhook_enabled=webhook_enabled(stack),
    )


def deploy_for(stack: Stack) -> PlatformDeploy:
    """The Pulumi half of the stack's platform (its :class:`~batchplane.targets.registry.PlatformDescriptor`)."""
    platform = stack.platform
    return descriptor(platform.kind).deploy_class()(platform)


class BatchCluster(pulumi.ComponentResource):
    """One cluster of a stack with everything the stack declares on it, in bring-up order.

    Attributes:
        stack: the validated stack (``args.stack``, or ``args.config`` validated).
        cluster: the component that declares the cluster when the platform creates it (GKE's
            :class:`~batchplane.targets.gke.cluster.GkeCluster`), or ``None`` for a cluster that already exists
            (kind, OpenShift, existing).
        cluster_name: the cluster's name (GKE: the cluster resource's ``name``), or ``None`` when unknown.
        connection: the cluster's provider with the kubeconfig and context it was built from.
        provider: the cluster's Kubernetes provider (every in-cluster child uses it).
        kubeconfig: the kubeconfig the provider and readiness gates use (secret Output on GKE; a path or
            ``None`` for existing clusters).
        kueue_ready: what Kueue objects wait for (the Kueue webhook readiness gate); empty without a Kueue
            install.
        queues: the Kueue objects and tenant namespaces.
        quota_webhook: the quota webhook, or ``None`` when the stack does not deploy it.
        observability: the scrape objects and alert rules, or ``None`` when the stack declares none.
        dashboards: the stack's dashboards, or ``None`` when ``observability.dashboards.enabled`` is false.
        multikueue_kubeconfig: on a declared MultiKueue worker, the manager's kubeconfig for it (secret); else
            ``None``.

    Outputs (``register_outputs``): ``kubeconfig`` (secret), ``clusterName``, ``clusterEndpoint`` (``None`` for an
    existing cluster), ``clusterQueues``, ``localQueues`` (``namespace/name``), ``quotaWebhook`` (its Service, or
    ``None``).
    """

    stack: Stack
    cluster: pulumi.Resource | None
    cluster_name: pulumi.Input[str] | None
    connection: ClusterConnection
    provider: k8s.Provider
    kubeconfig: pulumi.Input[str] | None
    kueue_ready: list[pulumi.Resource]
    queues: KueueQueues
    quota_webhook: QuotaWebhook | None
    observability: Observability | None
    dashboards: Dashboards | None
    multikueue_kubeconfig: pulumi.Output[str] | None

    def __init__(self, name: str, args: BatchClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        self.stack = self._stack = stack = args.resolve(name)
        self._deploy = deploy_for(stack)
        self._needs = cluster_needs(stack)
        adopt = args.adopt_single_cluster_layout
        aliases = [pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)] if adopt else None

        def role(role: str) -> str:
            return role if adopt else f"{name}-{role}"

        def child(**kwargs: object) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(parent=self, aliases=aliases, **kwargs)  # type: ignore[arg-type]

        self._place = Placement(role=role, options=child)
        self._declare_cluster(args.connection)
        self._declare_operators()
        before_queues = self._declare_multikueue(args)
        self._declare_queues(before_queues)
        self._declare_webhook(args.project_dir)
        self._declare_observability()
        self._declare_dashboards()
        self._register()

    def _in_cluster(self, **kwargs: object) -> pulumi.ResourceOptions:
        """Options of a direct child that lives in the cluster (through its provider)."""
        return self._place.options(providers=[self.provider], **kwargs)

    def _declare_cluster(self, given: ClusterConnection | None) -> None:
        """Stages 1–2: the platform's cluster (GKE) or none, and the Kubernetes provider — or the caller's
        ``connection``; the readiness gates reach the cluster the way the provider does."""
        if given is not None:
            if self._stack.platform.connection() is None:
                raise ValueError(
                    f"target kind {self._stack.platform.kind} declares its cluster: it takes no connection"
                )
            self.connection = given
        else:
            self.connection = self._deploy.declare_cluster(self._needs, self._place)
        self.cluster = self.connection.cluster
        self.cluster_name = self.connection.name
        self.provider = self.connection.provider
        self.kubeconfig = self.connection.kubeconfig

    def _declare_operators(self) -> None:
        """Stage 3: the platform's operator install path (Helm, or OLM and GPU MachineSets on OpenShift) and the
        Kueue readiness gate (cert-manager → job operators → Kueue → gate)."""
        self.kueue_ready = self._deploy.declare_operators(self._needs, self.connection, self._place)

    def _declare_multikueue(self, args: BatchClusterArgs) -> list[pulumi.Resource]:
        """Stage 4: MultiKueue — on a manager, the worker kubeconfig Secrets (before the MultiKueueClusters naming
        them); on a declared worker, the manager's ServiceAccount, ClusterRole, binding and token. Returns what the
        Kueue objects wait for (the gate and the Secrets)."""
        stack, role = self._stack, self._place.role
        before_queues = list(self.kueue_ready)
        section = stack.config.multi_kueue
        for worker, kubeconfig in args.multikueue_kubeconfigs.items():
            assert section is not None  # BatchClusterArgs.resolve checked every key names a declared worker
            declared = next(w for w in section.workers if w.name == worker)
            before_queues.append(
                k8s.core.v1.Secret(
                    role(f"multikueue-{worker}"),
                    metadata={
                        "name": section.kubeconfig_secret(declared),
                        "namespace": kueue_namespace(stack),
                    },
                    string_data={"kubeconfig": pulumi.Output.secret(kubeconfig)},
                    opts=self._in_cluster(depends_on=self.kueue_ready),
                )
            )
        self.multikueue_kubeconfig = None
        worker_name = args.multikueue_worker
        if worker_name:
            server = args.multikueue_server
            if server is None and self.connection.endpoint is not None:
                server = pulumi.Output.concat("https://", self.connection.endpoint)
            if server is None:
                raise ValueError(
                    f"MultiKueue worker {worker_name}: multikueue_server is required for a cluster without a "
                    "known endpoint"
                )
            self.multikueue_kubeconfig = MultiKueueWorkerAccess(
                role("multikueue-access"),
                {
                    "worker": worker_name,
                    "kueue_namespace": kueue_namespace(stack),
                    "frameworks": kueue_integrations(stack.config) or [],
                    "server": server,
                    "context": self.connection.context,
                    "kubeconfig": self.kubeconfig,
                    "depends_on": self.kueue_ready,
                },
                opts=self._in_cluster(),
            ).kubeconfig
        return before_queues

    def _declare_queues(self, before_queues: list[pulumi.Resource]) -> None:
        """Stage 5: the Kueue objects and tenant namespaces, after the gate (and the MultiKueue Secrets)."""
        stack = self._stack
        self.queues = KueueQueues(
            self._place.role("kueue"),
            KueueQueuesArgs(
                objects=with_multikueue(
                    kueue_objects(stack.kueue), stack.config.multi_kueue, stack.kueue.api_version
                ),
                namespaces=namespaces(stack.kueue),
                kueue_ready=before_queues,
            ),
            opts=self._in_cluster(),
        )

    def _declare_webhook(self, project_dir: str) -> None:
        """Stage 6: the quota webhook (cert-manager precedes the gate), with the image the stack builds
        (``webhook.build``) through the platform's registry."""
        self.quota_webhook = None
        if not self._needs.webhook_enabled:
            return
        image: pulumi.Input[str] | None = None
        revision: pulumi.Input[str] | None = None
        registry = self._deploy.image_registry(self._needs.webhook, self.connection)
        if registry is not None:
            built = WebhookImage(
                self._place.role("webhook-image"),
                {"registry": registry, "context": project_dir},
                opts=self._in_cluster() if registry.in_cluster else self._place.options(),
            )
            image, revision = built.ref, built.revision
        self.quota_webhook = QuotaWebhook(
            self._place.role("quota-webhook"),
            QuotaWebhookArgs(
                deployment=webhook_deployment(self._stack),
                depends_on=self.kueue_ready,
                image=image,
                image_revision=revision,
            ),
            opts=self._in_cluster(),
        )

    def _declare_observability(self) -> None:
        """Stage 7: the scrape objects and alert rules of the platform (docs/observability.md), after the Kueue gate
        and the webhook they scrape (and the kube-prometheus-stack release when the stack installs it)."""
        self.observability = None
        inputs = scrape_inputs(self._stack)
        if inputs is None:
            return
        after = [*self.kueue_ready, *([self.quota_webhook] if self.quota_webhook is not None else [])]
        self.observability = Observability(
            self._place.role("observability"),
            {
                "inputs": inputs,
                "kube_prometheus_stack": kube_prometheus_stack_install(self._stack),
                "depends_on": after,
            },
            opts=self._in_cluster(),
        )

    def _declare_dashboards(self) -> None:
        """Stage 8: the dashboards, in-cluster ones after the Kueue gate (Kueue's namespace exists then) and the
        observability objects (the kube-prometheus-stack release, whose namespace they may go to)."""
        plan = dashboards_plan(self._stack, dashboards_config(self._stack))
        self.dashboards = None
        if plan is not None:
            after = [*self.kueue_ready, *([self.observability] if self.observability is not None else [])]
            self.dashboards = Dashboards(
                self._place.role("dashboards"),
                DashboardsArgs(plan=plan, provider=self.provider, depends_on=after),
                opts=self._place.options(),
            )

    def _register(self) -> None:
        """The component's outputs, last: what another program (or a stack reference) reads of this cluster."""
        kueue = self._stack.kueue
        self.register_outputs(
            {
                "kubeconfig": None if self.kubeconfig is None else pulumi.Output.secret(self.kubeconfig),
                "clusterName": self.cluster_name,
                "clusterEndpoint": self.connection.endpoint,
                "clusterQueues": [cq.obj.name for cq in kueue.cluster_queues],
                "localQueues": [f"{lq.obj.namespace}/{lq.obj.name}" for lq in kueue.local_queues],
                "quotaWebhook": self.quota_webhook.service_name if self.quota_webhook is not None else None,
            }
        )

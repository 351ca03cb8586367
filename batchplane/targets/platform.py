"""The platform interface: what the rest of Batchplane may ask of a target platform, so nothing outside
:mod:`batchplane.targets` tests a target's type.

Each platform implements :class:`Platform` once, in ``batchplane/targets/<platform>/platform.py`` (pure: no Pulumi),
and its Pulumi half :class:`batchplane.targets.deploy.PlatformDeploy` in ``targets/<platform>/deploy.py``. The stack
loader (:mod:`batchplane.stack`) finds a target's platform by its ``kind`` tag in one registry
(:data:`batchplane.targets.registry.REGISTRY`); :class:`~batchplane.components.batch_cluster.BatchCluster` and the
webhook manifests ask the platform, never the target's type.

What a platform answers:

* its **config rules** (:meth:`Platform.check_target`, :meth:`Platform.check_queues`, :meth:`Platform.check_build`);
* its **pools → flavors**: :meth:`Platform.backed_pools` (GKE GPU node pools, OpenShift GPU MachineSets) and the
  pool names that order a team's flavors (:meth:`Platform.pool_names`); :meth:`Platform.adjust_kueue` for what the
  platform adds to the expanded Kueue objects (OpenShift: the ``kueue.openshift.io/managed`` namespace label);
* its **cluster identity** (two targets are the same cluster), **Kueue's namespace**, the **Kueue version** the
  cluster runs (:meth:`Platform.kueue_version`: the Helm chart's, or the one the Red Hat build of Kueue / OpenShift
  AI ships) and the Kueue integrations the platform itself enables (OpenShift's ``Kueue`` CR), and where those are
  configured;
* its **operator install path**: :attr:`Platform.operator_host` (Helm installs allowed or refused, the GKE Ray
  add-on, default tolerations) and whether the platform always installs cert-manager (OLM on OpenShift);
* its **connection** to an existing cluster (:meth:`Platform.connection`: kubeconfig, context, upsert), or none when
  the stack declares the cluster (GKE);
* its **image registry**: the ``webhook.build.registry`` value it builds with (:attr:`Platform.image_registry`);
* its **pod security context policy**: the user and group IDs Batchplane's own pods may pin
  (:meth:`Platform.pod_user_ids`; none on OpenShift, whose SCCs assign them from the namespace).
* its **metrics collection** (:attr:`Platform.monitoring`) and whether its Kueue install already declares Kueue's
  scrape (:meth:`Platform.kueue_scrape_declared`), for :mod:`batchplane.observability.scrape`;
* its **dashboards**: how the stack's dashboards reach a dashboard server by default and which deliveries it offers
  (:attr:`Platform.dashboard_delivery`, :attr:`Platform.dashboard_deliveries`), the Cloud Monitoring project
  (:meth:`Platform.cloud_monitoring_project`) and the cluster's ``cluster`` label there
  (:meth:`Platform.monitoring_cluster_name`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from batchplane.backed_pools import BackedPool
from batchplane.config.dashboards import DashboardTarget
from batchplane.config.kueue import KueueApiVersion
from batchplane.config.operators import OperatorHost, OperatorsConfig
from batchplane.config.rules import ExpandedKueue
from batchplane.config.settings import Setting
from batchplane.config.webhook import WebhookConfig
from batchplane.errors import ConfigIssue

__all__ = ["Connection", "Monitoring", "Platform"]

#: How a platform collects metrics: Google Cloud Managed Service for Prometheus (``PodMonitoring``, ``Rules``), OpenShift
#: user-workload monitoring (``ServiceMonitor``, ``PrometheusRule`` read by the cluster's own Prometheus Operator), or a
#: Prometheus Operator the stack finds or installs (``ServiceMonitor``, ``PrometheusRule``).
Monitoring = Literal["managed-prometheus", "user-workload-monitoring", "prometheus-operator"]

#: Kueue's namespace when the stack installs Kueue with Helm and sets no ``operators.kueue.namespace``.
DEFAULT_KUEUE_NAMESPACE = "kueue-system"


@dataclass(frozen=True)
class Connection:
    """How a Kubernetes provider (and every readiness gate) reaches an existing cluster.

    Attributes:
        context: the kubeconfig context (``None`` = the kubeconfig's current context).
        kubeconfig: a kubeconfig path or content; ``None`` = the provider's default (``$KUBECONFIG`` or
            ``~/.kube/config``).
        upsert_existing_objects: give the provider ``upsertExistingObjects`` (pulumi-kubernetes): objects the
            platform pre-creates (OLM namespaces, the ``Kueue`` CR on OpenShift) are adopted, not refused.
    """

    context: str | None
    kubeconfig: str | None = None
    upsert_existing_objects: bool = False


@dataclass(frozen=True)
class PoolMachine:
    """What a pool's nodes are, for pricing and reports.

    Attributes:
        machine_type: the cloud's machine or instance type (``a3-highgpu-8g``, ``g5.2xlarge``), or ``None`` when the
            config does not say (an OpenShift MachineSet without an AWS provider spec).
        region: the cloud region the nodes run in, or ``None`` when unknown.
        provisioning: how nodes are obtained (GKE ``queued``/``flex-start``/``on-demand``/``spot``/``reservation``;
            OpenShift's ``provisioning``).
        cloud: ``gcp`` or ``aws``.
    """

    machine_type: str | None
    region: str | None
    provisioning: str
    cloud: str


class Platform(ABC):
    """One target platform, wrapping its validated target model.

    Class attributes:
        kind: the target's ``kind`` tag (``kind``, ``existing``, ``gke``, ``openshift``).
        operator_host: what the platform offers ``batchplane:operators`` (Helm allowed or refused, the GKE Ray
            add-on, default tolerations).
        installs_cert_manager: the platform always installs cert-manager (OpenShift's operator plan), so the quota
            webhook is on by default without ``operators.certManager``. Defaults to false.
        image_registry: the ``webhook.build.registry`` this platform builds the webhook image with
            (``artifact-registry``, ``openshift``, ``kind``), or ``None`` when it builds none.
        integrations_key: where the stack configures the Kueue integrations on this platform (a key under
            ``batchplane:``). Defaults to ``operators``.
        declares_cluster: the stack declares the cluster (GKE), so the program knows its API endpoint; an existing
            cluster's endpoint must be given (a MultiKueue worker's ``server``). Defaults to false.
        monitoring: how the platform collects metrics (:data:`Monitoring`). Defaults to ``prometheus-operator``.
        dashboard_delivery: how ``dashboards.delivery: auto`` delivers the stack's dashboards. Defaults to
            ``configmap`` (the Grafana sidecar of kube-prometheus-stack).
        dashboard_deliveries: every ``dashboards.delivery`` the platform offers. Defaults to ``grafana-operator`` and
            ``configmap`` (Cloud Monitoring only on GKE, the OpenShift console only on OpenShift).
    """

    kind: ClassVar[str]
    operator_host: ClassVar[OperatorHost]
    installs_cert_manager: ClassVar[bool] = False
    image_registry: ClassVar[str | None] = None
    integrations_key: ClassVar[str] = "operators"
    declares_cluster: ClassVar[bool] = False
    monitoring: ClassVar[Monitoring] = "prometheus-operator"

    def kueue_scrape_declared(self) -> bool:
        """Whether the platform's own Kueue install declares Kueue's scrape object and its metrics-reader binding
        (the Red Hat build of Kueue creates ServiceMonitor ``kueue-metrics``), so the stack declares none. Defaults
        to false."""
        return False

    dashboard_delivery: ClassVar[DashboardTarget] = "configmap"
    dashboard_deliveries: ClassVar[tuple[DashboardTarget, ...]] = ("grafana-operator", "configmap")

    def check_target(self, environment: str, kueue: ExpandedKueue) -> list[ConfigIssue]:
        """The platform's own rules on its target (and on the Kueue objects its pools back), run before the
        pool ↔ flavor rules. Defaults to none."""
        return []

    def check_queues(self, environment: str, kueue: ExpandedKueue) -> list[ConfigIssue]:
        """The platform's rules on the expanded Kueue objects (and those that depend on ``environment``), run after
        the pool rules. Defaults to none."""
        return []

    def check_build(self, webhook: WebhookConfig) -> list[ConfigIssue]:
        """The platform's rules on ``webhook.build`` once its registry suits this platform. Defaults to none."""
        return []

    def backed_pools(self) -> list[BackedPool]:
        """The node pools that back ResourceFlavors (GKE GPU pools, OpenShift GPU MachineSets). Defaults to none."""
        return []

    def pool_names(self) -> list[str]:
        """The pools' names in config order (their derived flavors are named after them). Defaults to none."""
        return []

    def pool_machine(self, name: str) -> PoolMachine | None:
        """The machine facts of the pool named ``name``, or ``None`` (no such pool). Defaults to none."""
        return None

    def adjust_kueue(self, kueue: ExpandedKueue) -> None:
        """Add what the platform needs to the expanded Kueue objects, in place. Defaults to nothing."""
        return None

    @abstractmethod
    def cluster_identity(self) -> tuple[str, ...]:
        """What makes two targets the same cluster (a GKE location and name, a kind name, a kubeconfig and
        context)."""

    def image_repository(self, webhook: WebhookConfig) -> tuple[str | None, str, str] | None:
        """``(project, location, repository id)`` of the image repository the stack creates for this cluster when it
        builds the webhook image into one it owns (GKE's Artifact Registry), else ``None`` (the default)."""
        return None

    def private_endpoint_key(self) -> str | None:
        """The key (under ``target``) that makes the cluster's API server reachable only at a private address, when
        it does (GKE ``privateNodes.privateEndpoint``): a MultiKueue manager in another cluster cannot reach it at
        the endpoint the program knows. Defaults to none."""
        return None

    def created_node_account(self) -> tuple[str | None, str] | None:
        """The service account the stack creates for the cluster's nodes, as ``(project, account id)`` (project
        ``None``: the GCP provider's), or ``None`` when it creates none. Account ids are unique per project, so two
        clusters of one stack must not share one. Defaults to ``None``."""
        return None

    def monitoring_cluster_name(self) -> str | None:
        """The ``cluster`` label a metrics store shared by several clusters puts on this cluster's series (Managed
        Service for Prometheus: the GKE cluster's name), or ``None`` when the store holds one cluster. Defaults to
        ``None``."""
        return None

    def cloud_monitoring_project(self) -> str | None:
        """The Google Cloud project Cloud Monitoring dashboards go to (``None``: the GCP provider's). Defaults to
        ``None``."""
        return None

    def kueue_namespace(self, operators: OperatorsConfig | None) -> str:
        """Kueue's namespace on the cluster: ``operators.kueue.namespace`` (``kueue-system`` by default)."""
        return operators.kueue.namespace if operators is not None else DEFAULT_KUEUE_NAMESPACE

    def kueue_version(self, operators: OperatorsConfig | None, environment: str) -> str | None:
        """The upstream Kueue version the cluster's Kueue is built from (``0.19.2``; ``0.16`` when only the minor line
        is known), or ``None`` when unknown. Defaults to ``operators.kueue.version`` when the stack installs Kueue
        with Helm, else ``None`` (a Kueue someone else installed).

        Args:
            operators: ``batchplane:operators``.
            environment: ``batchplane:environment`` (OLM's approval, and so the CSV installed, depends on it).
        """
        if operators is not None and operators.kueue.enabled:
            return operators.kueue.version
        return None

    def default_kueue_api_version(self, environment: str) -> KueueApiVersion | None:
        """The ``kueue.x-k8s.io`` API version to render when ``batchplane:kueue.apiVersion`` is not set, because the
        cluster's Kueue serves no other (``kueue.x-k8s.io/v1beta1`` below Kueue 0.15), or ``None`` for the config's
        default. Defaults to ``None``.

        Args:
            environment: ``batchplane:environment`` (OLM's approval, and so the CSV installed, depends on it).
        """
        return None

    def kueue_integrations(self) -> list[str] | None:
        """The Kueue integrations the platform's own Kueue install enables (``batch/job``, …), or ``None`` when
        Kueue's integrations come from ``batchplane:operators``. Defaults to ``None``."""
        return None

    def pod_user_ids(self, image_uid: int) -> dict[str, int]:
        """The ID fields Batchplane's own pods set in their ``securityContext`` (``runAsUser``, ``runAsGroup``;
        ``fsGroup`` on the pod only), given the numeric UID their image runs as. Defaults to all three =
        ``image_uid``. A platform whose admission assigns the IDs from the namespace returns ``{}``, and the pods keep
        only ``runAsNonRoot``, seccomp and the dropped capabilities."""
        return {"runAsUser": image_uid, "runAsGroup": image_uid, "fsGroup": image_uid}

    def environment_settings(
        self, env: str, config: Mapping[str, Any], target: Mapping[str, Any]
    ) -> list[Setting]:
        """What a team must decide about this platform's target when ``batchplane new ENV`` copies a template
        (project, region, cluster name, kubeconfig context, …), given the environment name, the template's config map
        and its raw ``batchplane:target``. Defaults to none."""
        return []

    @abstractmethod
    def connection(self) -> Connection | None:
        """How to reach the existing cluster, or ``None`` when the stack declares the cluster (GKE)."""

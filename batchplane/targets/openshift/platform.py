"""The OpenShift platform (:class:`~batchplane.targets.platform.Platform`): an existing OpenShift (AI) cluster whose
operators come from OLM (Helm installs refused, cert-manager always installed), the Red Hat build of Kueue in
``openshift-kueue-operator`` with the integrations of its ``Kueue`` CR, GPU MachineSets that back ResourceFlavors,
tenant namespaces labelled for that Kueue, and the webhook image pushed to the cluster's internal registry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchplane.backed_pools import BackedPool
from batchplane.config.kueue import KUEUE_V1BETA1, KueueApiVersion
from batchplane.config.operators import OperatorHost, OperatorsConfig
from batchplane.config.rules import ExpandedKueue
from batchplane.config.settings import Setting
from batchplane.errors import ConfigIssue
from batchplane.targets.openshift.config import (
    EMBEDDED_KUEUE_VERSION,
    RHBOK_INTEGRATIONS,
    OpenShiftTarget,
    check_openshift,
    label_managed_namespaces,
    rhbok_frameworks,
    rhbok_kueue_version,
    serves_v1beta2,
)
from batchplane.targets.openshift.dsc import V1_RELEASES
from batchplane.targets.openshift.machines import check_gang_sizes, check_gpu_capacity, openshift_backed_pools
from batchplane.targets.platform import Connection, Platform, PoolMachine

#: The Red Hat build of Kueue's namespace (its OLM package ``kueue-operator`` installs there).
KUEUE_NAMESPACE = "openshift-kueue-operator"


class OpenShiftPlatform(Platform):
    """An existing OpenShift (AI) cluster (``target: {kind: openshift, context: …}``)."""

    kind = "openshift"
    operator_host = OperatorHost(
        kind="openshift",
        helm_refusal="operators are installed through OLM on OpenShift (target.certManager, "
        "target.kueue, target.openshiftAi); remove batchplane:operators",
    )
    installs_cert_manager = True
    image_registry = "openshift"
    monitoring = "user-workload-monitoring"
    # OpenShift's monitoring stack has no Grafana (removed in 4.11) and no template installs the Grafana Operator, so
    # the default is the console's own dashboards (ConfigMaps in openshift-config-managed, Observe -> Dashboards),
    # which every OpenShift cluster has; GrafanaDashboard CRs only when dashboards.delivery says grafana-operator.
    dashboard_delivery = "openshift-console"
    dashboard_deliveries = ("openshift-console", "grafana-operator", "configmap")
    integrations_key = "target.kueue.frameworks"

    def __init__(self, target: OpenShiftTarget) -> None:
        self.target = target

    def check_target(self, environment: str, kueue: ExpandedKueue) -> list[ConfigIssue]:
        """GPU capacity (MachineSets, autoscalers, prerequisites) and gang sizes against the pools."""
        return check_gpu_capacity(self.target) + check_gang_sizes(kueue, self.target)

    def check_queues(self, environment: str, kueue: ExpandedKueue) -> list[ConfigIssue]:
        """:func:`~batchplane.targets.openshift.config.check_openshift`: DSC components per release, framework
        duplicates, InstallPlan approval, namespaces the stack cannot label."""
        return check_openshift(self.target, kueue, environment)

    def backed_pools(self) -> list[BackedPool]:
        """The GPU MachineSets (:func:`~batchplane.targets.openshift.machines.openshift_backed_pools`)."""
        return openshift_backed_pools(self.target)

    def pool_names(self) -> list[str]:
        """``gpuPools[].name`` in config order."""
        return [pool.name for pool in self.target.gpu_pools]

    def pool_machine(self, name: str) -> PoolMachine | None:
        """The GPU MachineSet's AWS instance type and region (``None`` without an AWS provider spec)."""
        for pool in self.target.gpu_pools:
            if pool.name == name:
                aws = pool.aws
                return PoolMachine(
                    aws.instance_type if aws else None, aws.region if aws else None, pool.provisioning, "aws"
                )
        return None

    def adjust_kueue(self, kueue: ExpandedKueue) -> None:
        """Tenant namespaces opt in to the Red Hat build of Kueue (``kueue.openshift.io/managed=true``)."""
        label_managed_namespaces(kueue)

    def cluster_identity(self) -> tuple[str, ...]:
        """``("openshift", <kubeconfig or "">, <context>)``."""
        return ("openshift", self.target.kubeconfig or "", self.target.kube_context())

    def kueue_scrape_declared(self) -> bool:
        """True where the Red Hat build of Kueue runs Kueue: its operator creates ServiceMonitor ``kueue-metrics``
        (mutual TLS with the metrics certificate) and binds ``kueue-metrics-reader`` to the platform's and the
        user-workload Prometheus when the ServiceMonitor CRD exists, and sets ``enableClusterQueueResources``
        (openshift/kueue-operator ``release-1.4`` a82b72a1: ``pkg/operator/target_config_reconciler.go``
        ``manageServiceMonitor``, ``bindata/assets/kueue-operator/clusterrolebinding-metrics-monitoring.yaml``,
        ``pkg/configmap/configmap.go`` line 306). False where OpenShift AI 2.x embeds Kueue."""
        return self.target.installs_rhbok()

    def kueue_namespace(self, operators: OperatorsConfig | None) -> str:
        """``openshift-kueue-operator`` (the Red Hat build of Kueue), or ``redhat-ods-applications`` where OpenShift
        AI 2.x runs Kueue embedded (``kueue: Managed`` in the DataScienceCluster)."""
        return KUEUE_NAMESPACE if self.target.installs_rhbok() else "redhat-ods-applications"

    def kueue_version(self, operators: OperatorsConfig | None, environment: str) -> str | None:
        """The Red Hat build of Kueue's upstream Kueue (:func:`~batchplane.targets.openshift.config.rhbok_kueue_version`:
        the channel head, or ``startingCsv`` when ``Manual`` approval keeps it), or, where OpenShift AI 2.x embeds
        Kueue, its release's (:data:`~batchplane.targets.openshift.dsc.V1_RELEASES`: 0.8 in 2.16) or
        :data:`~batchplane.targets.openshift.config.EMBEDDED_KUEUE_VERSION`."""
        if not self.target.installs_rhbok():
            ai = self.target.openshift_ai
            release = V1_RELEASES.get((ai.minor_release() if ai is not None else None) or "")
            return release.embedded_kueue if release is not None else EMBEDDED_KUEUE_VERSION
        kueue = self.target.kueue
        return rhbok_kueue_version(kueue.channel, kueue.approved_csv(environment))

    def default_kueue_api_version(self, environment: str) -> KueueApiVersion | None:
        """``kueue.x-k8s.io/v1beta1`` where the cluster's Kueue predates v1beta2 (Kueue < 0.15: the Red Hat build of
        Kueue 1.0-1.2, OpenShift AI 2.x's embedded Kueue; :func:`~batchplane.targets.openshift.config.serves_v1beta2`),
        else ``None``."""
        version = self.kueue_version(None, environment)
        if version is not None and not serves_v1beta2(version):
            return KUEUE_V1BETA1
        return None

    def kueue_integrations(self) -> list[str]:
        """The ``Kueue`` CR's frameworks as Kueue integration names (``batch/job``, ``ray.io/rayjob``, …)."""
        return [RHBOK_INTEGRATIONS[name] for name in rhbok_frameworks(self.target)]

    def pod_user_ids(self, image_uid: int) -> dict[str, int]:
        """None: OpenShift's default SCC ``restricted-v2`` admits only UIDs and an fsGroup from the namespace's
        ``openshift.io/sa.scc.uid-range`` / ``supplemental-groups`` allocation (``MustRunAsRange`` / ``MustRunAs``;
        openshift/apiserver-library-go ``release-4.19`` ``pkg/securitycontextconstraints/user/mustrunasrange.go``
        L41, ``group/mustrunas.go`` L48) and assigns them itself when unset; the image runs under any UID in group 0
        (``webhook/Dockerfile``)."""
        return {}

    def connection(self) -> Connection:
        """The target's context and kubeconfig; the provider upserts what OLM and OpenShift AI pre-create."""
        return Connection(
            context=self.target.kube_context(),
            kubeconfig=self.target.kubeconfig,
            upsert_existing_objects=True,
        )

    def environment_settings(
        self, env: str, config: Mapping[str, Any], target: Mapping[str, Any]
    ) -> list[Setting]:
        """The kubeconfig context, the cluster's infrastructure id (GPU MachineSets) and an OpenShift AI 2.x
        channel."""
        t = "batchplane:target"
        question = "kubeconfig context of the cluster (`oc login` writes one)"
        out = [Setting(t, ("context",), question, None, "context")]
        if "infrastructureId" in target:
            question = "cluster infrastructure id (oc get infrastructure cluster -o jsonpath='{.status.infrastructureName}')"
            out.append(Setting(t, ("infrastructureId",), question))
        ai = target.get("openshiftAi")
        if isinstance(ai, Mapping) and str(ai.get("release", "")).startswith("2") and "channel" in ai:
            question = "OpenShift AI 2.x channel (e.g. eus-2.16)"
            out.append(Setting(t, ("openshiftAi", "channel"), question, ai["channel"]))
        return out

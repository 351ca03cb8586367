"""The OpenShift platform's Pulumi half (:class:`~batchplane.targets.deploy.PlatformDeploy`): an upserting provider
for the target's context, the OLM install path, GPU MachineSets, and the cluster's internal image registry.

* :meth:`OpenShiftDeploy.declare_operators` — :class:`~batchplane.targets.openshift.operators.OpenShiftOperators`
  (``<cluster>-olm``: OLM Subscriptions gated on their CSVs, the ``Kueue`` CR, the DataScienceCluster, the Kueue
  webhook gate) and, with GPU pools, :class:`~batchplane.targets.openshift.gpu_capacity.OpenShiftGpuCapacity`
  (``<cluster>-gpu``);
* :class:`InternalRegistry` — through the cluster's provider: the project's Namespace, the ``quota-webhook``
  ImageStream, the pusher ServiceAccount, its ``system:image-pusher`` RoleBinding, a ``system:image-puller``
  RoleBinding for the webhook namespace's service accounts, the pusher's token Secret and a
  :class:`~batchplane.operators.readiness_gate.ReadinessGate` (``<name>-pusher-token-ready``) that outputs the token
  (secret), polling with the provider's own kubeconfig and context; the push goes to
  ``<route host>/<project>/quota-webhook:<tag>`` with that token — the route host is ``webhook.build.registryHost``,
  else a ``registry-route`` gate (``<name>-registry-route``) reads Route ``default-route`` of
  ``openshift-image-registry`` through the same connection and outputs its ``spec.host``, and the reference is the in-cluster
  ``image-registry.openshift-image-registry.svc:5000/<project>/quota-webhook@sha256:…``.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_docker_build as docker_build

from batchplane.config.webhook import WebhookConfig
from batchplane.kubernetes_object import KubernetesObject
from batchplane.operators.readiness import REGISTRY_NAMESPACE, REGISTRY_ROUTE
from batchplane.operators.readiness_gate import ReadinessGate
from batchplane.targets.deploy import (
    ClusterConnection,
    ClusterNeeds,
    ImagePush,
    ImageRegistry,
    Placement,
    PlatformDeploy,
)
from batchplane.targets.openshift.binary_build import BinaryBuild
from batchplane.targets.openshift.gpu import PROVISIONING_FEATURE_GATE, PROVISIONING_FEATURE_SETS
from batchplane.targets.openshift.gpu_capacity import OpenShiftGpuCapacity
from batchplane.targets.openshift.image import IMAGE_NAME, PUSHER, OpenShiftImageBuild, openshift_image_build
from batchplane.targets.openshift.machines import gpu_capacity_plan
from batchplane.targets.openshift.olm import openshift_plan
from batchplane.targets.openshift.operators import OpenShiftOperators
from batchplane.targets.openshift.platform import OpenShiftPlatform

_ROLES = {
    "Namespace": "namespace",
    "ImageStream": "imagestream",
    "ServiceAccount": "pusher",
    "Secret": "pusher-token",
}


class InternalRegistry(ImageRegistry):
    """The cluster's internal registry, pushed to through its route with a ServiceAccount token the stack creates."""

    legacy_type = "batchplane:openshift:WebhookImage"
    in_cluster = True

    def __init__(self, build: OpenShiftImageBuild, connection: ClusterConnection) -> None:
        self.build = build
        self.connection = connection
        self.resources: dict[str, pulumi.Resource] = {}
        self.token_gate: ReadinessGate | None = None
        self.route_gate: ReadinessGate | None = None

    def prepare(self, name: str, parent: pulumi.Resource) -> ImagePush:
        build = self.build
        namespace: list[pulumi.Resource] = []
        for obj in build.objects:
            kind = obj["kind"]
            role = _ROLES.get(kind) or obj["metadata"]["name"]
            deps = namespace + ([self.resources["pusher"]] if kind == "Secret" else [])
            resource = KubernetesObject(
                f"{name}-{role}", obj, opts=pulumi.ResourceOptions(parent=parent, depends_on=deps)
            )
            self.resources[role] = resource
            if kind == "Namespace":
                namespace = [resource]
        self.token_gate = ReadinessGate(
            f"{name}-pusher-token-ready",
            {
                "gate": "service-account-token",
                "namespace": build.project,
                "secret": PUSHER,
                "timeout_seconds": 120,
                "interval_seconds": 2,
                "context": self.connection.context,
                "kubeconfig": self.connection.kubeconfig,
            },
            pulumi.ResourceOptions(parent=parent, depends_on=[self.resources["pusher-token"]]),
        )
        host: pulumi.Input[str]
        if build.push_host is not None:
            host = build.push_host
        else:  # the default route's host, read from the cluster (fails with the `oc patch` fix when not exposed)
            self.route_gate = ReadinessGate(
                f"{name}-registry-route",
                {
                    "gate": "registry-route",
                    "namespace": REGISTRY_NAMESPACE,
                    "route": REGISTRY_ROUTE,
                    "timeout_seconds": 60,
                    "interval_seconds": 5,
                    "context": self.connection.context,
                    "kubeconfig": self.connection.kubeconfig,
                },
                pulumi.ResourceOptions(parent=parent),
            )
            host = self.route_gate.host
        return ImagePush(
            tags=[pulumi.Output.concat(host, f"/{build.project}/{IMAGE_NAME}:{build.tag}")],
            push=True,
            platforms=list(build.platforms),
            registries=[
                {
                    "address": host,
                    "username": PUSHER,
                    "password": pulumi.Output.secret(self.token_gate.token),
                }
            ],
            depends_on=[self.resources["imagestream"], *self.resources.values()],
        )

    def reference(self, name: str, image: docker_build.Image, parent: pulumi.Resource) -> pulumi.Output[str]:
        return pulumi.Output.concat(self.build.pull_prefix, "@", image.digest)

    def build_in_cluster(self, name: str, context: str, parent: pulumi.Resource) -> pulumi.Output[str] | None:
        """``webhook.build.inCluster``: the project's Namespace, ImageStream, puller RoleBinding and BuildConfig, then a
        :class:`~batchplane.targets.openshift.binary_build.BinaryBuild` (``<name>-build``) that uploads the context and
        waits for the Build; the Deployment runs ``<internal registry>/<project>/quota-webhook@<digest>``."""
        if not self.build.in_cluster:
            return None
        build = self.build
        namespace: list[pulumi.Resource] = []
        for obj in build.objects:
            kind = obj["kind"]
            role = {"BuildConfig": "buildconfig"}.get(kind) or _ROLES.get(kind) or obj["metadata"]["name"]
            resource = KubernetesObject(
                f"{name}-{role}", obj, opts=pulumi.ResourceOptions(parent=parent, depends_on=namespace)
            )
            self.resources[role] = resource
            if kind == "Namespace":
                namespace = [resource]
        built = BinaryBuild(
            f"{name}-build",
            namespace=build.project,
            build_config=IMAGE_NAME,
            context=context,
            cluster_context=self.connection.context,
            kubeconfig=self.connection.kubeconfig,
            opts=pulumi.ResourceOptions(parent=parent, depends_on=list(self.resources.values())),
        )
        return pulumi.Output.concat(build.pull_prefix, "@", built.digest)


class OpenShiftDeploy(PlatformDeploy):
    """An existing OpenShift (AI) cluster: OLM installs, GPU MachineSets, the internal registry."""

    platform: OpenShiftPlatform

    def declare_cluster(self, needs: ClusterNeeds, place: Placement) -> ClusterConnection:
        return self.connect_existing(place)

    def declare_operators(
        self, needs: ClusterNeeds, connection: ClusterConnection, place: Placement
    ) -> list[pulumi.Resource]:
        target = self.platform.target
        in_cluster = place.options(providers=[connection.provider])
        ready = OpenShiftOperators(
            place.role("olm"),
            {
                "plan": openshift_plan(target, needs.environment),
                "context": connection.context,
                "kubeconfig": connection.kubeconfig,
                "timeout_seconds": target.csv_gate.timeout_seconds,
                "interval_seconds": target.csv_gate.interval_seconds,
                "resource_flavor_api_version": needs.kueue_api_version,
            },
            opts=in_cluster,
        ).kueue_ready
        if any(pool.provisioning != "none" for pool in target.gpu_pools):
            # Without the gate there is no ProvisioningRequest CRD and the AdmissionCheck never becomes Active:
            # read the cluster's FeatureGate before any Kueue object (the admission checks among them).
            feature_gate = ReadinessGate(
                place.role("provisioning-feature-gate"),
                {
                    "gate": "feature-gate",
                    "namespace": "",
                    "feature_gate": PROVISIONING_FEATURE_GATE,
                    "enabling_feature_sets": list(PROVISIONING_FEATURE_SETS),
                    "timeout_seconds": target.csv_gate.timeout_seconds,
                    "interval_seconds": target.csv_gate.interval_seconds,
                    "context": connection.context,
                    "kubeconfig": connection.kubeconfig,
                },
                place.options(),
            )
            feature_gate.checked.apply(_note_feature_gate_offline)
            ready = [*ready, feature_gate]
        if target.gpu_pools:  # GPU MachineSets scaled from zero by the Cluster Autoscaler
            plan = gpu_capacity_plan(target)
            OpenShiftGpuCapacity(
                place.role("gpu"),
                {
                    "pools": plan.pools,
                    "machine_sets": plan.machine_sets,
                    "machine_autoscalers": plan.machine_autoscalers,
                    "cluster_autoscaler": plan.cluster_autoscaler,
                    "sources": plan.sources,
                    "context": connection.context,
                    "kubeconfig": connection.kubeconfig,
                },
                opts=place.options(providers=[connection.provider]),
            )
        return ready

    def image_registry(self, webhook: WebhookConfig, connection: ClusterConnection) -> ImageRegistry | None:
        build = openshift_image_build(webhook)
        return None if build is None else InternalRegistry(build, connection)


def _note_feature_gate_offline(checked: Any) -> None:
    """Offline (the mock engine answers ``checked: false``) say that the cluster's FeatureGate was not read, never a
    verdict: ``pulumi up``'s ``feature-gate`` gate reads it before any Kueue object, ``batchplane preflight`` now."""
    if checked is False:
        pulumi.log.info(
            f"FeatureGate cluster not checked offline (whether it enables {PROVISIONING_FEATURE_GATE}, which the GPU "
            "pools' ProvisioningRequests need; pulumi up's feature-gate gate reads it before any Kueue object): run "
            "batchplane preflight"
        )

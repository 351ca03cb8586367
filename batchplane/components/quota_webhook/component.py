"""QuotaWebhook: the bundled quota admission webhook as Pulumi resources.

Registers the objects :func:`batchplane.components.quota_webhook.manifests.webhook_objects` builds, one typed
resource each (Namespace, ServiceAccount, ConfigMap, cert-manager Issuer and Certificate,
Deployment, Service, PodDisruptionBudget, NetworkPolicy, Validating/MutatingWebhookConfiguration).
Ordering: the Issuer and Certificate wait for ``depends_on`` (cert-manager, or the operators
stage's readiness gate); the Deployment waits for the Certificate (its Secret is mounted); the
webhook configurations are registered last, after the Deployment and Service, so the API server
never calls a webhook that has no ready endpoint (``failurePolicy: Fail`` would reject tenant jobs).
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from batchplane.components.quota_webhook.manifests import (
    IMAGE_REVISION_ANNOTATION,
    WebhookDeployment,
    webhook_objects,
)
from batchplane.kubernetes_object import KubernetesObject

TYPE_TOKEN = "batchplane:admission:QuotaWebhook"


class QuotaWebhookArgs(TypedDict):
    """Inputs of :class:`QuotaWebhook`."""

    deployment: WebhookDeployment
    """Required. Policy, image, namespaces and knobs, from
    :func:`batchplane.components.quota_webhook.manifests.webhook_deployment` (a validated stack)."""
    depends_on: NotRequired[list[pulumi.Resource]]
    """What cert-manager objects must wait for: the cert-manager install or the operators stage's
    readiness gate. Defaults to none (cert-manager is already installed)."""
    image: NotRequired[pulumi.Input[str] | None]
    """The container image to run instead of ``deployment.image``: an image the stack built and pushed
    (:attr:`batchplane.components.webhook_image.WebhookImage.ref`, pinned by digest); the Deployment then waits for
    the push. Defaults to none (``deployment.image``)."""
    image_revision: NotRequired[pulumi.Input[str] | None]
    """What changes with every rebuild of ``image`` when ``image`` itself does not (a tag kind loads anew:
    :attr:`batchplane.components.webhook_image.WebhookImage.revision`): set as the pod template annotation
    ``batchplane.dev/image-revision``, so a rebuilt image rolls the pods. Defaults to none (no annotation)."""


_ROLES = {
    "Namespace": "namespace",
    "ServiceAccount": "sa",
    "ConfigMap": "policy",
    "Issuer": "issuer",
    "Certificate": "cert",
    "Deployment": "deployment",
    "Service": "service",
    "PodDisruptionBudget": "pdb",
    "NetworkPolicy": "netpol",
    "ValidatingWebhookConfiguration": "validating",
    "MutatingWebhookConfiguration": "mutating",
}


class QuotaWebhook(pulumi.ComponentResource):
    """The quota admission webhook of one stack.

    Attributes:
        resources: child resources by kind.
        service_name: the Service's cluster DNS name (``<name>.<namespace>.svc``).
    """

    resources: dict[str, pulumi.Resource]
    service_name: str

    def __init__(self, name: str, args: QuotaWebhookArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        d = args["deployment"]
        self.resources = {}
        self.service_name = f"{d.name}.{d.namespace}.svc"
        ready = list(args.get("depends_on", []))
        image = args.get("image")
        revision = args.get("image_revision")
        for obj in webhook_objects(d):
            kind = obj["kind"]
            if kind == "Deployment" and image is not None:
                obj["spec"]["template"]["spec"]["containers"][0]["image"] = image
            if kind == "Deployment" and revision is not None:
                obj["spec"]["template"]["metadata"]["annotations"][IMAGE_REVISION_ANNOTATION] = revision
            deps = self._dependencies(kind, ready)
            self.resources[kind] = self._register(
                f"{name}-{_ROLES[kind]}", obj, pulumi.ResourceOptions(parent=self, depends_on=deps)
            )
        self.register_outputs({"serviceName": self.service_name})

    def _dependencies(self, kind: str, ready: list[pulumi.Resource]) -> list[pulumi.Resource]:
        have = self.resources
        namespace = [have["Namespace"]] if kind != "Namespace" and "Namespace" in have else []
        if kind in ("Issuer", "Certificate"):
            return namespace + ready + ([have["Issuer"]] if kind == "Certificate" else [])
        if kind == "Deployment":
            return namespace + [have[k] for k in ("ServiceAccount", "ConfigMap", "Certificate")]
        if kind.endswith("WebhookConfiguration"):
            return [have[k] for k in ("Deployment", "Service", "Certificate")]
        return namespace

    @staticmethod
    def _register(child: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.Resource:
        kind = obj["kind"]
        meta = obj["metadata"]
        if kind == "Namespace":
            return k8s.core.v1.Namespace(child, metadata=meta, opts=opts)
        if kind == "ServiceAccount":
            return k8s.core.v1.ServiceAccount(
                child,
                metadata=meta,
                automount_service_account_token=obj["automountServiceAccountToken"],
                opts=opts,
            )
        if kind == "ConfigMap":
            return k8s.core.v1.ConfigMap(
                child, metadata=meta, data=obj.get("data"), binary_data=obj.get("binaryData"), opts=opts
            )
        if kind in ("Issuer", "Certificate"):
            return KubernetesObject(child, obj, opts=opts)
        if kind == "Deployment":
            return k8s.apps.v1.Deployment(child, metadata=meta, spec=obj["spec"], opts=opts)
        if kind == "Service":
            return k8s.core.v1.Service(child, metadata=meta, spec=obj["spec"], opts=opts)
        if kind == "PodDisruptionBudget":
            return k8s.policy.v1.PodDisruptionBudget(child, metadata=meta, spec=obj["spec"], opts=opts)
        if kind == "NetworkPolicy":
            return k8s.networking.v1.NetworkPolicy(child, metadata=meta, spec=obj["spec"], opts=opts)
        if kind == "ValidatingWebhookConfiguration":
            return k8s.admissionregistration.v1.ValidatingWebhookConfiguration(
                child, metadata=meta, webhooks=obj["webhooks"], opts=opts
            )
        if kind == "MutatingWebhookConfiguration":
            return k8s.admissionregistration.v1.MutatingWebhookConfiguration(
                child, metadata=meta, webhooks=obj["webhooks"], opts=opts
            )
        raise ValueError(f"QuotaWebhook: no resource type for kind {kind}")

"""Pure builders of the webhook's Kubernetes objects (dicts), deployed by
:class:`~batchplane.components.quota_webhook.component.QuotaWebhook`.

Namespace, ServiceAccount (no API token: the webhook calls no API), policy ConfigMap, cert-manager
self-signed Issuer + Certificate (the Kueue chart's pattern: ``charts/kueue/templates/certmanager/`` of
https://github.com/kubernetes-sigs/kueue/tree/v0.19.2),
hardened Deployment, Service, PodDisruptionBudget, NetworkPolicy (ingress on the HTTPS port only,
no egress), Validating- and MutatingWebhookConfiguration with ``cert-manager.io/inject-ca-from``,
scoped by ``namespaceSelector`` to the tenant namespaces and never to system/operator namespaces.
No Pulumi here: the component only registers these objects.
"""

from __future__ import annotations

import base64
import gzip
from dataclasses import dataclass, field
from typing import Any

from batchplane.components.quota_webhook.policy import render_policy
from batchplane.config.webhook import SYSTEM_NAMESPACES
from batchplane.errors import ConfigIssue
from batchplane.frameworks import FRAMEWORKS
from batchplane.frameworks.pod import GROUP_NAME_LABEL
from batchplane.stack.model import Stack, webhook_enabled
from batchplane.webhook.policy import policy_checksum, policy_json
from batchplane.wellknown import NAMESPACE_NAME_LABEL

Object = dict[str, Any]

APP_LABELS = {
    "app.kubernetes.io/name": "batchplane-quota-webhook",
    "app.kubernetes.io/managed-by": "batchplane",
}
POLICY_CHECKSUM_ANNOTATION = "batchplane.dev/policy-checksum"
#: Pod template annotation carrying the build's context hash where the image reference stays one tag (kind).
IMAGE_REVISION_ANNOTATION = "batchplane.dev/image-revision"
"""Pod-template annotation holding the policy's SHA-256: a new policy rolls the pods."""
INJECT_CA_ANNOTATION = "cert-manager.io/inject-ca-from"
POLICY_DIR = "/etc/batchplane/policy"
TLS_DIR = "/etc/batchplane/tls"
POLICY_KEY = "policy.json"
#: The ConfigMap ``binaryData`` key of a gzip-compressed policy (documents larger than :data:`COMPRESS_ABOVE`).
POLICY_GZ_KEY = "policy.json.gz"
#: Policy documents larger than this (bytes of JSON) ship gzip-compressed: a MultiKueue manager's document embeds
#: every declared worker's and would outgrow the ConfigMap; smaller ones stay readable JSON (``kubectl get cm``).
COMPRESS_ABOVE = 256 * 1024
RUN_AS = 65532
"""Non-root UID of the image (``webhook/Dockerfile``: ``USER 65532:0``), pinned where the platform lets pods pin IDs
(:meth:`batchplane.targets.platform.Platform.pod_user_ids`)."""
#: The pinned IDs of every platform but OpenShift: ``runAsUser``/``runAsGroup``/``fsGroup`` = :data:`RUN_AS`.
PINNED_IDS = (("runAsUser", RUN_AS), ("runAsGroup", RUN_AS), ("fsGroup", RUN_AS))


def _workload_rules(*, update: bool = False) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    grouped: dict[tuple[str, str], list[str]] = {}
    for framework in FRAMEWORKS:
        if framework.admission_review and (not update or framework.update_review):
            grouped.setdefault((framework.group, framework.version), []).append(framework.plural)
    return tuple((group, version, tuple(plurals)) for (group, version), plurals in grouped.items())


#: (apiGroup, version, resources) of the job kinds the webhook reviews on CREATE: every framework registered with
#: ``admission_review`` (:mod:`batchplane.frameworks`), grouped by API group and version in registry order.
WORKLOAD_RULES: tuple[tuple[str, str, tuple[str, ...]], ...] = _workload_rules()
#: The part of :data:`WORKLOAD_RULES` the validating webhook reviews on UPDATE too (``update_review``: Kueue lets an
#: update change the queue label or the PodSets), in its own entry ``validate-update``.
UPDATE_RULES: tuple[tuple[str, str, tuple[str, ...]], ...] = _workload_rules(update=True)


def _rule(group: str, version: str, resources: tuple[str, ...], operations: list[str]) -> Object:
    return {
        "apiGroups": [group],
        "apiVersions": [version],
        "resources": list(resources),
        "operations": operations,
        "scope": "Namespaced",
    }


@dataclass(frozen=True)
class WebhookDeployment:
    """What the manifests need to know.

    Attributes:
        policy_json: the policy document (``batchplane webhook policy`` output).
        policy_checksum: its SHA-256 (hex).
        image: the pinned image.
        namespace: where the webhook runs.
        tenant_namespaces: namespaces it reviews (no webhook configurations when empty).
        excluded_namespaces: namespaces never reviewed (system and operator namespaces).
        replicas: pod replicas. Defaults to 2.
        port: container HTTPS port. Defaults to 8443.
        failure_policy: ``Fail`` or ``Ignore`` (CREATE reviews). Defaults to ``Fail``.
        update_failure_policy: ``Fail`` or ``Ignore`` (the UPDATE review's own entry). Defaults to ``Ignore``.
        timeout_seconds: webhook timeout, 1–5. Defaults to 3.
        name: base name of every object. Defaults to ``batchplane-quota-webhook``.
        pod_ids: ``(field, id)`` pairs of the pod's ``securityContext`` (``runAsUser``, ``runAsGroup``, ``fsGroup``;
            the container repeats all but ``fsGroup``). Defaults to :data:`PINNED_IDS`; empty on OpenShift, whose
            SCC assigns them (:meth:`~batchplane.targets.platform.Platform.pod_user_ids`).
    """

    policy_json: str
    policy_checksum: str
    image: str
    namespace: str
    tenant_namespaces: tuple[str, ...]
    excluded_namespaces: tuple[str, ...] = field(default_factory=lambda: tuple(sorted(SYSTEM_NAMESPACES)))
    replicas: int = 2
    port: int = 8443
    failure_policy: str = "Fail"
    update_failure_policy: str = "Ignore"
    timeout_seconds: int = 3
    name: str = "batchplane-quota-webhook"
    pod_ids: tuple[tuple[str, int], ...] = PINNED_IDS

    @property
    def certificate_name(self) -> str:
        """The cert-manager Certificate (``<name>-serving-cert``)."""
        return f"{self.name}-serving-cert"

    @property
    def secret_name(self) -> str:
        """The Secret cert-manager writes ``tls.crt``/``tls.key``/``ca.crt`` into."""
        return f"{self.name}-tls"


def _meta(d: WebhookDeployment, name: str | None = None, namespaced: bool = True, **extra: Any) -> Object:
    meta: Object = {"name": name or d.name, "labels": dict(APP_LABELS)}
    if namespaced:
        meta["namespace"] = d.namespace
    meta.update(extra)
    return meta


def namespace(d: WebhookDeployment) -> Object:
    """The webhook's namespace, Pod Security ``restricted`` enforced."""
    labels = dict(APP_LABELS) | {"pod-security.kubernetes.io/enforce": "restricted"}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": d.namespace, "labels": labels}}


def service_account(d: WebhookDeployment) -> Object:
    """A ServiceAccount without an API token: the webhook reads only its mounted files (no RBAC)."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": _meta(d),
        "automountServiceAccountToken": False,
    }


def policy_key(d: WebhookDeployment) -> str:
    """The ConfigMap key (and file name under the mount) that holds the policy: ``policy.json``, or
    ``policy.json.gz`` for a document over :data:`COMPRESS_ABOVE` bytes."""
    return POLICY_GZ_KEY if len(d.policy_json.encode()) > COMPRESS_ABOVE else POLICY_KEY


def compressed_policy(text: str) -> bytes:
    """The policy JSON gzip-compressed, deterministically (no name, ``mtime`` 0): same document, same bytes."""
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def config_map(d: WebhookDeployment) -> Object:
    """The policy document as ``policy.json`` (``data``), or gzip-compressed as ``policy.json.gz`` (``binaryData``,
    base64) when it is larger than :data:`COMPRESS_ABOVE` bytes."""
    obj: Object = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(d, f"{d.name}-policy")}
    if policy_key(d) == POLICY_GZ_KEY:
        obj["binaryData"] = {POLICY_GZ_KEY: base64.b64encode(compressed_policy(d.policy_json)).decode()}
    else:
        obj["data"] = {POLICY_KEY: d.policy_json}
    return obj


def issuer(d: WebhookDeployment) -> Object:
    """A self-signed cert-manager Issuer (its certificates carry themselves as ``ca.crt``)."""
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Issuer",
        "metadata": _meta(d, f"{d.name}-selfsigned"),
        "spec": {"selfSigned": {}},
    }


def certificate(d: WebhookDeployment) -> Object:
    """The serving Certificate for the Service's DNS names (ECDSA P-256, rotated key, 90 days)."""
    svc = f"{d.name}.{d.namespace}.svc"
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": _meta(d, d.certificate_name),
        "spec": {
            "secretName": d.secret_name,
            "dnsNames": [svc, f"{svc}.cluster.local"],
            "issuerRef": {"group": "cert-manager.io", "kind": "Issuer", "name": f"{d.name}-selfsigned"},
            "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
            "duration": "2160h",
            "renewBefore": "360h",
            "usages": ["server auth", "digital signature"],
        },
    }


def deployment(d: WebhookDeployment) -> Object:
    """The hardened Deployment: non-root, read-only root FS, no capabilities, seccomp RuntimeDefault,
    no service-account token, requests/limits, probes, spread across nodes; UID/GID/fsGroup pinned to
    :attr:`WebhookDeployment.pod_ids` (none on OpenShift: the SCC assigns them)."""
    probe = {"scheme": "HTTPS", "port": d.port}
    container = {
        "name": "webhook",
        "image": d.image,
        "imagePullPolicy": "IfNotPresent",
        "args": [
            "serve",
            "--policy", f"{POLICY_DIR}/{policy_key(d)}",
            "--cert-file", f"{TLS_DIR}/tls.crt",
            "--key-file", f"{TLS_DIR}/tls.key",
            "--port", str(d.port),
            "--host", "0.0.0.0",  # the server binds loopback unless told otherwise
        ],
        "ports": [{"name": "https", "containerPort": d.port, "protocol": "TCP"}],
        "readinessProbe": {"httpGet": {"path": "/readyz", **probe}, "periodSeconds": 5, "failureThreshold": 3},
        "livenessProbe": {"httpGet": {"path": "/healthz", **probe}, "periodSeconds": 10, "failureThreshold": 3},
        "startupProbe": {"httpGet": {"path": "/healthz", **probe}, "periodSeconds": 1, "failureThreshold": 30},
        "resources": {"requests": {"cpu": "100m", "memory": "96Mi"}, "limits": {"cpu": "1", "memory": "256Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            **{key: value for key, value in d.pod_ids if key != "fsGroup"},
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumeMounts": [
            {"name": "tls", "mountPath": TLS_DIR, "readOnly": True},
            {"name": "policy", "mountPath": POLICY_DIR, "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
    }  # fmt: skip
    pod_spec = {
        "serviceAccountName": d.name,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": {
            "runAsNonRoot": True,
            **dict(d.pod_ids),
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "affinity": {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": dict(APP_LABELS)},
                            "topologyKey": "kubernetes.io/hostname",
                        },
                    }
                ]
            }
        },
        "containers": [container],
        "volumes": [
            {"name": "tls", "secret": {"secretName": d.secret_name, "defaultMode": 0o440}},
            {"name": "policy", "configMap": {"name": f"{d.name}-policy"}},
            {"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "16Mi"}},
        ],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(d),
        "spec": {
            "replicas": d.replicas,
            "selector": {"matchLabels": dict(APP_LABELS)},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
            "template": {
                "metadata": {
                    "labels": dict(APP_LABELS),
                    "annotations": {POLICY_CHECKSUM_ANNOTATION: d.policy_checksum},
                },
                "spec": pod_spec,
            },
        },
    }


def service(d: WebhookDeployment) -> Object:
    """ClusterIP Service: port 443 → the container's HTTPS port (the API server's), and the same container port as
    ``metrics`` (its ``/metrics``, what the stack's ``ServiceMonitor`` scrapes; docs/observability.md)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(d),
        "spec": {
            "type": "ClusterIP",
            "selector": dict(APP_LABELS),
            "ports": [
                {"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"},
                {"name": "metrics", "port": d.port, "targetPort": "https", "protocol": "TCP"},
            ],
        },
    }


def pod_disruption_budget(d: WebhookDeployment) -> Object:
    """Keeps one pod up during voluntary disruptions (``maxUnavailable: 1`` with a single replica)."""
    budget: Object = {"minAvailable": 1} if d.replicas > 1 else {"maxUnavailable": 1}
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": _meta(d),
        "spec": {**budget, "selector": {"matchLabels": dict(APP_LABELS)}},
    }


def network_policy(d: WebhookDeployment) -> Object:
    """Ingress only on the HTTPS port (the API server is not a pod, so no source selector); no egress."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": _meta(d),
        "spec": {
            "podSelector": {"matchLabels": dict(APP_LABELS)},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [{"ports": [{"port": d.port, "protocol": "TCP"}]}],
            "egress": [],
        },
    }


def namespace_selector(d: WebhookDeployment) -> Object:
    """Tenant namespaces only (``In``), and never a system or operator namespace (``NotIn``)."""
    tenants = [ns for ns in d.tenant_namespaces if ns not in d.excluded_namespaces]
    return {
        "matchExpressions": [
            {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(tenants)},
            {
                "key": NAMESPACE_NAME_LABEL,
                "operator": "NotIn",
                "values": sorted({*d.excluded_namespaces, d.namespace}),
            },
        ]
    }


#: The ``objectSelector`` of the ``validate-pod-groups`` entry: only Pods labelled with a pod group's name reach the
#: webhook (Kueue makes one Workload of such a group, ``pkg/controller/jobs/pod/pod_controller.go`` at v0.19.2);
#: every other Pod of the cluster never does.
POD_GROUP_SELECTOR: Object = {"matchExpressions": [{"key": GROUP_NAME_LABEL, "operator": "Exists"}]}


def _rules(kind: str) -> list[Object]:
    """The job kinds a webhook entry sees: ``mutate`` (queue-label defaulting) and ``validate`` on CREATE of every
    reviewed kind; ``validate-update`` on UPDATE of the kinds of :data:`UPDATE_RULES`; ``validate-pod-groups`` on
    CREATE of Pods (narrowed by :data:`POD_GROUP_SELECTOR`)."""
    if kind == "validate-pod-groups":
        return [_rule("", "v1", ("pods",), ["CREATE"])]
    if kind == "validate-update":
        return [_rule(group, version, resources, ["UPDATE"]) for group, version, resources in UPDATE_RULES]
    return [_rule(group, version, resources, ["CREATE"]) for group, version, resources in WORKLOAD_RULES]


def _webhook(d: WebhookDeployment, kind: str) -> Object:
    """One webhook entry: ``validate`` and ``mutate`` (CREATE, ``failurePolicy`` from ``webhook.failurePolicy``) or
    ``validate-update`` (UPDATE on ``/validate``, from ``webhook.updateFailurePolicy``: its own entry, because one
    entry has one failure policy, and an unreachable webhook must not hold Kueue's start of admitted jobs), or
    ``validate-pod-groups`` (Pod CREATE on ``/validate``, only Pods matching :data:`POD_GROUP_SELECTOR`)."""
    path = "validate" if kind.startswith("validate") else kind
    entry: Object = {
        "name": f"{kind}.quota.batchplane.dev",
        "clientConfig": {
            "service": {"name": d.name, "namespace": d.namespace, "path": f"/{path}", "port": 443}
        },
        "rules": _rules(kind),
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": d.update_failure_policy if kind == "validate-update" else d.failure_policy,
        "matchPolicy": "Equivalent",
        "timeoutSeconds": d.timeout_seconds,
        "namespaceSelector": namespace_selector(d),
    }
    if kind == "mutate":
        entry["reinvocationPolicy"] = "Never"
    if kind == "validate-pod-groups":
        entry["objectSelector"] = POD_GROUP_SELECTOR
    return entry


def validating_webhook_configuration(d: WebhookDeployment) -> Object:
    """The ValidatingWebhookConfiguration (``/validate``), CA injected by cert-manager."""
    annotations = {INJECT_CA_ANNOTATION: f"{d.namespace}/{d.certificate_name}"}
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": _meta(d, namespaced=False, annotations=annotations),
        "webhooks": [
            _webhook(d, "validate"),
            *([_webhook(d, "validate-update")] if UPDATE_RULES else []),
            _webhook(d, "validate-pod-groups"),
        ],
    }


def mutating_webhook_configuration(d: WebhookDeployment) -> Object:
    """The MutatingWebhookConfiguration (``/mutate``), CA injected by cert-manager."""
    annotations = {INJECT_CA_ANNOTATION: f"{d.namespace}/{d.certificate_name}"}
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": _meta(d, namespaced=False, annotations=annotations),
        "webhooks": [_webhook(d, "mutate")],
    }


def webhook_objects(d: WebhookDeployment) -> list[Object]:
    """Every object in creation order; no webhook configurations when there is no tenant namespace."""
    objects = [
        namespace(d), service_account(d), config_map(d), issuer(d), certificate(d), deployment(d), service(d),
        pod_disruption_budget(d), network_policy(d),
    ]  # fmt: skip
    if any(ns not in d.excluded_namespaces for ns in d.tenant_namespaces):
        objects += [validating_webhook_configuration(d), mutating_webhook_configuration(d)]
    return objects


def webhook_deployment(stack: Stack) -> WebhookDeployment:
    """The :class:`WebhookDeployment` of a validated stack (its policy, ``batchplane:webhook`` settings,
    and the operators' namespaces added to the excluded ones)."""
    cfg = stack.config.webhook
    doc = render_policy(stack)
    excluded = set(SYSTEM_NAMESPACES)
    ops = stack.config.operators
    if ops is not None:
        excluded |= {ops.cert_manager.namespace, ops.kueue.namespace, ops.kuberay.namespace}
        excluded.add(ops.training.resolved_namespace())
    return WebhookDeployment(
        policy_json=policy_json(doc),
        policy_checksum=policy_checksum(doc),
        image=cfg.resolved_image,
        namespace=cfg.namespace,
        tenant_namespaces=tuple(doc.namespaces),
        excluded_namespaces=tuple(sorted(excluded)),
        replicas=cfg.replicas,
        port=cfg.port,
        failure_policy=cfg.failure_policy,
        update_failure_policy=cfg.update_failure_policy,
        timeout_seconds=cfg.timeout_seconds,
        pod_ids=tuple(stack.platform.pod_user_ids(RUN_AS).items()),
    )


#: Kubernetes refuses a ConfigMap whose keys and values exceed 1 MiB together (``MaxSecretSize``, applied to
#: ConfigMaps by ``ValidateConfigMap`` in k8s.io/kubernetes pkg/apis/core/validation).
MAX_CONFIGMAP_BYTES = 1024 * 1024


def deployment_problems(stack: Stack) -> list[ConfigIssue]:
    """What only the rendered deployment reveals, checked before anything is declared (the program and
    ``batchplane validate`` both run it): the webhook's policy document must fit in its ConfigMap. A MultiKueue
    manager's document embeds every declared worker's, so it grows with workers × teams; documents over
    :data:`COMPRESS_ABOVE` bytes are measured compressed, as they ship."""
    if not webhook_enabled(stack):
        return []
    text = policy_json(render_policy(stack))
    if len(text.encode()) > COMPRESS_ABOVE:
        size = len(POLICY_GZ_KEY) + len(compressed_policy(text))
    else:
        size = len(POLICY_KEY) + len(text.encode())
    if size <= MAX_CONFIGMAP_BYTES:
        return []
    workers = f" and its {len(stack.workers)} MultiKueue workers'" if stack.workers else ""
    return [
        ConfigIssue(
            "batchplane:webhook",
            f"the webhook's policy document for this stack's queues{workers} is {size:,} bytes as shipped, over the "
            f"{MAX_CONFIGMAP_BYTES:,}-byte ConfigMap limit: split the teams or workers over more stacks",
        )
    ]

"""Webhook policies called directly: fail-closed webhooks scoped away from system namespaces, TLS
from cert-manager, non-root webhook pods, replicas and a PodDisruptionBudget in production."""

from __future__ import annotations

import json
from typing import Any

import pytest
from batchplane_policies import webhook as w
from pulumi_policy.proxy import UnknownValueError

from tests.policies.factories import DEV, PRODUCTION, UNKNOWN, Stack, check_resource

VWC = "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration"
MWC = "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration"


def hook(
    selector: Any = None,
    *,
    failure_policy: str | None = "Fail",
    namespace: str = "batchplane-system",
    url: bool = False,
) -> dict[str, Any]:
    h: dict[str, Any] = {"name": "validate.quota.batchplane.dev"}
    h["clientConfig"] = (
        {"url": "https://example.com/hook"}
        if url
        else {"service": {"name": "quota", "namespace": namespace, "path": "/validate"}}
    )
    if failure_policy is not None:
        h["failurePolicy"] = failure_policy
    if selector is not None:
        h["namespaceSelector"] = selector
    return h


def config(*hooks: dict[str, Any], annotation: str | None = "batchplane-system/serving") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "quota"}
    if annotation is not None:
        metadata["annotations"] = {"cert-manager.io/inject-ca-from": annotation}
    return {"apiVersion": "admissionregistration.k8s.io/v1", "metadata": metadata, "webhooks": list(hooks)}


TENANTS = {
    "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team-a"]}]
}
REACHES_ALL = (
    "failurePolicy Fail, but its namespaceSelector does not exclude kube-system, kube-public, "
    "kube-node-lease, cert-manager, kueue-system, batchplane-system: an unavailable webhook would block "
    "those namespaces"
)


@pytest.mark.parametrize(
    ("props", "cfg", "want"),
    [
        (config(hook(TENANTS)), None, []),
        (config(hook({"matchLabels": {"kubernetes.io/metadata.name": "team-a"}})), None, []),
        (config(hook({"matchLabels": {"batchplane.dev/tenant": "true"}})), None, []),
        (config(hook({})), None, [f'webhooks[0] "validate.quota.batchplane.dev": {REACHES_ALL}']),
        (
            config(hook(None, failure_policy=None)),
            None,
            [f'webhooks[0] "validate.quota.batchplane.dev": {REACHES_ALL}'],
        ),
        (config(hook(None, failure_policy="Ignore")), None, []),
        (
            config(
                hook(
                    {
                        "matchExpressions": [
                            {
                                "key": "kubernetes.io/metadata.name",
                                "operator": "NotIn",
                                "values": [
                                    "kube-system",
                                    "kube-public",
                                    "kube-node-lease",
                                    "cert-manager",
                                    "kueue-system",
                                ],
                            }
                        ]
                    }
                )
            ),
            None,
            [
                'webhooks[0] "validate.quota.batchplane.dev": failurePolicy Fail, but its namespaceSelector does not '
                "exclude batchplane-system: an unavailable webhook would block those namespaces"
            ],
        ),
        (
            config(
                hook(
                    {
                        "matchExpressions": [
                            {
                                "key": "kubernetes.io/metadata.name",
                                "operator": "In",
                                "values": ["team-a", "kube-system"],
                            }
                        ]
                    }
                )
            ),
            {"systemNamespaces": ["kube-system"]},
            [
                'webhooks[0] "validate.quota.batchplane.dev": failurePolicy Fail, but its namespaceSelector does not '
                "exclude kube-system: an unavailable webhook would block those namespaces"
            ],
        ),
        (
            {"webhooks": [{}]},
            None,
            [
                'webhooks[0] "?": failurePolicy Fail, but its namespaceSelector does not exclude '
                "kube-system, kube-public, kube-node-lease, cert-manager, kueue-system: an "
                "unavailable webhook would block those namespaces"
            ],
        ),
        ({}, None, []),
    ],
    ids=[
        "tenants-in",
        "tenant-label-match",
        "opt-in-label",
        "empty-selector",
        "default-policy-is-fail",
        "ignore",
        "notin-misses-own-namespace",
        "in-includes-system",
        "bare-webhook",
        "no-webhooks",
    ],
)
def test_fail_closed_webhooks_exclude_system_namespaces(
    props: dict[str, Any], cfg: dict[str, Any] | None, want: list[str]
) -> None:
    assert check_resource(w.webhook_fail_closed_scoped, VWC, props, config=cfg) == want
    assert check_resource(w.webhook_fail_closed_scoped, MWC, props, config=cfg) == want


def test_fail_closed_check_cannot_judge_an_unknown_selector() -> None:
    with pytest.raises(UnknownValueError):
        check_resource(w.webhook_fail_closed_scoped, VWC, config(hook(UNKNOWN)))


# --- stacks with a webhook backend -------------------------------------------------------------------

LABELS = {"app.kubernetes.io/name": "quota"}
SECURE_POD = {
    "securityContext": {"runAsNonRoot": True, "runAsUser": 65532},
    "containers": [{"name": "webhook", "securityContext": {"allowPrivilegeEscalation": False}}],
}


def backend(
    *,
    replicas: int | None = 2,
    pod: dict[str, Any] | None = None,
    pdb: bool = True,
    annotation: str | None = "batchplane-system/serving",
    certificate: bool = True,
    service_selector: dict[str, str] | None = None,
) -> Stack:
    s = Stack()
    meta = {"namespace": "batchplane-system"}
    if certificate:
        s.add("kubernetes:cert-manager.io/v1:Certificate", "cert", {"metadata": {"name": "serving", **meta}})
    spec: dict[str, Any] = {
        "selector": {"matchLabels": LABELS},
        "template": {"metadata": {"labels": LABELS}, "spec": pod or SECURE_POD},
    }
    if replicas is not None:
        spec["replicas"] = replicas
    s.add(w.DEPLOYMENT, "deployment", {"metadata": {"name": "quota", **meta}, "spec": spec})
    s.add(
        w.SERVICE,
        "service",
        {
            "metadata": {"name": "quota", **meta},
            "spec": {"selector": LABELS if service_selector is None else service_selector},
        },
    )
    if pdb:
        s.add(
            w.PDB,
            "pdb",
            {
                "metadata": {"name": "quota", **meta},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": LABELS}},
            },
        )
    s.add(VWC, "validating", config(hook(TENANTS), annotation=annotation))
    s.add(MWC, "mutating", config(hook(TENANTS), annotation=annotation))
    return s


@pytest.mark.parametrize(
    ("stack", "want"),
    [
        (backend(), []),
        (
            backend(annotation=None),
            [
                (
                    'ValidatingWebhookConfiguration "quota" calls an in-cluster Service but has no '
                    "cert-manager.io/inject-ca-from annotation",
                    "validating",
                ),
                (
                    'MutatingWebhookConfiguration "quota" calls an in-cluster Service but has no '
                    "cert-manager.io/inject-ca-from annotation",
                    "mutating",
                ),
            ],
        ),
        (
            backend(certificate=False),
            [
                (
                    'ValidatingWebhookConfiguration "quota" injects the CA of Certificate "batchplane-system/serving", '
                    "which the stack does not define",
                    "validating",
                ),
                (
                    'MutatingWebhookConfiguration "quota" injects the CA of Certificate "batchplane-system/serving", '
                    "which the stack does not define",
                    "mutating",
                ),
            ],
        ),
    ],
    ids=["injected", "no-annotation", "certificate-missing"],
)
def test_webhook_tls_comes_from_a_cert_manager_certificate(stack: Stack, want: list[tuple[str, str]]) -> None:
    assert stack.check(w.webhook_tls_via_cert_manager) == want


def test_url_webhooks_and_bare_configurations_need_no_cert_manager() -> None:
    s = Stack()
    s.add(VWC, "external", config(hook(TENANTS, url=True), annotation=None))
    s.add(VWC, "bare", {})
    assert s.check(w.webhook_tls_via_cert_manager) == []


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        (SECURE_POD, []),
        ({"containers": [{"name": "webhook", "securityContext": {"runAsNonRoot": True}}]}, []),
        ({"containers": [{"name": "webhook", "securityContext": {"runAsUser": 1000}}]}, []),
        (
            {"containers": [{"name": "webhook"}]},
            [
                (
                    'Deployment "quota" serves a webhook: container "webhook" does not set runAsNonRoot: true',
                    "deployment",
                )
            ],
        ),
        (
            {
                "securityContext": {"runAsNonRoot": True},
                "initContainers": [{"name": "init", "securityContext": {"runAsUser": 0}}],
                "containers": [{"name": "webhook", "securityContext": {"privileged": True}}],
            },
            [
                ('Deployment "quota" serves a webhook: container "init" runs as user 0', "deployment"),
                ('Deployment "quota" serves a webhook: container "webhook" is privileged', "deployment"),
            ],
        ),
        ({}, []),
    ],
    ids=[
        "pod-level",
        "container-level",
        "non-zero-user",
        "unset",
        "root-init-and-privileged",
        "no-containers",
    ],
)
def test_webhook_pods_run_as_non_root(pod: dict[str, Any], want: list[tuple[str, str]]) -> None:
    assert backend(pod=pod).check(w.webhook_runs_as_non_root) == want


def test_deployments_that_serve_no_webhook_are_not_checked() -> None:
    root_pod = {"containers": [{"name": "webhook", "securityContext": {"runAsUser": 0}}]}
    assert backend(pod=root_pod, service_selector={"app": "other"}).check(w.webhook_runs_as_non_root) == []


@pytest.mark.parametrize(
    ("stack", "tags", "config", "want"),
    [
        (backend(), PRODUCTION, None, []),
        (backend(replicas=1), DEV, None, []),
        (
            backend(replicas=None, pdb=False),
            PRODUCTION,
            None,
            [
                ('Deployment "quota" serves a webhook with 1 replica(s); at least 2 required', "deployment"),
                (
                    'Deployment "quota" serves a webhook but no PodDisruptionBudget covers its pods',
                    "deployment",
                ),
            ],
        ),
        (
            backend(replicas=2),
            PRODUCTION,
            {"minReplicas": 3},
            [('Deployment "quota" serves a webhook with 2 replica(s); at least 3 required', "deployment")],
        ),
    ],
    ids=["prod-ha", "dev-single", "prod-single-no-pdb", "configured-minimum"],
)
def test_production_webhooks_are_highly_available(
    stack: Stack, tags: dict[str, str], config: dict[str, Any] | None, want: list[tuple[str, str]]
) -> None:
    assert stack.check(w.webhook_high_availability, stack_tags=tags, config=config) == want


def test_webhook_stack_policies_tolerate_missing_properties() -> None:
    s = Stack()
    s.add(w.DEPLOYMENT, "d", {})
    s.add(w.SERVICE, "s", {})
    s.add(w.PDB, "p", {})
    s.add(VWC, "v", {"webhooks": [{"clientConfig": {"service": {}}}]})
    assert s.check(w.webhook_runs_as_non_root, stack_tags=PRODUCTION) == []
    assert s.check(w.webhook_high_availability, stack_tags=PRODUCTION) == []
    assert s.check(w.webhook_tls_via_cert_manager) == [
        (
            'ValidatingWebhookConfiguration "v" calls an in-cluster Service but has no cert-manager.io/inject-ca-from '
            "annotation",
            "v",
        )
    ]


def test_selector_matching_follows_label_selector_semantics() -> None:
    labels = {"kubernetes.io/metadata.name": "kube-system"}
    cases = {
        json.dumps({}): True,
        json.dumps({"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}): True,
        json.dumps({"matchExpressions": [{"key": "team", "operator": "Exists"}]}): False,
        json.dumps(
            {
                "matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}
                ]
            }
        ): False,
    }
    assert {k: w.selector_matches(json.loads(k), labels) for k in cases} == cases


# --- webhook-image-published ---------------------------------------------------------------------------


def _webhook_deployment(s: Stack, image: str, depends_on: tuple[str, ...] = ()) -> None:
    s.add(
        "kubernetes:apps/v1:Deployment",
        "quota-webhook-deployment",
        {
            "metadata": {
                "name": "batchplane-quota-webhook",
                "labels": {"app.kubernetes.io/name": "batchplane-quota-webhook"},
            },
            "spec": {"template": {"spec": {"containers": [{"name": "webhook", "image": image}]}}},
        },
        depends_on=depends_on,
    )


@pytest.mark.parametrize(
    ("image", "config", "ok"),
    [
        ("ghcr.io/batchplane/quota-webhook:0.1.0", None, True),
        ("ghcr.io/batchplane/quota-webhook@sha256:" + "a" * 64, None, True),
        ("ghcr.io/batchplane/quota-webhook:dev", None, False),
        ("registry.local:5000/team/quota-webhook:1.2.3", None, False),
        (
            "registry.local:5000/team/quota-webhook:1.2.3",
            {"publishedRepositories": ["registry.local:5000/team/quota-webhook"]},
            True,
        ),
    ],
    ids=["released-tag", "digest", "floating-tag", "unknown-repository", "configured-repository"],
)
def test_the_webhook_runs_only_images_someone_publishes(
    image: str, config: dict[str, Any] | None, ok: bool
) -> None:
    s = Stack()
    _webhook_deployment(s, image)
    found = s.check(w.webhook_image_published, config=config)
    assert found == (
        []
        if ok
        else [
            (
                f'Deployment "batchplane-quota-webhook" runs {image}, which neither this stack builds (webhook.build) nor '
                f"the release workflow publishes ({', '.join((config or {}).get('publishedRepositories', ['ghcr.io/batchplane/quota-webhook']))} "
                "at a version tag or digest): the pods would sit in ImagePullBackOff while failurePolicy Fail rejects tenant jobs",
                "quota-webhook-deployment",
            )
        ]
    )


@pytest.mark.parametrize(
    ("image", "tags", "violation"),
    [
        ("ghcr.io/batchplane/quota-webhook:0.1.0", PRODUCTION, True),
        ("ghcr.io/batchplane/quota-webhook@sha256:" + "a" * 64, PRODUCTION, False),
        ("ghcr.io/batchplane/quota-webhook:0.1.0", {}, False),
    ],
    ids=["production-tag", "production-digest", "dev-tag"],
)
def test_a_production_stack_runs_a_published_image_only_by_digest(
    image: str, tags: dict[str, str], violation: bool
) -> None:
    s = Stack()
    _webhook_deployment(s, image)
    found = s.check(w.webhook_image_published, stack_tags=tags)
    assert found == (
        [
            (
                f'Deployment "batchplane-quota-webhook" runs {image} on a production stack: a published image must be '
                "pinned by digest there (@sha256:…), so that what was reviewed is what runs — or let the stack build "
                "it (omit webhook.image)",
                "quota-webhook-deployment",
            )
        ]
        if violation
        else []
    )


def test_an_image_the_stack_builds_needs_no_publisher() -> None:
    s = Stack()
    s.add("docker-build:index:Image", "webhook-image-image", {"tags": ["registry.local/x:dev"]})
    s.add("command:local:Command", "webhook-image-load", {}, depends_on=("webhook-image-image",))
    _webhook_deployment(s, "registry.local/x:dev", depends_on=("webhook-image-load",))
    assert s.check(w.webhook_image_published) == []

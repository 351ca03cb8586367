"""The QuotaWebhook component in the real program under the offline mock engine (stack ``kind``):
hardened Deployment, cert-manager wiring, webhook configurations scoped to tenant namespaces, PDB,
NetworkPolicy, no RBAC, and a policy checksum that rolls the pods."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from batchplane.components.quota_webhook.manifests import (
    POLICY_CHECKSUM_ANNOTATION,
    WebhookDeployment,
    validating_webhook_configuration,
    webhook_deployment,
)
from batchplane.components.quota_webhook.policy import render_policy
from batchplane.offline.engine import run_program
from batchplane.offline.model import ProgramRun, RecordedResource
from batchplane.offline.stackfile import load_stack_file as load_config
from batchplane.stack import load_stack_file
from batchplane.webhook.policy import policy_checksum
from tests.webhook.conftest import REPO_ROOT, TEMPLATES

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kind_run() -> ProgramRun:
    return run_program(REPO_ROOT, "kind", load_config(TEMPLATES / "Pulumi.kind.yaml"))


def _one(run: ProgramRun, type_suffix: str) -> RecordedResource:
    found = [r for r in run.resources if r.type.endswith(type_suffix) and r.name.startswith("quota-webhook")]
    assert len(found) == 1, [r.name for r in found]
    return found[0]


def test_component_registers_every_child_under_its_token(kind_run: ProgramRun) -> None:
    component = next(r for r in kind_run.resources if r.name == "quota-webhook")
    assert component.type == "batchplane:admission:QuotaWebhook"
    children = sorted(r.name for r in kind_run.resources if r.parent == component.urn)
    assert children == [
        "quota-webhook-cert", "quota-webhook-deployment", "quota-webhook-issuer", "quota-webhook-mutating",
        "quota-webhook-namespace", "quota-webhook-netpol", "quota-webhook-pdb", "quota-webhook-policy",
        "quota-webhook-sa", "quota-webhook-service", "quota-webhook-validating",
    ]  # fmt: skip


def test_deployment_is_hardened(kind_run: ProgramRun) -> None:
    spec = _one(kind_run, ":Deployment").inputs["spec"]
    pod = spec["template"]["spec"]
    container = pod["containers"][0]
    assert spec["replicas"] == 2
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "runAsGroup": 65532,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert set(container["resources"]) == {"requests", "limits"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "scheme": "HTTPS", "port": 8443}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    anti = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert container["args"][:2] == ["serve", "--policy"]
    assert container["args"][-2:] == ["--host", "0.0.0.0"]  # the server itself binds loopback by default


def test_webhook_configurations_use_cert_manager_and_only_tenant_namespaces(kind_run: ProgramRun) -> None:
    for kind, entries in (
        ("ValidatingWebhookConfiguration", {"validate": ("/validate", ["CREATE"], "Fail"),
                                            "validate-update": ("/validate", ["UPDATE"], "Ignore"),
                                            "validate-pod-groups": ("/validate", ["CREATE"], "Fail")}),
        ("MutatingWebhookConfiguration", {"mutate": ("/mutate", ["CREATE"], "Fail")}),
    ):  # fmt: skip
        res = _one(kind_run, f":{kind}")
        assert res.inputs["metadata"]["annotations"] == {
            "cert-manager.io/inject-ca-from": "batchplane-system/batchplane-quota-webhook-serving-cert"
        }
        hooks = res.inputs["webhooks"]
        assert [h["name"] for h in hooks] == [f"{name}.quota.batchplane.dev" for name in entries]
        for hook, (path, operations, failure_policy) in zip(hooks, entries.values(), strict=True):
            assert hook["admissionReviewVersions"] == ["v1"]
            assert hook["sideEffects"] == "None"
            # an unreachable webhook refuses new jobs, but never holds Kueue's start of admitted ones (an UPDATE)
            assert hook["failurePolicy"] == failure_policy
            assert hook["timeoutSeconds"] <= 5
            assert hook["clientConfig"]["service"]["path"] == path
            tenant, excluded = hook["namespaceSelector"]["matchExpressions"]
            assert tenant == {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team-a"]}
            assert excluded["operator"] == "NotIn"
            assert {"kube-system", "cert-manager", "kueue-system", "batchplane-system"} <= set(
                excluded["values"]
            )
            if hook["name"].startswith(
                "validate-pod-groups"
            ):  # Pods of a group only: tests/webhook/test_pod_groups.py
                continue
            assert {tuple(r["apiGroups"]) for r in hook["rules"]} >= {
                ("batch",),
                ("ray.io",),
                ("kubeflow.org",),
            }
            assert all(r["operations"] == operations for r in hook["rules"])
            assert {tuple(r["resources"]) for r in hook["rules"]} >= {("jobs",), ("pytorchjobs",)}
        deps = {d.rsplit("::", 1)[-1] for d in res.dependencies}
        assert {"quota-webhook-deployment", "quota-webhook-service", "quota-webhook-cert"} <= deps


def test_the_update_entrys_failure_policy_follows_its_own_key() -> None:
    d = WebhookDeployment("{}", "0" * 64, "img@sha256:" + "0" * 64, "batchplane-system", ("team-a",))
    for create, update in (("Fail", "Ignore"), ("Ignore", "Fail"), ("Fail", "Fail")):
        hooks = validating_webhook_configuration(
            dataclasses.replace(d, failure_policy=create, update_failure_policy=update)
        )["webhooks"]
        assert [(h["name"], h["failurePolicy"]) for h in hooks] == [
            ("validate.quota.batchplane.dev", create),
            ("validate-update.quota.batchplane.dev", update),
            ("validate-pod-groups.quota.batchplane.dev", create),
        ]


def test_certificate_waits_for_the_operators_and_names_the_service(kind_run: ProgramRun) -> None:
    cert = _one(kind_run, "cert-manager.io/v1:Certificate")
    assert cert.inputs["spec"]["dnsNames"] == [
        "batchplane-quota-webhook.batchplane-system.svc",
        "batchplane-quota-webhook.batchplane-system.svc.cluster.local",
    ]
    assert cert.inputs["spec"]["issuerRef"]["kind"] == "Issuer"
    assert any(d.endswith("::operators-kueue-ready") for d in cert.dependencies)


def test_pdb_and_network_policy_protect_the_pods(kind_run: ProgramRun) -> None:
    assert _one(kind_run, ":PodDisruptionBudget").inputs["spec"]["minAvailable"] == 1
    netpol = _one(kind_run, ":NetworkPolicy").inputs["spec"]
    assert netpol["policyTypes"] == ["Ingress", "Egress"]
    assert netpol["ingress"] == [{"ports": [{"port": 8443, "protocol": "TCP"}]}]
    assert netpol.get("egress", []) == []


def test_webhook_has_no_api_permissions(kind_run: ProgramRun) -> None:
    assert _one(kind_run, ":ServiceAccount").inputs["automountServiceAccountToken"] is False
    rbac = [
        r
        for r in kind_run.resources
        if "rbac.authorization.k8s.io" in r.type and r.name.startswith("quota-webhook")
    ]
    assert rbac == []


def test_policy_configmap_matches_the_checksum_that_rolls_the_pods(kind_run: ProgramRun) -> None:
    stack = load_stack_file(TEMPLATES / "Pulumi.kind.yaml", "kind")
    policy = render_policy(stack)
    data = _one(kind_run, ":ConfigMap").inputs["data"]["policy.json"]
    annotations = _one(kind_run, ":Deployment").inputs["spec"]["template"]["metadata"]["annotations"]
    assert annotations[POLICY_CHECKSUM_ANNOTATION] == policy_checksum(policy)
    assert '"stack": "kind"' in data


def test_a_different_policy_changes_the_checksum() -> None:
    stack = load_stack_file(TEMPLATES / "Pulumi.kind.yaml", "kind")
    raw: dict[str, Any] = load_config(TEMPLATES / "Pulumi.kind.yaml")
    raw["batchplane:webhook"] = {"namespaces": [{"name": "team-b", "limits": {"maxGpusPerWorkload": 1}}]}
    from batchplane.stack import load_stack

    other = load_stack(raw, "kind")
    assert webhook_deployment(stack).policy_checksum != webhook_deployment(other).policy_checksum


def test_disabled_webhook_registers_nothing() -> None:
    raw: dict[str, Any] = load_config(TEMPLATES / "Pulumi.kind.yaml")
    raw["batchplane:webhook"] = {"enabled": False}
    run = run_program(REPO_ROOT, "kind", raw)
    assert [r.name for r in run.resources if r.name.startswith("quota-webhook")] == []

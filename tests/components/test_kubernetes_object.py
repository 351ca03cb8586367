"""KubernetesObject registers the type token pulumi-kubernetes' own classes use (``@pulumi.type_token`` in
pulumi_kubernetes/core/v1/Secret.py: ``kubernetes:core/v1:Secret``), so switching changes no URN."""

from __future__ import annotations

import pytest

from batchplane.kubernetes_object import type_token


@pytest.mark.parametrize(
    ("api_version", "kind", "token"),
    [
        ("v1", "Secret", "kubernetes:core/v1:Secret"),
        ("v1", "ServiceAccount", "kubernetes:core/v1:ServiceAccount"),
        (
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
        ),
        ("kueue.x-k8s.io/v1beta2", "ClusterQueue", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"),
    ],
    ids=["core-secret", "core-service-account", "rbac", "custom-resource"],
)
def test_type_token_spells_the_core_group_core(api_version: str, kind: str, token: str) -> None:
    assert type_token(api_version, kind) == token

"""Install plans: pinned charts and values per install, derived Kueue frameworks, the Configuration."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from batchplane.config.operators import OperatorsConfig, derived_frameworks
from batchplane.operators.installs import HelmInstall, ManifestInstall, operator_installs
from batchplane.targets.registry import REGISTRY

RAY = ["ray.io/rayjob", "ray.io/rayservice", "ray.io/raycluster"]


def plan_of(
    operators: dict[str, Any], target_kind: str = "kind", namespaces: tuple[str, ...] = ("team-a",)
) -> Any:
    host = REGISTRY[target_kind].platform.operator_host
    return operator_installs(OperatorsConfig.model_validate(operators), host, list(namespaces))


FRAMEWORKS = [
    pytest.param({"kuberay": {"enabled": False}}, ["batch/job"], id="nothing-but-kueue"),
    pytest.param({}, ["batch/job", *RAY], id="kuberay"),
    pytest.param(
        {"kuberay": {"enabled": False, "gkeRayAddon": True}}, ["batch/job", *RAY], id="gke-ray-addon"
    ),
    pytest.param(
        {"training": {"kind": "training-operator-v1"}},
        ["batch/job", *RAY, "kubeflow.org/pytorchjob"],
        id="kuberay-and-training-operator-v1",
    ),
    pytest.param(
        {"kuberay": {"enabled": False}, "training": {"kind": "trainer-v2"}},
        ["batch/job", "jobset.x-k8s.io/jobset", "trainer.kubeflow.org/trainjob"],
        id="trainer-v2",
    ),
    pytest.param(
        {"appwrapper": {"enabled": True}},
        ["batch/job", *RAY, "workload.codeflare.dev/appwrapper"],
        id="kuberay-and-appwrapper",
    ),
    pytest.param(
        {"training": {"kind": "trainer-v2"}, "appwrapper": {"enabled": True}},
        [
            "batch/job",
            *RAY,
            "jobset.x-k8s.io/jobset",
            "trainer.kubeflow.org/trainjob",
            "workload.codeflare.dev/appwrapper",
        ],
        id="everything",
    ),
]


@pytest.mark.parametrize(("operators", "exp_frameworks"), FRAMEWORKS)
def test_kueue_frameworks_are_derived_from_what_is_installed(
    operators: dict[str, Any], exp_frameworks: list[str]
) -> None:
    assert derived_frameworks(OperatorsConfig.model_validate(operators)) == exp_frameworks
    plan = plan_of(operators)
    assert plan.frameworks == exp_frameworks
    assert plan.configuration["integrations"] == {"frameworks": exp_frameworks}


def test_user_frameworks_are_added_in_kueue_order() -> None:
    plan = plan_of(
        {"kueue": {"configuration": {"integrations": {"frameworks": ["pod", "kubeflow.org/mpijob"]}}}}
    )
    assert plan.frameworks == ["batch/job", "kubeflow.org/mpijob", *RAY, "pod"]


def test_every_install_is_pinned_to_its_chart_and_version() -> None:
    plan = plan_of({"training": {"kind": "trainer-v2"}, "appwrapper": {"enabled": True}})
    assert [
        (h.role, h.release_name, h.chart, h.version, h.namespace, h.repository, h.skip_crds)
        for h in plan.helm_installs()
    ] == [
        (
            "cert-manager",
            "cert-manager",
            "oci://quay.io/jetstack/charts/cert-manager",
            "v1.21.1",
            "cert-manager",
            None,
            False,
        ),
        (
            "kuberay",
            "kuberay-operator",
            "kuberay-operator",
            "1.7.0",
            "kuberay-system",
            "https://ray-project.github.io/kuberay-helm/",
            True,
        ),
        (
            "trainer",
            "kubeflow-trainer",
            "oci://ghcr.io/kubeflow/charts/kubeflow-trainer",
            "2.3.0",
            "kubeflow-system",
            None,
            False,
        ),
        ("kueue", "kueue", "oci://registry.k8s.io/kueue/charts/kueue", "0.19.2", "kueue-system", None, False),
    ]
    assert plan.kuberay_crds == ManifestInstall(
        "kuberay-crds",
        "kustomize",
        "https://github.com/ray-project/kuberay//ray-operator/config/crd?ref=v1.7.0",
        "1.7.0",
    )
    assert plan.appwrapper == ManifestInstall(
        "appwrapper",
        "manifest",
        "https://github.com/project-codeflare/appwrapper/releases/download/v1.2.1/install.yaml",
        "v1.2.1",
    )
    assert plan.training is not None and plan.training.values == {"jobset": {"install": True}}


def test_training_operator_v1_is_the_pinned_standalone_kustomize_overlay() -> None:
    plan = plan_of({"training": {"kind": "training-operator-v1"}})
    assert plan.training == ManifestInstall(
        "training-operator",
        "kustomize",
        "https://github.com/kubeflow/trainer//manifests/overlays/standalone?ref=v1.9.4",
        "v1.9.4",
    )


def test_kueue_values_carry_cert_manager_replicas_and_the_configuration() -> None:
    plan = plan_of({"kueue": {"replicas": 2, "enablePrometheus": True}})
    assert isinstance(plan.kueue, HelmInstall)
    values = plan.kueue.values
    config = yaml.safe_load(values.pop("managerConfig")["controllerManagerConfigYaml"])
    assert values == {
        "enableCertManager": True,
        "enablePrometheus": True,
        "controllerManager": {"replicas": 2},
    }
    assert config == plan.configuration
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    assert config["managedJobsNamespaceSelector"] == {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team-a"]}]
    }


def test_kueue_uses_internal_certificates_without_cert_manager() -> None:
    plan = plan_of({"certManager": {"enabled": False}})
    assert plan.cert_manager is None
    assert plan.kueue is not None and plan.kueue.values["enableCertManager"] is False


def test_typed_configuration_fields_reach_the_configuration_document() -> None:
    plan = plan_of(
        {
            "kueue": {
                "configuration": {
                    "manageJobsWithoutQueueName": True,
                    "waitForPodsReady": {
                        "timeout": "10m",
                        "blockAdmission": True,
                        "requeuingStrategy": {"backoffLimitCount": 5},
                    },
                    "fairSharing": {},
                    "metrics": {"enableClusterQueueResources": True},
                    "resources": {
                        "excludeResourcePrefixes": ["example.com/"],
                        "transformations": [
                            {
                                "input": "nvidia.com/mig-1g.5gb",
                                "strategy": "Replace",
                                "outputs": {"example.com/gpu-memory": "5Gi"},
                            }
                        ],
                    },
                    "featureGates": {"TopologyAwareScheduling": True},
                    "objectRetentionPolicies": {"afterFinished": "1h"},
                    "multiKueue": {
                        "workerLostTimeout": "30m",
                        "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
                    },
                }
            }
        },
        namespaces=("team-b", "team-a", "team-b"),
    )
    c = plan.configuration
    assert c["manageJobsWithoutQueueName"] is True
    assert c["managedJobsNamespaceSelector"]["matchExpressions"][0]["values"] == ["team-a", "team-b"]
    assert c["waitForPodsReady"] == {
        "timeout": "10m",
        "blockAdmission": True,
        "requeuingStrategy": {"backoffLimitCount": 5},
    }
    assert c["fairSharing"] == {
        "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
    }
    assert c["metrics"] == {"bindAddress": ":8443", "enableClusterQueueResources": True}
    assert c["resources"] == {
        "excludeResourcePrefixes": ["example.com/"],
        "transformations": [
            {
                "input": "nvidia.com/mig-1g.5gb",
                "strategy": "Replace",
                "outputs": {"example.com/gpu-memory": "5Gi"},
            }
        ],
    }
    assert c["featureGates"] == {"TopologyAwareScheduling": True}
    assert c["objectRetentionPolicies"] == {"workloads": {"afterFinished": "1h"}}
    assert c["multiKueue"] == {
        "workerLostTimeout": "30m",
        "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
    }


def test_explicit_namespace_selector_replaces_the_derived_one() -> None:
    plan = plan_of(
        {
            "kueue": {
                "configuration": {
                    "managedJobsNamespaceSelector": {"matchLabels": {"batch.example.com/tenant": "true"}}
                }
            }
        }
    )
    assert plan.configuration["managedJobsNamespaceSelector"] == {
        "matchLabels": {"batch.example.com/tenant": "true"}
    }


def test_no_tenant_namespaces_leaves_kueues_default_selector() -> None:
    assert "managedJobsNamespaceSelector" not in plan_of({}, namespaces=()).configuration


@pytest.mark.parametrize(
    ("target_kind", "exp_tolerations"),
    [
        pytest.param(
            "gke",
            [
                {
                    "key": "components.gke.io/gke-managed-components",
                    "operator": "Equal",
                    "value": "true",
                    "effect": "NoSchedule",
                }
            ],
            id="gke-system-nodes",
        ),
        pytest.param("kind", None, id="kind-none"),
    ],
)
def test_controllers_tolerate_gke_system_nodes_only_on_gke(target_kind: str, exp_tolerations: Any) -> None:
    plan = plan_of({}, target_kind)
    assert (
        plan.kueue is not None
        and plan.kueue.values["controllerManager"].get("tolerations") == exp_tolerations
    )
    assert plan.cert_manager is not None and plan.cert_manager.values.get("tolerations") == exp_tolerations
    assert plan.cert_manager.values.get("webhook", {}).get("tolerations") == exp_tolerations


def test_raw_values_are_merged_over_the_typed_ones() -> None:
    plan = plan_of(
        {
            "certManager": {"values": {"crds": {"keep": False}, "replicaCount": 2}},
            "kueue": {"values": {"controllerManager": {"replicas": 3}, "enableCertManager": False}},
        }
    )
    assert plan.cert_manager is not None and plan.cert_manager.values == {
        "crds": {"enabled": True, "keep": False},
        "replicaCount": 2,
    }
    assert plan.kueue is not None and plan.kueue.values["controllerManager"] == {"replicas": 3}
    assert plan.kueue.values["enableCertManager"] is False


def test_kueue_gate_waits_for_the_release_webhook_service() -> None:
    plan = plan_of({"kueue": {"readinessGate": {"timeoutSeconds": 120, "intervalSeconds": 2}}})
    gate = plan.kueue_gate
    assert gate is not None
    assert (
        gate.namespace,
        gate.service,
        gate.resource_flavor_api_version,
        gate.version,
        gate.timeout_seconds,
        gate.interval_seconds,
    ) == ("kueue-system", "kueue-webhook-service", "kueue.x-k8s.io/v1beta2", "0.19.2", 120, 2)

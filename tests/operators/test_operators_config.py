"""``batchplane:operators`` validation: pinned versions, exclusive Ray installs, feature gates, frameworks."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.config.kueue_configuration import KUEUE_FEATURE_GATES, feature_gate_problem
from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from tests.operators.conftest import openshift_target, with_operators


def issues_of(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    return [str(i) for i in caught.value.issues]


BAD = [
    pytest.param(
        {"kueue": {"version": "0.18.0"}},
        ['batchplane:operators.kueue.version: "0.18.0" is not a supported Kueue version; supported: 0.19.2'],
        id="kueue-version-not-pinned",
    ),
    pytest.param(
        {"certManager": {"version": "1.21.1"}},
        [
            'batchplane:operators.certManager.version: "1.21.1" is not a supported cert-manager version; '
            "supported: v1.21.1"
        ],
        id="cert-manager-version-without-v",
    ),
    pytest.param(
        {"kuberay": {"version": "1.6.1"}, "appwrapper": {"enabled": True, "version": "v1.2.2"}},
        [
            'batchplane:operators.kuberay.version: "1.6.1" is not a supported KubeRay version; supported: 1.7.0',
            'batchplane:operators.appwrapper.version: "v1.2.2" is not a supported AppWrapper version; supported: v1.2.1',
        ],
        id="all-version-errors-at-once",
    ),
    pytest.param(
        {"training": {"kind": "trainer-v2", "version": "v1.9.4"}},
        [
            'batchplane:operators.training.version: "v1.9.4" is not a supported Kubeflow Trainer v2 version; '
            "supported: 2.3.0"
        ],
        id="trainer-v2-with-v1-version",
    ),
    pytest.param(
        {"training": {"kind": "training-operator-v1", "values": {"image": "x"}}},
        [
            "batchplane:operators.training.values: the v1 Training Operator has no Helm chart (kustomize manifests "
            "only); values apply to trainer-v2",
        ],
        id="training-operator-v1-has-no-chart",
    ),
    pytest.param(
        {"training": {"kind": "helm-v3"}},
        [
            "batchplane:operators.training.kind: \"helm-v3\" is not allowed; expected 'trainer-v2', "
            "'training-operator-v1' or 'none'"
        ],
        id="training-kind-unknown",
    ),
    pytest.param(
        {"kuberay": {"gkeRayAddon": True}},
        [
            "batchplane:operators.kuberay.gkeRayAddon: the GKE Ray add-on and a Helm-installed KubeRay are mutually "
            "exclusive (both run a KubeRay operator with the same CRDs); set kuberay.enabled: false",
            "batchplane:operators.kuberay.gkeRayAddon: the GKE Ray add-on needs target kind gke, not kind",
        ],
        id="ray-addon-and-helm-kuberay-on-kind",
    ),
    pytest.param(
        {"kueue": {"configuration": {"featureGates": {"ProvisioningACC": True}}}},
        [
            'batchplane:operators.kueue.configuration.featureGates.ProvisioningACC: feature gate "ProvisioningACC" '
            "was removed in Kueue 0.15 (ProvisioningRequest support is always on); Kueue 0.19.2 refuses to start "
            "with it: remove it"
        ],
        id="removed-gate-provisioning-acc",
    ),
    pytest.param(
        {
            "kueue": {
                "values": {
                    "controllerManager": {"featureGates": [{"name": "LocalQueueDefaulting", "enabled": True}]}
                }
            }
        },
        [
            'batchplane:operators.kueue.values.controllerManager.featureGates[0]: feature gate "LocalQueueDefaulting" '
            "was removed in Kueue 0.19 (a LocalQueue named default is always the namespace's default); Kueue 0.19.2 "
            "refuses to start with it: remove it"
        ],
        id="removed-gate-as-helm-flag",
    ),
    pytest.param(
        {"kueue": {"configuration": {"featureGates": {"HierarchicalCohorts": False}}}},
        [
            "batchplane:operators.kueue.configuration.featureGates.HierarchicalCohorts: feature gate "
            '"HierarchicalCohorts" is GA and locked to true in Kueue 0.19.2; setting it to false makes the manager '
            "exit: remove it"
        ],
        id="ga-gate-turned-off",
    ),
    pytest.param(
        {
            "kueue": {
                "configuration": {"featureGates": {"TopologyAwareScheduling": True}},
                "values": {
                    "controllerManager": {
                        "featureGates": [{"name": "TopologyAwareScheduling", "enabled": True}]
                    }
                },
            }
        },
        [
            "batchplane:operators.kueue.values.controllerManager.featureGates: feature gates are set both as the "
            "--feature-gates flag and in configuration.featureGates (TopologyAwareScheduling in both); Kueue refuses "
            'to start with both ("feature gates for CLI and configuration cannot both specified"): use '
            "configuration.featureGates"
        ],
        id="gate-as-flag-and-in-configuration",
    ),
    pytest.param(
        {"kueue": {"values": {"controllerManager": {"featureGates": ["PartialAdmission=true"]}}}},
        [
            "batchplane:operators.kueue.values.controllerManager.featureGates[0]: expected {name: <gate>, "
            "enabled: true|false}"
        ],
        id="flag-gate-malformed",
    ),
    pytest.param(
        {
            "kueue": {
                "configuration": {
                    "integrations": {
                        "frameworks": [
                            "kubeflow.org/pytorchjob",
                            "ray.io/rayjob",
                            "kubeflow.org/pytorchjob",
                            "argo/workflow",
                        ]
                    }
                }
            }
        },
        [
            'batchplane:operators.kueue.configuration.integrations.frameworks[1]: "ray.io/rayjob" is already enabled '
            "because of what this stack installs; remove it",
            "batchplane:operators.kueue.configuration.integrations.frameworks[2]: duplicate framework "
            '"kubeflow.org/pytorchjob" (Kueue rejects duplicates)',
            'batchplane:operators.kueue.configuration.integrations.frameworks[3]: unknown framework "argo/workflow"; '
            "Kueue accepts: batch/job, kubeflow.org/mpijob, ray.io/rayjob, ray.io/rayservice, ray.io/raycluster, "
            "jobset.x-k8s.io/jobset, kubeflow.org/paddlejob, kubeflow.org/pytorchjob, kubeflow.org/tfjob, "
            "kubeflow.org/xgboostjob, kubeflow.org/jaxjob, trainer.kubeflow.org/trainjob, "
            "workload.codeflare.dev/appwrapper, sparkoperator.k8s.io/sparkapplication, pod, deployment, statefulset, "
            "leaderworkerset.x-k8s.io/leaderworkerset",
        ],
        id="frameworks-derived-duplicate-unknown",
    ),
    pytest.param(
        {"certManager": {"enabled": False}, "kueue": {"useCertManager": True}},
        [
            "batchplane:operators.kueue.useCertManager: needs cert-manager: set certManager.enabled: true "
            "(or omit useCertManager)"
        ],
        id="kueue-cert-manager-without-cert-manager",
    ),
    pytest.param(
        {"kueue": {"enabled": False}, "appwrapper": {"enabled": True}},
        [
            "batchplane:operators.appwrapper.enabled: AppWrapper needs Kueue installed first: set kueue.enabled: true"
        ],
        id="appwrapper-without-kueue",
    ),
    pytest.param(
        {
            "kueue": {
                "configuration": {
                    "resources": {
                        "transformations": [
                            {"input": "nvidia.com/mig-1g.5gb", "outputs": {"example.com/gpu-memory": "5Gi"}},
                            {"input": "nvidia.com/mig-1g.5gb", "strategy": "Replace"},
                        ]
                    }
                }
            }
        },
        [
            "batchplane:operators.kueue.configuration.resources.transformations[1].input: duplicate transformation "
            'input "nvidia.com/mig-1g.5gb" (Kueue keys transformations by input)'
        ],
        id="transformation-input-twice",
    ),
    pytest.param(
        {"kueue": {"configuration": {"waitForPodsReady": {"timeout": "five minutes"}}}},
        [
            "batchplane:operators.kueue.configuration.waitForPodsReady.timeout: 'five minutes': String should match "
            "pattern '^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$'"
        ],
        id="duration-not-go-syntax",
    ),
]


@pytest.mark.parametrize(("operators", "exp_issues"), BAD)
def test_bad_operators_config_is_rejected_with_pinned_messages(
    operators: dict[str, Any], exp_issues: list[str]
) -> None:
    assert issues_of(with_operators(operators)) == exp_issues


def test_operators_section_is_rejected_on_openshift() -> None:
    assert issues_of(with_operators({}, openshift_target())) == [
        "batchplane:operators: operators are installed through OLM on OpenShift (target.certManager, target.kueue, "
        "target.openshiftAi); remove batchplane:operators"
    ]


def test_gke_ray_addon_alone_is_accepted_on_gke_and_exposed_for_the_cluster_component() -> None:
    from batchplane.config.operators import OperatorsConfig, check_operators
    from batchplane.targets.registry import REGISTRY

    ops = OperatorsConfig.model_validate({"kuberay": {"enabled": False, "gkeRayAddon": True}})
    assert check_operators(ops, REGISTRY["gke"].platform.operator_host) == []
    assert ops.gke_ray_addon is True
    assert ops.ray_installed is True


def test_every_listed_gate_of_kueue_0_19_2_is_accepted_at_its_default() -> None:
    gates = KUEUE_FEATURE_GATES["0.19.2"]
    assert (
        len(gates) == 89
    )  # every entry of defaultVersionedFeatureGates in pkg/features/kube_features.go@v0.19.2
    assert [n for n, g in gates.items() if feature_gate_problem("0.19.2", n, g.default) is not None] == []


def test_unknown_gate_message_lists_the_known_gates() -> None:
    why = feature_gate_problem("0.19.2", "MakeItFast", True)
    assert why is not None
    assert why.startswith(
        'unknown feature gate "MakeItFast" for Kueue 0.19.2 (the manager exits with '
        '"unrecognized feature gate: MakeItFast"); known gates: AdmissionFairSharing, '
    )
    assert "TopologyAwareScheduling" in why


def test_valid_operators_config_loads_with_defaults() -> None:
    stack = load_stack(with_operators({}))
    ops = stack.config.operators
    assert ops is not None
    assert (
        ops.cert_manager.version,
        ops.kuberay.version,
        ops.kueue.version,
        ops.training.kind,
        ops.appwrapper.enabled,
    ) == ("v1.21.1", "1.7.0", "0.19.2", "none", False)


@pytest.mark.parametrize("environment", ["staging", "production"])
def test_the_deprecated_v1_training_operator_is_a_warning_where_a_stack_is_meant_to_last(
    environment: str,
) -> None:
    cfg = with_operators({"training": {"kind": "training-operator-v1"}})
    cfg["batchplane:environment"] = environment
    warnings = [str(w) for w in load_stack(cfg).warnings if "training.kind" in str(w)]
    assert warnings == [
        "warning: batchplane:operators.training.kind: the v1 Training Operator is deprecated (maintenance only; its "
        "Kueue integration is off by default since Kueue 0.19 and slated for removal in 0.20): plan the move to "
        "trainer-v2 (docs/operators.md)"
    ]


@pytest.mark.parametrize(
    ("operators", "kueue", "exp_warnings"),
    [
        pytest.param(
            {"training": {"kind": "training-operator-v1"}},
            {},
            [],
            id="training-operator-v1-on-a-dev-stack-no-warning",
        ),
        pytest.param(
            {},
            {"apiVersion": "kueue.x-k8s.io/v1beta1"},
            [
                "warning: batchplane:kueue.apiVersion: Kueue 0.19.2 stores v1beta2 and only converts deprecated v1beta1 "
                "objects through its webhook: emit v1beta2 and run the storage migration (docs/operators.md)"
            ],
            id="v1beta1-objects-on-kueue-0-19",
        ),
        pytest.param({"training": {"kind": "trainer-v2"}}, {}, [], id="trainer-v2-no-warning"),
    ],
)
def test_upgrade_paths_are_flagged_as_warnings(
    operators: dict[str, Any], kueue: dict[str, Any], exp_warnings: list[str]
) -> None:
    cfg = with_operators(operators)
    cfg["batchplane:kueue"].update(kueue)
    assert [str(w) for w in load_stack(cfg).warnings] == exp_warnings


@pytest.mark.parametrize(
    ("gate", "enabled", "problem"),
    [
        pytest.param(
            "MultiKueueIncrementalDispatcherConfig",
            False,
            None,
            id="beta-gate-once-missing-can-be-turned-off",
        ),
        pytest.param("TASCacheTopologyTree", True, None, id="alpha-gate-once-missing-can-be-turned-on"),
        pytest.param(
            "MultiKueueAllowInsecureKubeconfigs",
            True,
            'feature gate "MultiKueueAllowInsecureKubeconfigs" is deprecated and locked to false in Kueue 0.19.2; '
            "setting it to true makes the manager exit: remove it",
            id="deprecated-locked-gate",
        ),
        pytest.param(
            "HierarchicalCohorts",
            False,
            'feature gate "HierarchicalCohorts" is GA and locked to true in Kueue 0.19.2; setting it to false makes '
            "the manager exit: remove it",
            id="ga-locked-gate",
        ),
    ],
)
def test_feature_gates_follow_each_gates_own_stage_default_and_lock(
    gate: str, enabled: bool, problem: str | None
) -> None:
    assert feature_gate_problem("0.19.2", gate, enabled) == problem


def test_beta_gates_that_kueue_ships_off_are_off_by_default() -> None:
    gates = KUEUE_FEATURE_GATES["0.19.2"]
    assert [n for n, g in gates.items() if g.stage == "beta" and not g.default] == [
        "UnadmittedWorkloadsExplicitStatus",
        "UnadmittedWorkloadsObservability",
    ]


INCREMENTAL = "kueue.x-k8s.io/multikueue-dispatcher-incremental"
STEP_PATH = "batchplane:operators.kueue.configuration.multiKueue.incrementalDispatcherConfig"


def _multikueue(options: dict[str, Any], gates: dict[str, bool] | None = None) -> dict[str, Any]:
    configuration: dict[str, Any] = {"multiKueue": options}
    if gates is not None:
        configuration["featureGates"] = gates
    return with_operators({"kueue": {"configuration": configuration}})


def test_incremental_dispatcher_step_is_rendered_into_kueues_configuration() -> None:
    from batchplane.operators.installs import kueue_configuration_document

    stack = load_stack(
        _multikueue({"dispatcherName": INCREMENTAL, "incrementalDispatcherConfig": {"stepSize": 1}})
    )
    assert stack.warnings == []
    ops = stack.config.operators
    assert ops is not None
    doc = kueue_configuration_document(ops, [], [])
    assert doc["multiKueue"] == {
        "dispatcherName": INCREMENTAL,
        "incrementalDispatcherConfig": {"stepSize": 1},
    }


def test_incremental_dispatcher_step_without_the_incremental_dispatcher_is_refused_as_kueue_does() -> None:
    assert issues_of(_multikueue({"incrementalDispatcherConfig": {"stepSize": 2}})) == [
        f"{STEP_PATH}: only valid with dispatcherName: {INCREMENTAL} (Kueue refuses the Configuration otherwise "
        "and the manager does not start)"
    ]


def test_incremental_dispatcher_step_below_one_is_refused() -> None:
    issues = issues_of(
        _multikueue({"dispatcherName": INCREMENTAL, "incrementalDispatcherConfig": {"stepSize": 0}})
    )
    assert [i.split(": ", 1)[0] for i in issues] == [f"{STEP_PATH}.stepSize"]


def test_incremental_dispatcher_step_with_its_gate_off_is_a_warning() -> None:
    cfg = _multikueue(
        {"dispatcherName": INCREMENTAL, "incrementalDispatcherConfig": {"stepSize": 1}},
        {"MultiKueueIncrementalDispatcherConfig": False},
    )
    assert [str(w) for w in load_stack(cfg).warnings] == [
        f"warning: {STEP_PATH}: ignored: the MultiKueueIncrementalDispatcherConfig feature gate is off, so Kueue "
        "nominates 3 workers per round; enable the gate or remove the step"
    ]


def test_a_single_kueue_replica_in_production_is_warned_about_and_two_are_not() -> None:
    one = with_operators({})
    one["batchplane:environment"] = "production"
    two = with_operators({"kueue": {"replicas": 2}})
    two["batchplane:environment"] = "production"
    warned = [str(w) for w in load_stack(one).warnings if "kueue.replicas" in str(w)]
    assert warned == [
        "warning: batchplane:operators.kueue.replicas: one Kueue replica in production: Kueue's admission webhooks "
        "fail closed (failurePolicy: Fail in its v0.19.2 chart), so while that pod restarts or moves no Job, RayJob "
        "or workload can be created or updated; set replicas: 2 (every replica serves the webhooks, leader "
        "election picks one scheduler)"
    ]
    assert [str(w) for w in load_stack(two).warnings if "kueue.replicas" in str(w)] == []
    dev = with_operators({})
    assert [str(w) for w in load_stack(dev).warnings if "kueue.replicas" in str(w)] == []

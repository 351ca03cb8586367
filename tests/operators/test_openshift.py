"""The openshift target: OLM objects, DataScienceCluster v1/v2, the Kueue CR, namespace labels, rules."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.kueue import namespaces
from batchplane.stack import load_stack
from batchplane.targets.openshift.config import OpenShiftTarget, rhbok_frameworks
from batchplane.targets.openshift.olm import openshift_plan
from tests.operators.conftest import openshift_target, with_operators

MANAGED = {"app.kubernetes.io/managed-by": "batchplane"}


def target_of(**changes: Any) -> OpenShiftTarget:
    return OpenShiftTarget.model_validate(openshift_target(**changes))


def test_four_olm_installs_in_order_with_channels_and_approval_from_config() -> None:
    """cert-manager, Kueue, the JobSet Operator (Trainer's prerequisite from OpenShift AI 3.2 on) and OpenShift AI."""
    plan = openshift_plan(
        target_of(
            kueue={"channel": "stable-v1.5", "approval": "Manual", "startingCsv": "kueue-operator.v1.5.0"}
        )
    )
    assert [
        (
            i.role,
            i.namespace_name,
            i.operator_group["metadata"]["name"],
            i.operator_group["spec"],
            i.subscription_name,
        )
        for i in plan.installs
    ] == [
        (
            "cert-manager",
            "cert-manager-operator",
            "openshift-cert-manager-operator",
            {},
            "openshift-cert-manager-operator",
        ),
        ("kueue", "openshift-kueue-operator", "openshift-kueue-operator", {}, "kueue-operator"),
        (
            "jobset-operator",
            "openshift-jobset-operator",
            "openshift-jobset-operator",
            {"targetNamespaces": ["openshift-jobset-operator"]},
            "job-set",
        ),
        ("openshift-ai", "redhat-ods-operator", "rhods-operator", {}, "rhods-operator"),
    ]
    assert plan.installs[1].subscription == {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": "kueue-operator", "namespace": "openshift-kueue-operator", "labels": MANAGED},
        "spec": {
            "channel": "stable-v1.5",
            "installPlanApproval": "Manual",
            "name": "kueue-operator",
            "source": "redhat-operators",
            "sourceNamespace": "openshift-marketplace",
            "startingCSV": "kueue-operator.v1.5.0",
        },
    }
    assert [i.subscription["spec"]["channel"] for i in plan.installs] == [
        "stable-v1",
        "stable-v1.5",
        "stable-v1.0",  # the JobSet Operator's channel by default
        "stable-3.x",  # the 3.x release's channel by default
    ]


@pytest.mark.parametrize(
    ("openshift_ai", "exp_dsc", "exp_kueue_cr"),
    [
        pytest.param(
            {"release": "3.x"},
            {
                "apiVersion": "datasciencecluster.opendatahub.io/v2",
                "components": {
                    "kueue": "Unmanaged",
                    "ray": "Managed",
                    "trainer": "Managed",
                    "trainingoperator": "Removed",
                },
            },
            None,
            id="rhoai-3-manages-the-kueue-cr",
        ),
        pytest.param(
            {"release": "2.x"},
            {
                "apiVersion": "datasciencecluster.opendatahub.io/v1",
                "components": {
                    "codeflare": "Managed",
                    "kueue": "Unmanaged",
                    "ray": "Managed",
                    "trainingoperator": "Managed",
                },
            },
            ["BatchJob", "RayJob", "RayCluster", "RayService", "PyTorchJob", "AppWrapper"],
            id="rhoai-2-with-codeflare",
        ),
        pytest.param(
            {"release": "2.x", "components": {"codeflare": False, "trainingOperator": False}},
            {
                "apiVersion": "datasciencecluster.opendatahub.io/v1",
                "components": {
                    "codeflare": "Removed",
                    "kueue": "Unmanaged",
                    "ray": "Managed",
                    "trainingoperator": "Removed",
                },
            },
            ["BatchJob", "RayJob", "RayCluster", "RayService"],
            id="rhoai-2-ray-only",
        ),
        pytest.param(None, None, ["BatchJob"], id="no-openshift-ai"),
    ],
)
def test_data_science_cluster_and_kueue_cr_follow_the_release(
    openshift_ai: Any, exp_dsc: Any, exp_kueue_cr: Any
) -> None:
    plan = openshift_plan(target_of(openshiftAi=openshift_ai))
    dsc = plan.data_science_cluster
    if exp_dsc is None:
        assert dsc is None
    else:
        assert dsc is not None
        assert dsc["apiVersion"] == exp_dsc["apiVersion"]
        assert dsc["metadata"] == {"name": "default-dsc", "labels": MANAGED}
        states = {k: v["managementState"] for k, v in dsc["spec"]["components"].items()}
        assert {k: states[k] for k in exp_dsc["components"]} == exp_dsc["components"]
    if exp_kueue_cr is None:
        assert plan.kueue_cr is None
    else:
        assert plan.kueue_cr == {
            "apiVersion": "kueue.openshift.io/v1",
            "kind": "Kueue",
            "metadata": {"name": "cluster", "labels": MANAGED},
            "spec": {"managementState": "Managed", "config": {"integrations": {"frameworks": exp_kueue_cr}}},
        }


def test_kueue_cr_gets_extra_frameworks_and_label_policy() -> None:
    target = target_of(openshiftAi=None, kueue={"frameworks": ["Pod", "JobSet"], "labelPolicy": "QueueName"})
    assert rhbok_frameworks(target) == ["BatchJob", "JobSet", "Pod"]
    cr = openshift_plan(target).kueue_cr
    assert cr is not None and cr["spec"]["config"]["workloadManagement"] == {"labelPolicy": "QueueName"}


def test_tenant_namespaces_are_labelled_for_the_red_hat_build_of_kueue() -> None:
    cfg = with_operators(None, openshift_target())
    cfg["batchplane:kueue"]["namespaces"] = [{"name": "team-a", "labels": {"team": "a"}}]
    cfg["batchplane:kueue"]["localQueues"].append({"name": "lq", "namespace": "team-b", "clusterQueue": "cq"})
    stack = load_stack(cfg)
    assert [ns["metadata"] for ns in namespaces(stack.kueue)] == [
        {"name": "team-a", "labels": {**MANAGED, "team": "a", "kueue.openshift.io/managed": "true"}},
        {"name": "team-b", "labels": {**MANAGED, "kueue.openshift.io/managed": "true"}},
    ]


def test_namespaces_the_stack_does_not_create_get_a_warning() -> None:
    cfg = with_operators(None, openshift_target())
    cfg["batchplane:kueue"]["localQueues"][0]["namespace"] = "default"
    stack = load_stack(cfg)
    assert [str(w) for w in stack.warnings if "managed=true" in str(w)] == [
        'warning: batchplane:target (namespace "default" of an OpenShift stack): namespace "default" is not created '
        "by the stack, so it is not labelled kueue.openshift.io/managed=true; label it yourself or the Red Hat build "
        "of Kueue ignores its jobs"
    ]


@pytest.mark.parametrize(
    ("target", "exp_issues"),
    [
        pytest.param(
            {"openshiftAi": {"release": "3.x", "components": {"codeflare": True}}},
            [
                "batchplane:target.openshiftAi.components.codeflare: DataScienceCluster v2 (OpenShift AI 3.x) has "
                "no codeflare component; AppWrapper users stay on 2.x"
            ],
            id="codeflare-on-3x",
        ),
        pytest.param(
            {"openshiftAi": {"release": "2.x", "components": {"trainer": True}}},
            [
                "batchplane:target.openshiftAi.components.trainer: Trainer v2 is a DataScienceCluster v2 component "
                "(OpenShift AI 3.x); set release: 3.x"
            ],
            id="trainer-on-2x",
        ),
        pytest.param(
            {"kueue": {"createKueueCr": True}},
            [
                "batchplane:target.kueue.createKueueCr: OpenShift AI 3.x creates and reconciles the Kueue CR itself "
                "(kueue component Unmanaged); set createKueueCr: false or omit it"
            ],
            id="kueue-cr-twice",
        ),
        pytest.param(
            {"kueue": {"frameworks": ["Pod", "Pod"]}},
            ['batchplane:target.kueue.frameworks[1]: duplicate framework "Pod"'],
            id="duplicate-rhbok-framework",
        ),
        pytest.param(
            {"kueue": {"frameworks": ["batch/job"]}},
            [
                "batchplane:target.kueue.frameworks[0]: \"batch/job\" is not allowed; expected 'BatchJob', 'RayJob', "
                "'RayCluster', 'RayService', 'JobSet', 'MPIJob', 'PaddleJob', 'PyTorchJob', 'TFJob', 'TrainJob', "
                "'XGBoostJob', 'JaxJob', 'AppWrapper', 'Pod', 'Deployment', 'StatefulSet', 'LeaderWorkerSet' or "
                "'SparkApplication'"
            ],
            id="upstream-framework-name",
        ),
        pytest.param(
            {"certManager": {"approval": "Sometimes"}},
            [
                "batchplane:target.certManager.approval: \"Sometimes\" is not allowed; expected 'Automatic' or "
                "'Manual'"
            ],
            id="bad-approval",
        ),
    ],
)
def test_bad_openshift_target_is_rejected_with_pinned_messages(
    target: dict[str, Any], exp_issues: list[str]
) -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(with_operators(None, openshift_target(**target)))
    assert [str(i) for i in caught.value.errors] == exp_issues


def test_training_operator_on_3x_is_only_a_warning() -> None:
    stack = load_stack(
        with_operators(None, openshift_target(openshiftAi={"components": {"trainingOperator": True}}))
    )
    assert [str(w) for w in stack.warnings if "trainingOperator" in str(w)] == [
        "warning: batchplane:target.openshiftAi.components.trainingOperator: the v1 Training Operator is obsolete in "
        "OpenShift AI 3.6 (it may stay Managed only if it already is); move to trainer"
    ]

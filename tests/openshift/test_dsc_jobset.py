"""OpenShift AI 3.2+'s trainer needs the JobSet Operator and its ``JobSetOperator`` ``cluster``: the stack installs
both before the DataScienceCluster, or refuses trainer Managed at the config key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.olm import openshift_plan
from batchplane.targets.openshift.requirements import olm_packages
from tests.conftest import SHARED
from tests.operators.conftest import openshift_target, with_operators
from tests.support import fastyaml
from tests.support.crdcheck import CrdCatalog


def target(**ai: Any) -> OpenShiftTarget:
    return OpenShiftTarget.model_validate(openshift_target(openshiftAi=ai))


@pytest.fixture(scope="module")
def catalog() -> CrdCatalog:
    return CrdCatalog.load(SHARED / "crds")


def test_default_3x_stack_installs_the_jobset_operator_before_openshift_ai(catalog: CrdCatalog) -> None:
    plan = openshift_plan(target())
    roles = [i.role for i in plan.installs]
    assert roles.index("jobset-operator") < roles.index("openshift-ai")
    [install] = [i for i in plan.installs if i.role == "jobset-operator"]
    assert install.subscription["spec"]["name"] == "job-set"
    assert install.subscription["spec"]["channel"] == "stable-v1.0"
    assert install.subscription["spec"]["source"] == "redhat-operators"
    assert install.namespace_name == "openshift-jobset-operator"
    assert install.operator_group["spec"] == {"targetNamespaces": ["openshift-jobset-operator"]}
    assert catalog.validate(install.operator_group) == []
    assert catalog.validate(install.subscription) == []
    [cr] = [o for o in plan.operands if o.role == "jobset-operator-cr"]
    assert cr.after == "jobset-operator" and cr.before_dsc
    assert (cr.obj["apiVersion"], cr.obj["kind"], cr.obj["metadata"]["name"]) == (
        "operator.openshift.io/v1",
        "JobSetOperator",
        "cluster",
    )


@pytest.mark.parametrize(
    ("ai", "installs"),
    [
        pytest.param({"components": {"trainer": False}}, False, id="trainer-removed"),
        pytest.param({"channel": "stable-3.0"}, False, id="3.0-has-no-precondition"),
        pytest.param({"channel": "fast-3.1"}, False, id="3.1-has-no-precondition"),
        pytest.param({"channel": "stable-3.2"}, True, id="3.2-needs-it"),
        pytest.param({"channel": "stable-3.x"}, True, id="channel-head-needs-it"),
        pytest.param({"release": "2.x"}, False, id="2x-has-no-trainer"),
        pytest.param({"jobSetOperator": {"channel": "stable-v1.1"}}, True, id="own-channel"),
    ],
)
def test_jobset_operator_is_installed_only_where_the_trainer_needs_it(
    ai: dict[str, Any], installs: bool
) -> None:
    plan = openshift_plan(target(**ai))
    assert ("jobset-operator" in [i.role for i in plan.installs]) is installs
    assert ("jobset-operator-cr" in [o.role for o in plan.operands]) is installs


def test_preflight_checks_the_jobset_package_at_its_config_key() -> None:
    [pkg] = [p for p in olm_packages(target()) if p.package == "job-set"]
    assert (pkg.channel, pkg.path) == ("stable-v1.0", "batchplane:target.openshiftAi.jobSetOperator")


def test_trainer_managed_without_the_jobset_operator_is_refused_at_the_trainer_key() -> None:
    config = with_operators(target=openshift_target(openshiftAi={"jobSetOperator": None}))
    with pytest.raises(ConfigValidationError) as info:
        load_stack(config)
    errors = [str(i) for i in info.value.issues if i.severity == "error"]
    assert any(
        e.startswith("batchplane:target.openshiftAi.components.trainer: Trainer needs the JobSet Operator")
        for e in errors
    ), errors


def test_trainer_removed_needs_no_jobset_operator() -> None:
    config = with_operators(
        target=openshift_target(openshiftAi={"jobSetOperator": None, "components": {"trainer": False}})
    )
    stack = load_stack(config)
    assert isinstance(stack.config.target, OpenShiftTarget)
    assert "jobset-operator" not in [i.role for i in openshift_plan(stack.config.target).installs]


def test_every_openshift_ai_3x_template_installs_the_jobset_operator() -> None:
    for path in sorted(
        Path(__file__).resolve().parents[2].joinpath("templates").glob("Pulumi.openshift*.yaml")
    ):
        stack = load_stack(fastyaml.safe_load(path.read_text(encoding="utf-8"))["config"])
        t = stack.config.target
        assert isinstance(t, OpenShiftTarget)
        if t.openshift_ai is None or t.openshift_ai.release != "3.x":
            continue
        if t.openshift_ai.component_states().get("trainer"):
            assert "jobset-operator" in [i.role for i in openshift_plan(t).installs], path.name

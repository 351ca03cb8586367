"""``target.appwrapper`` on OpenShift: MCAD's successor installed after the Kueue webhook gate, with ``AppWrapper`` in
the Kueue CR's frameworks; refused next to OpenShift AI 2.x's codeflare component, warned where the stack does not
own the Kueue CR."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.olm import openshift_plan
from tests.operators.conftest import openshift_target, run_stack, with_operators

SOURCE = "https://github.com/project-codeflare/appwrapper/releases/download/v1.2.1/install.yaml"


def plan_of(**target: Any) -> Any:
    return openshift_plan(OpenShiftTarget.model_validate(openshift_target(**target)))


def test_appwrapper_joins_the_kueue_cr_frameworks_and_the_plan() -> None:
    plan = plan_of(openshiftAi=None, appwrapper={"enabled": True})
    assert plan.appwrapper_source == SOURCE
    assert plan.kueue_cr is not None
    assert plan.kueue_cr["spec"]["config"]["integrations"]["frameworks"] == ["BatchJob", "AppWrapper"]
    assert plan_of(openshiftAi=None).appwrapper_source is None


def test_appwrapper_manifest_waits_for_the_kueue_webhook_gate() -> None:
    config = with_operators(target=openshift_target(openshiftAi=None, appwrapper={"enabled": True}))
    run = run_stack("openshift-appwrapper", config)
    [manifest] = [r for r in run.resources if r.type == "kubernetes:yaml/v2:ConfigFile"]
    assert manifest.inputs["file"] == SOURCE
    [gate] = [r for r in run.resources if r.inputs.get("gate") == "kueue-webhook"]
    assert gate.urn in manifest.dependencies


def test_appwrapper_next_to_the_codeflare_component_is_refused() -> None:
    config = with_operators(
        target=openshift_target(openshiftAi={"release": "2.x"}, appwrapper={"enabled": True})
    )
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    assert [e.path for e in caught.value.errors] == ["batchplane:target.appwrapper.enabled"]


def test_appwrapper_where_openshift_ai_3_creates_the_kueue_cr_is_applied_to_its_frameworks() -> None:
    stack = load_stack(with_operators(target=openshift_target(appwrapper={"enabled": True})))
    assert [w.path for w in stack.warnings if "AppWrapper framework" in w.message] == []
    patch = openshift_plan(stack.config.target).kueue_cr_patch  # type: ignore[arg-type]
    assert patch is not None and "AppWrapper" in patch["spec"]["config"]["integrations"]["frameworks"]

"""Per-release DataScienceCluster component sets: OpenShift AI 2.16 (channel ``eus-2.16``) has a v1 CRD without
``feastoperator``, ``llamastackoperator`` or ``kserve.nim`` and with kueue ``Managed``/``Removed`` only
(red-hat-data-services/rhods-operator ``rhoai-2.16``, ``bundle/manifests/datasciencecluster.opendatahub.io_
datascienceclusters.yaml``), embeds Kueue 0.8 (``prefetched-manifests/kueue``: ``release-0.8``), and a
distributed-workloads template removes the serving components that need OpenShift Serverless and Service Mesh."""

from __future__ import annotations

from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.offline import read_stack_file
from batchplane.stack import load_stack
from batchplane.targets.openshift.olm import data_science_cluster
from tests.config.factories import apply_changes
from tests.conftest import TEMPLATES_DIR

#: The rhoai-2.16 CRD's components and, per component, its properties (transcribed by hand for this test from the
#: CRD named in the module docstring; ``devFlags`` is not offered by Batchplane).
CRD_2_16 = {
    "codeflare": {"managementState"},
    "dashboard": {"managementState"},
    "datasciencepipelines": {"managementState"},
    "kserve": {"defaultDeploymentMode", "managementState", "serving"},
    "kueue": {"managementState"},
    "modelmeshserving": {"managementState"},
    "modelregistry": {"managementState", "registriesNamespace"},
    "ray": {"managementState"},
    "trainingoperator": {"managementState"},
    "trustyai": {"managementState"},
    "workbenches": {"managementState"},
}


def ai2(**changes: Any) -> dict[str, Any]:
    return apply_changes(read_stack_file(TEMPLATES_DIR / "Pulumi.openshift-ai-2.yaml"), **changes)


def test_the_openshift_ai_2_template_on_eus_2_16_renders_only_what_the_2_16_crd_has() -> None:
    stack = load_stack(ai2())
    dsc = data_science_cluster(stack.config.target)  # type: ignore[arg-type]
    assert dsc is not None
    components = dsc["spec"]["components"]
    assert set(components) <= set(CRD_2_16)
    assert {
        name: set(value) - CRD_2_16[name] for name, value in components.items() if set(value) - CRD_2_16[name]
    } == {}


def test_the_2_16_table_matches_the_crd() -> None:
    from batchplane.targets.openshift.dsc import V1_RELEASES

    table = V1_RELEASES["2.16"]
    assert {name: {"managementState", *settings} for name, settings in table.components.items()} == CRD_2_16
    assert table.kueue_states == ("Managed", "Removed")


def test_the_distributed_workloads_template_removes_kserve_and_modelmesh() -> None:
    dsc = data_science_cluster(load_stack(ai2()).config.target)  # type: ignore[arg-type]
    assert dsc is not None
    states = {k: v["managementState"] for k, v in dsc["spec"]["components"].items()}
    assert states["kserve"] == "Removed" and states["modelmeshserving"] == "Removed"


def test_openshift_ai_2_16_embeds_kueue_0_8() -> None:
    assert load_stack(ai2()).platform.kueue_version(None, "dev") == "0.8"


def test_a_component_the_2_16_crd_lacks_is_an_error_naming_it_and_the_release() -> None:
    with pytest.raises(ConfigValidationError) as info:
        load_stack(ai2(target__openshiftAi__components__feastoperator=True))
    [issue] = [i for i in info.value.issues if i.path.endswith("components.feastoperator")]
    assert "OpenShift AI 2.16" in issue.message and "eus-2.16" in issue.message


def test_kueue_unmanaged_does_not_exist_in_2_16() -> None:
    with pytest.raises(ConfigValidationError) as info:
        load_stack(ai2(target__openshiftAi__components__kueue={"managementState": "Unmanaged"}))
    [issue] = [i for i in info.value.issues if i.path.endswith("components.kueue.managementState")]
    assert "Managed or Removed" in issue.message


def test_kserve_serverless_on_2x_warns_that_the_dsc_needs_serverless_and_service_mesh() -> None:
    stack = load_stack(ai2(target__openshiftAi__components__kserve=True))
    [warning] = [w for w in stack.warnings if w.path.endswith("components.kserve")]
    assert "OpenShift Serverless" in warning.message and "Service Mesh" in warning.message

"""The whole DataScienceCluster: every component of the v1 and v2 CRDs settable, RHOAI's sample as the default,
the CRDs' enums and create-time CEL rules enforced at plan time, and every rendered DSC accepted by the CRD."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.dsc import (
    SAMPLE_V1,
    SAMPLE_V2,
    V1_ONLY,
    V2_ONLY,
    DataScienceClusterComponents,
    dsc_key,
)
from batchplane.targets.openshift.olm import data_science_cluster, openshift_plan
from tests.conftest import SHARED
from tests.operators.conftest import openshift_target, with_operators
from tests.support import fastyaml
from tests.support.crdcheck import CrdCatalog
from tests.support.stacks import shared_crd_catalog

CRDS = SHARED / "crds"
#: (CRD file, served version) of every DataScienceCluster schema in shared/crds.
DSC_SCHEMAS = [
    ("opendatahub-operator/v2.35.0", "v1"),
    ("opendatahub-operator/v3.0.0", "v1"),
    ("opendatahub-operator/v3.0.0", "v2"),
    ("rhoai/3.5.0", "v1"),
    ("rhoai/3.5.0", "v2"),
]


def components_schema(folder: str, version: str) -> dict[str, Any]:
    path = CRDS / folder / "datasciencecluster.opendatahub.io_datascienceclusters.yaml"
    crd = fastyaml.safe_load(path.read_text(encoding="utf-8"))
    [served] = [v for v in crd["spec"]["versions"] if v["name"] == version]
    schema: dict[str, Any] = served["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "components"
    ]
    return schema


def field_of(dsc_name: str) -> str:
    return {dsc_key(f): f for f in DataScienceClusterComponents.model_fields}[dsc_name]


def settings_of(field: str) -> set[str]:
    def models(annotation: Any) -> list[Any]:
        if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
            return [annotation]
        return [m for a in get_args(annotation) for m in models(a)]

    [model] = models(DataScienceClusterComponents.model_fields[field].annotation)
    return {info.alias or name for name, info in model.model_fields.items()}


@pytest.mark.parametrize(("folder", "version"), DSC_SCHEMAS, ids=[f"{f}-{v}" for f, v in DSC_SCHEMAS])
def test_every_component_and_setting_of_each_dsc_crd_is_settable(folder: str, version: str) -> None:
    schema = components_schema(folder, version)
    for name, component in schema["properties"].items():
        field = field_of(name)  # KeyError names a component the config cannot set
        offered = settings_of(field)
        declared = set(component.get("properties", {})) - {"devFlags"}
        assert declared <= offered, f"{name}: {sorted(declared - offered)} not settable"


def target(release: str, components: dict[str, Any] | None = None, **extra: Any) -> OpenShiftTarget:
    ai: dict[str, Any] = {"release": release}
    if components is not None:
        ai["components"] = components
    return OpenShiftTarget.model_validate(openshift_target(openshiftAi=ai, **extra))


@pytest.mark.parametrize(("release", "sample"), [("2.x", SAMPLE_V1), ("3.x", SAMPLE_V2)])
def test_default_dsc_is_rhoais_sample_with_kueue_unmanaged_and_passes_the_crd(
    release: str, sample: dict[str, Any], catalog: CrdCatalog
) -> None:
    dsc = data_science_cluster(target(release))
    assert dsc is not None
    kueue = {"managementState": "Unmanaged"} | ({"autoCreateQueues": False} if release == "3.x" else {})
    assert dsc["spec"]["components"] == dict(sorted({**sample, "kueue": kueue}.items()))
    assert dsc["spec"]["components"]["kueue"] == kueue  # 3.x: the operator creates no queues (3.5+)
    assert catalog.validate(dsc) == []


def test_settings_are_merged_into_the_sample() -> None:
    dsc = data_science_cluster(
        target(
            "2.x",
            {
                "workbenches": {"workbenchNamespace": "rhods-notebooks"},
                "kserve": {
                    "defaultDeploymentMode": "RawDeployment",
                    "serving": {"managementState": "Removed"},
                },
                "dashboard": False,
            },
        )
    )
    assert dsc is not None
    components = dsc["spec"]["components"]
    assert components["workbenches"] == {
        "managementState": "Managed",
        "workbenchNamespace": "rhods-notebooks",
    }
    assert components["kserve"]["defaultDeploymentMode"] == "RawDeployment"
    assert components["kserve"]["serving"] == {
        "ingressGateway": {"certificate": {"type": "OpenshiftDefaultIngress"}},
        "name": "knative-serving",
        "managementState": "Removed",
    }
    assert components["kserve"]["nim"] == {"managementState": "Managed"}
    assert components["dashboard"] == {"managementState": "Removed"}


STATE = st.sampled_from(["Managed", "Removed", True, False, None])


def component_strategy(release: str) -> st.SearchStrategy[dict[str, Any]]:
    others = V2_ONLY if release == "2.x" else V1_ONLY
    names = [
        f for f in DataScienceClusterComponents.model_fields if dsc_key(f) not in others and f != "kueue"
    ]
    entries: dict[str, st.SearchStrategy[Any]] = {}
    for name in names:
        alias = DataScienceClusterComponents.model_fields[name].alias or name
        entries[alias] = STATE.map(
            lambda s: s if s is None or isinstance(s, bool) else {"managementState": s}
        )
    entries["kueue"] = st.sampled_from(
        [None, {"managementState": "Unmanaged"}, {"managementState": "Removed"}]
        + ([{"managementState": "Managed"}] if release == "2.x" else [])
    )
    return st.fixed_dictionaries({}, optional=entries).map(
        lambda d: {k: v for k, v in d.items() if v is not None}
    )


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["2.x", "3.x"]).flatmap(lambda r: st.tuples(st.just(r), component_strategy(r))))
def test_any_combination_of_component_states_renders_a_dsc_the_crd_accepts(
    case: tuple[str, dict[str, Any]],
) -> None:
    release, components = case
    dsc = data_science_cluster(target(release, components))
    assert dsc is not None
    assert CATALOG.validate(dsc) == []
    for key, value in components.items():
        dsc_name = dsc_key(field_of_alias(key))
        state = (
            value if not isinstance(value, bool) else {"managementState": "Managed" if value else "Removed"}
        )
        assert dsc["spec"]["components"][dsc_name]["managementState"] == state["managementState"]


CATALOG = shared_crd_catalog()


def field_of_alias(alias: str) -> str:
    return next(n for n, i in DataScienceClusterComponents.model_fields.items() if (i.alias or n) == alias)


def stack_errors(release: str, components: dict[str, Any], **extra: Any) -> list[str]:
    config = with_operators(
        target=openshift_target(openshiftAi={"release": release, "components": components}, **extra)
    )
    with pytest.raises(ConfigValidationError) as info:
        load_stack(config)
    return [str(issue) for issue in info.value.issues if issue.severity == "error"]


@pytest.mark.parametrize(
    ("release", "components", "expected"),
    [
        pytest.param(
            "3.x",
            {"kueue": {"managementState": "Managed"}},
            "batchplane:target.openshiftAi.components.kueue.managementState: OpenShift AI 3.x refuses an embedded "
            "Kueue (kueue: Managed); use Unmanaged with the Red Hat build of Kueue",
            id="embedded-kueue-on-3x",
        ),
        pytest.param(
            "3.x",
            {"datasciencepipelines": True},
            "batchplane:target.openshiftAi.components.datasciencepipelines: DataScienceCluster v2 (OpenShift AI "
            "3.x) has no datasciencepipelines component",
            id="v1-component-on-3x",
        ),
        pytest.param(
            "2.x",
            {"mlflowoperator": {"managementState": "Managed"}},
            "batchplane:target.openshiftAi.components.mlflowoperator: DataScienceCluster v1 (OpenShift AI 2.x) has "
            "no mlflowoperator component",
            id="v2-component-on-2x",
        ),
        pytest.param(
            "3.x",
            {"kserve": {"serving": {"name": "knative-serving"}}},
            "batchplane:target.openshiftAi.components.kserve.serving: kserve.serving exists in DataScienceCluster "
            "v1 only",
            id="v1-setting-on-3x",
        ),
        pytest.param(
            "3.x",
            {"kserve": {"modelCache": {"managementState": "Managed", "nodeNames": ["n1"]}}},
            "batchplane:target.openshiftAi.components.kserve.modelCache.cacheSize: cacheSize is required when "
            "managementState is Managed",
            id="model-cache-cel",
        ),
        pytest.param(
            "2.x",
            {"kserve": {"defaultDeploymentMode": "Knative"}},
            "batchplane:target.openshiftAi.components.kserve.defaultDeploymentMode",
            id="crd-enum",
        ),
        pytest.param(
            "2.x",
            {"workbenches": {"workbenchNamespace": "Not_A_Namespace"}},
            "batchplane:target.openshiftAi.components.workbenches.workbenchNamespace",
            id="crd-pattern",
        ),
    ],
)
def test_crd_rules_and_release_rules_are_plan_time_errors(
    release: str, components: dict[str, Any], expected: str
) -> None:
    errors = stack_errors(release, components)
    assert any(e.startswith(expected) for e in errors), errors


@pytest.mark.parametrize(
    "model_cache",
    [
        {"managementState": "Managed", "cacheSize": "100Gi", "nodeNames": ["n1"]},
        {"managementState": "Managed", "cacheSize": "100Gi"},
        {"managementState": "Managed", "nodeSelector": {"matchLabels": {"a": "b"}}},
        {"managementState": "Managed", "cacheSize": "1Ti", "nodeSelector": {}},
        {"managementState": "Removed", "nodeNames": ["n"], "nodeSelector": {"matchLabels": {"a": "b"}}},
        {"managementState": "Removed"},
    ],
)
def test_model_cache_rules_agree_with_the_crds_cel(model_cache: dict[str, Any], catalog: CrdCatalog) -> None:
    components = {"kserve": {"modelCache": model_cache}}
    dsc = {
        "apiVersion": "datasciencecluster.opendatahub.io/v2",
        "kind": "DataScienceCluster",
        "metadata": {"name": "d"},
        "spec": {"components": components},
    }
    crd_messages = sorted(i.message for i in catalog.validate(dsc))
    config = with_operators(target=openshift_target(openshiftAi={"release": "3.x", "components": components}))
    try:
        load_stack(config)
        ours: list[str] = []
    except ConfigValidationError as exc:
        ours = sorted(str(i).split(": ", 1)[1] for i in exc.issues if i.severity == "error")
    assert ours == crd_messages


def test_embedded_kueue_on_2x_replaces_the_red_hat_build_of_kueue() -> None:
    plan = openshift_plan(target("2.x", {"kueue": {"managementState": "Managed"}}))
    assert [i.role for i in plan.installs] == ["cert-manager", "openshift-ai"]
    assert plan.kueue_cr is None
    assert plan.kueue_namespace == "redhat-ods-applications"
    assert plan.data_science_cluster is not None
    assert plan.data_science_cluster["spec"]["components"]["kueue"] == {"managementState": "Managed"}


def test_embedded_kueue_and_an_explicit_red_hat_build_of_kueue_are_refused() -> None:
    errors = stack_errors("2.x", {"kueue": {"managementState": "Managed"}}, kueue={"channel": "stable-v1.4"})
    assert any(
        e.startswith("batchplane:target.kueue: the DataScienceCluster's kueue component is Managed")
        for e in errors
    )


def test_templates_render_dscs_the_crd_accepts(catalog: CrdCatalog) -> None:
    for path in sorted(
        Path(__file__).resolve().parents[2].joinpath("templates").glob("Pulumi.openshift*.yaml")
    ):
        config = fastyaml.safe_load(path.read_text(encoding="utf-8"))["config"]
        stack = load_stack(config)
        assert isinstance(stack.config.target, OpenShiftTarget)
        dsc = data_science_cluster(stack.config.target)
        assert dsc is not None
        assert catalog.validate(dsc) == [], path.name

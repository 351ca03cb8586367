"""The job-framework registry: one module per Kueue integration, registered once, and every table derived from it."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import pytest

import batchplane.frameworks as registry
from batchplane.accounting.workload import RUNTIME_EXTRACTORS, SIMPLE_EXTRACTORS
from batchplane.components.quota_webhook.manifests import UPDATE_RULES, WORKLOAD_RULES
from batchplane.config.kueue_configuration import KUEUE_FRAMEWORKS
from batchplane.frameworks import BY_GVK, BY_KIND, BY_NAME, FRAMEWORKS, JobFramework
from batchplane.targets.openshift.config import RHBOK_FRAMEWORKS, RHBOK_INTEGRATIONS, RedHatKueue
from batchplane.webhook.decisions import FRAMEWORK_OF_KIND
from tests.conftest import SHARED
from tests.support import fastyaml

#: Integrations.Frameworks of Kueue's manager Configuration, in the order of its API docs
#: (apis/config/v1beta2/configuration_types.go at v0.19.2), transcribed independently of the registry.
KUEUE_V0192_INTEGRATIONS = (
    "batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/rayservice", "ray.io/raycluster",
    "jobset.x-k8s.io/jobset", "kubeflow.org/paddlejob", "kubeflow.org/pytorchjob", "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob", "kubeflow.org/jaxjob", "trainer.kubeflow.org/trainjob",
    "workload.codeflare.dev/appwrapper", "sparkoperator.k8s.io/sparkapplication", "pod", "deployment",
    "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset",
)  # fmt: skip
#: charts/kueue/values.yaml at v0.19.2: managerConfig integrations.frameworks (the uncommented ones).
KUEUE_V0192_CHART_DEFAULTS = {
    "batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/rayservice", "ray.io/raycluster",
    "jobset.x-k8s.io/jobset", "workload.codeflare.dev/appwrapper", "trainer.kubeflow.org/trainjob", "pod",
    "deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset",
}  # fmt: skip
#: Integrations whose pkg/controller/jobs/<framework>/ registers a MultiKueueAdapter at v0.19.2, plus Deployment
#: (dispatched through its Pods).
KUEUE_V0192_MULTIKUEUE = set(KUEUE_V0192_INTEGRATIONS) - {"sparkoperator.k8s.io/sparkapplication"}

_NOT_FRAMEWORKS = {"framework", "ray_common"}


def test_each_framework_module_holds_one_framework_and_is_registered_once() -> None:
    modules = [m.name for m in pkgutil.iter_modules(registry.__path__) if m.name not in _NOT_FRAMEWORKS]
    found = [importlib.import_module(f"batchplane.frameworks.{m}").FRAMEWORK for m in modules]
    assert all(isinstance(f, JobFramework) for f in found)
    assert sorted(f.name for f in found) == sorted(f.name for f in FRAMEWORKS)
    assert len(FRAMEWORKS) == len(BY_NAME) == len(BY_KIND) == len(BY_GVK) == 18


def test_the_registry_holds_every_integration_kueue_accepts_in_its_documented_order() -> None:
    assert registry.KUEUE_INTEGRATIONS == KUEUE_V0192_INTEGRATIONS
    assert KUEUE_FRAMEWORKS == KUEUE_V0192_INTEGRATIONS


def test_registering_a_name_or_kind_twice_is_refused() -> None:
    rayjob = BY_NAME["ray.io/rayjob"]
    for clash in (
        JobFramework(rayjob.name, "example.com", "v1", "Other", "others", "", None, False, False),
        JobFramework("example.com/other", "example.com", "v1", "RayJob", "rayjobs", "", None, False, False),
    ):
        with pytest.raises(ValueError, match="registered twice"):
            registry._register(clash)
    assert registry._REGISTERED["ray.io/rayjob"] is rayjob


def test_chart_defaults_and_multikueue_dispatch_are_kueues() -> None:
    assert {f.name for f in FRAMEWORKS if f.kueue_chart_default} == KUEUE_V0192_CHART_DEFAULTS
    assert {f.name for f in FRAMEWORKS if f.multikueue} == KUEUE_V0192_MULTIKUEUE


def test_each_source_is_a_kueue_v0_19_2_controller_file() -> None:
    for f in FRAMEWORKS:
        assert f.source.startswith(
            "https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/"
        )
        assert f.source.endswith("_controller.go"), f.name


def test_rhbok_names_are_the_kueue_operator_crd_enum_in_its_order() -> None:
    crd = fastyaml.safe_load(
        (SHARED / "crds/kueue-operator/release-1.4/kueue.openshift.io_kueues.yaml").read_text(
            encoding="utf-8"
        )
    )
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    enum = spec["properties"]["config"]["properties"]["integrations"]["properties"]["frameworks"]["items"][
        "enum"
    ]
    assert registry.RHBOK_NAMES == tuple(enum) == RHBOK_FRAMEWORKS
    assert (
        RHBOK_INTEGRATIONS["BatchJob"] == "batch/job"
        and RHBOK_INTEGRATIONS["JaxJob"] == "kubeflow.org/jaxjob"
    )
    assert set(RHBOK_INTEGRATIONS.values()) == set(KUEUE_V0192_INTEGRATIONS)


def test_the_rhbok_framework_setting_accepts_exactly_the_crd_enum() -> None:
    assert RedHatKueue(frameworks=["JaxJob", "RayService"]).frameworks == ["JaxJob", "RayService"]
    with pytest.raises(ValueError, match="BatchJob"):
        RedHatKueue(frameworks=["batch/job"])


@pytest.mark.parametrize(
    ("directory", "name"),
    [
        ("kuberay/v1.7.0", "ray.io/rayjob"),
        ("kuberay/v1.7.0", "ray.io/raycluster"),
        ("kuberay/v1.7.0", "ray.io/rayservice"),
        ("appwrapper/v1.2.1", "workload.codeflare.dev/appwrapper"),
        ("training-operator/v1.9.4", "kubeflow.org/pytorchjob"),
    ],
)
def test_group_version_kind_and_plural_match_the_operators_crd(directory: str, name: str) -> None:
    f = BY_NAME[name]
    crd = fastyaml.safe_load(
        (SHARED / "crds" / directory / f"{f.group}_{f.plural}.yaml").read_text(encoding="utf-8")
    )
    assert crd["spec"]["group"] == f.group
    assert crd["spec"]["names"]["kind"] == f.kind
    assert crd["spec"]["names"]["plural"] == f.plural
    assert f.version in [v["name"] for v in crd["spec"]["versions"] if v.get("served")]


def test_the_webhook_maps_every_kind_to_its_integration() -> None:
    assert FRAMEWORK_OF_KIND["RayService"] == "ray.io/rayservice"
    assert {f.kind: f.name for f in FRAMEWORKS} == FRAMEWORK_OF_KIND


def test_the_webhook_reviews_exactly_the_frameworks_the_registry_marks_for_admission_review() -> None:
    reviewed = {(g, v, r) for g, v, resources in WORKLOAD_RULES for r in resources}
    assert reviewed == {(f.group, f.version, f.plural) for f in FRAMEWORKS if f.admission_review}
    assert all(f.pod_set_source for f in FRAMEWORKS if f.admission_review)  # a reviewed kind is accounted


def test_the_webhook_reviews_update_of_exactly_the_frameworks_the_registry_marks_for_update_review() -> None:
    on_update = {(g, v, r) for g, v, resources in UPDATE_RULES for r in resources}
    assert on_update == {(f.group, f.version, f.plural) for f in FRAMEWORKS if f.update_review}
    assert on_update <= {(g, v, r) for g, v, resources in WORKLOAD_RULES for r in resources}


def test_a_framework_reviewed_on_update_but_not_on_create_is_refused_by_the_registry() -> None:
    broken = dataclasses.replace(
        BY_KIND["Job"], name="example.com/x", kind="X", rhbok_name=None, admission_review=False
    )
    with pytest.raises(ValueError, match="reviews UPDATE but not CREATE"):
        registry._register(broken)


def test_the_accounting_reads_every_framework_with_the_extractor_its_module_registers() -> None:
    for f in FRAMEWORKS:
        assert SIMPLE_EXTRACTORS.get(f.gvk) is f.pod_sets
        assert RUNTIME_EXTRACTORS.get(f.gvk) is f.runtime_pod_sets
        assert not (f.pod_sets and f.runtime_pod_sets), f"{f.name} registers two extractions"
    assert list(RUNTIME_EXTRACTORS) == [("trainer.kubeflow.org/v1alpha1", "TrainJob")]
    assert ("kueue.x-k8s.io/v1beta2", "Workload") in SIMPLE_EXTRACTORS


def test_each_framework_module_owns_its_behaviour() -> None:
    """Kueue's model: pkg/controller/jobs/<framework>/ registers its callbacks once. Every callable a framework
    registers is defined in that framework's own module (or the Ray module the three KubeRay kinds share)."""
    for f in FRAMEWORKS:
        for hook in (f.pod_sets, f.runtime_pod_sets, f.review, f.priority_class):
            if hook is not None:
                assert hook.__module__.startswith("batchplane.frameworks."), (f.name, hook)
                assert hook.__module__ != "batchplane.frameworks.framework", (f.name, hook)
    assert {f.kind for f in FRAMEWORKS if f.review} == {"RayJob", "RayCluster"}
    assert {f.kind for f in FRAMEWORKS if f.priority_class} == {"PyTorchJob"}


def test_the_registry_tables_match_kueue_v0192() -> None:
    assert registry.KUEUE_INTEGRATIONS == KUEUE_V0192_INTEGRATIONS
    assert {f.name for f in FRAMEWORKS if f.multikueue} == KUEUE_V0192_MULTIKUEUE
    assert set(registry.KUEUE_CHART_DEFAULT_FRAMEWORKS) == KUEUE_V0192_CHART_DEFAULTS
    assert {f.name: f.rhbok_name for f in FRAMEWORKS if f.rhbok_name} == {
        v: k for k, v in RHBOK_INTEGRATIONS.items()
    }


def test_each_job_operator_switches_on_the_integrations_of_the_kinds_it_serves() -> None:
    """Stated once, in the framework modules: KubeRay serves RayJob, RayCluster and RayService; Trainer v2 installs
    JobSet beside TrainJob; the v1 Training Operator's PyTorchJob is the one Batchplane enables."""
    assert registry.INTEGRATIONS_OF_OPERATOR == {
        "kuberay": ("ray.io/rayjob", "ray.io/rayservice", "ray.io/raycluster"),
        "training-operator-v1": ("kubeflow.org/pytorchjob",),
        "trainer-v2": ("jobset.x-k8s.io/jobset", "trainer.kubeflow.org/trainjob"),
        "appwrapper": ("workload.codeflare.dev/appwrapper",),
    }

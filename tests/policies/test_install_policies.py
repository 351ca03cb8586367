"""Install policies called directly: pinned/supported charts and manifest sources, Kueue
integrations vs installed operators, cert-manager presence and ordering, the Kueue readiness gate."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from batchplane_policies import installs as i
from pulumi_policy.proxy import UnknownValueError

from tests.policies.factories import UNKNOWN, Stack, check_resource, kueue

RELEASE = "kubernetes:helm.sh/v3:Release"
CHART_V4 = "kubernetes:helm.sh/v4:Chart"
KUSTOMIZE = "kubernetes:kustomize/v2:Directory"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"


@pytest.mark.parametrize(
    ("resource_type", "props", "config", "want"),
    [
        (RELEASE, {"chart": "oci://quay.io/jetstack/charts/cert-manager", "version": "v1.21.1"}, None, []),
        (
            RELEASE,
            {
                "chart": "kuberay-operator",
                "version": "1.7.0",
                "repositoryOpts": {"repo": "https://ray-project.github.io/kuberay-helm/"},
            },
            None,
            [],
        ),
        (
            CHART_V4,
            {"chart": "oci://registry.k8s.io/kueue/charts/kueue", "version": "0.18.0"},
            None,
            ['chart "kueue" version "0.18.0" is not supported; supported: 0.19.2'],
        ),
        (
            RELEASE,
            {"chart": "oci://registry.k8s.io/kueue/charts/kueue"},
            None,
            [
                'chart "oci://registry.k8s.io/kueue/charts/kueue" has no version: Helm would install whatever is newest'
            ],
        ),
        (
            RELEASE,
            {"chart": "prometheus", "version": "^25.0"},
            None,
            ['chart "prometheus" version "^25.0" is not an exact version'],
        ),
        (RELEASE, {"chart": "prometheus", "version": "25.1.0"}, None, []),
        (RELEASE, {"chart": "kueue", "version": "0.18.0"}, {"supportedVersions": {"kueue": ["0.18.0"]}}, []),
        (RELEASE, {"version": "1.0.0"}, None, []),
        (RELEASE, {}, None, []),
    ],
    ids=[
        "cert-manager",
        "kuberay",
        "unsupported-kueue",
        "no-version",
        "range",
        "unknown-chart-exact",
        "configured-allow-list",
        "no-chart",
        "empty",
    ],
)
def test_helm_charts_are_pinned_to_supported_versions(
    resource_type: str, props: dict[str, Any], config: dict[str, Any] | None, want: list[str]
) -> None:
    assert check_resource(i.helm_chart_versions_supported, resource_type, props, config=config) == want


@pytest.mark.parametrize(
    ("resource_type", "props", "want"),
    [
        (
            KUSTOMIZE,
            {"directory": "https://github.com/ray-project/kuberay//ray-operator/config/crd?ref=v1.7.0"},
            [],
        ),
        (
            KUSTOMIZE,
            {"directory": "https://github.com/kubeflow/trainer//manifests/overlays/standalone?ref=v1.9.4"},
            [],
        ),
        (
            CONFIG_FILE,
            {"file": "https://github.com/project-codeflare/appwrapper/releases/download/v1.2.1/install.yaml"},
            [],
        ),
        (
            KUSTOMIZE,
            {"directory": "https://github.com/ray-project/kuberay//ray-operator/config/crd"},
            [
                '"https://github.com/ray-project/kuberay//ray-operator/config/crd" has no ?ref=: kustomize would fetch '
                "the default branch"
            ],
        ),
        (
            KUSTOMIZE,
            {"directory": "github.com/example/ops/deploy?ref=main"},
            ['"github.com/example/ops/deploy?ref=main" follows "main", not a tag or commit'],
        ),
        (
            CONFIG_FILE,
            {"file": "https://raw.githubusercontent.com/example/ops/master/install.yaml"},
            [
                '"https://raw.githubusercontent.com/example/ops/master/install.yaml" follows "master", not a tag or commit'
            ],
        ),
        (
            KUSTOMIZE,
            {"directory": "https://github.com/kubeflow/trainer//manifests/overlays/standalone?ref=v1.8.0"},
            [
                '"https://github.com/kubeflow/trainer//manifests/overlays/standalone?ref=v1.8.0" uses '
                'github.com/kubeflow/trainer at "v1.8.0", which is not supported; supported: v1.9.4'
            ],
        ),
        (KUSTOMIZE, {"directory": "./manifests/local"}, []),
        (KUSTOMIZE, {}, []),
    ],
    ids=[
        "kuberay-crds",
        "training-v1",
        "appwrapper-release",
        "no-ref",
        "branch-ref",
        "raw-master",
        "unsupported-tag",
        "local",
        "empty",
    ],
)
def test_remote_manifests_are_pinned(resource_type: str, props: dict[str, Any], want: list[str]) -> None:
    assert check_resource(i.remote_manifests_pinned, resource_type, props) == want


def kueue_release(
    frameworks: list[str] | None, *, enable_cert_manager: bool = False, raw: Any = None
) -> dict[str, Any]:
    values: dict[str, Any] = {"enableCertManager": enable_cert_manager}
    if raw is not None:
        values["managerConfig"] = {"controllerManagerConfigYaml": raw}
    elif frameworks is not None:
        document = {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "integrations": {"frameworks": frameworks},
        }
        values["managerConfig"] = {"controllerManagerConfigYaml": yaml.safe_dump(document)}
    return {"chart": "oci://registry.k8s.io/kueue/charts/kueue", "version": "0.19.2", "values": values}


def operators(
    frameworks: list[str] | None, *, raw: Any = None, training: bool = True, kuberay: bool = True
) -> Stack:
    s = Stack()
    if kuberay:
        s.add(RELEASE, "kuberay", {"chart": "kuberay-operator", "version": "1.7.0"})
    if training:
        s.add(
            KUSTOMIZE,
            "training",
            {"directory": "https://github.com/kubeflow/trainer//manifests/overlays/standalone?ref=v1.9.4"},
        )
    s.add(RELEASE, "kueue", kueue_release(frameworks, raw=raw))
    return s


ALL = ["batch/job", "ray.io/rayjob", "ray.io/rayservice", "ray.io/raycluster", "kubeflow.org/pytorchjob"]


@pytest.mark.parametrize(
    ("stack", "want"),
    [
        (operators(ALL), []),
        (
            operators(["batch/job", "ray.io/rayjob", "ray.io/rayservice", "ray.io/raycluster"]),
            [
                (
                    "the v1 Training Operator is installed but Kueue's integrations.frameworks lacks kubeflow.org/pytorchjob: "
                    "its jobs would bypass Kueue",
                    "kueue",
                )
            ],
        ),
        (
            operators(None),
            [
                (
                    "the v1 Training Operator is installed but Kueue's integrations.frameworks lacks kubeflow.org/pytorchjob: "
                    "its jobs would bypass Kueue",
                    "kueue",
                )
            ],
        ),
        (operators(None, training=False), []),
        (
            operators([], training=False),
            [
                (
                    "KubeRay is installed but Kueue's integrations.frameworks lacks ray.io/rayjob, ray.io/rayservice, "
                    "ray.io/raycluster: "
                    "its jobs would bypass Kueue",
                    "kueue",
                )
            ],
        ),
        (
            operators(None, raw="integrations: [unclosed"),
            [("Kueue release: values.managerConfig.controllerManagerConfigYaml is not YAML", "kueue")],
        ),
        (
            operators(None, raw=42),
            [("Kueue release: values.managerConfig.controllerManagerConfigYaml is not a string", "kueue")],
        ),
    ],
    ids=[
        "covered",
        "pytorchjob-missing",
        "chart-defaults-lack-pytorchjob",
        "chart-defaults-cover-kuberay",
        "empty-list-means-batch-job",
        "not-yaml",
        "not-a-string",
    ],
)
def test_kueue_integrations_cover_installed_operators(stack: Stack, want: list[tuple[str, str]]) -> None:
    assert stack.check(i.kueue_integrations_cover_operators) == want


def test_trainer_v2_and_appwrapper_need_their_frameworks() -> None:
    s = Stack()
    s.add(RELEASE, "trainer", {"chart": "oci://ghcr.io/kubeflow/charts/kubeflow-trainer", "version": "2.3.0"})
    s.add(
        CONFIG_FILE,
        "appwrapper",
        {"file": "https://github.com/project-codeflare/appwrapper/releases/download/v1.2.1/install.yaml"},
    )
    s.add(RELEASE, "kueue", kueue_release(["batch/job"]))
    assert s.check(i.kueue_integrations_cover_operators) == [
        (
            "Kubeflow Trainer v2 is installed but Kueue's integrations.frameworks lacks jobset.x-k8s.io/jobset, "
            "trainer.kubeflow.org/trainjob: its jobs would bypass Kueue",
            "kueue",
        ),
        (
            "AppWrapper is installed but Kueue's integrations.frameworks lacks workload.codeflare.dev/appwrapper: "
            "its jobs would bypass Kueue",
            "kueue",
        ),
    ]


def test_openshift_kueue_cr_covers_managed_datasciencecluster_components() -> None:
    s = Stack()
    s.add(
        "kubernetes:datasciencecluster.opendatahub.io/v2:DataScienceCluster",
        "dsc",
        {
            "spec": {
                "components": {
                    "ray": {"managementState": "Managed"},
                    "trainer": {"managementState": "Removed"},
                }
            }
        },
    )
    s.add(
        "kubernetes:kueue.openshift.io/v1:Kueue",
        "kueue-cr",
        {
            "metadata": {"name": "cluster"},
            "spec": {"config": {"integrations": {"frameworks": ["BatchJob", "RayJob"]}}},
        },
    )
    assert s.check(i.kueue_integrations_cover_operators) == [
        (
            "KubeRay is managed by the DataScienceCluster but the Kueue CR's spec.config.integrations.frameworks lacks "
            "RayService, RayCluster",
            "kueue-cr",
        )
    ]


def test_a_managed_codeflare_component_needs_appwrapper_in_the_kueue_cr_as_the_program_derives_it() -> None:
    """OpenShift AI 2.x's codeflare deploys the AppWrapper controller: the program's Kueue CR lists AppWrapper for it
    (``DSC_COMPONENT_OPERATORS``), and the pack checks the same statement."""
    s = Stack()
    s.add(
        "kubernetes:datasciencecluster.opendatahub.io/v1:DataScienceCluster",
        "dsc",
        {"spec": {"components": {"codeflare": {"managementState": "Managed"}}}},
    )
    s.add(
        "kubernetes:kueue.openshift.io/v1:Kueue",
        "kueue-cr",
        {"metadata": {"name": "cluster"}, "spec": {"config": {"integrations": {"frameworks": ["BatchJob"]}}}},
    )
    assert s.check(i.kueue_integrations_cover_operators) == [
        (
            "AppWrapper is managed by the DataScienceCluster but the Kueue CR's spec.config.integrations.frameworks "
            "lacks AppWrapper",
            "kueue-cr",
        )
    ]


def test_integrations_tolerate_missing_properties() -> None:
    s = Stack()
    s.add(RELEASE, "empty", {})
    s.add(RELEASE, "kueue", {"chart": "kueue"})
    s.add("kubernetes:datasciencecluster.opendatahub.io/v2:DataScienceCluster", "dsc", {})
    assert s.check(i.kueue_integrations_cover_operators) == []


# --- cert-manager-present -------------------------------------------------------------------------------

CERT_MANAGER = {"chart": "oci://quay.io/jetstack/charts/cert-manager", "version": "v1.21.1"}
WEBHOOK = "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration"


def webhook_stack(*, install: bool, ordered: bool = True) -> Stack:
    s = Stack()
    if install:
        s.add(RELEASE, "cert-manager", CERT_MANAGER)
    deps = ["cert-manager"] if install and ordered else []
    s.add(
        "kubernetes:cert-manager.io/v1:Issuer",
        "issuer",
        {"metadata": {"name": "selfsigned", "namespace": "w"}},
        depends_on=deps,
    )
    s.add(
        "kubernetes:cert-manager.io/v1:Certificate",
        "cert",
        {"metadata": {"name": "serving", "namespace": "w"}},
        depends_on=["issuer"],
    )
    s.add(
        WEBHOOK,
        "hook",
        {"metadata": {"name": "quota", "annotations": {"cert-manager.io/inject-ca-from": "w/serving"}}},
        depends_on=["cert"],
    )
    return s


@pytest.mark.parametrize(
    ("stack", "config", "want"),
    [
        (webhook_stack(install=True), None, []),
        (
            webhook_stack(install=False),
            None,
            [
                (
                    'Issuer "selfsigned" is a cert-manager object but the stack installs no cert-manager',
                    "issuer",
                ),
                (
                    'Certificate "serving" is a cert-manager object but the stack installs no cert-manager',
                    "cert",
                ),
                (
                    'ValidatingWebhookConfiguration "quota" gets its CA bundle from cert-manager\'s CA injector but the '
                    "stack installs no cert-manager",
                    "hook",
                ),
            ],
        ),
        (webhook_stack(install=False), {"preinstalled": True}, []),
        (
            webhook_stack(install=True, ordered=False),
            None,
            [
                (
                    'Issuer "selfsigned" is a cert-manager object but does not depend on the cert-manager install',
                    "issuer",
                ),
                (
                    'Certificate "serving" is a cert-manager object but does not depend on the cert-manager install',
                    "cert",
                ),
                (
                    'ValidatingWebhookConfiguration "quota" gets its CA bundle from cert-manager\'s CA injector but does '
                    "not depend on the cert-manager install",
                    "hook",
                ),
            ],
        ),
    ],
    ids=["installed-and-ordered", "not-installed", "preinstalled", "not-ordered"],
)
def test_cert_manager_is_installed_before_what_relies_on_it(
    stack: Stack, config: dict[str, Any] | None, want: list[tuple[str, str]]
) -> None:
    assert stack.check(i.cert_manager_present, config=config) == want


def test_kueue_enable_cert_manager_needs_cert_manager_and_olm_subscription_counts() -> None:
    s = Stack()
    s.add(RELEASE, "kueue", kueue_release(None, enable_cert_manager=True))
    assert s.check(i.cert_manager_present) == [
        ('Release "kueue" sets enableCertManager but the stack installs no cert-manager', "kueue")
    ]
    olm = Stack()
    olm.add(
        "kubernetes:operators.coreos.com/v1alpha1:Subscription",
        "sub",
        {"spec": {"name": "openshift-cert-manager-operator"}},
    )
    olm.add("kubernetes:cert-manager.io/v1:Issuer", "issuer", {"metadata": {"name": "x"}}, depends_on=["sub"])
    assert olm.check(i.cert_manager_present) == []


def test_cert_manager_check_tolerates_missing_properties() -> None:
    s = Stack()
    s.add(WEBHOOK, "hook", {})
    s.add(RELEASE, "r", {})
    s.add("kubernetes:operators.coreos.com/v1alpha1:Subscription", "sub", {})
    assert s.check(i.cert_manager_present) == []


# --- kueue-objects-wait-for-readiness-gate ----------------------------------------------------------------

GATE = {"gate": "kueue-webhook", "namespace": "kueue-system", "version": "0.19.2"}


def gated(*, gate: bool = True, install: bool = True, flavor_deps: tuple[str, ...] = ("gate",)) -> Stack:
    s = Stack()
    if install:
        s.add(RELEASE, "kueue", kueue_release(None))
    if gate:
        s.add(i.DYNAMIC, "gate", GATE, depends_on=["kueue"] if install else [])
    s.add(
        kueue("ResourceFlavor", "f")[0], "rf", kueue("ResourceFlavor", "f")[1], depends_on=list(flavor_deps)
    )
    s.add(kueue("ClusterQueue", "cq")[0], "cq", kueue("ClusterQueue", "cq", {})[1], depends_on=["rf"])
    return s


@pytest.mark.parametrize(
    ("stack", "want"),
    [
        (gated(), []),
        (
            gated(flavor_deps=("kueue",)),
            [
                ('ResourceFlavor "f" does not depend on the Kueue readiness gate', "rf"),
                ('ClusterQueue "cq" does not depend on the Kueue readiness gate', "cq"),
            ],
        ),
        (
            gated(gate=False, flavor_deps=("kueue",)),
            [
                ('ResourceFlavor "f": the stack installs Kueue but has no readiness gate', "rf"),
                ('ClusterQueue "cq": the stack installs Kueue but has no readiness gate', "cq"),
            ],
        ),
        (gated(gate=False, install=False, flavor_deps=()), []),
        (gated(install=False), []),
    ],
    ids=["gated", "depends-on-release-only", "no-gate", "kueue-preinstalled", "gate-without-install"],
)
def test_kueue_objects_wait_for_the_readiness_gate(stack: Stack, want: list[tuple[str, str]]) -> None:
    assert stack.check(i.kueue_objects_wait_for_readiness_gate) == want


def test_readiness_gate_cannot_judge_an_unknown_gate_kind() -> None:
    s = Stack()
    s.add(i.DYNAMIC, "gate", {"gate": UNKNOWN})
    s.add(kueue("ResourceFlavor", "f")[0], "rf", kueue("ResourceFlavor", "f")[1], depends_on=["gate"])
    with pytest.raises(UnknownValueError):
        s.check(i.kueue_objects_wait_for_readiness_gate)

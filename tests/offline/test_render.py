"""render_resources: manifests, what is skipped, apply order and file names."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from batchplane.offline import RecordedResource, render_resources
from batchplane.offline.render import manifest_of
from tests.offline.conftest import RunFixture, k8s_object, recorded

KUEUE = "kueue.x-k8s.io/v1beta2"


def names(resources: list[RecordedResource]) -> list[str]:
    return [obj.name for obj in render_resources(resources).objects]


def test_typed_object_fields_are_top_level_and_pulumi_only_inputs_dropped() -> None:
    resource = recorded(
        "kubernetes:core/v1:ConfigMap",
        "settings",
        {"__defaults": [], "apiVersion": "v1", "data": {"a": "1"}, "kind": "ConfigMap",
         "metadata": {"namespace": "team"}, "status": {"x": 1}},
    )  # fmt: skip
    assert manifest_of(resource) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "team"},
        "data": {"a": "1"},
    }
    assert list(manifest_of(resource) or {}) == ["apiVersion", "kind", "metadata", "data"]


def test_custom_resource_keeps_its_own_name() -> None:
    inputs = k8s_object("ClusterQueue", "team", api_version=KUEUE, spec={"namespaceSelector": {}})
    resource = recorded(f"kubernetes:{KUEUE}:ClusterQueue", "team-cq", inputs)
    assert manifest_of(resource) == inputs


@pytest.mark.parametrize(
    "resource",
    [
        recorded("pulumi:providers:kubernetes", "k8s", {"kubeconfig": "x"}),
        recorded("gcp:container/cluster:Cluster", "gke", {"location": "eu"}),
        recorded("kubernetes:yaml:ConfigGroup", "objects", {}, custom=False),
        recorded("kubernetes:core/v1:Namespace", "no-kind", {"metadata": {"name": "x"}}),
    ],
    ids=["provider", "gcp-resource", "client-side-component", "no-apiversion-or-kind"],
)
def test_resources_that_are_not_kubernetes_objects_are_neither_rendered_nor_skipped(
    resource: RecordedResource,
) -> None:
    rendering = render_resources([resource])
    assert (rendering.objects, rendering.skipped) == ([], [])


@pytest.mark.parametrize(
    ("resource", "reason", "detail"),
    [
        (
            recorded("kubernetes:helm.sh/v3:Release", "kuberay",
                     {"chart": "kuberay-operator", "version": "1.7.0",
                      "repositoryOpts": {"repo": "https://ray-project.github.io/kuberay-helm/"}}),
            "a Helm release, installed by the provider's embedded Helm at deploy time",
            "chart kuberay-operator, version 1.7.0, repo https://ray-project.github.io/kuberay-helm/",
        ),
        (
            recorded("kubernetes:helm.sh/v4:Chart", "kueue",
                     {"chart": "oci://registry.k8s.io/kueue/charts/kueue", "version": "0.19.2"}, custom=False),
            "a Helm chart, expanded by the provider at deploy time",
            "chart oci://registry.k8s.io/kueue/charts/kueue, version 0.19.2",
        ),
        (
            recorded("kubernetes:yaml/v2:ConfigFile", "crds", {"file": "crds.yaml"}, custom=False),
            "a YAML file, expanded by the provider at deploy time",
            "file crds.yaml",
        ),
        (
            recorded("kubernetes:yaml/v2:ConfigGroup", "objs", {"objs": [{}, {}]}, custom=False),
            "a YAML group, expanded by the provider at deploy time",
            "2 inline objects",
        ),
        (
            recorded("kubernetes:kustomize/v2:Directory", "training", {"directory": "manifests/"}, custom=False),
            "a kustomization, built by the provider at deploy time",
            "directory manifests/",
        ),
        (
            recorded("kubernetes:core/v1:NamespacePatch", "label", k8s_object("Namespace", "default")),
            "a server-side apply patch of an existing object, not a whole object",
            "",
        ),
    ],
    ids=["helm-v3-release", "helm-v4-chart", "yaml-v2-file", "yaml-v2-group", "kustomize-v2", "patch"],
)  # fmt: skip
def test_provider_side_expansions_and_patches_are_skipped_with_a_reason(
    resource: RecordedResource, reason: str, detail: str
) -> None:
    rendering = render_resources([resource])
    assert rendering.objects == []
    assert [(s.type, s.name, s.urn, s.reason, s.detail) for s in rendering.skipped] == [
        (resource.type, resource.name, resource.urn, reason, detail)
    ]


def test_ties_put_namespaces_then_crds_then_cluster_scoped_objects_first_and_webhooks_last() -> None:
    resources = [
        recorded("kubernetes:apps/v1:Deployment", "web", k8s_object("Deployment", "web", api_version="apps/v1",
                                                                     namespace="team")),
        recorded("kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration", "hook",
                 k8s_object("ValidatingWebhookConfiguration", "hook",
                            api_version="admissionregistration.k8s.io/v1")),
        recorded(f"kubernetes:{KUEUE}:LocalQueue", "lq", k8s_object("LocalQueue", "lq", api_version=KUEUE,
                                                                    namespace="team")),
        recorded(f"kubernetes:{KUEUE}:ClusterQueue", "cq", k8s_object("ClusterQueue", "cq", api_version=KUEUE)),
        recorded("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "role",
                 k8s_object("ClusterRole", "role", api_version="rbac.authorization.k8s.io/v1")),
        recorded("kubernetes:core/v1:ConfigMap", "cm", k8s_object("ConfigMap", "cm")),
        recorded("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "crd",
                 k8s_object("CustomResourceDefinition", "crd", api_version="apiextensions.k8s.io/v1")),
        recorded("kubernetes:core/v1:Namespace", "team", k8s_object("Namespace", "team")),
    ]  # fmt: skip
    assert names(resources) == ["team", "crd", "cq", "role", "web", "lq", "cm", "hook"]


def test_dependencies_win_over_tiers() -> None:
    resources = [
        recorded("kubernetes:core/v1:ConfigMap", "cm", k8s_object("ConfigMap", "cm")),
        recorded(
            "kubernetes:core/v1:Namespace", "ns", k8s_object("Namespace", "ns"), dependencies=["urn:cm"]
        ),
    ]
    assert names(resources) == ["cm", "ns"]


def test_dependencies_are_followed_through_resources_that_are_not_rendered() -> None:
    resources = [
        recorded(f"kubernetes:{KUEUE}:LocalQueue", "lq", k8s_object("LocalQueue", "lq", api_version=KUEUE),
                 dependencies=["urn:kueue"]),
        recorded("kubernetes:helm.sh/v3:Release", "kueue", {"chart": "kueue"}, dependencies=["urn:settings"]),
        recorded("kubernetes:core/v1:ConfigMap", "settings", k8s_object("ConfigMap", "settings")),
    ]  # fmt: skip
    assert names(resources) == ["settings", "lq"]


def test_children_follow_what_their_parent_component_depends_on() -> None:
    resources = [
        recorded("x:index:Queues", "queues", custom=False, dependencies=["urn:cm"]),
        recorded(f"kubernetes:{KUEUE}:ClusterQueue", "cq", k8s_object("ClusterQueue", "cq", api_version=KUEUE),
                 parent="urn:queues"),
        recorded("kubernetes:core/v1:ConfigMap", "cm", k8s_object("ConfigMap", "cm")),
    ]  # fmt: skip
    assert names(resources) == ["cm", "cq"]


def test_objects_parented_to_an_object_follow_it() -> None:
    resources = [
        recorded(
            "kubernetes:core/v1:ConfigMap", "child", k8s_object("ConfigMap", "child"), parent="urn:parent"
        ),
        recorded("kubernetes:core/v1:ConfigMap", "parent", k8s_object("ConfigMap", "parent")),
    ]
    assert names(resources) == ["parent", "child"]


@pytest.mark.parametrize(
    ("count", "first", "last"),
    [(1, "00-configmap-team-cm-0.yaml", "00-configmap-team-cm-0.yaml"),
     (101, "000-configmap-team-cm-0.yaml", "100-configmap-team-cm-100.yaml")],
    ids=["two-digits-minimum", "three-digits-past-99"],
)  # fmt: skip
def test_file_names_are_numbered_in_apply_order(count: int, first: str, last: str) -> None:
    resources = [
        recorded(
            "kubernetes:core/v1:ConfigMap", f"cm-{i}", k8s_object("ConfigMap", f"cm-{i}", namespace="team")
        )
        for i in range(count)
    ]
    file_names = render_resources(resources).file_names()
    assert (file_names[0], file_names[-1]) == (first, last)


def test_file_names_of_cluster_scoped_objects_have_no_namespace_and_are_sanitised() -> None:
    resources = [
        recorded("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "r",
                 k8s_object("ClusterRole", "system:Metrics_Reader", api_version="rbac.authorization.k8s.io/v1")),
    ]  # fmt: skip
    assert render_resources(resources).file_names() == ["00-clusterrole-system-metrics-reader.yaml"]


def test_yaml_stream_is_one_document_per_object_with_literal_multiline_strings() -> None:
    resources = [
        recorded("kubernetes:core/v1:Namespace", "ns", k8s_object("Namespace", "team")),
        recorded(
            "kubernetes:core/v1:ConfigMap", "cm", k8s_object("ConfigMap", "cm", data={"conf": "a: 1\nb: 2\n"})
        ),
    ]
    text = render_resources(resources).to_yaml()
    assert text == (
        "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  conf: |\n    a: 1\n    b: 2\n"
    )
    assert list(yaml.safe_load_all(text)) == [r.inputs for r in resources]


def test_write_puts_one_file_per_object(tmp_path: Path) -> None:
    resources = [recorded("kubernetes:core/v1:Namespace", "ns", k8s_object("Namespace", "team"))]
    paths = render_resources(resources).write(tmp_path / "out")
    assert paths == [tmp_path / "out" / "00-namespace-team.yaml"]
    assert yaml.safe_load(paths[0].read_text(encoding="utf-8")) == resources[0].inputs


def test_fixture_program_renders_in_apply_order(cached_run: RunFixture) -> None:
    rendering = render_resources(cached_run("platform", "dev", preview=False).resources)
    assert rendering.file_names() == [
        "00-namespace-team.yaml",
        "01-resourceflavor-gpu.yaml",
        "02-clusterqueue-team.yaml",
        "03-localqueue-team-team.yaml",
        "04-deployment-team-web.yaml",
        "05-secret-team-token.yaml",
        "06-configmap-team-ns-phase.yaml",
    ]
    assert [(s.type, s.name) for s in rendering.skipped] == [("kubernetes:helm.sh/v4:Chart", "kueue")]
    assert rendering.objects[4].manifest["metadata"] == {"name": "web", "namespace": "team"}
    assert rendering.objects[5].manifest["stringData"] == {"token": "secret-placeholder"}

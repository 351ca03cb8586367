"""CrdCatalog loading, lookup, rule coverage, unsupported-rule reporting and speed."""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.crdcheck import CrdCatalog, SchemaIssue
from tests.support.crdcheck._walk import compile_rule

from .conftest import KUEUE, cluster_queue, messages

WIDGET_CRD = textwrap.dedent(
    """\
    ---
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: widgets.example.batchplane.dev
    spec:
      group: example.batchplane.dev
      names:
        kind: Widget
        plural: widgets
      scope: Namespaced
      versions:
      - name: v1alpha1
        served: false
        storage: false
        schema:
          openAPIV3Schema:
            type: object
      - name: v1
        served: true
        storage: true
        schema:
          openAPIV3Schema:
            type: object
            properties:
              apiVersion: {type: string}
              kind: {type: string}
              metadata: {type: object}
              spec:
                type: object
                x-kubernetes-validations:
                - rule: "!has(self.size) || quantity(self.size).isLessThan(quantity('1Ti'))"
                  message: size must be below 1Ti
                properties:
                  size:
                    x-kubernetes-int-or-string: true
                    anyOf: [{type: integer}, {type: string}]
                  note:
                    type: string
                    nullable: true
                  legacy:
                    type: string
                    x-kubernetes-validations:
                    - rule: self.fooBar()
                  broken:
                    type: string
                    x-kubernetes-validations:
                    - rule: "self +"
                  ports:
                    type: array
                    x-kubernetes-list-type: map
                    x-kubernetes-list-map-keys: [name]
                    items:
                      type: object
                      required: [name, port]
                      x-kubernetes-validations:
                      - rule: self.port == oldSelf.port
                        message: port is immutable
                      properties:
                        name: {type: string}
                        port: {type: integer, format: int32}
                  extra:
                    type: object
                    x-kubernetes-preserve-unknown-fields: true
                    properties:
                      known: {type: integer}
    """
)


@pytest.fixture
def widgets(tmp_path: Path) -> CrdCatalog:
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "widgets.yaml").write_text(WIDGET_CRD, encoding="utf-8")
    (tmp_path / "not-a-crd.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n", encoding="utf-8")
    return CrdCatalog.load(tmp_path)


def widget(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.batchplane.dev/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": spec,
    }


def test_catalog_indexes_every_shared_crd(catalog: CrdCatalog) -> None:
    groups = Counter(group for group, _ in catalog.kinds())
    assert groups == {
        "kueue.x-k8s.io": 11,
        "ray.io": 4,
        "kubeflow.org": 1,
        "workload.codeflare.dev": 1,
        "cert-manager.io": 3,
        "autoscaling.openshift.io": 2,
        "autoscaling.x-k8s.io": 1,
        "datasciencecluster.opendatahub.io": 1,
        "dscinitialization.opendatahub.io": 1,
        "kueue.openshift.io": 1,
        "machine.openshift.io": 2,
        "nfd.openshift.io": 1,
        "nvidia.com": 1,
        "operators.coreos.com": 5,
        "monitoring.googleapis.com": 7,
        "monitoring.coreos.com": 3,
        "grafana.integreatly.org": 4,
    }


@pytest.mark.parametrize(
    ("api_version", "release"),
    [
        pytest.param(
            "datasciencecluster.opendatahub.io/v1", "v2.35.0", id="v1-from-the-release-that-stores-v1"
        ),
        pytest.param(
            "datasciencecluster.opendatahub.io/v2", "3.5.0", id="v2-from-the-newest-release-storing-v2"
        ),
    ],
)
def test_a_crd_shipped_by_several_releases_is_checked_against_the_release_storing_that_version(
    catalog: CrdCatalog, api_version: str, release: str
) -> None:
    crd = catalog.crd_for(api_version, "DataScienceCluster")
    assert (crd.source.parent.name, crd.storage) == (release, True)
    assert [
        path.parent.name
        for path in catalog.sources("datasciencecluster.opendatahub.io", "DataScienceCluster")
    ] == [
        "v2.35.0",
        "v3.0.0",
        "3.5.0",
    ]


def test_releases_in_sibling_directories_are_ordered_by_version_not_by_name(tmp_path: Path) -> None:
    extra_version = "  - name: v2\n    served: true\n    storage: false\n    schema:\n"
    extra_version += "      openAPIV3Schema: {type: object}\n"
    stores_v1, serves_both = (
        WIDGET_CRD,
        WIDGET_CRD.replace("  - name: v1\n", extra_version + "  - name: v1\n"),
    )
    assert serves_both != stores_v1
    for release, text in (("v1.10.0", stores_v1), ("v1.9.0", serves_both)):
        (tmp_path / release).mkdir()
        (tmp_path / release / "widgets.yaml").write_text(text, encoding="utf-8")
    catalog = CrdCatalog.load(tmp_path)
    assert catalog.crd_for("example.batchplane.dev/v1", "Widget").source.parent.name == "v1.10.0"
    assert catalog.crd_for("example.batchplane.dev/v2", "Widget").source.parent.name == "v1.9.0"
    with pytest.raises(KeyError, match=r"does not serve version 'v3' \(served: v1, v2\)"):
        catalog.crd_for("example.batchplane.dev/v3", "Widget")


def test_crd_for_describes_the_version(catalog: CrdCatalog) -> None:
    crd = catalog.crd_for(KUEUE, "ClusterQueue")
    assert (crd.plural, crd.scope, crd.storage, crd.namespaced) == ("clusterqueues", "Cluster", True, False)
    assert crd.source.name == "kueue.x-k8s.io_clusterqueues.yaml"
    assert catalog.crd_for("kueue.x-k8s.io/v1beta1", "ClusterQueue").storage is False


def test_unknown_kind_is_a_key_error_naming_the_known_kinds(catalog: CrdCatalog) -> None:
    with pytest.raises(KeyError) as info:
        catalog.crd_for(KUEUE, "ClusterQueues")
    assert info.value.args[0] == (
        "no CRD for kind 'ClusterQueues' in apiVersion 'kueue.x-k8s.io/v1beta2' "
        "(known kinds in kueue.x-k8s.io: "
        "AdmissionCheck, ClusterQueue, Cohort, LocalQueue, MultiKueueCluster, MultiKueueConfig, "
        "ProvisioningRequestConfig, ResourceFlavor, Topology, Workload, WorkloadPriorityClass)"
    )


def test_unknown_group_and_unserved_version_are_key_errors(catalog: CrdCatalog, widgets: CrdCatalog) -> None:
    with pytest.raises(
        KeyError, match=r"no CRD for kind 'Job' in apiVersion 'batch/v1' \(no CRD of group 'batch'\)"
    ):
        catalog.validate({"apiVersion": "batch/v1", "kind": "Job"})
    with pytest.raises(
        KeyError, match=r"CRD clusterqueues.kueue.x-k8s.io does not serve version 'v1' \(served: "
    ):
        catalog.crd_for("kueue.x-k8s.io/v1", "ClusterQueue")
    with pytest.raises(KeyError, match=r"does not serve version 'v1alpha1' \(served: v1\)"):
        widgets.crd_for("example.batchplane.dev/v1alpha1", "Widget")


def test_missing_directory_and_duplicate_definitions_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        CrdCatalog.load(tmp_path / "nope")
    (tmp_path / "a.yaml").write_text(WIDGET_CRD, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(WIDGET_CRD, encoding="utf-8")
    with pytest.raises(ValueError, match=r"^Widget.example.batchplane.dev is defined twice: "):
        CrdCatalog.load(tmp_path)


def test_multi_document_crd_bundle_is_indexed(tmp_path: Path) -> None:
    bundle = WIDGET_CRD + "---\n" + WIDGET_CRD.replace("Widget", "Gadget").replace("widgets", "gadgets")
    (tmp_path / "bundle.yaml").write_text(bundle, encoding="utf-8")
    catalog = CrdCatalog.load(tmp_path)
    assert catalog.kinds() == [("example.batchplane.dev", "Gadget"), ("example.batchplane.dev", "Widget")]


def test_kueue_crds_have_79_rules_and_cel_evaluates_all_of_them(catalog: CrdCatalog) -> None:
    kueue_kinds = [kind for group, kind in catalog.kinds() if group == "kueue.x-k8s.io"]
    count = sum(
        len(list(catalog.crd_for(f"kueue.x-k8s.io/{version}", kind).rules()))
        for kind in kueue_kinds
        for version in ("v1beta1", "v1beta2")
    )
    assert count == 79
    assert catalog.check_rules() == []


def test_rules_the_cel_library_cannot_evaluate_are_reported_not_passed(widgets: CrdCatalog) -> None:
    assert messages(widgets.validate(widget(legacy="x", broken="y"))) == [
        ("spec.legacy", "no implementation of fooBar in rule: self.fooBar()", "cel-unsupported"),
        (
            "spec.broken",
            "cannot compile: Failed to parse expression 'self +': ERROR: <input>:1:7: Syntax error: "
            "mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', "
            "NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n| self +\n| ......^ in rule: self +",
            "cel-unsupported",
        ),
    ]
    assert [i.path for i in widgets.check_rules()] == ["Widget.v1:spec.legacy", "Widget.v1:spec.broken"]


def test_kubernetes_quantity_functions_evaluate_in_a_crd_rule(widgets: CrdCatalog) -> None:
    assert widgets.validate(widget(size="512Gi")) == []
    assert widgets.validate(widget(size="2Ti")) == [SchemaIssue("spec", "size must be below 1Ti", "cel")]
    assert widgets.validate(widget(size="lots")) == [
        SchemaIssue(
            "spec",
            "quantities must match the regular expression: 'lots' is invalid "
            "evaluating rule: size must be below 1Ti",
            "cel",
        )
    ]


def test_transition_rule_on_a_list_map_item_compares_the_old_item_with_the_same_key(
    widgets: CrdCatalog,
) -> None:
    old = widget(ports=[{"name": "http", "port": 80}])
    new = widget(ports=[{"name": "metrics", "port": 9090}, {"name": "http", "port": 8080}])
    assert widgets.validate(new) == []
    assert widgets.validate(new, old=old) == [SchemaIssue("spec.ports[1]", "port is immutable", "cel")]


def test_nullable_and_preserve_unknown_fields_accept_what_the_api_server_accepts(widgets: CrdCatalog) -> None:
    assert widgets.validate(widget(note=None, extra={"known": 1, "anything": {"goes": True}})) == []
    assert messages(widgets.validate(widget(extra={"known": "one"}))) == [
        ("spec.extra.known", 'Invalid value: "one": must be of type integer', "schema"),
        (
            "",
            "some validation rules were not checked because the object was invalid; correct the existing "
            "errors to complete validation",
            "cel",
        ),
    ]


def test_crd_versions_validators_and_rules_are_built_once(catalog: CrdCatalog) -> None:
    crd = catalog.crd_for(KUEUE, "ClusterQueue")
    assert catalog.crd_for(KUEUE, "ClusterQueue") is crd
    assert crd.validator is crd.validator
    compile_rule.cache_clear()
    catalog.validate(cluster_queue())
    catalog.validate(cluster_queue())
    info = compile_rule.cache_info()
    assert (info.misses, info.hits) == (4, 4)  # the 4 ClusterQueue v1beta2 rules, compiled on first use only

"""The real program under the offline engine: installs, the readiness gate in the graph, OLM on OpenShift."""

from __future__ import annotations

import json

import pytest
import yaml

from batchplane.errors import ConfigValidationError
from batchplane.offline.model import ProgramRun, RecordedResource
from tests.conftest import template_path
from tests.operators.conftest import openshift_target, run_stack, with_operators

GATE = "pulumi-python:dynamic:Resource"
RELEASE = "kubernetes:helm.sh/v3:Release"


def kueue_objects(run: ProgramRun) -> list[RecordedResource]:
    return [r for r in run.resources if r.type.startswith("kubernetes:kueue.x-k8s.io/")]


def test_kind_template_installs_pinned_operators(kind_run: ProgramRun) -> None:
    releases = {
        r.name: (r.inputs["chart"], r.inputs["version"], r.inputs["namespace"], r.inputs["name"])
        for r in kind_run.of_type(RELEASE)
    }
    assert releases == {
        "operators-cert-manager-release": (
            "oci://quay.io/jetstack/charts/cert-manager",
            "v1.21.1",
            "cert-manager",
            "cert-manager",
        ),
        "operators-kuberay-release": ("kuberay-operator", "1.7.0", "kuberay-system", "kuberay-operator"),
        "operators-kueue-release": (
            "oci://registry.k8s.io/kueue/charts/kueue",
            "0.19.2",
            "kueue-system",
            "kueue",
        ),
    }
    assert kind_run.get(RELEASE, "operators-cert-manager-release").inputs["values"] == {
        "crds": {"enabled": True}
    }
    kuberay = kind_run.get(RELEASE, "operators-kuberay-release").inputs
    assert (kuberay["repositoryOpts"], kuberay["skipCrds"]) == (
        {"repo": "https://ray-project.github.io/kuberay-helm/"},
        True,
    )
    dirs = {r.name: r.inputs["directory"] for r in kind_run.of_type("kubernetes:kustomize/v2:Directory")}
    assert dirs == {
        "operators-kuberay-crds": "https://github.com/ray-project/kuberay//ray-operator/config/crd?ref=v1.7.0",
        "operators-training-operator": "https://github.com/kubeflow/trainer//manifests/overlays/standalone?ref=v1.9.4",
    }


def test_kind_template_configures_kueue_with_the_derived_frameworks(kind_run: ProgramRun) -> None:
    values = kind_run.get(RELEASE, "operators-kueue-release").inputs["values"]
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config["integrations"]["frameworks"] == [
        "batch/job",
        "ray.io/rayjob",
        "ray.io/rayservice",
        "ray.io/raycluster",
        "kubeflow.org/pytorchjob",
    ]
    assert config["managedJobsNamespaceSelector"] == {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team-a"]}]
    }
    assert config["waitForPodsReady"] == {"timeout": "5m"}
    assert values["enableCertManager"] is True


def test_kind_template_orders_installs_and_gates_every_kueue_object(kind_run: ProgramRun) -> None:
    urn = {r.name: r.urn for r in kind_run.resources}
    release = kind_run.get(RELEASE, "operators-kueue-release")
    assert {
        urn["operators-cert-manager-release"],
        urn["operators-kuberay-release"],
        urn["operators-kuberay-crds"],
        urn["operators-training-operator"],
    } <= set(release.dependencies)
    assert urn["operators-kuberay-crds"] in kind_run.get(RELEASE, "operators-kuberay-release").dependencies
    gate = kind_run.get(GATE, "operators-kueue-ready")
    assert gate.dependencies == [release.urn]
    assert gate.inputs == {
        "__provider": gate.inputs["__provider"],
        "context": "kind-batchplane",
        "gate": "kueue-webhook",
        "intervalSeconds": 5,
        "namespace": "kueue-system",
        "resourceFlavorApiVersion": "kueue.x-k8s.io/v1beta2",
        "service": "kueue-webhook-service",
        "timeoutSeconds": 600,
        "version": "0.19.2",
    }
    objects = kueue_objects(kind_run)
    assert [o.name for o in objects] == [
        "kueue-resourceflavor-default-flavor",
        "kueue-clusterqueue-cluster-queue",
        "kueue-localqueue-team-a-default",
    ]
    assert all(gate.urn in o.dependencies for o in objects)
    assert (
        urn["kueue-clusterqueue-cluster-queue"]
        in kind_run.get(
            "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "kueue-localqueue-team-a-default"
        ).dependencies
    )


def test_gate_serialises_its_provider_as_a_secret(kind_run: ProgramRun) -> None:
    shown = kind_run.get(GATE, "operators-kueue-ready").to_json()
    assert shown["inputs"]["__provider"] == "[secret]"
    json.dumps(shown)


def test_openshift_template_installs_through_olm_with_csv_gates_and_no_helm(
    openshift_run: ProgramRun,
) -> None:
    assert openshift_run.of_type(RELEASE) == []
    assert not [
        r
        for r in openshift_run.resources
        if r.type.startswith(("kubernetes:helm.sh", "kubernetes:kustomize"))
    ]
    subs = openshift_run.of_type("kubernetes:operators.coreos.com/v1alpha1:Subscription")
    assert [(s.name, s.inputs["spec"]["name"], s.inputs["spec"]["channel"]) for s in subs] == [
        ("olm-cert-manager-subscription", "openshift-cert-manager-operator", "stable-v1"),
        ("olm-kueue-subscription", "kueue-operator", "stable-v1.4"),
        ("olm-jobset-operator-subscription", "job-set", "stable-v1.0"),
        ("olm-openshift-ai-subscription", "rhods-operator", "stable-3.x"),
    ]
    gates = {g.name: g for g in openshift_run.of_type(GATE)}
    assert sorted(gates) == [
        "olm-cert-manager-csv-ready",
        "olm-cert-manager-olm-lookup",
        "olm-jobset-operator-csv-ready",
        "olm-jobset-operator-olm-lookup",
        "olm-kueue-csv-ready",
        "olm-kueue-olm-lookup",
        "olm-kueue-ready",
        "olm-openshift-ai-csv-ready",
        "olm-openshift-ai-olm-lookup",
        "webhook-image-pusher-token-ready",
        "webhook-image-registry-route",
    ]
    for sub in subs:
        gate = gates[sub.name.replace("-subscription", "-csv-ready")]
        lookup = gates[sub.name.replace("-subscription", "-olm-lookup")]
        assert sorted(gate.dependencies) == sorted([sub.urn, lookup.urn])
        assert (gate.inputs["gate"], gate.inputs["subscription"]) == ("olm-csv", sub.inputs["spec"]["name"])
    # each operator waits for the previous one's CSV
    assert gates["olm-cert-manager-csv-ready"].urn in subs[1].dependencies
    assert gates["olm-kueue-csv-ready"].urn in subs[2].dependencies
    dsc = openshift_run.get("kubernetes:datasciencecluster.opendatahub.io/v2:DataScienceCluster", "olm-dsc")
    assert {gates["olm-openshift-ai-csv-ready"].urn, gates["olm-kueue-csv-ready"].urn} <= set(
        dsc.dependencies
    )
    # OpenShift AI 3.5+ creates no default queues around the stack's quotas (#29)
    assert dsc.inputs["spec"]["components"]["kueue"] == {
        "managementState": "Unmanaged",
        "autoCreateQueues": False,
    }
    assert not openshift_run.of_type("kubernetes:kueue.openshift.io/v1:Kueue")  # RHOAI 3.x owns it


def test_openshift_kueue_objects_wait_for_the_webhook_and_use_the_upserting_provider(
    openshift_run: ProgramRun,
) -> None:
    webhook_gate = openshift_run.get(GATE, "olm-kueue-ready")
    assert webhook_gate.inputs.get("service") is None  # OpenShift: dry-run check only
    provider = openshift_run.get("pulumi:providers:kubernetes", "k8s")
    assert provider.inputs["upsertExistingObjects"] in (True, "true")
    for obj in kueue_objects(openshift_run):
        assert webhook_gate.urn in obj.dependencies
        assert obj.provider_urn == provider.urn
    ns = openshift_run.get("kubernetes:core/v1:Namespace", "kueue-namespace-team-a")
    assert ns.inputs["metadata"]["labels"]["kueue.openshift.io/managed"] == "true"


def test_openshift_2x_declares_the_kueue_cr_before_the_data_science_cluster() -> None:
    run = run_stack("openshift-2x", with_operators(None, openshift_target(openshiftAi={"release": "2.x"})))
    cr = run.get("kubernetes:kueue.openshift.io/v1:Kueue", "olm-kueue-cr")
    dsc = run.get("kubernetes:datasciencecluster.opendatahub.io/v1:DataScienceCluster", "olm-dsc")
    assert cr.urn in dsc.dependencies
    assert run.get(GATE, "olm-kueue-csv-ready").urn in cr.dependencies


def test_appwrapper_and_trainer_v2_install_after_the_right_steps() -> None:
    run = run_stack(
        "trainer", with_operators({"training": {"kind": "trainer-v2"}, "appwrapper": {"enabled": True}})
    )
    trainer = run.get(RELEASE, "operators-trainer-release")
    assert (trainer.inputs["chart"], trainer.inputs["version"], trainer.inputs["values"]) == (
        "oci://ghcr.io/kubeflow/charts/kubeflow-trainer",
        "2.3.0",
        {"jobset": {"install": True}},
    )
    assert trainer.urn in run.get(RELEASE, "operators-kueue-release").dependencies
    appwrapper = run.get("kubernetes:yaml/v2:ConfigFile", "operators-appwrapper")
    assert (
        appwrapper.inputs["file"]
        == "https://github.com/project-codeflare/appwrapper/releases/download/v1.2.1/install.yaml"
    )
    assert run.get(GATE, "operators-kueue-ready").urn in appwrapper.dependencies


def test_stack_without_operators_declares_no_installs_and_no_gate() -> None:
    run = run_stack("bare", with_operators(None))
    assert run.of_type(GATE) == [] and run.of_type(RELEASE) == []
    assert all(not any("operators" in d for d in o.dependencies) for o in kueue_objects(run))


def test_rejected_combination_registers_nothing() -> None:
    with pytest.raises(ConfigValidationError) as caught:
        run_stack("bad", with_operators({"kuberay": {"gkeRayAddon": True}}))
    assert [i.path for i in caught.value.errors] == ["batchplane:operators.kuberay.gkeRayAddon"] * 2


def test_gke_stack_gates_through_the_generated_kubeconfig_and_tolerates_system_nodes() -> None:
    from batchplane.offline.stackfile import read_stack_file

    cfg = read_stack_file(template_path("gke-prod-dws"))
    cfg["batchplane:operators"] = {"kuberay": {"enabled": False, "gkeRayAddon": True}}
    run = run_stack("gke-prod-dws", cfg)
    gate = run.get(GATE, "operators-kueue-ready")
    assert "context" not in gate.inputs
    assert gate.to_json()["inputs"]["kubeconfig"] == "[secret]"
    assert ("kubeconfig",) in gate.secret_paths or () in gate.secret_paths
    values = run.get(RELEASE, "operators-kueue-release").inputs["values"]
    assert values["controllerManager"]["tolerations"] == [
        {
            "key": "components.gke.io/gke-managed-components",
            "operator": "Equal",
            "value": "true",
            "effect": "NoSchedule",
        }
    ]
    assert [r.name for r in run.of_type(RELEASE)] == [
        "operators-cert-manager-release",
        "operators-kueue-release",
    ]


def test_openshift_operator_groups_and_subscriptions_are_named_by_the_namespace_lookup_which_runs_first(
    openshift_run: ProgramRun,
) -> None:
    """Offline the lookup answers with the stack's own names and says so; nothing is refused."""
    lookups = {g.name: g for g in openshift_run.of_type(GATE) if g.inputs["gate"] == "olm-namespace"}
    for role, group, package in (
        ("cert-manager", "openshift-cert-manager-operator", "openshift-cert-manager-operator"),
        ("kueue", "openshift-kueue-operator", "kueue-operator"),
        ("jobset-operator", "openshift-jobset-operator", "job-set"),
        ("openshift-ai", "rhods-operator", "rhods-operator"),
    ):
        lookup = lookups[f"olm-{role}-olm-lookup"]
        assert (lookup.inputs["stackOperatorGroup"], lookup.inputs["package"], lookup.inputs["adopt"]) == (
            group,
            package,
            False,
        )
        ns = openshift_run.get("kubernetes:core/v1:Namespace", f"olm-{role}-namespace")
        og = openshift_run.get(
            "kubernetes:operators.coreos.com/v1:OperatorGroup", f"olm-{role}-operatorgroup"
        )
        sub = openshift_run.get(
            "kubernetes:operators.coreos.com/v1alpha1:Subscription", f"olm-{role}-subscription"
        )
        assert (
            lookup.urn in ns.dependencies and lookup.urn in og.dependencies and lookup.urn in sub.dependencies
        )
        assert (og.inputs["metadata"]["name"], sub.inputs["metadata"]["name"]) == (group, package)
    notes = [m.message for m in openshift_run.logs if "not checked offline" in m.message]
    assert len(notes) == 4 and all("run batchplane preflight" in n for n in notes)
    assert not [m for m in openshift_run.logs if m.severity == "error"]


def test_kind_template_migrates_kueue_storage_after_the_webhook_serves_and_again_on_each_kueue_version(
    kind_run: ProgramRun,
) -> None:
    gate = kind_run.get(GATE, "operators-kueue-ready")
    migration = kind_run.get(GATE, "operators-kueue-storage-migration")
    assert migration.dependencies == [gate.urn]
    assert migration.inputs == {
        "__provider": migration.inputs["__provider"],
        "context": "kind-batchplane",
        "gate": "kueue-storage-migration",
        "intervalSeconds": 5,
        "namespace": "kueue-system",
        "timeoutSeconds": 1800,
        "version": "0.19.2",
    }


def test_kind_template_checks_kueue_s_stored_versions_before_the_kueue_release(kind_run: ProgramRun) -> None:
    check = kind_run.get(GATE, "operators-kueue-stored-versions")
    assert check.urn in kind_run.get(RELEASE, "operators-kueue-release").dependencies
    assert (check.inputs["gate"], check.inputs["version"]) == ("kueue-stored-versions", "0.19.2")

"""OpenShift preflight: the kubeconfig context and OLM's catalog, through the real kubernetes client against a local
server on 127.0.0.1 that answers from recorded ``PackageManifest`` lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from batchplane.preflight import Environment, Report, preflight
from batchplane.preflight.requirements import KubeContext, OlmPackage
from batchplane.stack import Stack
from tests.preflight.conftest import template, template_with
from tests.preflight.olm_helpers import kubeconfig
from tests.preflight.replay import RecordedServer, load


def check(
    stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *recordings: str
) -> tuple[Report, list[str]]:
    with RecordedServer(
        load(*recordings, "openshift/registry-route.json", "openshift/user-workload-monitoring.json")
    ) as server:
        context = stack.config.target.kube_context()
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path, server.url, context)))
        report = preflight(stack, Environment(check_images=False))
        return report, server.replay.requests


def test_a_catalog_with_every_package_and_channel_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, requests = check(template("openshift-ai-gpu"), tmp_path, monkeypatch, "olm/catalog.json")
    assert report.findings == []
    assert report.checked == ["kube-context", "olm", "registry-route", "monitoring"]
    # one list per CatalogSource, selected by its catalog label
    assert sorted(r.split("?")[1] for r in requests if "packagemanifests" in r) == [
        "labelSelector=catalog%3Dcertified-operators",
        "labelSelector=catalog%3Dredhat-operators",
    ]


def test_a_package_missing_from_the_catalog_and_a_channel_it_lacks_are_blockers_with_key_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, _ = check(template("openshift-ai"), tmp_path, monkeypatch, "olm/mirrored-catalog.json")
    found = {(f.check, f.path) for f in report.blockers}
    assert found == {
        ("olm", "batchplane:target.openshiftAi.source"),
        ("olm", "batchplane:target.kueue.channel"),
    }
    channel = next(f for f in report.blockers if f.path.endswith(".channel"))
    assert "no channel stable-v1.4 (channels: stable-v1.3; default stable-v1.3)" in channel.message
    assert report.exit_code == 1


def test_a_starting_csv_not_in_the_channel_is_a_blocker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = template("openshift-ai")
    target = stack.config.target
    kueue = target.kueue.model_copy(update={"starting_csv": "kueue-operator.v1.5.0"})  # type: ignore[union-attr]
    pinned = Stack(
        stack.name,
        stack.config.model_copy(update={"target": target.model_copy(update={"kueue": kueue})}),
        stack.kueue,
    )
    report, _ = check(pinned, tmp_path, monkeypatch, "olm/catalog.json")
    [finding] = report.blockers
    assert finding.path == "batchplane:target.kueue.startingCsv"
    assert "head: kueue-operator.v1.4.0" in finding.message


def test_a_registry_not_exposed_is_a_blocker_naming_the_oc_patch_fix_when_the_stack_pushes_through_its_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, requests = check(
        template("openshift-ai"),
        tmp_path,
        monkeypatch,
        "openshift/no-registry-route.json",
        "olm/catalog.json",
    )
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("registry-route", "batchplane:webhook.build.registryHost")
    assert "Route openshift-image-registry/default-route has no host" in finding.message
    assert finding.fix.startswith(
        "oc patch configs.imageregistry.operator.openshift.io/cluster --type merge "
        """-p '{"spec":{"defaultRoute":true}}'"""
    )
    assert any(r.endswith("/namespaces/openshift-image-registry/routes/default-route") for r in requests)


def test_a_registry_host_given_in_the_config_needs_no_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = template_with(
        "openshift-ai", build={"registry": "openshift", "registryHost": "registry.example.com"}
    )
    report, requests = check(
        stack, tmp_path, monkeypatch, "openshift/no-registry-route.json", "olm/catalog.json"
    )
    assert report.findings == []
    assert not any("routes" in r for r in requests)


def test_a_cluster_without_olm_is_a_blocker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report, _ = check(template("openshift-ai"), tmp_path, monkeypatch, "olm/no-olm.json")
    [finding] = report.blockers
    assert "OLM is not installed" in finding.message


def test_a_context_missing_from_the_kubeconfig_is_a_blocker_and_nothing_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with RecordedServer(load("olm/catalog.json")) as server:
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path, server.url, "some-other-cluster")))
        report = preflight(template("openshift-ai"), Environment(check_images=False))
        assert server.replay.requests == []
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("kube-context", "batchplane:target.context")
    assert 'no context "openshift-ai"' in finding.message and "some-other-cluster" in finding.message


def test_a_missing_kubeconfig_file_is_a_blocker(tmp_path: Path) -> None:
    from batchplane.preflight.olm import kube_client

    report = Report("s")
    assert (
        kube_client(KubeContext("ctx", str(tmp_path / "absent"), "batchplane:target.context"), report) is None
    )
    assert [f.check for f in report.blockers] == ["kube-context"]


def test_packages_of_one_catalog_are_listed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from batchplane.preflight.olm import check_olm, kube_client

    packages = [
        OlmPackage("kueue-operator", "stable-v1.4", "redhat-operators", "openshift-marketplace", None, "a"),
        OlmPackage("nfd", "stable", "redhat-operators", "openshift-marketplace", None, "b"),
        OlmPackage("nfd", "alpha", "redhat-operators", "openshift-marketplace", None, "c"),
    ]
    with RecordedServer(load("olm/catalog.json")) as server:
        path = kubeconfig(tmp_path, server.url, "ctx")
        report = Report("s")
        client = kube_client(KubeContext("ctx", str(path), "x"), report)
        check_olm(packages, client, report)
        assert len(server.replay.requests) == 1
    assert [(f.path, f.check) for f in report.blockers] == [("c.channel", "olm")]


def test_without_channel_entries_a_starting_csv_other_than_the_head_is_only_a_warning(tmp_path: Path) -> None:
    from batchplane.preflight.olm import check_olm, kube_client

    exchanges = load("olm/catalog.json")
    for item in exchanges[0]["body"]["items"]:
        for channel in item["status"]["channels"]:
            del channel["entries"]  # an older package server: name, currentCSV and currentCSVDesc only
    packages = [
        OlmPackage(
            "kueue-operator",
            "stable-v1.3",
            "redhat-operators",
            "openshift-marketplace",
            "kueue-operator.v1.3.0",
            "a",
        ),
        OlmPackage(
            "kueue-operator",
            "stable-v1.3",
            "redhat-operators",
            "openshift-marketplace",
            "kueue-operator.v1.3.1",
            "b",
        ),
    ]
    with RecordedServer(exchanges) as server:
        report = Report("s")
        client = kube_client(KubeContext("ctx", str(kubeconfig(tmp_path, server.url, "ctx")), "x"), report)
        check_olm(packages, client, report)
    assert report.blockers == []
    assert [(w.path, w.check) for w in report.warnings] == [("a.startingCsv", "olm")]

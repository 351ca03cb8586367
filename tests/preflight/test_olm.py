"""OpenShift preflight: the kubeconfig context and OLM's catalog, through the real kubernetes client against a local
server on 127.0.0.1 that answers from recorded ``PackageManifest`` lists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from batchplane.preflight import Environment, Report, preflight
from batchplane.preflight.kube import KubeContext
from batchplane.stack import Stack
from batchplane.targets.openshift.requirements import OlmPackage
from tests.preflight.conftest import template, template_with
from tests.preflight.olm_helpers import CLUSTER_DEFAULTS, kubeconfig
from tests.preflight.replay import RecordedServer, load


def check(
    stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *recordings: str
) -> tuple[Report, list[str]]:
    with RecordedServer(load(*recordings, *CLUSTER_DEFAULTS)) as server:
        context = stack.config.target.kube_context()
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path, server.url, context)))
        report = preflight(stack, Environment(check_images=False))
        return report, server.replay.requests


def test_a_catalog_with_every_package_and_channel_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, requests = check(template("openshift-ai-gpu"), tmp_path, monkeypatch, "olm/catalog.json")
    assert report.findings == []
    assert report.checked == [
        "docker",
        "kube-context",
        "olm",
        "olm-namespace",
        "machineset",
        "registry-route",
        "feature-gate",
        "kueue-api",
        "kueue-cr",
        "monitoring",
    ]
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
        ("olm", "batchplane:target.openshiftAi.jobSetOperator.source"),
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
    from batchplane.preflight.kube import kube_client

    report = Report("s")
    assert (
        kube_client(KubeContext("ctx", str(tmp_path / "absent"), "batchplane:target.context"), report) is None
    )
    assert [f.check for f in report.blockers] == ["kube-context"]


def test_packages_of_one_catalog_are_listed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from batchplane.preflight.kube import kube_client
    from batchplane.targets.openshift.preflight import check_olm

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
    from batchplane.preflight.kube import kube_client
    from batchplane.targets.openshift.preflight import check_olm

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


# --- #29: what the deploy-time lookups will find (OperatorGroups, Subscriptions, the MachineSet to copy) ------------


def test_operators_installed_from_the_console_are_reported_before_anything_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RHOAI on stable-2.25 (the stack says stable-3.x) is refused; the console's OperatorGroup of RHBoK is reused;
    two OperatorGroups in cert-manager's namespace already break OLM there."""
    report, requests = check(
        template("openshift-ai"),
        tmp_path,
        monkeypatch,
        "openshift/console-installed.json",
        "olm/catalog.json",
    )
    found = {(f.check, f.path): f for f in report.blockers}
    assert set(found) == {
        ("olm-namespace", "batchplane:target.openshiftAi.channel"),
        ("olm-namespace", "batchplane:target.certManager"),
    }
    rhoai = found[("olm-namespace", "batchplane:target.openshiftAi.channel")]
    assert (
        "Subscription redhat-ods-operator/rhods-operator exists with channel stable-2.25, not the stack's stable-3.x"
        in (rhoai.message)
    )
    assert "adopt: true" in rhoai.fix
    assert "TooManyOperatorGroups" in found[("olm-namespace", "batchplane:target.certManager")].message
    notes = [n.message for n in report.notes if n.path == "batchplane:target.kueue"]
    assert notes == [
        "OperatorGroup openshift-kueue-operator/openshift-kueue-operator-4hq9m exists: reused (no second group is "
        "created)",
        "Subscription openshift-kueue-operator/kueue-operator exists with the stack's package and channel: adopted",
    ]
    assert not [r for r in requests if r.startswith(("POST", "PATCH", "PUT", "DELETE"))]


def test_adopt_true_turns_the_channel_refusal_into_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = template("openshift-ai")
    target = stack.config.target
    ai = target.openshift_ai.model_copy(update={"adopt": True})  # type: ignore[union-attr]
    adopted = Stack(
        stack.name,
        stack.config.model_copy(update={"target": target.model_copy(update={"openshift_ai": ai})}),
        stack.kueue,
    )
    report, _ = check(adopted, tmp_path, monkeypatch, "openshift/console-installed.json", "olm/catalog.json")
    assert [f.path for f in report.blockers] == ["batchplane:target.certManager"]
    assert any("adopted (adopt: true), pulumi up moves it to" in n.message for n in report.notes)


def test_preflight_names_the_worker_machine_set_each_gpu_pool_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, requests = check(template("openshift-ai-gpu"), tmp_path, monkeypatch, "olm/catalog.json")
    assert report.findings == []
    [note] = [n for n in report.notes if n.check == "machineset"]
    assert note.path == "batchplane:target.gpuPools[0].aws"
    assert note.message.startswith(
        'GPU pool "a10g" copies MachineSet openshift-machine-api/ocp-ai-7x2kq-worker-us-east-1a (subnet '
        "ocp-ai-7x2kq-subnet-private-us-east-1a, security groups ocp-ai-7x2kq-node, ocp-ai-7x2kq-lb, AMI "
        "ami-0c3b1a2f9e8d7c6b5)"
    )
    assert any(r.endswith("/namespaces/openshift-machine-api/machinesets") for r in requests)


def test_a_gpu_pool_in_a_zone_without_workers_is_a_blocker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, _ = check(
        template("openshift-ai-gpu"),
        tmp_path,
        monkeypatch,
        "openshift/workers-elsewhere.json",
        "olm/catalog.json",
    )
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("machineset", "batchplane:target.gpuPools[0].aws.zone")
    assert "no worker MachineSet in zone us-east-1a" in finding.message
    assert "ocp-ai-7x2kq-worker-us-east-1b" in finding.message


def _with_cert_manager(**settings: Any) -> Stack:
    stack = template("openshift-ai")
    target = stack.config.target
    cm = target.cert_manager.model_copy(update=settings)  # type: ignore[union-attr]
    return Stack(
        stack.name,
        stack.config.model_copy(update={"target": target.model_copy(update={"cert_manager": cm})}),
        stack.kueue,
    )


def _installed_cert_manager(csv: str) -> list[dict[str, Any]]:
    """The cert-manager namespace with the operator at ``csv`` (Subscription status as OLM reports it)."""
    return [
        {
            "method": "GET",
            "host": "*",
            "path": "/apis/operators.coreos.com/v1alpha1/namespaces/cert-manager-operator/subscriptions",
            "status": 200,
            "body": {
                "apiVersion": "operators.coreos.com/v1alpha1",
                "kind": "SubscriptionList",
                "items": [
                    {
                        "metadata": {
                            "name": "openshift-cert-manager-operator",
                            "namespace": "cert-manager-operator",
                        },
                        "spec": {"name": "openshift-cert-manager-operator", "channel": "stable-v1"},
                        "status": {"installedCSV": csv, "state": "AtLatestKnown"},
                    }
                ],
            },
        }
    ]


def check_with(
    stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: dict[str, Any]
) -> Report:
    exchanges = [
        *extra,
        *load(
            "olm/catalog.json", "openshift/registry-route.json", "openshift/fresh-operator-namespaces.json"
        ),
    ]
    with RecordedServer(exchanges) as server:
        monkeypatch.setenv(
            "KUBECONFIG", str(kubeconfig(tmp_path, server.url, stack.config.target.kube_context()))
        )
        return preflight(stack, Environment(check_images=False))


def test_a_target_csv_missing_from_the_channel_is_a_blocker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = _with_cert_manager(approval="Manual", target_csv="cert-manager-operator.v1.19.0")
    [finding] = check_with(stack, tmp_path, monkeypatch).blockers
    assert (finding.check, finding.path) == ("olm", "batchplane:target.certManager.targetCsv")
    assert (
        "channel stable-v1 of openshift-cert-manager-operator has no CSV cert-manager-operator.v1.19.0"
        in (finding.message)
    )


def test_a_target_older_than_the_installed_operator_is_a_blocker_and_an_upgrade_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = _with_cert_manager(approval="Manual", target_csv="cert-manager-operator.v1.17.0")
    report = check_with(
        older, tmp_path, monkeypatch, *_installed_cert_manager("cert-manager-operator.v1.18.0")
    )
    [finding] = report.blockers
    assert (
        "newer than the target cert-manager-operator.v1.17.0 (1.17.0): OLM never downgrades"
        in finding.message
    )
    newer = _with_cert_manager(approval="Manual", target_csv="cert-manager-operator.v1.18.0")
    report = check_with(
        newer, tmp_path, monkeypatch, *_installed_cert_manager("cert-manager-operator.v1.17.0")
    )
    assert report.blockers == []
    assert [n.message for n in report.notes if n.path.endswith("targetCsv")] == [
        "cert-manager-operator.v1.17.0 is installed: the CSV gate approves the channel's InstallPlans on the way to "
        "cert-manager-operator.v1.18.0 one at a time (cert-manager-operator.v1.18.0)"
    ]


def _catalog_with_skip_range(skip_range: str) -> dict[str, Any]:
    """The recorded redhat-operators catalog whose cert-manager stable-v1 head (v1.18.0) carries ``olm.skipRange``
    in ``currentCSVDesc.annotations`` and whose channel also lists v1.16.0."""
    import copy

    [exchange] = [
        e for e in load("olm/catalog.json") if e["query"] == {"labelSelector": "catalog=redhat-operators"}
    ]
    exchange = copy.deepcopy(exchange)
    items = exchange["body"]["items"]
    [channel] = [
        c
        for item in items
        if item["metadata"]["name"] == "openshift-cert-manager-operator"
        for c in item["status"]["channels"]
        if c["name"] == "stable-v1"
    ]
    channel["currentCSVDesc"]["annotations"] = {"olm.skipRange": skip_range}
    channel["entries"].append({"name": "cert-manager-operator.v1.16.0", "version": "1.16.0"})
    return exchange


def test_a_target_below_a_head_whose_skip_range_covers_the_installed_csv_is_a_blocker_naming_the_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OLM proposes only the head v1.18.0 (its skipRange includes the installed v1.16.0), never the target v1.17.0."""
    stack = _with_cert_manager(approval="Manual", target_csv="cert-manager-operator.v1.17.0")
    report = check_with(
        stack,
        tmp_path,
        monkeypatch,
        _catalog_with_skip_range(">=1.16.0 <1.18.0"),
        *_installed_cert_manager("cert-manager-operator.v1.16.0"),
    )
    [finding] = report.blockers
    assert finding.path == "batchplane:target.certManager.targetCsv"
    assert "olm.skipRange '>=1.16.0 <1.18.0', which includes the installed" in finding.message
    assert finding.fix.startswith("set targetCsv to cert-manager-operator.v1.18.0")
    narrow = check_with(
        stack,
        tmp_path,
        monkeypatch,
        _catalog_with_skip_range(">=1.17.0 <1.18.0"),
        *_installed_cert_manager("cert-manager-operator.v1.16.0"),
    )
    assert narrow.blockers == []

"""run_program: the fixture programs run under the mock engine, recorded as the CLI would see them."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from batchplane.errors import BatchplaneError, ConfigLoadError, ConfigValidationError
from batchplane.offline import UNKNOWN, read_stack_file, run_program
from batchplane.offline._runtime import plain
from batchplane.offline.mocks import CLUSTER_CA, CLUSTER_ENDPOINT, GKE_VERSION
from batchplane.offline.model import LogMessage
from batchplane.stack.files import SECRET_PLACEHOLDER
from tests.offline.conftest import FIXTURES, RunFixture, run_fixture, stack_urn, top_urn

P = "platform-fixture"
CQ = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
LQ = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
NS = "kubernetes:core/v1:Namespace"
PROVIDER = "pulumi:providers:kubernetes"
COMPONENT = "fixture:index:Queues"
PROVIDER_URN = top_urn(P, "dev", PROVIDER, "k8s")
NS_URN = top_urn(P, "dev", NS, "team-ns")
COMPONENT_URN = top_urn(P, "dev", COMPONENT, "queues")
FLAVOR_URN = f"urn:pulumi:dev::{P}::{COMPONENT}${FLAVOR}::queues-flavor"
CQ_URN = f"urn:pulumi:dev::{P}::{COMPONENT}${CQ}::queues-cq"


def test_resources_are_recorded_in_declaration_order(cached_run: RunFixture) -> None:
    run = cached_run("platform", "dev")
    assert [r.name for r in run.resources] == [
        "k8s", "team-ns", "queues", "queues-flavor", "queues-cq", "team-lq", "web", "token", "ns-phase", "kueue",
    ]  # fmt: skip


def test_top_level_resources_have_the_stack_as_parent(cached_run: RunFixture) -> None:
    run = cached_run("platform", "dev")
    assert run.stack_urn == stack_urn(P, "dev")
    assert [r.name for r in run.children(run.stack_urn)] == [
        "k8s", "team-ns", "queues", "team-lq", "web", "token", "ns-phase", "kueue",
    ]  # fmt: skip


def test_component_children_have_the_component_as_parent_and_its_type_in_their_urn(
    cached_run: RunFixture,
) -> None:
    run = cached_run("platform", "dev")
    assert run.get(COMPONENT, "queues").urn == COMPONENT_URN
    assert [(r.urn, r.parent) for r in run.children(COMPONENT_URN)] == [
        (FLAVOR_URN, COMPONENT_URN),
        (CQ_URN, COMPONENT_URN),
    ]


def test_depends_on_a_sibling_and_using_its_output_are_dependencies(cached_run: RunFixture) -> None:
    cq = cached_run("platform", "dev").get(CQ, "queues-cq")
    assert cq.dependencies == [FLAVOR_URN]
    assert cq.property_dependencies["spec"] == [FLAVOR_URN]
    assert cq.property_dependencies["kind"] == []


def test_depends_on_a_component_expands_to_its_children(cached_run: RunFixture) -> None:
    lq = cached_run("platform", "dev").get(LQ, "team-lq")
    assert lq.dependencies == sorted([CQ_URN, FLAVOR_URN, NS_URN])
    assert COMPONENT_URN not in lq.dependencies
    assert lq.property_dependencies["metadata"] == [NS_URN]


def test_explicit_provider_is_wired_as_urn_and_id(cached_run: RunFixture) -> None:
    run = cached_run("platform", "dev")
    ns = run.get(NS, "team-ns")
    assert ns.provider == f"{PROVIDER_URN}::k8s-id"
    assert (ns.provider_urn, ns.provider_id) == (PROVIDER_URN, "k8s-id")
    assert run.get(PROVIDER, "k8s").provider is None


def test_providers_option_of_a_component_reaches_its_children(cached_run: RunFixture) -> None:
    run = cached_run("platform", "dev")
    assert run.get(FLAVOR, "queues-flavor").provider == f"{PROVIDER_URN}::k8s-id"
    assert run.get(COMPONENT, "queues").custom is False
    assert run.get(FLAVOR, "queues-flavor").custom is True


def test_inputs_use_the_camel_case_wire_names(cached_run: RunFixture) -> None:
    run = cached_run("platform", "dev")
    secret = run.get("kubernetes:core/v1:Secret", "token")
    assert sorted(secret.inputs) == ["apiVersion", "kind", "metadata", "stringData"]
    pod_spec = run.get("kubernetes:apps/v1:Deployment", "web").inputs["spec"]["template"]["spec"]
    assert pod_spec["containers"][0]["ports"] == [{"containerPort": 80}]


@pytest.mark.parametrize(
    ("path", "want"),
    [
        (("kubernetes:apps/v1:Deployment", "web", "spec", "replicas"), 2),
        ((CQ, "queues-cq", "spec", "resourceGroups", 0, "flavors", 0, "resources", 0, "nominalQuota"), 8),
    ],
    ids=["deployment-replicas", "clusterqueue-quota"],
)
def test_integral_numbers_come_back_as_ints(cached_run: RunFixture, path: tuple[Any, ...], want: int) -> None:
    value: Any = cached_run("platform", "dev").get(path[0], path[1]).inputs
    for part in path[2:]:
        value = value[part]
    assert (value, type(value)) == (want, int)


@pytest.mark.parametrize(
    ("value", "want"),
    [(2.0, 2), (1.5, 1.5), (True, True), ([1.0, {"a": 3.0}], [1, {"a": 3}]), ("2.0", "2.0")],
    ids=["integral-float", "fraction", "bool", "nested", "string"],
)
def test_plain_turns_integral_floats_into_ints(value: Any, want: Any) -> None:
    got = plain(value, (), [])
    assert got == want
    assert repr(got) == repr(want)


def test_secret_inputs_are_plain_in_inputs_and_masked_in_json(cached_run: RunFixture) -> None:
    secret = cached_run("platform", "dev").get("kubernetes:core/v1:Secret", "token")
    assert secret.inputs["stringData"] == {"token": SECRET_PLACEHOLDER}
    assert secret.secret_paths == (("stringData",),)
    assert secret.to_json()["inputs"]["stringData"] == "[secret]"
    assert secret.to_json(show_secrets=True)["inputs"]["stringData"] == {"token": SECRET_PLACEHOLDER}


def test_stack_outputs_are_captured_with_secrets_masked_in_json(cached_run: RunFixture) -> None:
    run = cached_run("platform", "dev")
    assert run.outputs == {"gpus": 8, "namespace": "team", "token": SECRET_PLACEHOLDER}
    assert run.output_secret_paths == (("token",),)
    assert run.to_json()["outputs"] == {"gpus": 8, "namespace": "team", "token": "[secret]"}


def test_outputs_unknown_during_preview_are_marked_unknown(cached_run: RunFixture) -> None:
    run = cached_run("platform", "dev")
    assert [(r.name, r.unknown_paths) for r in run.with_unknowns()] == [("ns-phase", [("data", "phase")])]
    assert run.get("kubernetes:core/v1:ConfigMap", "ns-phase").inputs["data"] == {"phase": UNKNOWN}


def test_outputs_are_resolved_when_not_a_preview(cached_run: RunFixture) -> None:
    run = cached_run("platform", "dev", preview=False)
    assert run.with_unknowns() == []
    assert run.get("kubernetes:core/v1:ConfigMap", "ns-phase").inputs["data"] == {"phase": "none"}


def test_remote_helm_chart_is_one_resource_without_children(cached_run: RunFixture) -> None:
    run = cached_run("platform", "dev")
    chart = run.get("kubernetes:helm.sh/v4:Chart", "kueue")
    assert (chart.custom, run.children(chart.urn)) == (False, [])
    assert chart.inputs == {
        "chart": "oci://registry.k8s.io/kueue/charts/kueue",
        "namespace": "kueue-system",
        "version": "0.19.2",
    }


def test_program_log_messages_are_recorded(cached_run: RunFixture) -> None:
    assert cached_run("platform", "dev").logs == [
        LogMessage("warning", "fixture warning: queues are not production-sized"),
        LogMessage("info", "info: already prefixed"),
    ]


def test_program_sees_config_encoded_as_the_cli_passes_it(cached_run: RunFixture) -> None:
    outputs = cached_run("echo", "dev").outputs
    want = {
        "batchplane:answer": "yes",
        "batchplane:count": "3",
        "batchplane:date": "2026-01-01",
        "batchplane:enabled": "true",
        "batchplane:name": "team-a",
        "batchplane:nested": '{"token":"secret-placeholder","user":"admin"}',
        "batchplane:password": "secret-placeholder",
        "batchplane:queues": '{"alpha":[1.5,true,null,"x"],"zeta":1}',
        "batchplane:ratio": "0.5",
        "batchplane:tier": "bronze",
        "echo-fixture:owner": "someone",
        "echo-fixture:region": "europe-west4",
        "kubernetes:context": "kind-dev",
    }
    assert outputs["config"] == want
    assert outputs["env_config"] == want
    assert outputs["secret_keys"] == ["batchplane:nested", "batchplane:password"]
    assert outputs["object"] == {"alpha": [1.5, True, None, "x"], "zeta": 1}


def test_program_runs_as_main_in_its_program_directory(cached_run: RunFixture) -> None:
    outputs = cached_run("echo", "dev").outputs
    assert {k: outputs[k] for k in ("name", "cwd", "argv0", "project", "stack", "dry_run")} == {
        "name": "__main__",
        "cwd": "program",
        "argv0": "program",
        "project": "echo-fixture",
        "stack": "dev",
        "dry_run": True,
    }


def test_secure_config_values_reach_the_program_as_secret_placeholders(cached_run: RunFixture) -> None:
    run = cached_run("echo", "dev")
    assert (run.outputs["password"], run.output_secret_paths) == (SECRET_PLACEHOLDER, (("password",),))


def test_each_run_imports_the_programs_own_helper_modules() -> None:
    platform = run_fixture("platform", "dev")
    echo = run_fixture("echo", "dev")
    assert platform.get(NS, "team-ns").inputs["metadata"]["labels"] == {"flavor": "platform-helpers"}
    assert echo.outputs["helpers"] == "echo-helpers"
    assert "helpers" not in sys.modules


def test_repeated_runs_in_one_process_give_identical_results(cached_run: RunFixture) -> None:
    first = cached_run("platform", "dev")
    run_fixture("gke", "dev")
    again = run_fixture("platform", "dev")
    assert again == first
    assert again.to_json(show_secrets=True) == first.to_json(show_secrets=True)


def test_process_and_caller_state_are_restored_after_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from pulumi.runtime import config as runtime_config
    from pulumi.runtime import settings as runtime_settings

    monkeypatch.delenv("PULUMI_CONFIG", raising=False)
    monkeypatch.setenv("PULUMI_CONFIG_SECRET_KEYS", '["caller:key"]')
    before = (os.getcwd(), list(sys.argv), list(sys.path))
    caller_config = dict(runtime_config.CONFIG.get())
    caller_project = runtime_settings.get_project()
    caller_root = runtime_settings.get_root_resource()
    run_fixture("echo", "dev")
    assert (os.getcwd(), list(sys.argv), list(sys.path)) == before
    assert "PULUMI_CONFIG" not in os.environ
    assert os.environ["PULUMI_CONFIG_SECRET_KEYS"] == '["caller:key"]'
    assert dict(runtime_config.CONFIG.get()) == caller_config
    assert runtime_settings.get_project() == caller_project
    assert runtime_settings.get_root_resource() is caller_root


def test_config_validation_error_propagates_with_every_issue() -> None:
    with pytest.raises(ConfigValidationError) as caught:
        run_fixture("platform", "bad")
    assert [str(issue) for issue in caught.value.issues] == [
        "batchplane:queues.gpus: must be a positive integer",
        "batchplane:queues.replicas: must be a positive integer",
    ]


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("top-level", "failing on purpose at top level"),
        ("apply", "failing on purpose in apply for doomed"),
    ],
    ids=["top-level", "inside-apply"],
)
def test_program_errors_propagate_as_themselves(mode: str, message: str) -> None:
    with pytest.raises(BatchplaneError) as caught:
        run_program(FIXTURES / "failing", "x", {"failing:mode": mode})
    assert (type(caught.value), str(caught.value)) == (BatchplaneError, message)


def test_a_run_after_a_failed_run_is_unaffected(cached_run: RunFixture) -> None:
    with pytest.raises(BatchplaneError):
        run_program(FIXTURES / "failing", "x", {"failing:mode": "apply"})
    assert run_fixture("platform", "dev") == cached_run("platform", "dev")


def test_run_program_refuses_to_run_inside_an_event_loop() -> None:
    async def inside() -> None:
        run_program(FIXTURES / "echo", "dev", {})

    with pytest.raises(RuntimeError, match=r"^run_program cannot run inside a running asyncio event loop$"):
        asyncio.run(inside())


def test_missing_pulumi_yaml_is_a_config_load_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigLoadError) as caught:
        run_program(tmp_path, "dev", {})
    assert str(caught.value) == f"cannot read {tmp_path / 'Pulumi.yaml'}: No such file or directory"


def test_gke_cluster_mock_outputs_feed_the_kubeconfig_of_the_provider(cached_run: RunFixture) -> None:
    run = cached_run("gke", "dev")
    provider = run.get(PROVIDER, "gke")
    assert provider.inputs == {
        "kubeconfig": f"server: https://{CLUSTER_ENDPOINT}\nca: {CLUSTER_CA}\nname: gke\n"
    }
    assert provider.dependencies == [
        top_urn("gke-fixture", "dev", "gcp:container/cluster:Cluster", "gke"),
        top_urn("gke-fixture", "dev", "gcp:container/nodePool:NodePool", "gpu"),
    ]
    assert run.get("gcp:container/nodePool:NodePool", "gpu").inputs["cluster"] == "gke"
    assert run.outputs["kubeconfig"] == provider.inputs["kubeconfig"]
    assert run.to_json()["outputs"] == {"kubeconfig": "[secret]"}


def test_invokes_get_mocked_results(cached_run: RunFixture) -> None:
    cluster = cached_run("gke", "dev").get("gcp:container/cluster:Cluster", "gke")
    assert cluster.inputs["minMasterVersion"] == GKE_VERSION


def test_yaml_v1_config_group_objects_are_recorded_as_its_children(cached_run: RunFixture) -> None:
    run = cached_run("gke", "dev")
    group = run.get("kubernetes:yaml:ConfigGroup", "objects")
    assert [(r.type, r.name, r.inputs) for r in run.children(group.urn)] == [
        (NS, "from-yaml", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "from-yaml"}})
    ]


@pytest.mark.slow
def test_thousand_custom_resources_are_recorded_in_order(record_property: Any) -> None:
    config = read_stack_file(FIXTURES / "scale" / "stacks" / "Pulumi.thousand.yaml")
    started = time.perf_counter()
    run = run_program(FIXTURES / "scale", "thousand", config)
    elapsed = time.perf_counter() - started
    record_property("seconds_for_1000_custom_resources", round(elapsed, 3))
    print(f"1000 CustomResources (+1 provider) recorded in {elapsed:.2f} s")
    assert [r.name for r in run.resources] == ["k8s", *(f"item-{i}" for i in range(1000))]
    assert run.resources[4].inputs["spec"] == {"index": 3, "weight": 1.5}
    assert run.resources[5].inputs["spec"] == {"index": 4, "weight": 2}


def test_the_callers_event_loop_is_set_again_after_a_run() -> None:
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        run_fixture("echo", "dev")
        assert asyncio.get_event_loop_policy().get_event_loop() is loop
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def test_resource_references_in_properties_are_recorded_as_urns(cached_run: RunFixture) -> None:
    assert cached_run("gke", "dev").get("fixture:index:Ref", "ref").inputs == {
        "pool": top_urn("gke-fixture", "dev", "gcp:container/nodePool:NodePool", "gpu"),
        "targets": [top_urn("gke-fixture", "dev", "gcp:container/cluster:Cluster", "gke")],
    }


def test_resource_references_stay_urns_after_a_provider_sdk_registered_its_resource_modules() -> None:
    # A program using pulumi_gcp registers its resource modules; the mock monitor would then re-hydrate
    # references to gcp resources via getResource on a worker-thread loop and the run would fail
    # ("attached to a different loop").
    repo = Path(__file__).resolve().parents[2]
    run_program(repo, "gke-dev", read_stack_file(repo / "templates" / "Pulumi.gke-dev.yaml"))

    run = run_fixture("gke", "dev")
    assert run.get("fixture:index:Ref", "ref").inputs["targets"] == [
        top_urn("gke-fixture", "dev", "gcp:container/cluster:Cluster", "gke")
    ]

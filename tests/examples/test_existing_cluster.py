"""examples/existing-cluster: Batchplane's components in a program of its own — its own provider, typed config
models instead of a stack file — run under the mock engine (issue #21, components as a library)."""

from __future__ import annotations

from functools import cache

import pytest

from batchplane.components.batch_cluster import BatchClusterArgs
from batchplane.config.kueue import KueueConfig, ResourceFlavor
from batchplane.config.operators import OperatorsConfig
from batchplane.config.teams import Team, TeamsConfig
from batchplane.errors import ConfigValidationError
from batchplane.offline import ProgramRun, run_program
from batchplane.stack import StackConfig
from batchplane.targets.existing.config import ExistingTarget
from batchplane.targets.openshift.config import OpenShiftTarget
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow

EXAMPLE = REPO_ROOT / "examples" / "existing-cluster"
KUBECONFIG = "apiVersion: v1\nkind: Config\ncurrent-context: ml-prod\n"


@cache
def example() -> ProgramRun:
    config = {"existing-cluster:context": "ml-prod", "existing-cluster:kubeconfig": KUBECONFIG}
    return run_program(EXAMPLE, "dev", config)


def test_the_cluster_component_uses_the_programs_provider_and_declares_none_of_its_own() -> None:
    run = example()
    provider = run.get("pulumi:providers:kubernetes", "platform-cluster")
    assert run.of_type("pulumi:providers:kubernetes") == [provider]
    cluster = run.get("batchplane:cluster:BatchCluster", "ml")
    assert {(r.type, r.name) for r in run.children(cluster.urn)} == {
        ("batchplane:operators:Operators", "ml-operators"),
        ("batchplane:kueue:KueueQueues", "ml-kueue"),
        ("batchplane:admission:QuotaWebhook", "ml-quota-webhook"),
        ("batchplane:observability:Observability", "ml-observability"),
        (
            "batchplane:observability:Dashboards",
            "ml-dashboards",
        ),  # sidecar ConfigMaps through the same provider
    }
    in_cluster = [r for r in run.resources if r.type.startswith("kubernetes:")]
    assert in_cluster and {r.provider_urn for r in in_cluster} == {provider.urn}


def test_the_kueue_gate_polls_the_injected_providers_cluster() -> None:
    run = example()
    gate = run.get("pulumi-python:dynamic:Resource", "ml-operators-kueue-ready")
    provider = run.get("pulumi:providers:kubernetes", "platform-cluster")
    assert (gate.inputs["context"], gate.inputs["kubeconfig"]) == (
        provider.inputs["context"],
        provider.inputs["kubeconfig"],
    )
    assert gate.inputs["kubeconfig"] == KUBECONFIG
    assert ("kubeconfig",) in gate.secret_paths


def test_the_typed_config_becomes_the_teams_queues() -> None:
    run = example()
    assert run.outputs == {
        "clusterQueues": ["vision", "speech"],
        "localQueues": ["vision/default", "speech/default"],
    }
    queue = run.get("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "ml-kueue-clusterqueue-vision")
    quota = queue.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert quota == [{"name": "cpu", "nominalQuota": "16"}, {"name": "memory", "nominalQuota": "64Gi"}]


def test_the_component_registers_its_queues_and_its_kubeconfig_as_a_secret() -> None:
    run = example()
    cluster = run.get("batchplane:cluster:BatchCluster", "ml")
    outputs = run.component_outputs[cluster.urn]
    assert outputs["clusterQueues"] == ["vision", "speech"]
    assert outputs["localQueues"] == ["vision/default", "speech/default"]
    assert outputs["kubeconfig"] == KUBECONFIG
    assert ("kubeconfig",) in run.component_secret_paths[cluster.urn]
    assert outputs["quotaWebhook"] == "batchplane-quota-webhook.batchplane-system.svc"
    assert outputs.get("clusterName") is None  # an existing cluster: its name is not this program's to know


def test_typed_config_is_refused_with_every_error_at_once() -> None:
    args = BatchClusterArgs(
        config=StackConfig(
            target=OpenShiftTarget(kind="openshift", context="ocp"),
            operators=OperatorsConfig(),
            kueue=KueueConfig(resource_flavors=[ResourceFlavor(name="default-flavor")]),
            teams=TeamsConfig(members=[Team(name="vision", quotas={"missing-flavor": {"cpu": 4}})]),
        )
    )
    with pytest.raises(ConfigValidationError) as caught:
        args.resolve("ml")
    paths = sorted({e.path for e in caught.value.errors})
    assert "batchplane:operators" in paths  # Helm installs on OpenShift
    assert any(p.startswith("batchplane:teams.members[0]") for p in paths)  # the unknown flavor


def test_stack_and_config_are_exclusive() -> None:
    with pytest.raises(ValueError, match="exactly one of config"):
        BatchClusterArgs().resolve("ml")
    target = ExistingTarget(kind="existing", context="c")
    assert BatchClusterArgs(config=StackConfig(target=target)).resolve("ml").name == "ml"

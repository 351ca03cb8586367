"""BatchCluster: one component per cluster. Two in one program (what a MultiKueue manager and its workers
need) get children named after their component, their own provider each, and no URN collides."""

from __future__ import annotations

import textwrap

import pytest

from batchplane.offline import ProgramRun, run_program
from tests.conftest import REPO_ROOT, template_path

pytestmark = pytest.mark.slow

PROGRAM = """
    import copy
    import pulumi
    from batchplane.components.batch_cluster import BatchCluster, BatchClusterArgs
    from batchplane.stack import load_stack, read_stack_file

    base = read_stack_file(__import__("pathlib").Path({stack_file!r}))
    for name in ("east", "west"):
        config = copy.deepcopy(base)
        config["batchplane:target"]["clusterName"] = name
        BatchCluster(name, BatchClusterArgs(stack=load_stack(config, name)))
"""


@pytest.fixture(scope="module")
def two_clusters(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    project = tmp_path_factory.mktemp("two-clusters")
    (project / "Pulumi.yaml").write_text("name: batchplane\nruntime: python\n", encoding="utf-8")
    stack_file = template_path("kind")
    (project / "__main__.py").write_text(
        textwrap.dedent(PROGRAM).format(stack_file=str(stack_file)), encoding="utf-8"
    )
    return run_program(project, "two", {})


def test_children_are_named_after_their_cluster(two_clusters: ProgramRun) -> None:
    for name in ("east", "west"):
        cluster = two_clusters.get("batchplane:cluster:BatchCluster", name)
        children = {(r.type, r.name) for r in two_clusters.children(cluster.urn)}
        assert children == {
            ("pulumi:providers:kubernetes", f"{name}-k8s"),
            ("batchplane:operators:Operators", f"{name}-operators"),
            ("batchplane:kueue:KueueQueues", f"{name}-kueue"),
            ("batchplane:admission:QuotaWebhook", f"{name}-quota-webhook"),
            ("batchplane:image:WebhookImage", f"{name}-webhook-image"),  # kind builds and loads it by default
            ("batchplane:observability:Observability", f"{name}-observability"),  # ServiceMonitors, rules
            ("batchplane:observability:Dashboards", f"{name}-dashboards"),  # sidecar ConfigMaps on kind
        }


def test_no_two_resources_share_an_engine_urn_or_adopt_top_level_urns(two_clusters: ProgramRun) -> None:
    urns = [r.engine_urn for r in two_clusters.resources]
    assert len(urns) == len(set(urns))
    # Only pulumi-kubernetes' own type aliases (apps/v1beta1 Deployment, …) remain: nothing outside a cluster.
    aliases = [a for r in two_clusters.resources for a in r.aliases]
    assert aliases
    assert [a for a in aliases if "::batchplane:cluster:BatchCluster$" not in a] == []


def test_each_cluster_reaches_its_own_context_through_its_own_provider(two_clusters: ProgramRun) -> None:
    for name in ("east", "west"):
        provider = two_clusters.get("pulumi:providers:kubernetes", f"{name}-k8s")
        assert provider.inputs["context"] == f"kind-{name}"
        queue = two_clusters.get(
            "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", f"{name}-kueue-clusterqueue-cluster-queue"
        )
        assert queue.provider_urn == provider.urn
        gate = next(
            r
            for r in two_clusters.resources
            if r.type == "pulumi-python:dynamic:Resource" and r.name == f"{name}-operators-kueue-ready"
        )
        assert gate.inputs["context"] == f"kind-{name}"


def test_a_gke_cluster_registers_its_name_endpoint_and_kubeconfig_as_a_secret() -> None:
    from batchplane.offline import read_stack_file
    from tests.conftest import template_path

    run = run_program(REPO_ROOT, "gke-dev", read_stack_file(template_path("gke-dev")), preview=False)
    cluster = run.get("batchplane:cluster:BatchCluster", "batchplane")
    gke = run.get("gcp:container/cluster:Cluster", "gke-cluster")
    outputs = run.component_outputs[cluster.urn]
    assert outputs["clusterName"] == gke.inputs["name"]
    assert "kubeconfig" in outputs and ("kubeconfig",) in run.component_secret_paths[cluster.urn]
    assert outputs["clusterQueues"] == run.outputs["clusterQueues"]
    assert outputs["localQueues"] == run.outputs["localQueues"]


GKE_WITH_CONNECTION = """
    import pulumi_kubernetes as k8s
    from batchplane.components.batch_cluster import BatchCluster, BatchClusterArgs
    from batchplane.stack import load_stack_file
    from batchplane.targets.deploy import ClusterConnection

    provider = k8s.Provider("mine", context="elsewhere")
    BatchCluster(
        "east",
        BatchClusterArgs(
            stack=load_stack_file(__import__("pathlib").Path({stack_file!r})),
            connection=ClusterConnection(provider, context="elsewhere"),
        ),
    )
"""


def test_a_gke_target_refuses_a_connection_because_it_declares_its_cluster(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    project = tmp_path_factory.mktemp("gke-connection")
    (project / "Pulumi.yaml").write_text("name: batchplane\nruntime: python\n", encoding="utf-8")
    stack_file = template_path("gke-dev")
    (project / "__main__.py").write_text(
        textwrap.dedent(GKE_WITH_CONNECTION).format(stack_file=str(stack_file)), encoding="utf-8"
    )
    with pytest.raises(ValueError, match="target kind gke declares its cluster: it takes no connection"):
        run_program(project, "gke", {})


def test_multikueue_kubeconfigs_on_a_stack_without_multikueue_is_refused_before_declaring() -> None:
    from batchplane.components.batch_cluster import BatchClusterArgs
    from batchplane.stack import load_stack_file
    from tests.conftest import template_path

    args = BatchClusterArgs(
        stack=load_stack_file(template_path("kind")), multikueue_kubeconfigs={"west": "kubeconfig"}
    )
    with pytest.raises(ValueError, match=r"multikueue_kubeconfigs: the stack declares no multiKueue section"):
        args.resolve("kind")


def test_multikueue_kubeconfigs_naming_an_undeclared_worker_is_refused_with_every_unknown_name() -> None:
    from batchplane.components.batch_cluster import BatchClusterArgs
    from batchplane.stack import load_stack_file
    from tests.conftest import template_path

    stack = load_stack_file(template_path("gke-multiregion-dws"))
    declared = [w.name for w in stack.config.multi_kueue.workers] if stack.config.multi_kueue else []
    assert declared
    good = BatchClusterArgs(stack=stack, multikueue_kubeconfigs={declared[0]: "kubeconfig"})
    assert good.resolve("batchplane") is stack
    bad = BatchClusterArgs(
        stack=stack, multikueue_kubeconfigs={"nowhere": "k", "elsewhere": "k", declared[0]: "k"}
    )
    with pytest.raises(
        ValueError, match=r"multikueue_kubeconfigs: elsewhere, nowhere not among the declared"
    ):
        bad.resolve("batchplane")

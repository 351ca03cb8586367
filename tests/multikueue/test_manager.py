"""`batchplane:multiKueue` on the manager: MultiKueueClusters, the MultiKueueConfig and the admission check,
validated up front, declared in dependency order, and accepted by the Kueue v0.19.2 CRDs."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.offline import ProgramRun, read_stack_file, run_program
from batchplane.offline.render import render_resources
from batchplane.stack import load_stack
from tests.config.factories import base_config
from tests.conftest import REPO_ROOT, SHARED, template_path
from tests.support.crdcheck import CrdCatalog

WORKERS = [
    {"name": "us-east4", "kubeconfigSecret": "us-east4-kubeconfig"},
    {"name": "europe-west4", "kubeconfigSecret": "europe-west4-kubeconfig"},
]
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"


def kind_with(section: dict[str, Any]) -> dict[str, Any]:
    config = copy.deepcopy(read_stack_file(template_path("kind")))
    config["batchplane:multiKueue"] = section
    return config


@cache
def manager_run() -> ProgramRun:
    return run_program(REPO_ROOT, "kind", kind_with({"workers": WORKERS}), preview=False)


def test_every_rendered_kueue_object_passes_the_crd_check() -> None:
    catalog = CrdCatalog.load(SHARED / "crds" / "kueue")
    manifests = [r.manifest for r in render_resources(manager_run().resources).objects]
    kinds = [m["kind"] for m in manifests if m["apiVersion"].startswith("kueue.x-k8s.io/")]
    assert kinds.count("MultiKueueCluster") == 2 and "MultiKueueConfig" in kinds
    assert {
        m["metadata"]["name"]: catalog.validate(m) for m in manifests if m["apiVersion"].startswith("kueue")
    } == {
        name: [] for name in (m["metadata"]["name"] for m in manifests if m["apiVersion"].startswith("kueue"))
    }


def test_workers_are_listed_in_preference_order_behind_one_admission_check() -> None:
    run = manager_run()
    config = run.get(KUEUE + "MultiKueueConfig", "kueue-multikueueconfig-multikueue")
    check = run.get(KUEUE + "AdmissionCheck", "kueue-admissioncheck-multikueue")
    cluster = run.get(KUEUE + "MultiKueueCluster", "kueue-multikueuecluster-us-east4")
    queue = run.get(KUEUE + "ClusterQueue", "kueue-clusterqueue-cluster-queue")
    assert config.inputs["spec"] == {"clusters": ["us-east4", "europe-west4"]}
    assert check.inputs["spec"] == {
        "controllerName": "kueue.x-k8s.io/multikueue",
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "multikueue"},
    }
    assert cluster.inputs["spec"] == {
        "clusterSource": {"kubeConfig": {"location": "us-east4-kubeconfig", "locationType": "Secret"}}
    }
    assert queue.inputs["spec"]["admissionChecksStrategy"]["admissionChecks"] == [{"name": "multikueue"}]
    # Created in order: clusters, then the config that lists them, then the check that points at it.
    assert config.urn in check.dependencies
    assert cluster.urn in config.dependencies


def test_only_the_named_cluster_queues_dispatch() -> None:
    config = base_config()
    config["batchplane:kueue"]["clusterQueues"].append(
        {**copy.deepcopy(config["batchplane:kueue"]["clusterQueues"][0]), "name": "local-only"}
    )
    config["batchplane:multiKueue"] = {"workers": WORKERS, "clusterQueues": ["cq"], "name": "dispatch"}
    stack = load_stack(config)
    checks = {q.obj.name: [r.name for r in q.obj.admission_checks] for q in stack.kueue.cluster_queues}
    assert checks == {"cq": ["dispatch"], "local-only": []}


@pytest.mark.parametrize(
    ("section", "want"),
    [
        ({"workers": WORKERS, "clusterQueues": ["nope"]}, ['batchplane:multiKueue.clusterQueues[0]: no ClusterQueue "nope" in this stack']),
        ({"workers": [WORKERS[0], WORKERS[0]]}, ["batchplane:multiKueue: worker names must be unique: us-east4 listed more than once"]),
        ({"workers": []}, ["batchplane:multiKueue.workers: at least 1 entries allowed, 0 given"]),
        ({"workers": [{"name": f"w{i}", "kubeconfigSecret": f"s{i}"} for i in range(21)]}, ["batchplane:multiKueue.workers: at most 20 entries allowed, 21 given"]),
        ({"workers": [{"name": "w", "kubeconfig": "x"}]}, ["batchplane:multiKueue.workers[0].kubeconfig: unknown key; did you mean `kubeconfigSecret`?"]),
    ],
    ids=["unknown-cluster-queue", "duplicate-worker", "no-worker", "21-workers", "misspelt-key"],
)  # fmt: skip
def test_bad_sections_are_errors_at_their_key(section: dict[str, Any], want: list[str]) -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack({**base_config(), "batchplane:multiKueue": section})
    assert [str(e) for e in caught.value.errors] == want


def _with_manual_multikueue_checks(*uses: dict[str, Any]) -> dict[str, Any]:
    config = base_config()
    kueue = config["batchplane:kueue"]
    kueue["admissionChecks"] = [
        {"name": "mk-a", "controllerName": "kueue.x-k8s.io/multikueue"},
        {"name": "mk-b", "controllerName": "kueue.x-k8s.io/multikueue"},
    ]
    kueue["clusterQueues"][0]["admissionChecks"] = list(uses)
    return config


@pytest.mark.parametrize(
    ("uses", "want"),
    [
        (
            [{"name": "mk-a", "onFlavors": ["f1"]}],
            'batchplane:kueue.clusterQueues[0].admissionChecks[0].onFlavors: "mk-a" is a MultiKueue admission check, '
            "which Kueue applies to every flavor or not at all: a ClusterQueue that scopes it with onFlavors stays "
            'inactive ("Cannot specify MultiKueue AdmissionCheck per flavor"); drop onFlavors',
        ),
        (
            [{"name": "mk-a"}, {"name": "mk-b"}],
            "batchplane:kueue.clusterQueues[0].admissionChecks: mk-a, mk-b are all MultiKueue admission checks: Kueue "
            'keeps a ClusterQueue with more than one inactive ("Cannot use multiple MultiKueue AdmissionChecks on the '
            'same ClusterQueue")',
        ),
    ],
    ids=["per-flavor", "two-multikueue-checks"],
)
def test_clusterqueues_kueue_would_keep_inactive_are_refused(uses: list[dict[str, Any]], want: str) -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(_with_manual_multikueue_checks(*uses))
    assert [str(e) for e in caught.value.errors] == [want]

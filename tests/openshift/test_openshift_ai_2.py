"""The ``openshift-ai-2`` template renders the OpenShift AI 2.x distributed-workloads docs' objects exactly, and the
2.x rules (embedded Kueue's API version, one ClusterQueue, empty flavors) are reported naming the docs.

Docs (opendatahub-io/opendatahub-documentation): ``modules/configuring-the-distributed-workloads-components.adoc``
(codeflare, dashboard, datasciencepipelines, kueue, ray, workbenches ``Managed`` for pipelines and notebooks;
Kueue's ``kueue-controller-manager`` in ``redhat-ods-applications``) and
``modules/configuring-quota-management-for-distributed-workloads.adoc`` (the three objects below, verbatim).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from batchplane.errors import ConfigValidationError
from batchplane.offline import read_stack_file, run_program
from batchplane.offline.render import render_resources
from batchplane.stack import load_stack
from tests.conftest import REPO_ROOT, template_path

DOCS_FLAVOR = {
    "apiVersion": "kueue.x-k8s.io/v1beta1",
    "kind": "ResourceFlavor",
    "metadata": {"name": "default-flavor"},
}
DOCS_CLUSTER_QUEUE = {
    "apiVersion": "kueue.x-k8s.io/v1beta1",
    "kind": "ClusterQueue",
    "metadata": {"name": "cluster-queue"},
    "spec": {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": "default-flavor",
                        "resources": [
                            {"name": "cpu", "nominalQuota": 9},
                            {"name": "memory", "nominalQuota": "36Gi"},
                            {"name": "nvidia.com/gpu", "nominalQuota": 5},
                        ],
                    }
                ],
            }
        ],
    },
}
DOCS_LOCAL_QUEUE = {
    "apiVersion": "kueue.x-k8s.io/v1beta1",
    "kind": "LocalQueue",
    "metadata": {
        "namespace": "test",
        "name": "local-queue-test",
        "annotations": {"kueue.x-k8s.io/default-queue": "true"},
    },
    "spec": {"clusterQueue": "cluster-queue"},
}
#: "Components required for distributed workloads", pipelines and notebooks.
DOCS_COMPONENTS = {
    "codeflare": "Managed",
    "dashboard": "Managed",
    "datasciencepipelines": "Managed",
    "kueue": "Managed",
    "ray": "Managed",
    "workbenches": "Managed",
}


@cache
def rendered() -> list[dict[str, Any]]:
    run = run_program(REPO_ROOT, "openshift-ai-2", read_stack_file(template_path("openshift-ai-2")))
    return [r.manifest for r in render_resources(run.resources).objects]


def one(kind: str) -> dict[str, Any]:
    [obj] = [o for o in rendered() if o["kind"] == kind]
    return obj


def as_stored(obj: dict[str, Any]) -> dict[str, Any]:
    """What the API server stores, for comparison: quantities as strings ("9"), an empty ``spec`` as none, and
    without Batchplane's ``app.kubernetes.io/managed-by`` label."""

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items() if not (k == "spec" and v == {})}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return str(value) if key == "nominalQuota" else value

    stored = walk(obj)
    stored["metadata"] = {k: v for k, v in stored["metadata"].items() if k != "labels"}
    return dict(stored)


@pytest.mark.parametrize(
    ("kind", "docs"),
    [("ResourceFlavor", DOCS_FLAVOR), ("ClusterQueue", DOCS_CLUSTER_QUEUE), ("LocalQueue", DOCS_LOCAL_QUEUE)],
)
def test_quota_objects_are_the_docs_objects(kind: str, docs: dict[str, Any]) -> None:
    assert as_stored(one(kind)) == as_stored(docs)


def test_dsc_v1_enables_the_docs_components_with_embedded_kueue_and_no_red_hat_build_of_kueue() -> None:
    dsc = one("DataScienceCluster")
    assert dsc["apiVersion"] == "datasciencecluster.opendatahub.io/v1"
    states = {k: v["managementState"] for k, v in dsc["spec"]["components"].items()}
    assert {k: states[k] for k in DOCS_COMPONENTS} == DOCS_COMPONENTS
    packages = sorted(o["spec"]["name"] for o in rendered() if o["kind"] == "Subscription")
    assert packages == ["openshift-cert-manager-operator", "rhods-operator"]
    assert not [o for o in rendered() if o["kind"] == "Kueue"]


def config(**kueue: Any) -> dict[str, Any]:
    cfg = read_stack_file(template_path("openshift-ai-2"))
    cfg["batchplane:kueue"] = {**cfg["batchplane:kueue"], **kueue}
    return cfg


def test_template_has_no_warnings_about_the_2x_rules() -> None:
    assert [str(w) for w in load_stack(config()).warnings if "OpenShift AI 2.x" in str(w)] == []


def test_a_second_cluster_queue_and_a_labelled_flavor_are_warned_naming_the_docs() -> None:
    base = config()
    queues = base["batchplane:kueue"]["clusterQueues"]
    flavors = base["batchplane:kueue"]["resourceFlavors"]
    second = {**queues[0], "name": "team-b"}
    cfg = config(
        clusterQueues=[*queues, second],
        resourceFlavors=[*flavors, {"name": "a100", "nodeLabels": {"nvidia.com/gpu.product": "A100"}}],
    )
    warnings = {w.path: w.message for w in load_stack(cfg).warnings}
    assert (
        'ClusterQueue "team-b" is one more than the single ClusterQueue per cluster'
        in warnings["batchplane:kueue.clusterQueues[1]"]
    )
    assert (
        "Configuring quota management for distributed workloads"
        in warnings["batchplane:kueue.clusterQueues[1]"]
    )
    assert warnings["batchplane:kueue.resourceFlavors[1]"].startswith('ResourceFlavor "a100" has nodeLabels')


def test_teams_shorthand_making_a_queue_per_team_is_warned() -> None:
    cfg = config()
    quotas = {"default-flavor": {"cpu": 1, "memory": "1Gi", "nvidia.com/gpu": 0}}
    cfg["batchplane:teams"] = {
        "members": [{"name": "team-a", "quotas": quotas}, {"name": "team-b", "quotas": quotas}]
    }
    try:
        stack = load_stack(cfg)
    except ConfigValidationError as exc:  # the shorthand's own schema: show why
        pytest.fail(str(exc))
    assert any("single ClusterQueue per cluster" in w.message for w in stack.warnings)


def test_embedded_kueue_with_v1beta2_objects_is_an_error() -> None:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config(apiVersion="kueue.x-k8s.io/v1beta2"))
    assert [str(e) for e in caught.value.errors] == [
        "batchplane:kueue.apiVersion: Kueue embedded in OpenShift AI 2.x serves kueue.x-k8s.io/v1beta1 only; set "
        "apiVersion: kueue.x-k8s.io/v1beta1 (or use the Red Hat build of Kueue: kueue managementState Unmanaged)"
    ]


@pytest.mark.parametrize(("release", "channel"), [("3.x", "stable-3.x"), ("2.x", "stable")])
def test_the_openshift_ai_channel_follows_the_release_by_default(release: str, channel: str) -> None:
    from batchplane.targets.openshift.config import OpenShiftAI

    assert OpenShiftAI.model_validate({"release": release}).channel == channel


@pytest.mark.parametrize(
    ("release", "channel", "message"),
    [
        (
            "3.x",
            "stable",
            '"stable" delivers OpenShift AI 2.x, not openshiftAi.release 3.x (its DataScienceCluster v2 would be '
            "refused after the operator installs): use stable-3.x (or fast-3.x), or set release: 2.x",
        ),
        (
            "2.x",
            "fast-3.x",
            '"fast-3.x" delivers OpenShift AI 3.x, not openshiftAi.release 2.x: use stable, fast or eus-2.Y, or set '
            "release: 3.x",
        ),
    ],
)
def test_a_channel_of_the_other_release_line_is_refused_naming_both_keys(
    release: str, channel: str, message: str
) -> None:
    from batchplane.targets.openshift.config import release_channel_problem

    assert release_channel_problem(release, channel) == message
    assert release_channel_problem(release, "eus-2.16" if release == "2.x" else "stable-3.x") is None


def test_a_stack_whose_openshift_ai_channel_delivers_the_other_release_is_refused_at_the_channel() -> None:
    from batchplane.stack import load_stack
    from tests.config.factories import base_config
    from tests.operators.conftest import openshift_target

    config = base_config()
    config["batchplane:target"] = openshift_target(openshiftAi={"channel": "stable"})
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    assert [i.path for i in caught.value.errors] == ["batchplane:target.openshiftAi.channel"]

"""Node affinity matched on the label keys the cluster's Kueue uses (issue #25 class 1): each flavor's own keys on
Kueue v0.19.2 (the Helm install on GKE, kind, existing clusters; the Red Hat build of Kueue 1.4), the resource group's
keys on older Kueue (the Red Hat build of Kueue 1.0-1.3, OpenShift AI 2.x's embedded Kueue). The same queues, the same
Jobs, rendered for either Kueue: refused with Kueue's reason by the one, allowed (with a warning where no flavor
carries the labels the pod asks for) by the other."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from batchplane.components.quota_webhook.policy import render_policy
from batchplane.stack import load_stack
from batchplane.webhook.decisions import Decider
from batchplane.webhook.policy import PolicyDocument
from tests.conftest import TEMPLATE_NAMES
from tests.webhook.conftest import TEMPLATES, job, stack_policy

POOL = "cloud.google.com/gke-nodepool"
ACCELERATOR = "cloud.google.com/gke-accelerator"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def _quota(name: str, cpu: str, gpu: str) -> dict[str, Any]:
    return {
        "name": name,
        "resources": [
            {"name": "cpu", "nominalQuota": cpu},
            {"name": "memory", "nominalQuota": "64Gi"},
            {"name": "nvidia.com/gpu", "nominalQuota": gpu},
        ],
    }


#: A CPU flavor without node labels and two GPU flavors (labelled, tainted as Kueue's docs declare them) in one
#: resource group: CPU-only work fits default-flavor alone.
KUEUE: dict[str, Any] = {
    "resourceFlavors": [
        {"name": "default-flavor"},
        {
            "name": "h100",
            "nodeLabels": {POOL: "h100", ACCELERATOR: "nvidia-h100-80gb"},
            "nodeTaints": [GPU_TAINT],
        },
        {"name": "l4", "nodeLabels": {POOL: "l4", ACCELERATOR: "nvidia-l4"}, "nodeTaints": [GPU_TAINT]},
    ],
    "clusterQueues": [
        {
            "name": "cq",
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [
                        _quota("default-flavor", "8", "0"),
                        _quota("h100", "200", "8"),
                        _quota("l4", "32", "4"),
                    ],
                }
            ],
        }
    ],
    "localQueues": [{"name": "lq", "namespace": "team-a", "clusterQueue": "cq"}],
}


def _rhbok(channel: str) -> PolicyDocument:
    """The queues above on an OpenShift cluster running the Red Hat build of Kueue from ``channel``."""
    raw = {
        "batchplane:target": {"kind": "openshift", "context": "ocp", "kueue": {"channel": channel}},
        "batchplane:kueue": copy.deepcopy(KUEUE),
    }
    return render_policy(load_stack(raw, "rhbok"))


def _exists(key: str) -> dict[str, Any]:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "Exists"}]}]}}}}  # fmt: skip


NO_LABEL = "and the flavor has no {key} label (a label key of its resource group)"
TAINTED = (
    'untolerated taint nvidia.com/gpu=present:NoSchedule of flavor "h100"; '
    'untolerated taint nvidia.com/gpu=present:NoSchedule of flavor "l4"'
)
REFUSED = 'Job "team-a/train": can never be admitted by ClusterQueue "cq" (LocalQueue "lq"): PodSet "main" needs cpu 1, but '
WARNED = (
    'ClusterQueue "cq" (LocalQueue "lq"): PodSet "main": its nodeSelector / required node affinity names label keys '
    "the flavors of resource group (cpu, memory, nvidia.com/gpu) declare, with values none of them declares ({labels}); "
    "Kueue matches each flavor on its own label keys and may admit it to default-flavor, whose declared node labels "
    "do not satisfy it: unless those nodes carry the labels anyway, its pods are never scheduled"
)
ISSUE_EXAMPLES = [
    # A CPU-only Job asking for A100 nodes (a key only the GPU flavors declare, a value none of them has).
    (
        {"nodeSelector": {ACCELERATOR: "nvidia-a100-80gb"}},
        REFUSED + f"flavor default-flavor doesn't match node affinity: nodeSelector {ACCELERATOR}=nvidia-a100-80gb, "
        + NO_LABEL.format(key=ACCELERATOR) + "; " + TAINTED,
        (WARNED.format(labels=f"h100: {ACCELERATOR}=nvidia-h100-80gb; l4: {ACCELERATOR}=nvidia-l4"),),
    ),
    # A CPU-only Job pinned to a node pool by the pool label only the GPU flavors declare (here GKE's system pool).
    (
        {"nodeSelector": {POOL: "system"}},
        REFUSED + f"flavor default-flavor doesn't match node affinity: nodeSelector {POOL}=system, "
        + NO_LABEL.format(key=POOL) + "; " + TAINTED,
        (WARNED.format(labels=f"h100: {POOL}=h100; l4: {POOL}=l4"),),
    ),
    # Exists on a key only the GPU flavors declare: they carry it (no warning), but the Job tolerates no GPU taint.
    (
        _exists(ACCELERATOR),
        REFUSED + "flavor default-flavor doesn't match node affinity: its node labels do not satisfy the required node "
        f"affinity on the label keys of its resource group ({ACCELERATOR}, {POOL}); " + TAINTED,
        (),
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod_spec", "refusal", "warnings"), ISSUE_EXAMPLES, ids=["a100-selector", "pool-selector", "exists"]
)
def test_a_cpu_job_naming_a_label_key_only_gpu_flavors_declare_is_refused_by_rhbok_1_3_and_allowed_by_rhbok_1_4(
    pod_spec: dict[str, Any], refusal: str, warnings: tuple[str, ...]
) -> None:
    old, new = _rhbok("stable-v1.3"), _rhbok("stable-v1.4")  # Kueue 0.16 / Kueue 0.18.5+
    assert (old.kueue.node_affinity_keys, new.kueue.node_affinity_keys) == ("ResourceGroup", "Flavor")
    obj = job(requests={"cpu": "1"}, pod_spec=pod_spec)
    denied = Decider(old).validate(obj, "team-a", "CREATE")
    assert (denied.allowed, denied.reason, denied.details) == (False, "never-admissible", refusal)
    allowed = Decider(new).validate(obj, "team-a", "CREATE")
    assert (allowed.allowed, allowed.reason, allowed.warnings) == (True, "ok", warnings)


def test_on_the_resource_groups_keys_a_pod_set_the_only_matching_flavor_is_too_small_for_is_refused_with_both_reasons() -> (
    None
):
    """h100 is the only flavor carrying the pool the Job selects, and it holds 4 CPUs of the 6 the Job needs; default-
    flavor would hold them but lacks the pool key."""
    kueue = copy.deepcopy(KUEUE)
    kueue["resourceFlavors"][1].pop("nodeTaints")  # h100 untainted: a PodSet may land there
    kueue["clusterQueues"][0]["resourceGroups"][0]["flavors"] = [
        _quota("default-flavor", "4", "0"),
        _quota("h100", "4", "8"),
        _quota("l4", "32", "4"),
    ]
    raw = {
        "batchplane:target": {"kind": "openshift", "context": "ocp", "kueue": {"channel": "stable-v1.3"}},
        "batchplane:kueue": kueue,
    }
    decider = Decider(render_policy(load_stack(raw, "rhbok")))
    obj = job(requests={"cpu": "3"}, pod_spec={"nodeSelector": {POOL: "h100"}})
    obj["spec"]["parallelism"] = obj["spec"]["completions"] = (
        2  # 2 × 3 cpu: h100 holds 4, default-flavor is refused
    )
    decision = decider.validate(obj, "team-a", "CREATE")
    assert (decision.allowed, decision.reason) == (False, "never-admissible")
    assert "flavor default-flavor doesn't match node affinity: nodeSelector" in decision.message
    assert 'flavor "h100" offers at most cpu 4' in decision.message


def _gke_prod_dws(declare_accelerator: bool) -> PolicyDocument:
    """gke-prod-dws (Kueue 0.19.2 from Helm); optionally with the GPU flavors declaring the accelerator label too."""
    raw = yaml.safe_load((TEMPLATES / "Pulumi.gke-prod-dws.yaml").read_text())["config"]
    if declare_accelerator:
        gpu = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        queued = {
            "key": "cloud.google.com/gke-queued",
            "operator": "Equal",
            "value": "true",
            "effect": "NoSchedule",
        }
        raw["batchplane:kueue"]["resourceFlavors"] += [
            {
                "name": "h100",
                "nodeLabels": {POOL: "h100", ACCELERATOR: "nvidia-h100-80gb"},
                "tolerations": [gpu, queued],
            },
            {"name": "l4", "nodeLabels": {POOL: "l4", ACCELERATOR: "nvidia-l4"}, "tolerations": [gpu]},
        ]
    return render_policy(load_stack(raw, "gke-prod-dws"))


def _with_keys(policy: PolicyDocument, keys: str) -> PolicyDocument:
    return policy.model_copy(update={"kueue": policy.kueue.model_copy(update={"node_affinity_keys": keys})})


def _a100_job() -> dict[str, Any]:
    obj = job(queue="default", namespace="team-a", requests={"cpu": "1"},
              pod_spec={"nodeSelector": {ACCELERATOR: "nvidia-a100-80gb"}})  # fmt: skip
    return obj


def test_on_gke_prod_dws_an_a100_selector_is_refused_on_the_groups_keys_once_the_gpu_flavors_declare_the_key() -> (
    None
):
    policy = _gke_prod_dws(declare_accelerator=True)
    assert policy.kueue.node_affinity_keys == "Flavor"  # operators.kueue.version 0.19.2
    allowed = Decider(policy).validate(_a100_job(), "team-a", "CREATE")
    assert (allowed.allowed, allowed.reason) == (True, "ok")
    [warning] = allowed.warnings
    assert f"(h100: {ACCELERATOR}=nvidia-h100-80gb; l4: {ACCELERATOR}=nvidia-l4)" in warning
    denied = Decider(_with_keys(policy, "ResourceGroup")).validate(_a100_job(), "team-a", "CREATE")
    assert (denied.allowed, denied.reason) == (False, "never-admissible")
    assert denied.details.endswith(
        f"flavor default-flavor doesn't match node affinity: nodeSelector {ACCELERATOR}=nvidia-a100-80gb, "
        + NO_LABEL.format(key=ACCELERATOR)
        + f'; nodeSelector {ACCELERATOR}=nvidia-a100-80gb does not match flavor "h100" ({ACCELERATOR}=nvidia-h100-80gb)'
        + f'; nodeSelector {ACCELERATOR}=nvidia-a100-80gb does not match flavor "l4" ({ACCELERATOR}=nvidia-l4)'
    )


@pytest.mark.parametrize("keys", ["Flavor", "ResourceGroup"])
def test_on_gke_prod_dws_as_shipped_an_a100_selector_names_a_key_no_flavor_declares_so_every_kueue_admits_it(
    keys: str,
) -> None:
    # Its GPU flavors select their pools by cloud.google.com/gke-nodepool only: the accelerator key is filtered out
    # of the pod's selector on either key set (flavorSelector), and Kueue admits the Job on default-flavor.
    decision = Decider(_with_keys(_gke_prod_dws(declare_accelerator=False), keys)).validate(
        _a100_job(), "team-a", "CREATE"
    )
    assert (decision.allowed, decision.reason, decision.warnings) == (True, "ok", ())


#: The key set each template's Kueue matches node affinity on: Helm Kueue 0.19.2 (GKE, kind), the Red Hat build of
#: Kueue from stable-v1.4 (Kueue 0.18.5+), OpenShift AI 2.x's embedded Kueue (0.11 and older).
TEMPLATE_KEYS = {
    "gke-a3-mega-tas": "Flavor",
    "gke-dev": "Flavor",
    "gke-dws": "Flavor",
    "gke-multiregion-dws": "Flavor",
    "gke-prod-dws": "Flavor",
    "kind": "Flavor",
    "openshift-ai": "Flavor",
    "openshift-ai-gpu": "Flavor",
    "openshift-ai-2": "ResourceGroup",
}


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_each_templates_policy_matches_node_affinity_on_the_keys_its_kueue_uses(template: str) -> None:
    assert stack_policy(template).kueue.node_affinity_keys == TEMPLATE_KEYS[template]


@pytest.mark.parametrize(
    "pod_spec", [{"nodeSelector": {POOL: "h100"}}, _exists(POOL)], ids=["pool-selector", "exists"]
)
def test_on_gke_prod_dws_as_shipped_a_cpu_job_selecting_the_gpu_pools_key_lands_on_a_gpu_flavor_on_the_groups_keys(
    pod_spec: dict[str, Any],
) -> None:
    # default-flavor lacks cloud.google.com/gke-nodepool, so Kueue v0.18.1 skips it; but h100 carries the key, takes
    # CPU-only PodSets (cpu quota 200, tolerations rather than taints) and admits the Job: allowed under both key sets.
    obj = job(queue="default", namespace="team-a", requests={"cpu": "1"}, pod_spec=pod_spec)
    for keys in ("Flavor", "ResourceGroup"):
        decision = Decider(_with_keys(_gke_prod_dws(declare_accelerator=False), keys)).validate(
            obj, "team-a", "CREATE"
        )
        assert (decision.allowed, decision.reason, decision.warnings) == (True, "ok", ())

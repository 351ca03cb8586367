"""OpenShift AI 3.x creates the Red Hat build of Kueue's ``Kueue`` CR ``cluster`` once and never updates it
(opendatahub-operator ``v3.5.0`` ``kueue_config.go`` ``createKueueCR``): the stack owns the CR's frameworks through a
server-side apply patch (``pulumi.com/patchForce``) declared once Kueue serves, before the Kueue objects."""

from __future__ import annotations

from functools import cache
from typing import Any

from batchplane.offline import ProgramRun, read_stack_file, run_program
from tests.conftest import REPO_ROOT, TEMPLATES_DIR

PATCH_TYPE = "kubernetes:kueue.openshift.io/v1:KueuePatch"


@cache
def run(template: str) -> ProgramRun:
    return run_program(
        REPO_ROOT, template, read_stack_file(TEMPLATES_DIR / f"Pulumi.{template}.yaml"), preview=False
    )


def test_openshift_ai_3_applies_the_frameworks_the_stack_needs_to_the_kueue_cr_it_creates() -> None:
    [patch] = [r for r in run("openshift-ai").resources if r.type == PATCH_TYPE]
    assert patch.inputs["metadata"] == {"name": "cluster", "annotations": {"pulumi.com/patchForce": "true"}}
    assert patch.inputs["spec"] == {
        "config": {
            "integrations": {
                "frameworks": ["BatchJob", "RayJob", "RayCluster", "RayService", "JobSet", "TrainJob"]
            }
        }
    }
    assert not [
        r for r in run("openshift-ai").resources if r.type == "kubernetes:kueue.openshift.io/v1:Kueue"
    ]


def test_the_patch_waits_for_kueue_to_serve_and_the_kueue_objects_wait_for_the_patch() -> None:
    resources = run("openshift-ai").resources
    by_urn = {r.urn: r for r in resources}
    [patch] = [r for r in resources if r.type == PATCH_TYPE]
    gates = [by_urn[d] for d in patch.dependencies if d in by_urn]
    assert any(g.inputs.get("gate") == "kueue-webhook" for g in gates)

    def waits_for(resource: Any, target: str, seen: set[str]) -> bool:
        for dep in [*resource.dependencies, resource.parent]:
            if dep == target:
                return True
            if dep in by_urn and dep not in seen:
                seen.add(dep)
                if waits_for(by_urn[dep], target, seen):
                    return True
        return False

    queues = [r for r in resources if r.type.endswith(":ClusterQueue")]
    assert queues and all(waits_for(q, patch.urn, set()) for q in queues)


def test_no_patch_where_batchplane_creates_the_kueue_cr_or_kueue_is_embedded() -> None:
    assert not [r for r in run("openshift-ai-2").resources if r.type == PATCH_TYPE]  # embedded Kueue

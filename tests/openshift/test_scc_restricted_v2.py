"""Every pod template an OpenShift template declares is admitted by OpenShift's default SCC ``restricted-v2`` in a
namespace with a UID range (tests/support/scc.py: the SCC admission transcribed from openshift/apiserver-library-go),
and the transcription itself refuses what ``restricted-v2`` refuses."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchplane.offline import read_stack_file, run_program
from batchplane.offline.render import render_resources
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES, TEMPLATES_DIR
from tests.support.scc import EXAMPLE_NAMESPACE_ANNOTATIONS, admit, load_scc

OPENSHIFT_TEMPLATES = [name for name in TEMPLATE_NAMES if name.startswith("openshift")]
WORKLOAD_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController"}


@cache
def pod_templates(template: str) -> list[tuple[str, dict[str, Any]]]:
    """``(kind/namespace/name, pod template)`` of every workload the template renders (CronJobs and Pods too)."""
    run = run_program(
        REPO_ROOT, template, read_stack_file(TEMPLATES_DIR / f"Pulumi.{template}.yaml"), preview=False
    )
    out = []
    for rendered in render_resources(run.resources).objects:
        obj = rendered.manifest
        meta = obj.get("metadata") or {}
        name = f"{obj.get('kind')}/{meta.get('namespace', '')}/{meta.get('name')}"
        if obj.get("kind") in WORKLOAD_KINDS:
            out.append((name, obj["spec"]["template"]))
        elif obj.get("kind") == "CronJob":
            out.append((name, obj["spec"]["jobTemplate"]["spec"]["template"]))
        elif obj.get("kind") == "Pod" and obj.get("apiVersion") == "v1":
            out.append((name, {"metadata": meta, "spec": obj["spec"]}))
    return out


@pytest.fixture(scope="module")
def restricted_v2() -> dict[str, Any]:
    return load_scc("restricted-v2")


@pytest.mark.parametrize("template", OPENSHIFT_TEMPLATES)
def test_every_pod_template_of_an_openshift_template_is_admitted_by_restricted_v2(
    template: str, restricted_v2: dict[str, Any]
) -> None:
    templates = pod_templates(template)
    assert any(name.startswith("Deployment/") for name, _ in templates), f"{template}: no Deployment rendered"
    refused = {
        name: errors
        for name, pod in templates
        if (
            errors := admit(
                pod["spec"], restricted_v2, EXAMPLE_NAMESPACE_ANNOTATIONS, pod["metadata"].get("annotations")
            )
        )
    }
    assert refused == {}


HARDENED: dict[str, Any] = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [
        {
            "name": "app",
            "image": "registry.example/app@sha256:0",
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        }
    ],
}


def with_changes(pod: str, container: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {**HARDENED, **spec}
    if container is not None:
        base["containers"] = [{**HARDENED["containers"][0], "securityContext": container}]
    return base


def test_a_pod_leaving_ids_to_the_scc_is_admitted_and_a_bare_pod_is_defaulted_into_admission(
    restricted_v2: dict[str, Any],
) -> None:
    assert admit(HARDENED, restricted_v2, EXAMPLE_NAMESPACE_ANNOTATIONS) == []
    assert (
        admit({"containers": [{"name": "bare", "image": "x"}]}, restricted_v2, EXAMPLE_NAMESPACE_ANNOTATIONS)
        == []
    )


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        (
            {"securityContext": {"runAsUser": 65532}},
            "runAsUser: Invalid value: 65532: must be in the ranges: [1000680000, 1000689999]",
        ),
        (
            {"securityContext": {"fsGroup": 65532}},
            "fsGroup: Invalid value: 65532: 65532 is not an allowed group",
        ),
        ({"securityContext": {"fsGroup": 1000680001}}, "1000680001 is not an allowed group"),
        (
            {"securityContext": {"seccompProfile": {"type": "Unconfined"}}},
            "unconfined is not an allowed seccomp profile",
        ),
        ({"hostNetwork": True}, "Host Network is not allowed to be used"),
        ({"hostPID": True}, "Host PID is not allowed to be used"),
        (
            {"volumes": [{"name": "h", "hostPath": {"path": "/var"}}]},
            "hostPath volumes are not allowed to be used",
        ),
        ({"securityContext": {"seLinuxOptions": {"level": "s0:c1,c2"}}}, "must be s0:c26,c15"),
    ],
)
def test_restricted_v2_refuses_ids_outside_the_namespace_allocation_and_host_access(
    spec: dict[str, Any], error: str, restricted_v2: dict[str, Any]
) -> None:
    errors = admit({**HARDENED, **spec}, restricted_v2, EXAMPLE_NAMESPACE_ANNOTATIONS)
    assert any(error in e for e in errors), errors


@pytest.mark.parametrize(
    ("container", "error"),
    [
        ({"allowPrivilegeEscalation": True}, "Allowing privilege escalation for containers is not allowed"),
        (
            {"capabilities": {"add": ["NET_ADMIN"], "drop": ["ALL"]}},
            "'NET_ADMIN': capability may not be added",
        ),
        ({"privileged": True}, "Privileged containers are not allowed"),
        ({"runAsUser": 0}, "runAsUser: Invalid value: 0"),
    ],
)
def test_restricted_v2_refuses_escalation_added_capabilities_and_root(
    container: dict[str, Any], error: str, restricted_v2: dict[str, Any]
) -> None:
    errors = admit(with_changes("p", container), restricted_v2, EXAMPLE_NAMESPACE_ANNOTATIONS)
    assert any(error in e for e in errors), errors


def test_net_bind_service_is_the_one_capability_restricted_v2_lets_a_container_add(
    restricted_v2: dict[str, Any],
) -> None:
    pod = with_changes(
        "p",
        {"allowPrivilegeEscalation": False, "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]}},
    )
    assert admit(pod, restricted_v2, EXAMPLE_NAMESPACE_ANNOTATIONS) == []


def test_fs_group_must_be_the_first_block_start_of_supplemental_groups_else_of_the_uid_range(
    restricted_v2: dict[str, Any],
) -> None:
    only_uid = {"openshift.io/sa.scc.uid-range": "1000700000/10000", "openshift.io/sa.scc.mcs": "s0:c1,c0"}
    assert admit({**HARDENED, "securityContext": {"fsGroup": 1000700000}}, restricted_v2, only_uid) == []
    groups = {**only_uid, "openshift.io/sa.scc.supplemental-groups": "5000-5999,7000/10"}
    assert admit({**HARDENED, "securityContext": {"fsGroup": 5000}}, restricted_v2, groups) == []
    assert admit({**HARDENED, "securityContext": {"fsGroup": 7000}}, restricted_v2, groups) != []


def test_the_webhook_image_runs_as_a_numeric_non_root_user_in_group_0_with_root_group_owned_files() -> None:
    dockerfile = (REPO_ROOT / "webhook" / "Dockerfile").read_text(encoding="utf-8")
    final = dockerfile.rsplit("\nFROM ", 1)[1]
    [user] = [line.split()[1] for line in final.splitlines() if line.startswith("USER ")]
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) > 0  # runAsNonRoot is verifiable without /etc/passwd
    assert gid == "0"  # restricted-v2 runs the image as an arbitrary UID with GID 0
    [copy] = [line for line in final.splitlines() if line.startswith("COPY --from=build")]
    assert "--chown=0:0" in copy


@settings(max_examples=200, deadline=None)
@given(
    start=st.integers(min_value=1_000_000_000, max_value=2_000_000_000),
    size=st.integers(min_value=1, max_value=100_000),
    offset=st.integers(min_value=-200_000, max_value=200_000),
    where=st.sampled_from(["pod", "container"]),
)
def test_run_as_user_is_admitted_exactly_inside_the_namespace_range(
    start: int, size: int, offset: int, where: str
) -> None:
    scc = load_scc("restricted-v2")
    annotations = {
        "openshift.io/sa.scc.uid-range": f"{start}/{size}",
        "openshift.io/sa.scc.mcs": "s0:c26,c15",
    }
    uid = start + offset
    pod = (
        with_changes("p", {**HARDENED["containers"][0]["securityContext"], "runAsUser": uid})
        if where == "container"
        else {
            **HARDENED,
            "securityContext": {**HARDENED["securityContext"], "runAsUser": uid},
        }
    )
    inside = start <= uid <= start + size - 1
    assert (admit(pod, scc, annotations) == []) is inside

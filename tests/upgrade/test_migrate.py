"""The v1beta2 storage migration on recorded cluster answers, through the real kubernetes client against a local
server on 127.0.0.1 (tests/preflight/replay.py): objects stored as v1beta1 rewritten, storedVersions pruned, an
interrupted run resumed without rewriting twice, and a no-op once storedVersions is ["v1beta2"]."""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests

from batchplane.upgrade.migrate import (
    STORAGE_VERSION_ANNOTATION,
    MigrationError,
    MigrationReport,
    migrate_storage,
)
from tests.preflight.olm_helpers import kubeconfig
from tests.preflight.replay import RecordedServer

RECORDING = Path(__file__).resolve().parent / "recordings" / "migrate-v1beta1-stored.json"
CRDS = ("workloads.kueue.x-k8s.io", "resourceflavors.kueue.x-k8s.io", "clusterqueues.kueue.x-k8s.io")
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _recording() -> list[dict[str, Any]]:
    exchanges: list[dict[str, Any]] = json.loads(RECORDING.read_text(encoding="utf-8"))
    return exchanges


@contextmanager
def _cluster(exchanges: list[dict[str, Any]]) -> Iterator[tuple[Any, list[tuple[str, Any]]]]:
    """A kubernetes ApiClient on the recorded answers, and the (method path, JSON body) of each write it sent."""
    from kubernetes import config

    writes: list[tuple[str, Any]] = []
    with RecordedServer(exchanges) as server, tempfile.TemporaryDirectory() as tmp:
        match = server.replay._match

        def recording_match(request: requests.PreparedRequest) -> dict[str, Any] | None:
            if request.method != "GET":
                path = (request.path_url or "").split("?", 1)[0]
                writes.append((f"{request.method} {path}", json.loads(request.body or b"null")))
            return match(request)

        server.replay._match = recording_match  # type: ignore[method-assign]
        api = config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=str(kubeconfig(Path(tmp), server.url, "ctx")), context="ctx"
        )
        yield api, writes
        assert server.replay.unmatched == []


def _migrate(exchanges: list[dict[str, Any]]) -> tuple[MigrationReport, list[str]]:
    with _cluster(exchanges) as (api, writes):
        report = migrate_storage(api, CRDS)
    return report, [w for w, _ in writes]


def _annotated(exchanges: list[dict[str, Any]], names: set[str]) -> list[dict[str, Any]]:
    """The same cluster after a run annotated the objects ``names`` (what the API server then lists)."""
    out = copy.deepcopy(exchanges)
    for exchange in out:
        for item in (exchange.get("body") or {}).get("items", []):
            if item["metadata"]["name"] in names:
                item["metadata"]["annotations"] = {STORAGE_VERSION_ANNOTATION: "v1beta2"}
    return out


def test_every_v1beta1_stored_object_is_rewritten_through_v1beta2_and_stored_versions_pruned() -> None:
    with _cluster(_recording()) as (api, writes):
        report = migrate_storage(api, CRDS)
    assert writes == [
        (
            f"PATCH {KUEUE}/namespaces/team-a/workloads/job-a",
            {"metadata": {"annotations": {STORAGE_VERSION_ANNOTATION: "v1beta2"}}},
        ),
        (
            f"PATCH {KUEUE}/namespaces/team-a/workloads/job-b",
            {"metadata": {"annotations": {STORAGE_VERSION_ANNOTATION: "v1beta2"}}},
        ),
        (
            f"PATCH {KUEUE}/namespaces/team-b/workloads/job-c",
            {"metadata": {"annotations": {STORAGE_VERSION_ANNOTATION: "v1beta2"}}},
        ),
        (f"PATCH {CRD}/workloads.kueue.x-k8s.io/status", {"status": {"storedVersions": ["v1beta2"]}}),
        (
            f"PATCH {KUEUE}/resourceflavors/default-flavor",
            {"metadata": {"annotations": {STORAGE_VERSION_ANNOTATION: "v1beta2"}}},
        ),
        (f"PATCH {CRD}/resourceflavors.kueue.x-k8s.io/status", {"status": {"storedVersions": ["v1beta2"]}}),
    ]
    assert report.pruned == ["workloads.kueue.x-k8s.io", "resourceflavors.kueue.x-k8s.io"]
    assert report.untouched == ["clusterqueues.kueue.x-k8s.io"]


def test_a_run_interrupted_after_the_second_object_resumes_without_rewriting_the_first_two() -> None:
    failing = {
        "method": "PATCH",
        "host": "*",
        "path": f"{KUEUE}/namespaces/team-b/workloads/job-c",
        "status": 500,
        "body": {"kind": "Status", "code": 500, "message": "etcdserver: request timed out"},
    }
    with (
        pytest.raises(MigrationError, match="rewrite workloads/team-b/job-c: 500"),
        _cluster([failing, *_recording()]) as (
            api,
            writes,
        ),
    ):
        migrate_storage(api, CRDS)
    assert [w for w, _ in writes] == [
        f"PATCH {KUEUE}/namespaces/team-a/workloads/job-a",
        f"PATCH {KUEUE}/namespaces/team-a/workloads/job-b",
        f"PATCH {KUEUE}/namespaces/team-b/workloads/job-c",
    ]
    report, resumed = _migrate(_annotated(_recording(), {"job-a", "job-b"}))
    assert resumed == [
        f"PATCH {KUEUE}/namespaces/team-b/workloads/job-c",
        f"PATCH {CRD}/workloads.kueue.x-k8s.io/status",
        f"PATCH {KUEUE}/resourceflavors/default-flavor",
        f"PATCH {CRD}/resourceflavors.kueue.x-k8s.io/status",
    ]
    assert report.skipped == ["workloads/team-a/job-a", "workloads/team-a/job-b"]
    assert report.rewritten == ["workloads/team-b/job-c", "resourceflavors/default-flavor"]


def test_nothing_is_listed_or_written_when_stored_versions_is_already_v1beta2() -> None:
    migrated = [
        e for e in _recording() if e["path"].startswith(CRD) and e["status"] == 200 and e["method"] == "GET"
    ]
    for exchange in migrated:
        exchange["body"]["status"]["storedVersions"] = ["v1beta2"]
    with _cluster(migrated) as (api, writes):
        report = migrate_storage(api, CRDS)
    assert writes == [] and report.rewritten == [] and report.pruned == []
    assert report.untouched == list(CRDS)


def test_a_crd_that_still_stores_v1beta1_is_refused_before_any_object_is_written() -> None:
    exchanges = _recording()
    for version in exchanges[0]["body"]["spec"]["versions"]:
        version["storage"] = version["name"] == "v1beta1"
    with (
        pytest.raises(MigrationError, match="stores v1beta1, not v1beta2"),
        _cluster(exchanges) as (api, writes),
    ):
        migrate_storage(api, CRDS)
    assert writes == []


def test_the_stack_s_migration_gate_rewrites_through_the_provider_and_outputs_what_it_did(
    tmp_path: Path,
) -> None:
    from batchplane.operators.readiness_provider import ReadinessGateProvider

    with RecordedServer(_recording()) as server:
        props = {
            "gate": "kueue-storage-migration",
            "namespace": "kueue-system",
            "timeoutSeconds": 5,
            "intervalSeconds": 1,
            "context": "ctx",
            "kubeconfig": str(kubeconfig(tmp_path, server.url, "ctx")),
            "version": "0.19.2",
        }
        created = ReadinessGateProvider().create(props)
        assert server.replay.unmatched == []
    assert created.outs["rewritten"] == 4
    assert created.outs["pruned"] == ["resourceflavors.kueue.x-k8s.io", "workloads.kueue.x-k8s.io"]
    assert created.outs["detail"].startswith("4 objects rewritten, 0 already migrated")

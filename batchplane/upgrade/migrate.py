"""Kueue's ``v1beta2`` storage migration, performed through the API server: every Kueue object still stored as
``v1beta1`` is written once more (so the API server re-encodes it in the storage version, ``v1beta2`` from Kueue
0.16), then each CRD's ``status.storedVersions`` is pruned to ``["v1beta2"]``.

The write is Kueue's own: ``hack/migrate-to-v1beta2.sh`` at https://github.com/kubernetes-sigs/kueue/tree/v0.19.2
annotates each object of each kind (L128-140 list the kinds, L190-192
``kubectl annotate … kueue.x-k8s.io/storage-version=v1beta2 --overwrite``). Batchplane sends the same annotation as a
JSON merge patch through the ``v1beta2`` endpoint, one object at a time; the script leaves ``storedVersions`` alone,
the pruning is Kubernetes' documented last step
(https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#upgrade-existing-objects-to-a-new-stored-version).

Progress is recorded on the objects themselves: the annotation marks an object as rewritten, so a run that stops
part-way (an error on one object) resumes by listing again and skipping every annotated object: nothing is rewritten
twice, nothing is skipped. The marker is trusted only while the CRD's storage version is ``v1beta2`` (a kind whose CRD
stores anything else is refused before any write, as later Kueue scripts do), and ``storedVersions`` is pruned only
after every object of the kind carries it. A CRD whose ``storedVersions`` is already ``["v1beta2"]`` is not listed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from batchplane.wellknown import KUEUE_CHART_CRDS as KUEUE_CRDS

GROUP = "kueue.x-k8s.io"
TARGET_VERSION = "v1beta2"
STORAGE_VERSION_ANNOTATION = "kueue.x-k8s.io/storage-version"
"""The per-object marker Kueue's script writes (v0.19.2 ``hack/migrate-to-v1beta2.sh`` L192)."""
PAGE_SIZE = 100
"""Objects per list call (``limit``; further pages through ``continue``), Kueue's script's batch size."""
MERGE_PATCH = "application/merge-patch+json"
CRD_API = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")


class MigrationError(RuntimeError):
    """An API error during the migration (the message names the object); running again resumes."""


class StorageVersionError(MigrationError):
    """A CRD's storage version is not ``v1beta2`` (Kueue older than 0.16): nothing of that kind was written."""


@dataclass
class MigrationReport:
    """What a run did: ``rewritten`` objects (``kind/namespace/name``), ``skipped`` (already annotated) and the CRDs
    whose ``storedVersions`` it ``pruned``; ``untouched`` CRDs were already ``["v1beta2"]`` or absent."""

    rewritten: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    untouched: list[str] = field(default_factory=list)


def _call(what: str, fn: Callable[[], Any]) -> Any:
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    try:
        return fn()
    except ApiException as exc:
        raise MigrationError(f"{what}: {exc.status} {exc.reason}") from exc
    except (HTTPError, OSError) as exc:
        raise MigrationError(f"{what}: {exc}") from exc


def _pages(custom: Any, plural: str) -> Iterator[dict[str, Any]]:
    token: str | None = None
    while True:
        page = _call(
            f"list {plural}.{GROUP}",
            partial(
                custom.list_cluster_custom_object,
                GROUP,
                TARGET_VERSION,
                plural,
                limit=PAGE_SIZE,
                _continue=token,
            ),
        )
        yield from page.get("items") or []
        token = (page.get("metadata") or {}).get("continue") or None
        if token is None:
            return


def migrate_storage(api_client: Any, crds: tuple[str, ...] = KUEUE_CRDS) -> MigrationReport:
    """Rewrite every Kueue object still stored in an older version and prune ``storedVersions`` to ``["v1beta2"]``.

    Args:
        api_client: a ``kubernetes.client.ApiClient``.
        crds: the Kueue CRD names (``<plural>.kueue.x-k8s.io``); defaults to every CRD Kueue's chart ships.

    Returns:
        The :class:`MigrationReport`. Idempotent: a second run rewrites nothing and prunes nothing.

    Raises:
        StorageVersionError: a CRD whose storage version is not ``v1beta2`` (before any of its objects is written).
        MigrationError: an API error (the message names the object; progress so far is kept on the objects'
            annotations, so a second call resumes).
    """
    from kubernetes import client

    custom = client.CustomObjectsApi(api_client)
    report = MigrationReport()
    for name in crds:
        crd = _crd(custom, name)
        if crd is None:
            report.untouched.append(name)
            continue
        stored = list((crd.get("status") or {}).get("storedVersions") or [])
        if stored == [TARGET_VERSION]:
            report.untouched.append(name)
            continue
        versions = crd.get("spec", {}).get("versions", [])
        storage = next((v.get("name") for v in versions if v.get("storage")), None)
        if storage != TARGET_VERSION:
            raise StorageVersionError(
                f"CustomResourceDefinition {name} stores {storage or 'no version'}, not {TARGET_VERSION}: "
                f"upgrade Kueue to 0.16 or later first (step v1beta2-storage-migration)"
            )
        plural = str(crd["spec"]["names"]["plural"])
        namespaced = crd["spec"].get("scope") == "Namespaced"
        for item in _pages(custom, plural):
            meta = item.get("metadata") or {}
            namespace = str(meta.get("namespace") or "")
            key = f"{plural}/{namespace}/{meta['name']}" if namespaced else f"{plural}/{meta['name']}"
            if (meta.get("annotations") or {}).get(STORAGE_VERSION_ANNOTATION) == TARGET_VERSION:
                report.skipped.append(key)
                continue
            _rewrite(custom, plural, namespace if namespaced else "", str(meta["name"]), key)
            report.rewritten.append(key)
        _call(
            f"prune status.storedVersions of CustomResourceDefinition {name}",
            partial(
                custom.patch_cluster_custom_object_status,
                *CRD_API,
                name,
                {"status": {"storedVersions": [TARGET_VERSION]}},
                _content_type=MERGE_PATCH,
            ),
        )
        report.pruned.append(name)
    return report


def _crd(custom: Any, name: str) -> dict[str, Any] | None:
    from kubernetes.client.exceptions import ApiException

    try:
        crd: dict[str, Any] = _call(
            f"CustomResourceDefinition {name}", lambda: custom.get_cluster_custom_object(*CRD_API, name)
        )
    except MigrationError as exc:
        if isinstance(exc.__cause__, ApiException) and exc.__cause__.status == 404:
            return None
        raise
    return crd


def _rewrite(custom: Any, plural: str, namespace: str, name: str, key: str) -> None:
    body = {"metadata": {"annotations": {STORAGE_VERSION_ANNOTATION: TARGET_VERSION}}}
    if namespace:
        _call(
            f"rewrite {key}",
            lambda: custom.patch_namespaced_custom_object(
                GROUP, TARGET_VERSION, namespace, plural, name, body, _content_type=MERGE_PATCH
            ),
        )
    else:
        _call(
            f"rewrite {key}",
            lambda: custom.patch_cluster_custom_object(
                GROUP, TARGET_VERSION, plural, name, body, _content_type=MERGE_PATCH
            ),
        )

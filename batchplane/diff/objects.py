"""Objects of the offline program on both sides, by URN: added, removed, changed, and which changes replace.

Both sides run the real Pulumi program under the offline engine (:func:`batchplane.offline.engine.run_program`, as
``batchplane preview --json``); resources are matched by their URN and their inputs compared leaf by leaf.

A change *replaces* the resource (delete and create instead of an update in place) when a changed input is one of
the provider's force-new fields. The rules, transcribed from the providers' sources:

* ``gcp:container/nodePool:NodePool`` (pulumi-gcp bridges the Terraform google provider; ForceNew there is replace
  here): ``name``, ``cluster``, ``location``, ``project`` (the pool's identity) and, inside ``nodeConfig``:
  ``guestAccelerators`` (type, count, gpuDriverInstallationConfig, gpuPartitionSize, gpuSharingConfig), ``spot``,
  ``preemptible``, ``serviceAccount``, ``oauthScopes``, ``metadata``, ``minCpuPlatform``, ``localSsdCount``,
  ``reservationAffinity``, ``shieldedInstanceConfig``, ``bootDiskKmsKey``, ``gvnic``, ``gcfsConfig``,
  ``secondaryBootDisks``, ``localNvmeSsdBlockConfig``, ``ephemeralStorageLocalSsdConfig`` —
  ``schemaNodeConfig`` in hashicorp/terraform-provider-google ``google/services/container/node_config.go``
  (commit 00b984c6987304290117e54f87cdfd38f2be0685). ``machineType``, ``diskType`` and ``diskSizeGb`` are **not**
  force-new since provider v5.10.0 (GoogleCloudPlatform/magic-modules PR 9575: GKE migrates the nodes in place).
* every Kubernetes object (``kubernetes:<group>/<version>:<Kind>``): ``metadata.name``, ``metadata.namespace``;
  ConfigMap ``data``/``binaryData``; Secret ``type``/``data``/``stringData``; Service ``spec.clusterIP``;
  RoleBinding/ClusterRoleBinding ``roleRef``; Deployment/DaemonSet/StatefulSet ``spec.selector``; StatefulSet
  ``spec.serviceName``/``spec.podManagementPolicy``/``spec.volumeClaimTemplates``; Job ``spec.template``,
  ``spec.selector``, ``spec.completions``, ``spec.parallelism`` — the ``forceNew`` table in pulumi/pulumi-kubernetes
  ``provider/pkg/provider/diff.go`` (commit 00302beb58ae08591f0c8b0b065871c50ba35250).

* ``kubernetes:helm.sh/v3:Release``: ``name``, ``namespace`` (a Helm release cannot be renamed or moved: Pulumi
  uninstalls it and installs a new one). A Release of a chart that ships CRDs as templates
  (:data:`TEMPLATE_CRDS`: Kueue's, :data:`batchplane.wellknown.KUEUE_CHART_CRDS`) that is replaced or removed is
  marked with those CRDs and the number of the base stack's objects in their API group: the uninstall deletes the
  CRDs and every such object (unless the Release is retained on delete, which the diff cannot see; the policy pack's
  ``operator-release-replacement`` refuses the change).

A changed ``apiVersion``/``kind`` changes the type token and so the URN: the diff shows that object removed and a new
one added, which Pulumi also carries out as delete + create (unless an alias maps the old URN).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from batchplane.diff.differ import ObjectChange
from batchplane.targets.gke.rules import NODE_POOL_REPLACE
from batchplane.wellknown import KUEUE_CHART_CRDS

NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
RELEASE_REPLACE: tuple[str, ...] = ("name", "namespace")
TEMPLATE_CRDS: dict[str, tuple[str, ...]] = {"kueue": KUEUE_CHART_CRDS}
"""Chart name (last segment of the Release's ``chart``) → the CRDs it ships as templates (deleted with the release)."""

K8S_METADATA_REPLACE: tuple[str, ...] = ("metadata.name", "metadata.namespace")
K8S_KIND_REPLACE: dict[str, tuple[str, ...]] = {
    "ConfigMap": ("data", "binaryData"),
    "Secret": ("type", "data", "stringData"),
    "Service": ("spec.clusterIP",),
    "RoleBinding": ("roleRef",),
    "ClusterRoleBinding": ("roleRef",),
    "Deployment": ("spec.selector",),
    "DaemonSet": ("spec.selector",),
    "StatefulSet": (
        "spec.selector",
        "spec.serviceName",
        "spec.podManagementPolicy",
        "spec.revisionHistoryLimit",
        "spec.volumeClaimTemplates",
    ),
    "Job": ("spec.template", "spec.selector", "spec.completions", "spec.parallelism"),
}
"""Kubernetes kind → input paths whose change replaces the object, besides ``metadata.name``/``namespace``."""


def replace_paths(type_token: str) -> tuple[str, ...]:
    """The input paths whose change replaces a resource of this type (empty: always updated in place)."""
    if type_token == NODE_POOL_TYPE:
        return NODE_POOL_REPLACE
    if type_token == RELEASE_TYPE:
        return RELEASE_REPLACE
    parts = type_token.split(":")
    if (
        len(parts) == 3
        and parts[0] == "kubernetes"
        and "/" in parts[1]
        and not parts[1].startswith("helm.sh/")
    ):
        return K8S_METADATA_REPLACE + K8S_KIND_REPLACE.get(parts[2], ())
    return ()


def _leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        for key in sorted(value):
            yield from _leaves(value[key], f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            yield from _leaves(item, f"{prefix}[{i}]")
    else:
        yield prefix, value


def changed_paths(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Leaf paths (``spec.resourceGroups[0].flavors[1].resources[2].nominalQuota``) whose value differs."""
    b, a = dict(_leaves(before)), dict(_leaves(after))
    return sorted(p for p in set(b) | set(a) if b.get(p, _MISSING) != a.get(p, _MISSING))


_MISSING = object()


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")


def diff_objects(base: Iterable[Any], head: Iterable[Any]) -> list[ObjectChange]:
    """Compare two runs' resources (``RecordedResource``: ``urn``, ``type``, ``inputs``) by URN.

    Returns:
        One :class:`ObjectChange` per URN that is only on one side (``added`` / ``removed``) or whose inputs differ
        (``changed``, with the changed leaf paths and the replacing ones), sorted by URN.
    """
    before = {r.urn: r for r in base}
    after = {r.urn: r for r in head}
    out: list[ObjectChange] = []
    for urn in sorted(set(before) | set(after)):
        b, a = before.get(urn), after.get(urn)
        if b is None:
            out.append(ObjectChange(urn, after[urn].type, "added"))
        elif a is None:
            out.append(ObjectChange(urn, b.type, "removed", **_taken(b, before.values())))
        else:
            paths = changed_paths(b.inputs, a.inputs)
            if paths:
                rules = replace_paths(a.type)
                replacing = tuple(p for p in paths if any(_under(p, r) for r in rules))
                taken = _taken(b, before.values()) if replacing else {}
                out.append(ObjectChange(urn, a.type, "changed", tuple(paths), replacing, **taken))
    return out


def _taken(release: Any, base: Iterable[Any]) -> dict[str, Any]:
    """``crds`` and ``crd_objects`` of a Release that goes away (empty for anything else)."""
    if release.type != RELEASE_TYPE:
        return {}
    chart = str(release.inputs.get("chart") or "").rstrip("/").rsplit("/", 1)[-1]
    crds = TEMPLATE_CRDS.get(chart, ())
    if not crds:
        return {}
    groups = {crd.split(".", 1)[1] for crd in crds}
    count = sum(
        1
        for r in base
        if r.type.split(":")[0] == "kubernetes" and r.type.split(":")[1].split("/")[0] in groups
    )
    return {"crds": crds, "crd_objects": count}


def summarize_objects(changes: Sequence[ObjectChange]) -> dict[str, int]:
    """Counts: ``added``, ``removed``, ``changed``, ``replaced``."""
    return {
        "added": sum(c.status == "added" for c in changes),
        "removed": sum(c.status == "removed" for c in changes),
        "changed": sum(c.status == "changed" for c in changes),
        "replaced": sum(bool(c.replace) for c in changes),
    }


def crd_losses(changes: Sequence[ObjectChange]) -> list[str]:
    """One sentence per Release change that deletes CRDs (``crds`` set), for the views' red warning."""
    return [
        f"{c.urn.rsplit('::', 1)[-1]} would be {'replaced' if c.status == 'changed' else 'deleted'} "
        f"({', '.join(c.replace) + ' changed' if c.replace else 'gone from the stack'}): its uninstall deletes the "
        f"{len(c.crds)} CRDs its chart ships ({', '.join(c.crds)}) and the stack's {c.crd_objects} objects of those "
        "kinds, with every Workload in the cluster"
        for c in changes
        if c.crds
    ]

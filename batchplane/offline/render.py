"""Every Kubernetes object the program declares, as ``kubectl apply``-ready manifests.

Works on :class:`~batchplane.offline.model.RecordedResource` lists (run the program with
``preview=False`` first so every Output has a value). A resource is rendered when it is a concrete
Kubernetes object: type ``kubernetes:<apiVersion>:<Kind>``, a custom resource, with ``apiVersion``
and ``kind`` among its inputs (typed resources such as ``core/v1:Namespace`` put their fields at
the top level; ``apiextensions.CustomResource`` too). Remote/provider-side expansions cannot be
rendered offline — ``helm.sh/v3:Release``, ``helm.sh/v4:Chart``, ``yaml/v2:*``, ``kustomize/v2:*``
(and the deprecated client-side ``helm.sh/v3:Chart``, whose template invoke is mocked empty) — nor
``*Patch`` resources (partial server-side-apply patches of objects that already exist): those come
back as :class:`SkippedResource` entries. Client-side v1 ``yaml:ConfigFile``/``ConfigGroup``
components are not objects themselves; their children are.

Order: a topological order over ``dependencies`` and ``parent`` links (followed transitively
through non-rendered resources such as components and Helm releases); among objects that are
ready at the same time, ``Namespace`` first, then ``CustomResourceDefinition``, then cluster-scoped
objects (built-in cluster-scoped kinds, and custom resources without ``metadata.namespace``), then
the rest, and admission webhook configurations last (Helm's install order does the same); then
declaration order.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from batchplane.offline.model import Path as ValuePath
from batchplane.offline.model import RecordedResource, mask_secrets
from batchplane.stack.files import SECRET_PLACEHOLDER

_NOT_RENDERED: dict[str, str] = {
    "kubernetes:helm.sh/v3:Release": "a Helm release, installed by the provider's embedded Helm at deploy time",
    "kubernetes:helm.sh/v4:Chart": "a Helm chart, expanded by the provider at deploy time",
    "kubernetes:helm.sh/v3:Chart": "a client-side Helm chart, templated by the Helm invoke at deploy time",
    "kubernetes:yaml/v2:ConfigFile": "a YAML file, expanded by the provider at deploy time",
    "kubernetes:yaml/v2:ConfigGroup": "a YAML group, expanded by the provider at deploy time",
    "kubernetes:kustomize/v2:Directory": "a kustomization, built by the provider at deploy time",
}
_PATCH_REASON = "a server-side apply patch of an existing object, not a whole object"

_BUILTIN_GROUPS = frozenset(
    {
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "apps",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "storagemigration.k8s.io",
    }
)
_CLUSTER_SCOPED_BUILTINS = frozenset(
    {
        "APIService",
        "CSIDriver",
        "CSINode",
        "ClusterRole",
        "ClusterRoleBinding",
        "IngressClass",
        "PersistentVolume",
        "PriorityClass",
        "PriorityLevelConfiguration",
        "FlowSchema",
        "RuntimeClass",
        "StorageClass",
        "VolumeAttachment",
        "DeviceClass",
    }
)
_LAST_KINDS = frozenset(
    {
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    }
)
_UNSAFE = re.compile(r"[^a-z0-9.-]+")


@dataclass(frozen=True)
class RenderedObject:
    """One Kubernetes object ready for ``kubectl apply``.

    Attributes:
        urn: the URN of the resource it came from.
        manifest: ``{"apiVersion", "kind", "metadata", ...}``; ``metadata.name`` defaults to the
            Pulumi logical name (the real provider would append a random suffix). Secret values are
            :data:`SECRET_PLACEHOLDER`.
        cluster: the logical name of the Kubernetes provider that applies it (``k8s``, ``us-east4-k8s``):
            which cluster it belongs to; ``""`` for the default provider.
        secret_paths: where secret values were replaced by :data:`SECRET_PLACEHOLDER` in ``manifest``.
    """

    urn: str
    manifest: dict[str, Any]
    cluster: str = ""
    secret_paths: tuple[ValuePath, ...] = ()

    @property
    def kind(self) -> str:
        """The object's ``kind``."""
        return str(self.manifest["kind"])

    @property
    def name(self) -> str:
        """``metadata.name`` (or ``generateName``)."""
        metadata = self.manifest["metadata"]
        return str(metadata.get("name") or metadata.get("generateName", ""))

    @property
    def namespace(self) -> str | None:
        """``metadata.namespace``, ``None`` when not set (cluster-scoped or the default namespace)."""
        namespace = self.manifest["metadata"].get("namespace")
        return None if namespace is None else str(namespace)


@dataclass(frozen=True)
class SkippedResource:
    """A Kubernetes resource that cannot be rendered offline, and why.

    Attributes:
        type: the type token.
        name: the logical name.
        urn: its URN.
        reason: why it is not rendered.
        detail: what it would install, e.g. ``chart oci://... version 0.19.2`` (may be empty).
    """

    type: str
    name: str
    urn: str
    reason: str
    detail: str


@dataclass(frozen=True)
class Rendering:
    """The result of :func:`render_resources`.

    Attributes:
        objects: the rendered objects, in apply order.
        skipped: resources that cannot be rendered, in declaration order.
    """

    objects: list[RenderedObject]
    skipped: list[SkippedResource]

    def clusters(self) -> list[str]:
        """The clusters (Kubernetes provider names) the objects belong to, in order of first appearance."""
        return list(dict.fromkeys(obj.cluster for obj in self.objects))

    def file_names(self) -> list[str]:
        """One file name per object: ``NN-<kind>-<namespace>-<name>.yaml`` (``NN-<kind>-<name>.yaml``
        without a namespace); NN is the 0-based apply position within its cluster, zero-padded to at least
        2 digits; lower case, characters outside ``[a-z0-9.-]`` replaced by ``-``. With more than one cluster,
        each name is prefixed by its cluster's directory (``<provider name>/``)."""
        split = len(self.clusters()) > 1
        counts: dict[str, int] = {}
        totals = {c: sum(1 for o in self.objects if o.cluster == c) for c in self.clusters()}
        names = []
        for obj in self.objects:
            index = counts.get(obj.cluster, 0)
            counts[obj.cluster] = index + 1
            width = max(2, len(str(totals[obj.cluster] - 1)))
            parts = [obj.kind, *([obj.namespace] if obj.namespace else []), obj.name or "unnamed"]
            stem = "-".join(_safe(part) for part in parts)
            prefix = f"{_safe(obj.cluster) or 'default'}/" if split else ""
            names.append(f"{prefix}{index:0{width}d}-{stem}.yaml")
        return names

    def to_yaml(self) -> str:
        """All objects as one multi-document YAML stream (each document starts with ``---``); with more than
        one cluster, each cluster's objects follow a ``# cluster: <provider name>`` comment."""
        if len(self.clusters()) <= 1:
            return "".join(dump_yaml(obj.manifest) for obj in self.objects)
        out = []
        for cluster in self.clusters():
            out.append(f"# cluster: {cluster or 'default'}\n")
            out.extend(dump_yaml(obj.manifest) for obj in self.objects if obj.cluster == cluster)
        return "".join(out)

    def write(self, directory: Path) -> list[Path]:
        """Write one file per object into ``directory`` (created if missing; one subdirectory per cluster when
        there are several); returns the paths."""
        directory.mkdir(parents=True, exist_ok=True)
        paths = []
        for obj, file_name in zip(self.objects, self.file_names(), strict=True):
            path = directory / file_name
            path.parent.mkdir(exist_ok=True)
            path.write_text(dump_yaml(obj.manifest), encoding="utf-8")
            paths.append(path)
        return paths


def _safe(part: str) -> str:
    return _UNSAFE.sub("-", part.lower()).strip("-")


def _at(value: Any, path: ValuePath) -> Any:
    for part in path:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _leaf_paths(value: Any, path: ValuePath) -> list[ValuePath]:
    """The paths of the scalars inside ``value`` (at ``path``): a secret mapping keeps its shape (a Secret's
    ``stringData`` stays a map of keys), only its values become placeholders."""
    if isinstance(value, Mapping) and value:
        return [leaf for k, v in value.items() for leaf in _leaf_paths(v, (*path, str(k)))]
    if isinstance(value, list) and value:
        return [leaf for i, v in enumerate(value) for leaf in _leaf_paths(v, (*path, i))]
    return [path]


class _ManifestDumper(yaml.SafeDumper):
    """SafeDumper that writes multi-line strings as ``|`` blocks (readable embedded configs)."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ManifestDumper.add_representer(str, _str_representer)


def dump_yaml(manifest: dict[str, Any]) -> str:
    """One YAML document (``---`` first, keys in manifest order)."""
    return yaml.dump(
        manifest, Dumper=_ManifestDumper, sort_keys=False, explicit_start=True, allow_unicode=True, width=110
    )


def _skip_reason(resource: RecordedResource) -> str | None:
    if resource.type in _NOT_RENDERED:
        return _NOT_RENDERED[resource.type]
    if resource.type.endswith("Patch"):
        return _PATCH_REASON
    return None


def _detail(resource: RecordedResource) -> str:
    inputs = resource.inputs
    parts = []
    for key, label in (
        ("chart", "chart"),
        ("version", "version"),
        ("file", "file"),
        ("directory", "directory"),
    ):
        if isinstance(inputs.get(key), str | int | float):
            parts.append(f"{label} {inputs[key]}")
    repo = (
        (inputs.get("repositoryOpts") or {}).get("repo")
        if isinstance(inputs.get("repositoryOpts"), dict)
        else None
    )
    if repo:
        parts.append(f"repo {repo}")
    if isinstance(inputs.get("files"), list):
        parts.append(f"files {', '.join(map(str, inputs['files']))}")
    if isinstance(inputs.get("objs"), list):
        parts.append(f"{len(inputs['objs'])} inline objects")
    return ", ".join(parts)


def manifest_of(resource: RecordedResource) -> dict[str, Any] | None:
    """The Kubernetes object a resource declares, or ``None`` if it is not a concrete object.

    ``apiVersion``, ``kind`` and ``metadata`` come first, then the other inputs in key order;
    ``status`` and Pulumi-internal ``__*`` inputs are dropped.
    """
    inputs = resource.inputs
    if not (resource.custom and resource.type.startswith("kubernetes:")):
        return None
    if not isinstance(inputs.get("apiVersion"), str) or not isinstance(inputs.get("kind"), str):
        return None
    metadata = dict(inputs.get("metadata") or {})
    if not metadata.get("name") and not metadata.get("generateName"):
        metadata = {"name": resource.name, **metadata}
    manifest: dict[str, Any] = {
        "apiVersion": inputs["apiVersion"],
        "kind": inputs["kind"],
        "metadata": metadata,
    }
    for key, value in inputs.items():
        if key not in manifest and key != "status" and not key.startswith("__"):
            manifest[key] = value
    return manifest


def _tier(manifest: dict[str, Any]) -> int:
    kind = manifest["kind"]
    api_version: str = manifest["apiVersion"]
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    if kind == "Namespace" and group == "":
        return 0
    if kind == "CustomResourceDefinition":
        return 1
    if kind in _LAST_KINDS:
        return 4
    builtin = group == "" or group in _BUILTIN_GROUPS
    if (builtin and kind in _CLUSTER_SCOPED_BUILTINS) or (
        not builtin and "namespace" not in manifest["metadata"]
    ):
        return 2
    return 3


def render_resources(resources: Sequence[RecordedResource]) -> Rendering:
    """Split recorded resources into rendered objects (in apply order) and skipped resources.

    Args:
        resources: a run's resources in declaration order (``ProgramRun.resources``).

    Returns:
        A :class:`Rendering`; resources that are not Kubernetes objects at all (providers, GCP
        resources, components) appear in neither list.
    """
    rendered: dict[str, tuple[int, RenderedObject]] = {}
    skipped: list[SkippedResource] = []
    providers = {r.urn: r.name for r in resources if r.type.startswith("pulumi:providers:")}
    for index, resource in enumerate(resources):
        reason = _skip_reason(resource) if resource.type.startswith("kubernetes:") else None
        if reason is not None:
            skipped.append(
                SkippedResource(resource.type, resource.name, resource.urn, reason, _detail(resource))
            )
            continue
        manifest = manifest_of(resource)
        if manifest is not None:
            secrets = tuple(
                leaf
                for p in resource.secret_paths
                if not p or p[0] in manifest
                for leaf in _leaf_paths(_at(manifest, p), p)
            )
            cluster = providers.get(resource.provider_urn or "", "")
            obj = RenderedObject(
                resource.urn, mask_secrets(manifest, secrets, SECRET_PLACEHOLDER), cluster, secrets
            )
            rendered[resource.urn] = (index, obj)
    order = _apply_order(resources, rendered)
    return Rendering(objects=[rendered[urn][1] for urn in order], skipped=skipped)


def _waits_for(resources: Sequence[RecordedResource], rendered: Mapping[str, object]) -> dict[str, set[str]]:
    """For each rendered URN, the rendered URNs it must follow (through non-rendered resources too)."""
    by_urn = {r.urn: r for r in resources}
    memo: dict[str, set[str]] = {}

    def predecessors(urn: str) -> list[str]:
        resource = by_urn.get(urn)
        if resource is None:
            return []
        return [*resource.dependencies, *([resource.parent] if resource.parent else [])]

    def reachable(urn: str, seen: set[str]) -> set[str]:
        """Rendered resources reachable from ``urn`` without passing through another rendered one."""
        if urn in rendered:
            return {urn}
        if urn not in memo:
            found: set[str] = set()
            if urn not in seen:
                seen.add(urn)
                for pred in predecessors(urn):
                    found |= reachable(pred, seen)
            memo[urn] = found
        return memo[urn]

    waits: dict[str, set[str]] = {}
    for urn in rendered:
        needs: set[str] = set()
        for pred in predecessors(urn):
            needs |= reachable(pred, set())
        needs.discard(urn)
        waits[urn] = needs
    return waits


def _apply_order(
    resources: Sequence[RecordedResource], rendered: dict[str, tuple[int, RenderedObject]]
) -> list[str]:
    """Kahn's algorithm over :func:`_waits_for`, ready objects taken by (tier, declaration index)."""
    waits = _waits_for(resources, rendered)
    unlocks: dict[str, list[str]] = {urn: [] for urn in rendered}
    for urn, needs in waits.items():
        for pred in needs:
            unlocks[pred].append(urn)

    def key(urn: str) -> tuple[int, int, str]:
        index, obj = rendered[urn]
        return (_tier(obj.manifest), index, urn)

    ready = [key(urn) for urn, needs in waits.items() if not needs]
    heapq.heapify(ready)
    remaining = {urn: len(needs) for urn, needs in waits.items()}
    order: list[str] = []
    while ready:
        urn = heapq.heappop(ready)[2]
        order.append(urn)
        for successor in unlocks[urn]:
            remaining[successor] -= 1
            if remaining[successor] == 0:
                heapq.heappush(ready, key(successor))
    if len(order) < len(rendered):  # a cycle (impossible with Resource objects): keep declaration order
        placed = set(order)
        order += sorted((u for u in rendered if u not in placed), key=lambda u: rendered[u][0])
    return order

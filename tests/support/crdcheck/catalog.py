"""A catalog of CustomResourceDefinitions that validates rendered objects the way the API server would.

For an object of a known ``apiVersion``/``kind``, :meth:`CrdCatalog.validate`:

1. applies the CRD version's structural defaults (see :mod:`tests.support.crdcheck._defaults`);
2. validates ``metadata.name`` (DNS-1123 subdomain, at most 253 characters) and that ``metadata.namespace`` is
   set exactly when the CRD is ``Namespaced`` (a DNS-1123 label; ``default_namespace`` stands in for a missing
   one, as ``kubectl apply -n`` does);
3. validates against the ``openAPIV3Schema`` with jsonschema Draft 2020-12 (translated in
   :mod:`tests.support.crdcheck._schema`; unknown fields are reported, not pruned);
4. checks ``x-kubernetes-list-type`` ``set``/``map`` uniqueness;
5. evaluates every ``x-kubernetes-validations`` CEL rule at its location, unless step 3 found a blocking error
   (enum, required, type, maxLength, maxItems, maxProperties), in which case, like the API server, it reports
   that the rules were not checked.

CRD files are indexed cheaply at load time and parsed on first use, so loading the multi-megabyte KubeRay
and Training Operator CRDs costs nothing until an object of theirs is validated. Parsed schemas, jsonschema
validators and compiled CEL programs are cached.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import yaml
from jsonschema import Draft202012Validator

from tests.support.crdcheck._defaults import apply_defaults_in_place
from tests.support.crdcheck._schema import BLOCKING_VALIDATORS, issues_from_error, make_validator, show
from tests.support.crdcheck._walk import ABSENT, Walker, rule_of
from tests.support.crdcheck.issues import SchemaIssue

_LOADER: Final[type[yaml.SafeLoader]] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DNS1123_LABEL: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_RE: Final = re.compile(rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*$")
_DNS1123_LABEL_RE: Final = re.compile(rf"^{_DNS1123_LABEL}$")
#: Message texts of apimachinery ``pkg/util/validation`` (IsDNS1123Subdomain, IsDNS1123Label).
SUBDOMAIN_MESSAGE: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MESSAGE: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
#: The API server's note when CEL rules are skipped (apiextensions-apiserver ``hasBlockingErr``).
RULES_NOT_CHECKED: Final = (
    "some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation"
)

# Header of a controller-gen CRD file: group/scope at two spaces under `spec:`, kind at four under `names:`.
_HEADER_RE: Final = re.compile(r"^kind: CustomResourceDefinition$", re.M)
_SPEC_RE: Final = re.compile(r"^spec:\n((?:(?:  .*)?\n)*)", re.M)
_GROUP_RE: Final = re.compile(r"^  group: (\S+)$", re.M)
_SCOPE_RE: Final = re.compile(r"^  scope: (\S+)$", re.M)
_NAMES_RE: Final = re.compile(r"^  names:\n((?:    .*\n)+)", re.M)
_KIND_RE: Final = re.compile(r"^    kind: (\S+)$", re.M)


@dataclass(eq=False)
class CrdVersion:
    """One served version of one CRD, with its cached validator.

    Attributes:
        group: API group, e.g. ``kueue.x-k8s.io``.
        version: e.g. ``v1beta2``.
        kind: e.g. ``ClusterQueue``.
        plural: e.g. ``clusterqueues``.
        scope: ``Namespaced`` or ``Cluster``.
        served: whether the API server serves this version.
        storage: whether this is the storage version.
        deprecated: whether the version is marked deprecated.
        schema: the raw ``openAPIV3Schema`` (do not modify).
        source: the file the CRD was read from.
    """

    group: str
    version: str
    kind: str
    plural: str
    scope: str
    served: bool
    storage: bool
    deprecated: bool
    schema: Mapping[str, Any]
    source: Path

    @property
    def api_version(self) -> str:
        """``group/version``, e.g. ``kueue.x-k8s.io/v1beta2``."""
        return f"{self.group}/{self.version}"

    @property
    def namespaced(self) -> bool:
        """True when objects of this kind live in a namespace."""
        return self.scope == "Namespaced"

    @cached_property
    def validator(self) -> Draft202012Validator:
        """The jsonschema validator of :attr:`schema` (built once)."""
        return make_validator(self.schema)

    @cached_property
    def has_rules(self) -> bool:
        """True when the schema has at least one ``x-kubernetes-validations`` rule."""
        return any(True for _ in self.rules())

    def rules(self) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """Yield ``(schema location, rule spec)`` for every ``x-kubernetes-validations`` entry, in order."""
        yield from _rules_under(self.schema, "")


def _rules_under(node: Mapping[str, Any], where: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for spec in node.get("x-kubernetes-validations") or ():
        yield where, spec
    for name, sub in (node.get("properties") or {}).items():
        yield from _rules_under(sub, f"{where}.{name}" if where else name)
    for key, suffix in (("items", "[*]"), ("additionalProperties", "[*]")):
        sub = node.get(key)
        if isinstance(sub, Mapping):
            yield from _rules_under(sub, where + suffix)


@dataclass
class _CrdFile:
    """A CRD file: indexed from its header, parsed on first use."""

    path: Path
    group: str
    kind: str
    document: dict[str, Any] | None = None

    def load(self) -> dict[str, Any]:
        if self.document is None:
            self.document = yaml.load(self.path.read_text(encoding="utf-8"), Loader=_LOADER)
        return self.document


@dataclass
class CrdCatalog:
    """The CRDs found under some directories, by ``(group, kind)``.

    Build it with :meth:`load`. Validation results never depend on the order files were found in.

    One ``(group, kind)`` may be defined by several *releases* of its project, each in its own directory (e.g.
    ``opendatahub-operator/v2.35.0`` and ``v3.0.0``, ``rhoai/3.5.0``: the DataScienceCluster CRD of each). An
    object is then checked against the definition :meth:`crd_for` picks for its ``apiVersion``: among the
    definitions that serve that version, those whose *storage* version it is (the release that writes objects of
    that shape), then the newest release by the version in its directory name. Two definitions in the same
    directory are an error.

    Attributes:
        dirs: the directories that were searched.
    """

    dirs: tuple[Path, ...]
    _files: dict[tuple[str, str], list[_CrdFile]] = field(default_factory=dict, repr=False)
    _versions: dict[tuple[str, str, str], CrdVersion] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, *dirs: Path) -> CrdCatalog:
        """Index every ``*.yaml``/``*.yml`` CRD under ``dirs`` (recursively); other YAML files are skipped.

        Only file headers are read here; each CRD is parsed the first time one of its objects is validated.

        Raises:
            FileNotFoundError: a directory does not exist.
            ValueError: two files in the same directory define the same group and kind.
        """
        catalog = cls(tuple(Path(d) for d in dirs))
        for directory in catalog.dirs:
            if not directory.is_dir():
                raise FileNotFoundError(f"CRD directory {directory} does not exist")
            for path in sorted(p for p in directory.rglob("*") if p.suffix in (".yaml", ".yml")):
                for crd_file in _index_file(path):
                    known = catalog._files.setdefault((crd_file.group, crd_file.kind), [])
                    for other in known:
                        if other.path.parent == path.parent:
                            raise ValueError(
                                f"{crd_file.kind}.{crd_file.group} is defined twice: {other.path} and {path}"
                            )
                    known.append(crd_file)
        for known in catalog._files.values():
            known.sort(key=_release_order)
        return catalog

    def kinds(self) -> list[tuple[str, str]]:
        """All ``(group, kind)`` pairs in the catalog, sorted."""
        return sorted(self._files)

    def crd_for(self, api_version: str, kind: str) -> CrdVersion:
        """The CRD version serving ``kind`` at ``api_version`` (``group/version``).

        Raises:
            KeyError: the group/kind is not in the catalog, or the CRD does not serve that version; the
                message names what is known.
        """
        group, _, version = api_version.rpartition("/")
        cached = self._versions.get((group, version, kind))
        if cached is not None:
            return cached
        crd_files = self._files.get((group, kind))
        if not crd_files:
            known = sorted(k for g, k in self._files if g == group)
            hint = f"known kinds in {group}: {', '.join(known)}" if known else f"no CRD of group {group!r}"
            raise KeyError(f"no CRD for kind {kind!r} in apiVersion {api_version!r} ({hint})")
        candidates: list[tuple[bool, int, _CrdFile, Mapping[str, Any]]] = []
        served: set[str] = set()
        for order, crd_file in enumerate(crd_files):
            for entry in crd_file.load()["spec"]["versions"]:
                if entry.get("served", True):
                    served.add(entry["name"])
                    if entry["name"] == version:
                        candidates.append((bool(entry.get("storage", False)), order, crd_file, entry))
        if not candidates:
            plural = crd_files[-1].load()["spec"]["names"]["plural"]
            raise KeyError(
                f"CRD {plural}.{group} does not serve version {version!r} (served: {', '.join(sorted(served))})"
            )
        storage, _, crd_file, entry = max(candidates, key=lambda c: (c[0], c[1]))
        spec = crd_file.load()["spec"]
        result = CrdVersion(
            group=group,
            version=version,
            kind=kind,
            plural=spec["names"]["plural"],
            scope=spec.get("scope", "Namespaced"),
            served=True,
            storage=storage,
            deprecated=bool(entry.get("deprecated", False)),
            schema=entry["schema"]["openAPIV3Schema"],
            source=crd_file.path,
        )
        self._versions[(group, version, kind)] = result
        return result

    def sources(self, group: str, kind: str) -> list[Path]:
        """The files that define ``kind`` in ``group``, oldest release first (empty when unknown)."""
        return [crd_file.path for crd_file in self._files.get((group, kind), ())]

    def apply_defaults(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Return a deep copy of ``obj`` with its CRD's structural defaults applied (``obj`` is not modified).

        Raises:
            KeyError: see :meth:`crd_for`.
        """
        crd = self.crd_for(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        result = copy.deepcopy(dict(obj))
        apply_defaults_in_place(result, crd.schema)
        return result

    def validate(
        self,
        obj: Mapping[str, Any],
        old: Mapping[str, Any] | None = None,
        *,
        defaults: bool = True,
        default_namespace: str | None = None,
    ) -> list[SchemaIssue]:
        """Validate a rendered object (a create, or an update from ``old``) as the API server would.

        Args:
            obj: the object (decoded YAML/JSON: dicts, lists, scalars).
            old: the object before the update, or ``None`` for a create. Transition rules (those using
                ``oldSelf``) are evaluated only with it, wherever it has a value at the rule's location.
            defaults: apply structural defaults first (the API server always does; ``False`` shows what a rule
                sees without them).
            default_namespace: the namespace a namespaced object without ``metadata.namespace`` is applied to
                (like ``kubectl apply -n``); ``None`` (the default) reports the missing namespace.

        Returns:
            Every issue found (empty when valid), in the order of the steps in the module docstring.

        Raises:
            KeyError: the ``apiVersion``/``kind`` has no CRD in the catalog (see :meth:`crd_for`).
            ValueError: ``old`` is of a different ``apiVersion``/``kind``.
        """
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        crd = self.crd_for(api_version, kind)
        if old is not None and (old.get("apiVersion"), old.get("kind")) != (api_version, kind):
            raise ValueError(f"old object is a {old.get('kind')} ({old.get('apiVersion')}), not a {kind}")
        current = self.apply_defaults(obj) if defaults else copy.deepcopy(dict(obj))
        previous: Any = ABSENT
        if old is not None:
            previous = self.apply_defaults(old) if defaults else copy.deepcopy(dict(old))
        issues = _metadata_issues(current.get("metadata"), crd, default_namespace)
        blocking = False
        for error in crd.validator.iter_errors(current):
            blocking = blocking or str(error.validator) in BLOCKING_VALIDATORS
            issues.extend(issues_from_error(error, crd.schema, list(error.absolute_path)))
        walker = Walker(run_cel=not blocking, issues=[])
        walker.walk(current, crd.schema, previous, "")
        issues.extend(walker.issues)
        if blocking and crd.has_rules:
            issues.append(SchemaIssue("", RULES_NOT_CHECKED, "cel"))
        return _unique(issues)

    def check_rules(self) -> list[SchemaIssue]:
        """Compile every CEL rule of every CRD version in the catalog; report those that cannot be evaluated.

        Parses every CRD (slow for the large ones). Paths are ``<kind>.<version>:<schema location>`` with
        ``[*]`` for list items and map values.

        Returns:
            One ``cel-unsupported`` issue per rule the ``cel`` library cannot compile or lacks a function for.
        """
        issues: list[SchemaIssue] = []
        for group, kind in self.kinds():
            versions = {
                entry["name"]: None
                for crd_file in self._files[(group, kind)]
                for entry in crd_file.load()["spec"]["versions"]
                if entry.get("served", True)
            }
            for version in versions:
                crd = self.crd_for(f"{group}/{version}", kind)
                for where, rule_spec in crd.rules():
                    rule = rule_of(rule_spec)
                    if rule.error:
                        message = f"{rule.error} in rule: {rule.rule}"
                        issues.append(
                            SchemaIssue(f"{kind}.{crd.version}:{where}", message, "cel-unsupported")
                        )
        return issues


def _release_order(crd_file: _CrdFile) -> tuple[tuple[int, ...], str]:
    """Sort key of a definition: the numbers in its directory's name (``v3.0.0`` → ``(3, 0, 0)``), then path."""
    numbers = tuple(int(n) for n in re.findall(r"\d+", crd_file.path.parent.name))
    return numbers, str(crd_file.path)


def _index_file(path: Path) -> list[_CrdFile]:
    text = path.read_text(encoding="utf-8")
    if not _HEADER_RE.search(text):
        return []
    single = not re.search(r"^---\s*$", text.strip().removeprefix("---"), re.M)
    spec = _SPEC_RE.search(text) if single else None
    names = _NAMES_RE.search(spec.group(1)) if spec else None
    group = _GROUP_RE.search(spec.group(1)) if spec else None
    kind = _KIND_RE.search(names.group(1)) if names else None
    if group and kind:
        return [_CrdFile(path, group.group(1), kind.group(1))]
    found = []
    for document in yaml.load_all(text, Loader=_LOADER):
        if isinstance(document, dict) and document.get("kind") == "CustomResourceDefinition":
            spec_doc = document["spec"]
            found.append(_CrdFile(path, spec_doc["group"], spec_doc["names"]["kind"], document))
    return found


def _metadata_issues(metadata: Any, crd: CrdVersion, default_namespace: str | None) -> list[SchemaIssue]:
    """``metadata.name``/``generateName`` and ``metadata.namespace`` checks (apimachinery ObjectMeta)."""
    if not isinstance(metadata, Mapping):
        return [SchemaIssue("metadata", "Required value", "metadata")]
    issues: list[SchemaIssue] = []
    name = metadata.get("name")
    if name in (None, ""):
        if not metadata.get("generateName"):
            issues.append(_meta("metadata.name", "Required value: name or generateName is required"))
    else:
        issues.extend(_dns_issues("metadata.name", name, _DNS1123_SUBDOMAIN_RE, 253, SUBDOMAIN_MESSAGE))
    namespace = metadata.get("namespace") or (default_namespace if crd.namespaced else None)
    if crd.namespaced and namespace in (None, ""):
        issues.append(_meta("metadata.namespace", f"Required value: {crd.kind} is namespaced"))
    elif not crd.namespaced and namespace not in (None, ""):
        issues.append(_meta("metadata.namespace", f"Forbidden: {crd.kind} is cluster-scoped"))
    elif crd.namespaced:
        issues.extend(_dns_issues("metadata.namespace", namespace, _DNS1123_LABEL_RE, 63, LABEL_MESSAGE))
    return issues


def _dns_issues(
    path: str, value: object, pattern: re.Pattern[str], limit: int, message: str
) -> list[SchemaIssue]:
    if not isinstance(value, str):
        return [_meta(path, f"Invalid value: {show(value)}: must be of type string")]
    issues = []
    if len(value) > limit:
        issues.append(_meta(path, f"Invalid value: {show(value)}: must be no more than {limit} characters"))
    if not pattern.match(value):
        issues.append(_meta(path, f"Invalid value: {show(value)}: {message}"))
    return issues


def _meta(path: str, message: str) -> SchemaIssue:
    return SchemaIssue(path, message, "metadata")


def _unique(issues: list[SchemaIssue]) -> list[SchemaIssue]:
    return list(dict.fromkeys(issues))

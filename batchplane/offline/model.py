"""What an offline run of the Pulumi program records: resources (with inputs) and stack outputs.

The shapes mirror the Pulumi resource monitor's ``RegisterResourceRequest`` (``pulumi/proto/pulumi/
resource.proto``): type token, logical name, URN, parent URN, dependency URNs, per-property
dependencies and the provider reference ``"<provider urn>::<provider id>"``. Inputs are the wire
form the providers and policy packs see: camelCase keys, JSON-like values.

Two markers can appear inside inputs and outputs:

* :data:`UNKNOWN` — a value that is not known during a preview (an Output that depends on
  something only a real deployment computes). It is the engine's own sentinel string, so policy
  analyzers treat it as "can't be known during preview", exactly as ``pulumi preview`` does.
* secrets are stored in plain text (render needs them) and their locations are listed in
  ``secret_paths``; :meth:`RecordedResource.to_json` replaces them with :data:`SECRET_MASK` unless
  asked not to.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: The Pulumi engine's "unknown during preview" sentinel (``pulumi.runtime.rpc.UNKNOWN``).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

#: What secret values are replaced with in JSON and on screen (the Pulumi CLI prints the same).
SECRET_MASK = "[secret]"

#: A location inside an inputs/outputs document: keys (str) and list indexes (int), outermost first.
Path = tuple[str | int, ...]


def format_path(path: Path) -> str:
    """Render a :data:`Path` as ``spec.resourceGroups[0].flavors``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def iter_unknown_paths(value: Any, path: Path = ()) -> Iterator[Path]:
    """Yield the path of every :data:`UNKNOWN` value inside ``value`` (depth first, document order)."""
    if isinstance(value, str):
        if value == UNKNOWN:
            yield path
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from iter_unknown_paths(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from iter_unknown_paths(item, (*path, index))


def mask_secrets(value: Any, secret_paths: Sequence[Path], mask: str = SECRET_MASK) -> Any:
    """Return a deep copy of ``value`` with each of ``secret_paths`` replaced by ``mask`` (default
    :data:`SECRET_MASK`).

    The empty path masks the whole value. Paths that no longer exist are ignored.
    """
    if not secret_paths:
        return value
    if () in secret_paths:
        return mask
    if isinstance(value, Mapping):
        return {
            k: mask_secrets(v, [p[1:] for p in secret_paths if p[0] == k], mask) for k, v in value.items()
        }
    if isinstance(value, list):
        return [
            mask_secrets(v, [p[1:] for p in secret_paths if p[0] == i], mask) for i, v in enumerate(value)
        ]
    return value


@dataclass(frozen=True)
class RecordedResource:
    """One ``RegisterResource`` call the program made (custom resources, components and providers).

    Attributes:
        type: the type token, e.g. ``kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue``,
            ``pulumi:providers:kubernetes`` or a component's own token.
        name: the logical (Pulumi) name.
        urn: the mock engine's URN, which names every resource in this record (parents, dependencies,
            providers). It keeps only the parent's type (top-level ones: ``pulumi:pulumi:Stack$``): never
            compare it with URNs of real deployments; :attr:`engine_urn` is that one.
        parent: the parent's URN (the stack's URN for top-level resources).
        dependencies: URNs this resource waits for, sorted. ``depends_on=[component]`` shows up as
            the URNs of the component's children (not the component); Outputs passed as inputs show
            up here and in ``property_dependencies``.
        property_dependencies: input property name → URNs its value came from, sorted.
        provider: ``"<provider urn>::<provider id>"`` when a provider was given (explicitly or
            inherited from a parent's ``providers``), else ``None``.
        custom: ``True`` for custom resources and providers, ``False`` for components (remote
            components such as ``helm.v4.Chart`` included).
        inputs: the inputs as the provider sees them: camelCase keys, integral floats back to
            ints, secrets in plain text (see ``secret_paths``), unknowns as :data:`UNKNOWN`.
        secret_paths: where secret values sit inside ``inputs``; ``()`` means all of them.
        engine_urn: the URN the Pulumi engine gives this resource — what a deployed stack's state holds
            (the full chain of parent types, the stack omitted; the mock's :attr:`urn` keeps only the
            parent's type).
        aliases: the other engine URNs the engine also matches this resource by, sorted: its own
            ``opts.aliases`` and, as Pulumi does, each of its parent's aliases with this resource under
            it. A stack deployed under one of them is updated in place, not replaced.
    """

    type: str
    name: str
    urn: str
    parent: str | None
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    provider: str | None
    custom: bool
    inputs: dict[str, Any]
    secret_paths: tuple[Path, ...] = field(default=())
    engine_urn: str = ""
    aliases: tuple[str, ...] = field(default=())

    @property
    def provider_urn(self) -> str | None:
        """The URN part of :attr:`provider` (``None`` when no provider is set)."""
        return None if self.provider is None else self.provider.rsplit("::", 1)[0]

    @property
    def provider_id(self) -> str | None:
        """The id part of :attr:`provider` (:data:`UNKNOWN` when the provider's id was unknown)."""
        return None if self.provider is None else self.provider.rsplit("::", 1)[1]

    @property
    def unknown_paths(self) -> list[Path]:
        """Paths of the inputs that are unknown during a preview (empty outside previews)."""
        return list(iter_unknown_paths(self.inputs))

    def to_json(self, *, show_secrets: bool = False) -> dict[str, Any]:
        """The documented ``batchplane preview --json`` shape of one resource.

        Returns:
            ``{"type", "name", "urn", "engineUrn", "aliases", "parent", "dependencies", "propertyDependencies",
            "provider", "inputs"}``; secrets in ``inputs`` become :data:`SECRET_MASK` unless ``show_secrets``.
        """
        return {
            "type": self.type,
            "name": self.name,
            "urn": self.urn,
            "engineUrn": self.engine_urn,
            "aliases": list(self.aliases),
            "parent": self.parent,
            "dependencies": list(self.dependencies),
            "propertyDependencies": {k: list(v) for k, v in self.property_dependencies.items()},
            "provider": self.provider,
            "inputs": self.inputs if show_secrets else mask_secrets(self.inputs, self.secret_paths),
        }


@dataclass(frozen=True)
class LogMessage:
    """A message the program logged through ``pulumi.log`` (info, warning or error; debug is dropped).

    Attributes:
        severity: ``"info"``, ``"warning"`` or ``"error"``.
        message: the text.
    """

    severity: str
    message: str


@dataclass(frozen=True)
class ProgramRun:
    """Everything one offline run of the program produced.

    Attributes:
        resources: every registered resource except the root stack, in declaration order (the
            order the program constructed them; stable across runs).
        outputs: the stack outputs (``pulumi.export``), plain values; secrets in plain text, their
            locations in ``output_secret_paths``.
        output_secret_paths: where secret values sit inside ``outputs``.
        stack_urn: the URN of the root ``pulumi:pulumi:Stack`` resource (parent of top-level ones).
        logs: messages the program logged through ``pulumi.log`` (info and above).
        component_outputs: what each component registered (``register_outputs``), by its mock URN; plain values
            (secrets in plain text, their locations in ``component_secret_paths``, by the same URN).
        component_secret_paths: where secret values sit inside each component's outputs.
    """

    resources: list[RecordedResource]
    outputs: dict[str, Any]
    output_secret_paths: tuple[Path, ...] = ()
    stack_urn: str = ""
    logs: list[LogMessage] = field(default_factory=list)
    component_outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    component_secret_paths: dict[str, tuple[Path, ...]] = field(default_factory=dict)

    def of_type(self, type_: str) -> list[RecordedResource]:
        """All resources of one type token, in declaration order."""
        return [r for r in self.resources if r.type == type_]

    def get(self, type_: str, name: str) -> RecordedResource:
        """The one resource with this type token and logical name.

        Raises:
            KeyError: none or more than one matches (the message lists what exists of that type).
        """
        found = [r for r in self.resources if r.type == type_ and r.name == name]
        if len(found) != 1:
            names = ", ".join(r.name for r in self.of_type(type_)) or "none"
            raise KeyError(f"{len(found)} resources {type_} named {name!r} (names of that type: {names})")
        return found[0]

    def children(self, urn: str) -> list[RecordedResource]:
        """The resources whose parent is ``urn``, in declaration order."""
        return [r for r in self.resources if r.parent == urn]

    def with_unknowns(self) -> list[RecordedResource]:
        """The resources that have at least one input unknown during the preview."""
        return [r for r in self.resources if r.unknown_paths]

    def to_json(self, *, show_secrets: bool = False) -> dict[str, Any]:
        """The ``batchplane preview --json`` document: ``{"resources": [...], "outputs": {...}}``."""
        outputs = self.outputs if show_secrets else mask_secrets(self.outputs, self.output_secret_paths)
        return {
            "resources": [r.to_json(show_secrets=show_secrets) for r in self.resources],
            "outputs": outputs,
        }

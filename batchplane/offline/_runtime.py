"""The Pulumi side of the offline engine: mocks, a recording resource monitor and a recording engine.

Imports Pulumi at module import time; :mod:`batchplane.offline.engine` imports this module lazily.
Relies on ``pulumi.runtime.mocks.MockMonitor`` (semi-internal; the SDK is pinned in pyproject.toml)
and on the debug message ``registering resource: ty=..., name=...`` that ``pulumi.runtime.resource.
register_resource`` logs synchronously when a resource is constructed, to learn declaration order
(registrations themselves arrive on executor threads in no fixed order).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

from pulumi.output import Unknown
from pulumi.runtime import rpc
from pulumi.runtime.mocks import MockCallArgs, MockMonitor, MockResourceArgs, Mocks
from pulumi.runtime.proto import engine_pb2

from batchplane.offline.mocks import mock_call, mock_state
from batchplane.offline.model import UNKNOWN, LogMessage, Path, RecordedResource

_STACK_TYPE = "pulumi:pulumi:Stack"
_REGISTERING = re.compile(
    r"^registering resource: ty=(?P<ty>\S+), name=(?P<name>.*), custom=\w+, remote=\w+$"
)
_SEVERITY = {engine_pb2.INFO: "info", engine_pb2.WARNING: "warning", engine_pb2.ERROR: "error"}


def plain(value: Any, path: Path, secrets: list[Path]) -> Any:
    """Turn a deserialized property value into plain JSON-like data.

    Secrets are unwrapped and their paths appended to ``secrets``; ``Unknown`` becomes
    :data:`~batchplane.offline.model.UNKNOWN`; integral floats become ints (protobuf carries every
    number as a double); mapping keys are sorted (protobuf maps have no order), so runs compare
    equal.
    """
    if rpc.is_rpc_secret(value):
        secrets.append(path)
        return plain(rpc.unwrap_rpc_secret(value), path, [])
    if isinstance(value, Unknown):
        return UNKNOWN
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(k): plain(value[k], (*path, str(k)), secrets) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [plain(v, (*path, i), secrets) for i, v in enumerate(value)]
    return value


#: Wire-protocol signatures (``pulumi/sdk/go/common/resource/sig``), stable across SDK versions.
_SIG_KEY = "4dabf18193072939515e22adb298388d"
_RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"


def _replace_resource_refs(value: Any) -> None:
    """Replace resource references inside a ``google.protobuf.Value`` (in place) by their URN."""
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        fields = value.struct_value.fields
        if _SIG_KEY in fields and fields[_SIG_KEY].string_value == _RESOURCE_SIG:
            value.string_value = fields["urn"].string_value
            return
        for item in fields.values():
            _replace_resource_refs(item)
    elif kind == "list_value":
        for item in value.list_value.values:
            _replace_resource_refs(item)


def _without_resource_refs(request: Any) -> Any:
    """A copy of a RegisterResource request whose ``object`` has resource references as URNs."""
    if _RESOURCE_SIG.encode() not in request.object.SerializeToString():
        return request
    copy = type(request)()
    copy.CopyFrom(request)
    for item in copy.object.fields.values():
        _replace_resource_refs(item)
    return copy


def decode(struct: Any, secrets: list[Path]) -> Any:
    """Decode a request's property struct with ``rpc.deserialize_properties`` into plain data.

    Resource references are replaced by their URN first: deserializing them would construct
    Resource objects on executor threads (re-hydration via ``getResource``), which can stall the
    run. The check is a byte search, so structs without references are not copied.
    """
    if _RESOURCE_SIG.encode() in struct.SerializeToString():
        copy = type(struct)()
        copy.CopyFrom(struct)
        for item in copy.fields.values():
            _replace_resource_refs(item)
        struct = copy
    return plain(rpc.deserialize_properties(struct, keep_unknowns=True), (), secrets)


def _state_for_wire(value: Any) -> Any:
    """Mock state must not contain ``Unknown`` objects (they would serialise as ``{}``)."""
    if isinstance(value, Unknown):
        return rpc.UNKNOWN
    if isinstance(value, dict):
        return {k: _state_for_wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_state_for_wire(v) for v in value]
    return value


class OfflineMocks(Mocks):
    """Mocks that return :func:`~batchplane.offline.mocks.mock_state` / :func:`mock_call` results."""

    def __init__(self, config: Mapping[str, str]) -> None:
        self._config = dict(config)

    def new_resource(self, args: MockResourceArgs) -> tuple[str | None, dict[Any, Any]]:
        """``(f"{name}-id", inputs + known computed outputs)``; components get ``("", inputs)``."""
        id_, state = mock_state(args.typ, args.name, args.inputs, self._config, custom=bool(args.custom))
        return id_, _state_for_wire(state)

    def call(self, args: MockCallArgs) -> tuple[dict[Any, Any], list[tuple[str, str]] | None]:
        """Invoke results from :func:`~batchplane.offline.mocks.mock_call`."""
        return mock_call(args.token, args.args, self._config), []


class RecordingEngine:
    """Stands in for the engine's ``Log`` RPC: keeps declaration order and the program's messages."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.declarations: list[tuple[str, str]] = []
        self.logs: list[LogMessage] = []

    def Log(self, request: engine_pb2.LogRequest) -> None:
        """Record ``registering resource`` debug lines (declaration order) and non-debug messages."""
        if request.severity == engine_pb2.DEBUG:
            match = _REGISTERING.match(request.message)
            if match:
                with self._lock:
                    self.declarations.append((match["ty"], match["name"]))
            return
        with self._lock:
            self.logs.append(LogMessage(_SEVERITY.get(request.severity, "info"), request.message))


def engine_urn(parent_urn: str, chain: str, type_: str, name: str) -> tuple[str, str]:
    """The URN the Pulumi engine gives ``type_``/``name`` under a parent whose qualified type is ``chain``
    (``""`` for the root stack), and this resource's own qualified type: ``urn:pulumi:<stack>::<project>::
    <parent types $-joined, the stack omitted>$<type>::<name>`` (``pulumi/sdk/go/common/resource/urn.go``
    ``NewURN``). ``parent_urn`` supplies the stack and project."""
    stack, project = parent_urn.split("::", 2)[:2]
    qualified = f"{chain}${type_}" if chain else type_
    return f"{stack}::{project}::{qualified}::{name}", qualified


def _qualified_type(urn: str) -> str:
    return urn.split("::", 3)[2]


class RecordingMonitor(MockMonitor):
    """A ``MockMonitor`` that records every ``RegisterResource`` request with its own inputs.

    Registrations run concurrently on executor threads; each request is decoded on its own (never
    paired with "the last ``new_resource`` call") and appended under a lock.
    """

    def __init__(self, mocks: Mocks) -> None:
        super().__init__(mocks)
        self._lock = threading.Lock()
        self.records: list[RecordedResource] = []
        self.stack_urn = ""
        self.outputs: dict[str, Any] = {}
        self.component_outputs: dict[str, dict[str, Any]] = {}
        self.component_secret_paths: dict[str, tuple[Path, ...]] = {}
        self.output_secret_paths: list[Path] = []
        # mock URN → (engine URN, qualified type, engine alias URNs); the root stack's chain is "".
        self._engine: dict[str, tuple[str, str, tuple[str, ...]]] = {}

    def _engine_identity(self, request: Any, urn: str) -> tuple[str, tuple[str, ...]]:
        """The engine URN of a registration and its alias URNs, in the engine's form (``alias.proto``): each
        ``Alias.urn``; each ``Alias.spec`` with its name/type (default: the resource's) under its parent
        (``noParent``: the stack; ``parentUrn``; default: the current parent); and the resource under each
        alias of its parent, which Pulumi carries down to children. Called under the lock."""
        parent = request.parent or self.stack_urn
        _, chain, parent_aliases = self._engine.get(parent, ("", "", ()))
        own, qualified = engine_urn(parent, chain, request.type, request.name)
        found: set[str] = set()
        for alias in request.aliases:
            if alias.urn:
                found.add(alias.urn)
                continue
            spec = alias.spec
            under = self.stack_urn if spec.noParent else (spec.parentUrn or parent)
            under_chain = self._engine.get(under, ("", "", ()))[1]
            found.add(engine_urn(under, under_chain, spec.type or request.type, spec.name or request.name)[0])
        for parent_alias in parent_aliases:
            found.add(engine_urn(parent_alias, _qualified_type(parent_alias), request.type, request.name)[0])
        found.discard(own)
        aliases = tuple(sorted(found))
        self._engine[urn] = (own, qualified, aliases)
        return own, aliases

    def RegisterResource(self, request: Any) -> Any:
        """Register through the mock monitor, then record the request.

        Resource references in the inputs are replaced by their URN first, also for the base
        monitor: once a provider SDK (e.g. pulumi_gcp) has registered its resource modules, the
        base monitor would re-hydrate them via ``getResource`` on an executor thread's loop, and the
        run would then await a future of another loop.
        """
        request = _without_resource_refs(request)
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        if request.type == _STACK_TYPE:
            self.stack_urn = response.urn
            return response
        secrets: list[Path] = []
        inputs = decode(request.object, secrets)
        with self._lock:
            engine, aliases = self._engine_identity(request, response.urn)
        record = RecordedResource(
            type=request.type,
            name=request.name,
            urn=response.urn,
            engine_urn=engine,
            parent=request.parent or None,
            dependencies=sorted(set(request.dependencies)),
            property_dependencies={
                key: sorted(set(deps.urns)) for key, deps in sorted(request.propertyDependencies.items())
            },
            provider=request.provider or None,
            custom=bool(request.custom),
            inputs=inputs,
            secret_paths=tuple(secrets),
            aliases=aliases,
        )
        with self._lock:
            self.records.append(record)
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:
        """Capture the root stack's outputs (``pulumi.export``) and each component's ``register_outputs``."""
        secrets: list[Path] = []
        outputs = decode(request.outputs, secrets)
        with self._lock:
            if self.stack_urn and request.urn == self.stack_urn:
                self.outputs = outputs
                self.output_secret_paths = secrets
            else:
                self.component_outputs[request.urn] = outputs
                self.component_secret_paths[request.urn] = tuple(secrets)
        return super().RegisterResourceOutputs(request)  # type: ignore[no-untyped-call]


def declaration_order(
    records: list[RecordedResource], declarations: list[tuple[str, str]]
) -> list[RecordedResource]:
    """Sort ``records`` by the order the program constructed them.

    Resources sharing a type and name (possible under different parents) take that pair's
    declaration slots in URN order; anything not declared (never expected) goes last, by URN.
    """
    slots: dict[tuple[str, str], list[int]] = {}
    for index, key in enumerate(declarations):
        slots.setdefault(key, []).append(index)
    last = len(declarations)
    keyed: list[tuple[int, str, RecordedResource]] = []
    by_key: dict[tuple[str, str], list[RecordedResource]] = {}
    for record in records:
        by_key.setdefault((record.type, record.name), []).append(record)
    for key, group in by_key.items():
        group.sort(key=lambda r: r.urn)
        indexes = slots.get(key, [])
        for position, record in enumerate(group):
            keyed.append((indexes[position] if position < len(indexes) else last, record.urn, record))
    keyed.sort(key=lambda item: (item[0], item[1]))
    return [record for _, _, record in keyed]

"""A typed client for the Analyzer gRPC service a CrossGuard policy pack serves.

It sends what the Pulumi CLI sends (``sdk/go/common/resource/plugin/analyzer_plugin.go`` and the
step generator of pulumi/pulumi): ``Handshake`` (packs may answer UNIMPLEMENTED),
``ConfigureStack``, ``GetAnalyzerInfo``, ``Configure``, one ``Analyze`` per resource (inputs,
options with the parent, the provider resource) and one ``AnalyzeStack`` with every resource
(plus ``parent``, ``dependencies`` and non-empty ``propertyDependencies``). Every call has a
deadline; failures become :class:`~batchplane.policyrun.errors.PolicyRunError`.

This module imports ``grpc`` and Pulumi's generated protos at import time; the rest of
:mod:`batchplane.policyrun` imports it lazily.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2  # type: ignore[import-untyped]
from pulumi.runtime.proto import analyzer_pb2 as pb
from pulumi.runtime.proto import analyzer_pb2_grpc

from batchplane.policyrun.config import PolicyConfig
from batchplane.policyrun.errors import PolicyRunError
from batchplane.policyrun.report import EnforcementLevel, PolicyInfo, PolicyType, Violation
from batchplane.policyrun.resources import ResourceLike, provider_urn, wire_properties

#: Raise gRPC's 4 MiB message limit to the 400 MiB Pulumi uses (``rpcutil.GrpcChannelOptions``).
_MAX_MESSAGE = 400 * 1024 * 1024
_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", _MAX_MESSAGE),
    ("grpc.max_send_message_length", _MAX_MESSAGE),
]

_TO_PROTO_LEVEL: dict[EnforcementLevel, pb.EnforcementLevel.ValueType] = {
    "advisory": pb.ADVISORY,
    "mandatory": pb.MANDATORY,
    "remediate": pb.REMEDIATE,
    "disabled": pb.DISABLED,
}
_FROM_PROTO_LEVEL: dict[int, EnforcementLevel] = {int(v): k for k, v in _TO_PROTO_LEVEL.items()}
_POLICY_TYPES: dict[int, PolicyType] = {
    int(pb.POLICY_TYPE_RESOURCE): "resource",
    int(pb.POLICY_TYPE_STACK): "stack",
}


def _struct(data: Mapping[str, Any] | None) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    if data:
        message.update(data)
    return message


def _integral(value: Any) -> Any:
    """Undo protobuf's number widening: integral floats back to ints, recursively (``5.0`` → ``5``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def _level(value: int) -> EnforcementLevel:
    try:
        return _FROM_PROTO_LEVEL[int(value)]
    except KeyError:
        raise PolicyRunError(f"invalid enforcement level {value}") from None


class AnalyzerClient:
    """One connection to a running policy pack.

    Args:
        address: ``host:port`` the pack serves on.
        deadline: ``time.monotonic()`` value after which every call fails.
        label: how errors name the pack, e.g. ``"policy pack /path/to/pack"``.
        stderr_tail: returns the pack's recent stderr, attached to errors.
    """

    def __init__(self, address: str, deadline: float, label: str, stderr_tail: Callable[[], str]) -> None:
        self._channel = grpc.insecure_channel(address, options=_CHANNEL_OPTIONS)
        self._stub = analyzer_pb2_grpc.AnalyzerStub(self._channel)
        self._deadline = deadline
        self._label = label
        self._stderr_tail = stderr_tail
        self._providers: dict[str, pb.AnalyzerProviderResource | None] = {}

    def close(self) -> None:
        """Close the gRPC channel (the process is stopped by its owner)."""
        self._channel.close()

    def _call(self, step: str, method: Any, request: Any, *, unimplemented_ok: bool = False) -> Any:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise PolicyRunError(f"{self._label}: timed out before {step}", stderr_tail=self._stderr_tail())
        try:
            return method(request, timeout=remaining, wait_for_ready=True)
        except grpc.RpcError as err:
            code = err.code()
            if unimplemented_ok and code == grpc.StatusCode.UNIMPLEMENTED:
                return None
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                message = f"{self._label}: {step} timed out"
            else:
                message = f"{self._label}: {step} failed: {code.name}: {err.details()}"
            tail = self._stderr_tail()
            raise PolicyRunError(message + (f"\n{tail}" if tail else ""), stderr_tail=tail) from None

    def handshake(self, engine_address: str, directory: str) -> bool:
        """Send ``Handshake``; returns ``False`` when the pack does not implement it (the CLI goes on)."""
        request = pb.AnalyzerHandshakeRequest(
            engine_address=engine_address, root_directory=directory, program_directory=directory
        )
        return self._call("Handshake", self._stub.Handshake, request, unimplemented_ok=True) is not None

    def configure_stack(
        self, *, project: str, stack: str, organization: str, config: Mapping[str, str], dry_run: bool = True
    ) -> bool:
        """Send ``ConfigureStack`` (stack names and the string config map); ``False`` if unimplemented."""
        request = pb.AnalyzerStackConfigureRequest(
            stack=stack, project=project, organization=organization, dry_run=dry_run, config=dict(config)
        )
        return (
            self._call("ConfigureStack", self._stub.ConfigureStack, request, unimplemented_ok=True)
            is not None
        )

    def analyzer_info(self) -> tuple[pb.AnalyzerInfo, list[PolicyInfo], dict[str, PolicyConfig]]:
        """Call ``GetAnalyzerInfo``.

        Returns:
            The raw reply, the policies sorted by name (their own levels, no config yet), and the
            pack's ``initial_config`` as :class:`PolicyConfig` entries.
        """
        info = cast(
            pb.AnalyzerInfo, self._call("GetAnalyzerInfo", self._stub.GetAnalyzerInfo, empty_pb2.Empty())
        )
        policies = []
        for p in info.policies:
            schema: dict[str, Any] | None = None
            if p.HasField("configSchema"):
                schema = {
                    "properties": _integral(json_format.MessageToDict(p.configSchema.properties)),
                    "required": list(p.configSchema.required),
                }
            policies.append(
                PolicyInfo(
                    name=p.name,
                    description=p.description,
                    enforcement_level=_level(p.enforcementLevel),
                    policy_type=_POLICY_TYPES.get(int(p.policy_type), "unspecified"),
                    display_name=p.displayName,
                    config_schema=schema,
                )
            )
        initial = {
            key: PolicyConfig(
                _level(value.enforcementLevel), json_format.MessageToDict(value.properties) or None
            )
            for key, value in info.initialConfig.items()
        }
        return info, sorted(policies, key=lambda p: p.name), initial

    def configure(self, config: Mapping[str, PolicyConfig]) -> None:
        """Send ``Configure`` with ``{policy: PolicyConfig{enforcementLevel, properties}}``.

        Raises:
            PolicyRunError: an entry has no enforcement level (the CLI's ``invalid enforcement level``).
        """
        request = pb.ConfigureAnalyzerRequest()
        for name, entry in config.items():
            if entry.enforcement_level is None:
                raise PolicyRunError(f'{self._label}: {name}: invalid enforcement level ""')
            request.policyConfig[name].CopyFrom(
                pb.PolicyConfig(
                    enforcementLevel=_TO_PROTO_LEVEL[entry.enforcement_level],
                    properties=_struct(entry.properties),
                )
            )
        self._call("Configure", self._stub.Configure, request)

    def analyze(
        self, resource: ResourceLike, properties: Mapping[str, Any], by_urn: Mapping[str, ResourceLike]
    ) -> list[pb.AnalyzeDiagnostic]:
        """Call ``Analyze`` for one resource with its wire ``properties``; returns the diagnostics."""
        request = pb.AnalyzeRequest(
            type=resource.type,
            urn=resource.urn,
            name=resource.name,
            properties=_struct(properties),
            options=_options(resource),
        )
        provider = self._provider(resource, by_urn)
        if provider is not None:
            request.provider.CopyFrom(provider)
        reply = cast(pb.AnalyzeResponse, self._call(f"Analyze({resource.urn})", self._stub.Analyze, request))
        return list(reply.diagnostics)

    def analyze_stack(
        self, resources: Sequence[tuple[ResourceLike, Mapping[str, Any]]], by_urn: Mapping[str, ResourceLike]
    ) -> list[pb.AnalyzeDiagnostic]:
        """Call ``AnalyzeStack`` once with every ``(resource, wire properties)``; returns the diagnostics."""
        request = pb.AnalyzeStackRequest()
        for resource, properties in resources:
            item = pb.AnalyzerResource(
                type=resource.type,
                urn=resource.urn,
                name=resource.name,
                properties=_struct(properties),
                options=_options(resource),
                parent=resource.parent or "",
                dependencies=list(resource.dependencies),
            )
            for key, urns in resource.property_dependencies.items():
                if urns:
                    item.propertyDependencies[key].urns.extend(urns)
            provider = self._provider(resource, by_urn)
            if provider is not None:
                item.provider.CopyFrom(provider)
            request.resources.append(item)
        reply = cast(pb.AnalyzeResponse, self._call("AnalyzeStack", self._stub.AnalyzeStack, request))
        return list(reply.diagnostics)

    def _provider(
        self, resource: ResourceLike, by_urn: Mapping[str, ResourceLike]
    ) -> pb.AnalyzerProviderResource | None:
        """The provider resource the CLI attaches, when the provider was recorded too (cached per URN)."""
        urn = provider_urn(resource.provider)
        if urn is None:
            return None
        if urn not in self._providers:
            provider = by_urn.get(urn)
            self._providers[urn] = (
                None
                if provider is None
                else pb.AnalyzerProviderResource(
                    type=provider.type,
                    urn=provider.urn,
                    name=provider.name,
                    properties=_struct(wire_properties(provider)),
                )
            )
        return self._providers[urn]


def _options(resource: ResourceLike) -> pb.AnalyzerResourceOptions:
    """Resource options as the CLI sends them; attributes beyond :class:`ResourceLike` are optional."""
    delete_before_replace = getattr(resource, "delete_before_replace", None)
    return pb.AnalyzerResourceOptions(
        protect=bool(getattr(resource, "protect", False)),
        ignoreChanges=list(getattr(resource, "ignore_changes", None) or []),
        deleteBeforeReplace=bool(delete_before_replace),
        deleteBeforeReplaceDefined=delete_before_replace is not None,
        additionalSecretOutputs=list(getattr(resource, "additional_secret_outputs", None) or []),
        aliases=list(getattr(resource, "aliases", None) or []),
        customTimeouts=pb.AnalyzerResourceOptions.CustomTimeouts(),
        parent=resource.parent or "",
    )


def to_violation(
    diagnostic: pb.AnalyzeDiagnostic, by_urn: Mapping[str, ResourceLike], default_urn: str = ""
) -> Violation:
    """Turn a diagnostic into a :class:`Violation`; ``default_urn`` fills an empty URN (``Analyze``)."""
    urn = diagnostic.urn or default_urn
    resource = by_urn.get(urn)
    return Violation(
        policy=diagnostic.policyName,
        pack=diagnostic.policyPackName,
        enforcement_level=_level(diagnostic.enforcementLevel),
        message=diagnostic.message,
        urn=urn,
        resource_type=resource.type if resource is not None else None,
        resource_name=resource.name if resource is not None else None,
        description=diagnostic.description,
    )

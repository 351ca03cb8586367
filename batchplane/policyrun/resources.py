"""What the engine needs from a recorded resource, and how its values go on the wire.

Resources come from the mock run of the Pulumi program (``batchplane.offline``); this module only
relies on the attributes in :class:`ResourceLike`, so any object with them works. Values are
turned into what the CLI marshals for an analyzer (``MarshalProperties`` with ``KeepUnknowns``,
``KeepSecrets``, ``SkipInternalKeys``): plain JSON data, unknowns as the :data:`UNKNOWN`
sentinel string, secrets kept in their ``{"4dabf18193072939515e22adb298388d": ...}`` wrapper,
keys starting with ``__`` dropped at every level. Nothing here imports Pulumi.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from batchplane.policyrun.errors import PolicyRunError

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
"""The wire sentinel of a value unknown during preview (``pulumi.runtime.rpc.UNKNOWN``); a policy
that reads it fails with "can't be known during preview", as under the CLI."""


class ResourceLike(Protocol):
    """A resource registered by the program (see ``batchplane.offline.model.RecordedResource``).

    Attributes:
        type: the type token, e.g. ``"kubernetes:core/v1:ConfigMap"``.
        name: the logical name.
        urn: the resource URN.
        parent: the parent's URN, ``None`` for none.
        dependencies: URNs this resource depends on (explicit and implicit).
        property_dependencies: ``{input property: [URN, ...]}``.
        provider: the provider reference ``"<provider URN>::<provider id>"``, or ``None``.
        custom: ``True`` for a custom resource, ``False`` for a component.
        inputs: the resource inputs, camelCase keys, as decoded from the registration; unknown
            values are either :data:`UNKNOWN` or ``pulumi.output.Unknown`` instances.
    """

    @property
    def type(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def urn(self) -> str: ...
    @property
    def parent(self) -> str | None: ...
    @property
    def dependencies(self) -> Sequence[str]: ...
    @property
    def property_dependencies(self) -> Mapping[str, Sequence[str]]: ...
    @property
    def provider(self) -> str | None: ...
    @property
    def custom(self) -> bool: ...
    @property
    def inputs(self) -> Mapping[str, Any]: ...


def is_unknown(value: object) -> bool:
    """Whether ``value`` stands for an unknown: the sentinel string or a ``pulumi.output.Unknown``."""
    if isinstance(value, str):
        return value == UNKNOWN
    cls = type(value)
    return cls.__name__ == "Unknown" and cls.__module__.split(".")[0] == "pulumi"


def wire_value(value: Any, where: str = "") -> Any:
    """Convert one input value to JSON data for a ``google.protobuf.Struct``.

    Args:
        value: ``None``, bool, int, float, str, mappings with string keys, lists/tuples, or an unknown.
        where: the property path, for error messages (e.g. ``"data.bad"``).

    Returns:
        The same data with unknowns replaced by :data:`UNKNOWN`, tuples as lists and
        ``__``-prefixed keys dropped.

    Raises:
        PolicyRunError: a value has no wire form (e.g. a ``pulumi.Resource`` object, bytes, NaN).
    """
    if value is None or isinstance(value, bool | str):
        return UNKNOWN if is_unknown(value) else value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PolicyRunError(f"property {where or '<root>'}: {value!r} cannot be sent to a policy pack")
        return value
    if is_unknown(value):
        return UNKNOWN
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise PolicyRunError(f"property {where or '<root>'}: key {key!r} is not a string")
            if key.startswith("__"):
                continue
            out[key] = wire_value(item, f"{where}.{key}" if where else key)
        return out
    if isinstance(value, list | tuple):
        return [wire_value(item, f"{where}[{i}]") for i, item in enumerate(value)]
    raise PolicyRunError(
        f"property {where or '<root>'}: a {type(value).__module__}.{type(value).__qualname__} "
        "cannot be sent to a policy pack (only JSON data and unknowns can)"
    )


def wire_properties(resource: ResourceLike) -> dict[str, Any]:
    """The resource's inputs as JSON data (see :func:`wire_value`).

    Raises:
        PolicyRunError: naming the resource URN and the property that has no wire form.
    """
    try:
        return wire_value(dict(resource.inputs))  # type: ignore[no-any-return]
    except PolicyRunError as err:
        raise PolicyRunError(f"resource {resource.urn}: {err}") from None


def provider_urn(reference: str | None) -> str | None:
    """The provider URN of a provider reference ``"<urn>::<id>"`` (``providers.ParseReference``).

    Returns ``None`` for ``None``/``""``.
    """
    if not reference:
        return None
    urn, sep, _ = reference.rpartition("::")
    return urn if sep else reference


def stack_config_strings(project: str, config: Mapping[str, Any]) -> dict[str, str]:
    """The stack config as the CLI hands it to a pack: ``{"<namespace>:<key>": "<string>"}``.

    Keys without a namespace get the project's (Pulumi's rule for project config). Strings stay as
    they are; booleans become ``"true"``/``"false"``; numbers, lists and objects become JSON
    (``pulumi.Config.get_object``/``get_int`` parse them back).
    """
    result: dict[str, str] = {}
    for key, value in config.items():
        full = key if ":" in key else f"{project}:{key}"
        if isinstance(value, str):
            result[full] = value
        elif isinstance(value, bool):
            result[full] = "true" if value else "false"
        else:
            result[full] = json.dumps(value, separators=(",", ":"), sort_keys=True)
    return result

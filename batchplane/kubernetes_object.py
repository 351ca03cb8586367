"""One Pulumi resource for any rendered Kubernetes object of a CRD-defined (or other) kind, with every field.

``pulumi_kubernetes.apiextensions.CustomResource`` accepts only ``apiVersion``, ``kind``, ``metadata`` and
``spec``: objects whose schema has other top-level fields (Kueue's ``WorkloadPriorityClass`` has ``value`` and
``description``; ``Secret`` has ``data``/``type``) either crash it (``unexpected keyword argument``) or, when only
``spec`` is passed on, lose those fields silently. :class:`KubernetesObject` registers the same resource type
(``kubernetes:<apiVersion>:<kind>``, served by the Kubernetes provider) with *every* top-level field of the
object as its inputs, which is what the provider sends to the API server.

Imports Pulumi at module import: only Pulumi programs and components import this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi_kubernetes import _utilities

#: Top-level fields the API server manages, never part of a declared object.
_SERVER_FIELDS = frozenset({"status"})


def type_token(api_version: str, kind: str) -> str:
    """The Pulumi type token of a Kubernetes kind: ``kubernetes:<group>/<version>:<kind>``, the core group spelled
    ``core`` (``v1`` Secret → ``kubernetes:core/v1:Secret``), as pulumi-kubernetes' own classes register it."""
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    return f"kubernetes:{group_version}:{kind}"


def object_inputs(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The resource inputs of ``obj``: every top-level field but ``status``, ``apiVersion``/``kind`` first.

    Raises:
        ValueError: ``obj`` has no string ``apiVersion`` or ``kind``, or no ``metadata`` mapping.
    """
    api_version, kind, metadata = obj.get("apiVersion"), obj.get("kind"), obj.get("metadata")
    if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
        raise ValueError(
            f"a Kubernetes object needs string apiVersion and kind, got {api_version!r}/{kind!r}"
        )
    if not isinstance(metadata, Mapping):
        raise ValueError(f"{kind} object has no metadata mapping")
    inputs = {"apiVersion": api_version, "kind": kind}
    inputs.update(
        (key, value) for key, value in obj.items() if key not in _SERVER_FIELDS and key not in inputs
    )
    return inputs


class KubernetesObject(pulumi.CustomResource):
    """A Kubernetes object declared with all its top-level fields (see the module docstring).

    The resource type is :func:`type_token` (``kubernetes:<apiVersion>:<kind>``, ``core/v1`` for the core group), the same as ``CustomResource`` and the typed
    ``pulumi_kubernetes`` classes register, so switching to it changes no URN.

    Args:
        resource_name: the Pulumi resource name.
        obj: the object as rendered (``apiVersion``, ``kind``, ``metadata``, then any other fields).
        opts: resource options; the provider plugin version defaults to the installed ``pulumi_kubernetes``.

    Raises:
        ValueError: see :func:`object_inputs`.
    """

    def __init__(
        self, resource_name: str, obj: Mapping[str, Any], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        inputs = object_inputs(obj)
        version: str = _utilities.get_version()  # type: ignore[no-untyped-call]
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=version))
        super().__init__(type_token(inputs["apiVersion"], inputs["kind"]), resource_name, inputs, opts)

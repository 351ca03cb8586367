"""The result of running a policy pack offline: its policies and the violations it reported.

The shapes mirror what ``pulumi preview --policy-pack`` shows: each violation names the policy,
its pack, the enforcement level it was reported at, the message (the policy description, a
newline, then the text the policy passed to ``report_violation``) and the resource URN.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

EnforcementLevel = Literal["advisory", "mandatory", "remediate", "disabled"]
"""A CrossGuard enforcement level, spelled as in policy config files (``apitype.EnforcementLevel``)."""

ENFORCEMENT_LEVELS: tuple[EnforcementLevel, ...] = ("advisory", "mandatory", "remediate", "disabled")

PolicyType = Literal["resource", "stack", "unspecified"]
"""Whether a policy validates one resource at a time or the whole stack."""


@dataclass(frozen=True)
class PolicyInfo:
    """One policy of a pack, as ``GetAnalyzerInfo`` lists it, with the config that was applied.

    Attributes:
        name: the policy name (unique in its pack), e.g. ``"no-bad-configmap-key"``.
        description: what the policy checks.
        enforcement_level: the level in effect for this run: the policy's own level (or the pack
            default) overridden by the pack's initial config and then by the policy config.
        policy_type: ``"resource"`` (``Analyze``) or ``"stack"`` (``AnalyzeStack``).
        display_name: optional human name (``""`` if the pack sets none).
        config_schema: the policy's config schema as ``{"properties": {...}, "required": [...]}``,
            or ``None`` if the policy takes no config.
        config: the config properties sent to the policy (schema defaults filled in).
    """

    name: str
    description: str
    enforcement_level: EnforcementLevel
    policy_type: PolicyType = "unspecified"
    display_name: str = ""
    config_schema: Mapping[str, Any] | None = None
    config: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Violation:
    """One diagnostic a policy reported.

    Attributes:
        policy: the policy name.
        pack: the policy pack name.
        enforcement_level: the level the violation was reported at. Policies at ``"remediate"``
            report as ``"mandatory"``; a policy that reads a value unknown during preview reports
            an ``"advisory"`` "can't run policy ... during preview" diagnostic instead.
        message: the policy description, then a newline and the policy's own message.
        urn: the resource the violation is about; ``""`` for a stack policy that named no resource.
        resource_type: the type token of that resource (``None`` when ``urn`` is not a known resource).
        resource_name: the logical name of that resource (``None`` likewise).
        description: the policy description.
    """

    policy: str
    pack: str
    enforcement_level: EnforcementLevel
    message: str
    urn: str
    resource_type: str | None
    resource_name: str | None
    description: str = ""


@dataclass(frozen=True)
class PolicyReport:
    """Everything one offline run of a policy pack produced.

    Attributes:
        policies: the pack's policies sorted by name (as the CLI sorts them).
        violations: the diagnostics of ``Analyze`` (in resource order), then of ``AnalyzeStack``.
        pack: the pack name (from ``GetAnalyzerInfo``).
        pack_version: the ``version`` of ``PulumiPolicy.yaml`` (the CLI prefers it to the
            version the pack reports).
        logs: every line the pack wrote to stderr, and to stdout after its port line, e.g.
            ``"info: ..."`` from ``pulumi.log.info`` (a pack prints its logs, see the runner).
        timings: wall time in seconds per phase (``start``, ``configure``, ``analyze``,
            ``analyze_stack``, ``total``); not part of equality or :meth:`to_json`.
    """

    policies: list[PolicyInfo]
    violations: list[Violation]
    pack: str = ""
    pack_version: str = ""
    logs: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def has_mandatory(self) -> bool:
        """``True`` if any violation is mandatory, i.e. ``pulumi preview`` would fail."""
        return any(v.enforcement_level == "mandatory" for v in self.violations)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready data: ``pack``, ``packVersion``, ``policies``,
        ``violations`` (snake_case field names inside), ``logs``; timings are left out."""
        return {
            "pack": self.pack,
            "packVersion": self.pack_version,
            "policies": [_plain(asdict(p)) for p in self.policies],
            "violations": [asdict(v) for v in self.violations],
            "logs": list(self.logs),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text (stable key order, non-ASCII kept as is)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


def _plain(value: Any) -> Any:
    """Turn mappings (e.g. read-only config views) into dicts so that ``json`` can encode them."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value

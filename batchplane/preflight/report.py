"""The preflight report: blockers and warnings, each with its config key path and the fix.

Exit codes (``batchplane preflight``): 0 nothing blocks (warnings allowed), 1 at least one blocker.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Literal

Severity = Literal["blocker", "warning", "note"]

CheckClass = Literal[
    "project",
    "api",
    "quota",
    "network",
    "org-policy",
    "region",
    "zone-offering",
    "version",
    "image",
    "olm",
    "kube-context",
    "docker",
    "kind",
    "registry-route",
    "iam",
    "repository",
    "machineset",
    "olm-namespace",
    "feature-gate",
    "kueue-cr",
    "kueue-api",
    "monitoring",
]
"""What a finding is about (one test per class in ``tests/preflight``)."""


class CredentialsMissing(RuntimeError):
    """A platform's checks cannot run: no credentials, or nothing to check them against (GKE: no Application Default
    Credentials, or no project). The CLI exits 2."""


@dataclass(frozen=True)
class Finding:
    """One thing that will fail (``blocker``), that preflight could not rule out (``warning``), or what a
    deploy-time lookup will find and use (``note``: the MachineSet a GPU pool copies, the OperatorGroup reused).

    Attributes:
        severity: ``blocker``, ``warning`` or ``note``.
        check: the :data:`CheckClass`.
        path: the config key path it comes from (``batchplane:target.gpuPools[0]``).
        message: what is wrong, with the numbers.
        fix: the command or change that fixes it (``gcloud services enable …``), or "" when there is none.
    """

    severity: Severity
    check: CheckClass
    path: str
    message: str
    fix: str = ""

    def __str__(self) -> str:
        text = f"{self.severity}: {self.path}: [{self.check}] {self.message}"
        return f"{text}\n  fix: {self.fix}" if self.fix else text


@dataclass
class Report:
    """Every finding of one preflight run, in check order.

    Attributes:
        stack: the stack name.
        findings: blockers and warnings.
        checked: the check classes that ran against a live answer (for the summary line).
        notes: what the deploy-time lookups will find and use (not findings: nothing is wrong).
    """

    stack: str
    findings: list[Finding] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)

    def blocker(self, check: CheckClass, path: str, message: str, fix: str = "") -> None:
        """Add a blocker."""
        self.findings.append(Finding("blocker", check, path, message, fix))

    def warning(self, check: CheckClass, path: str, message: str, fix: str = "") -> None:
        """Add a warning."""
        self.findings.append(Finding("warning", check, path, message, fix))

    def note(self, check: CheckClass, path: str, message: str) -> None:
        """Add a note: what ``pulumi up``'s deploy-time lookup will find and use (never changes the exit code)."""
        self.notes.append(Finding("note", check, path, message))

    def ran(self, check: str) -> None:
        """Record that a check class ran."""
        if check not in self.checked:
            self.checked.append(check)

    @property
    def blockers(self) -> list[Finding]:
        """The blockers."""
        return [f for f in self.findings if f.severity == "blocker"]

    @property
    def warnings(self) -> list[Finding]:
        """The warnings."""
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def exit_code(self) -> int:
        """1 when anything blocks, else 0."""
        return 1 if self.blockers else 0

    def text(self) -> str:
        """Blockers first, then warnings, then notes, then a summary line."""
        lines = (
            [str(f) for f in self.blockers] + [str(f) for f in self.warnings] + [str(f) for f in self.notes]
        )
        verdict = "blocked" if self.blockers else "ready"
        lines.append(
            f"stack {self.stack}: {verdict} ({len(self.blockers)} blockers, {len(self.warnings)} warnings; "
            f"checked: {', '.join(self.checked) or 'nothing'})"
        )
        return "\n".join(lines)

    def to_json(self) -> str:
        """``{"stack", "ready", "blockers": [...], "warnings": [...], "notes": [...], "checked": [...]}``."""
        return json.dumps(
            {
                "stack": self.stack,
                "ready": not self.blockers,
                "blockers": [asdict(f) for f in self.blockers],
                "warnings": [asdict(f) for f in self.warnings],
                "notes": [asdict(f) for f in self.notes],
                "checked": self.checked,
            },
            indent=2,
        )

"""Error family for Batchplane.

Validation never stops at the first problem: validators return lists of :class:`ConfigIssue`
(a key path and a message, like Kubernetes' ``field.ErrorList``) and callers raise
:class:`ConfigValidationError` with all of them at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


class BatchplaneError(Exception):
    """Base class of every error Batchplane raises on purpose."""


@dataclass(frozen=True, order=True)
class ConfigIssue:
    """One problem found in a stack config.

    Attributes:
        path: the config key path, e.g. ``batchplane:kueue.clusterQueues[0].cohortName``.
        message: what is wrong and, where it helps, what is allowed.
        severity: ``"error"`` (blocks the stack) or ``"warning"`` (reported, does not block).
    """

    path: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        prefix = "warning: " if self.severity == "warning" else ""
        return f"{prefix}{self.path}: {self.message}"


class ConfigValidationError(BatchplaneError):
    """Raised when a stack config has one or more errors; carries every issue found.

    Attributes:
        issues: all errors (and warnings) found, in document order.
    """

    def __init__(self, issues: Iterable[ConfigIssue]) -> None:
        self.issues = list(issues)
        errors = [i for i in self.issues if i.severity == "error"]
        super().__init__(
            f"{len(errors)} error(s) in stack config:\n" + "\n".join(str(i) for i in self.issues)
        )

    @property
    def errors(self) -> list[ConfigIssue]:
        """Only the issues of severity ``error``."""
        return [i for i in self.issues if i.severity == "error"]


class ConfigLoadError(BatchplaneError):
    """Raised when a stack config file cannot be read or is not YAML (an I/O or usage problem)."""

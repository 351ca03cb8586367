"""Errors of the offline policy engine (:mod:`batchplane.policyrun`)."""

from __future__ import annotations

from collections.abc import Iterable

from batchplane.errors import BatchplaneError


class PolicyRunError(BatchplaneError):
    """Raised when a policy pack cannot be started, configured or called.

    Attributes:
        stderr_tail: the last lines the pack process wrote to stderr (``""`` if none were
            captured), e.g. the traceback of a pack that failed to import.
    """

    def __init__(self, message: str, *, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.stderr_tail = stderr_tail


class PolicyConfigError(PolicyRunError):
    """Raised when a policy config does not parse or does not match the policies' config schemas.

    Mirrors the Pulumi CLI, which refuses to run a preview when the ``--policy-pack-config``
    file is invalid (``pkg/resource/analyzer/config.go``).

    Attributes:
        issues: every problem found, one line each (``"<policy>: <path>: <message>"``).
    """

    def __init__(self, issues: Iterable[str], *, pack: str = "") -> None:
        self.issues = list(issues)
        where = f" for policy pack {pack}" if pack else ""
        super().__init__(f"invalid policy config{where}:\n  " + "\n  ".join(self.issues))

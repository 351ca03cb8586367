"""Run a CrossGuard policy pack offline, exactly as the Pulumi CLI runs it, without the CLI.

:func:`run_policy_pack` starts a Python policy pack as ``pulumi preview --policy-pack`` does,
configures it with the stack and the (reconciled) policy config, sends every recorded resource to
``Analyze`` and all of them to ``AnalyzeStack``, and returns a :class:`PolicyReport`. :func:`start_policy_pack`
starts it first and analyzes later, so the pack boots while the caller runs the program (``batchplane check``).

Importing this package does not import Pulumi or gRPC; :mod:`batchplane.policyrun.analyzer`
(the gRPC client) is imported when a pack runs.
"""

from batchplane.policyrun.config import (
    PolicyConfig,
    load_policy_config_file,
    parse_policy_config,
    reconcile_policy_config,
)
from batchplane.policyrun.errors import PolicyConfigError, PolicyRunError
from batchplane.policyrun.report import EnforcementLevel, PolicyInfo, PolicyReport, Violation
from batchplane.policyrun.resources import UNKNOWN, ResourceLike
from batchplane.policyrun.runner import (
    ENGINE_ADDRESS,
    PolicyPackProcess,
    StartedPolicyPack,
    run_policy_pack,
    start_policy_pack,
)

__all__ = [
    "ENGINE_ADDRESS",
    "UNKNOWN",
    "EnforcementLevel",
    "PolicyConfig",
    "PolicyConfigError",
    "PolicyInfo",
    "PolicyPackProcess",
    "PolicyReport",
    "PolicyRunError",
    "ResourceLike",
    "StartedPolicyPack",
    "Violation",
    "load_policy_config_file",
    "parse_policy_config",
    "reconcile_policy_config",
    "run_policy_pack",
    "start_policy_pack",
]

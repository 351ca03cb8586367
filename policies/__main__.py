"""The ``batchplane`` CrossGuard policy pack: ``pulumi preview --policy-pack policies``.

Constructing ``PolicyPack`` starts the analyzer's gRPC server and blocks, so this file does nothing
else; the rules live in ``batchplane_policies`` (importable, tested directly). ``batchplane check``
starts this pack the way the Pulumi CLI does (``python -u -m pulumi.policy <engine> .``).
"""

from batchplane_policies.registry import PACK_NAME, POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(
    name=PACK_NAME,
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=POLICIES,
    description="Batchplane: GKE Dynamic Workload Scheduler pools, Kueue quotas and references, operator "
    "installs and the quota admission webhook.",
)

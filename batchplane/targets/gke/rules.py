"""GKE rules stated once, for the program and the CrossGuard policy pack (``policies/batchplane_policies/gke.py``).

The program checks the stack config (:func:`batchplane.targets.gke.config.validate_gke_target`); the pack checks the
``gcp:container/cluster:Cluster`` inputs a program registers. Both ask the same question here. No Pulumi, no
pydantic model: plain values, so the pack imports it without the program.
"""

from __future__ import annotations


def deletion_protection_refused(deletion_protection: bool | None, *, production: bool) -> bool:
    """Whether a cluster's deletion protection breaks the production rule: a production cluster must not be
    deletable by ``pulumi destroy`` or a replacement.

    Args:
        deletion_protection: the cluster's ``deletion_protection`` (``deletionProtection``); ``None`` when not set,
            which keeps it on (pulumi-gcp's default is ``true``; Batchplane's default in production is ``true``).
        production: whether the stack's environment is a production one.

    Returns:
        ``True`` only for an explicit ``False`` on a production stack.
    """
    return production and deletion_protection is False

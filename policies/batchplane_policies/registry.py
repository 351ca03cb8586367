"""Every policy of the ``batchplane`` pack, in the order the pack lists them.

Import this module (not ``policies/__main__.py``, which starts a gRPC server and never returns) to
inspect or call the policies, e.g. in tests.
"""

from __future__ import annotations

from pulumi_policy import Policy

from batchplane_policies import budget, gke, installs, kueue, multikueue, releases, webhook

PACK_NAME = "batchplane"
"""The policy pack name (``pulumi preview --policy-pack policies`` reports it)."""

POLICIES: list[Policy] = [
    *gke.POLICIES,
    *kueue.POLICIES,
    *installs.POLICIES,
    *webhook.POLICIES,
    *multikueue.POLICIES,
    *budget.POLICIES,
    *releases.POLICIES,
]
"""All policies: GKE, Kueue, installs, webhook, MultiKueue, budgets, operator releases."""


def by_name(name: str) -> Policy:
    """The policy called ``name``.

    Raises:
        KeyError: no policy has that name.
    """
    for policy in POLICIES:
        if policy.name == name:
            return policy
    raise KeyError(name)

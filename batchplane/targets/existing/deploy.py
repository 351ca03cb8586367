"""The existing-cluster platform's Pulumi half (:class:`~batchplane.targets.deploy.PlatformDeploy`): a provider for
the target's context and kubeconfig, the shared Helm operators, no image build."""

from __future__ import annotations

from batchplane.targets.deploy import ClusterConnection, ClusterNeeds, Placement, PlatformDeploy
from batchplane.targets.existing.platform import ExistingPlatform


class ExistingDeploy(PlatformDeploy):
    """Any existing cluster reached through a kubeconfig context."""

    platform: ExistingPlatform

    def declare_cluster(self, needs: ClusterNeeds, place: Placement) -> ClusterConnection:
        return self.connect_existing(place)

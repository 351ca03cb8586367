"""What a kind stack needs before ``pulumi up`` (offline, from its validated target): the local cluster and the
image ``webhook.build: {registry: kind}`` loads into it. :mod:`batchplane.targets.kind.preflight` checks it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KindCluster:
    """A local kind cluster the stack deploys to.

    Attributes:
        cluster_name: ``kind create cluster --name`` value.
        loads_image: the image ``webhook.build: {registry: kind}`` builds and loads, or None.
        path: the target's key path.
    """

    cluster_name: str
    loads_image: str | None
    path: str

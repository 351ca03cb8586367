"""The preflight half of the platform interface: what a platform needs of the world before ``pulumi up``, and the
checks that ask the world.

Each platform implements :class:`PlatformPreflight` once, in ``batchplane/targets/<platform>/preflight.py``; the
platform registry (:data:`batchplane.targets.registry.REGISTRY`) names it, and ``batchplane preflight``
(:func:`batchplane.preflight.run.preflight`) imports it only when it runs. A run:

1. :meth:`PlatformPreflight.add_requirements` — once per platform among the stack's targets (the stack's own and
   its declared MultiKueue workers'), offline, into the one
   :class:`~batchplane.preflight.model.Requirements`;
2. :meth:`PlatformPreflight.check_access` — what the platform asks before any cluster is reached (GKE: Google
   Cloud's APIs with Application Default Credentials; kind: Docker, the kind CLI, the node container);
3. :meth:`PlatformPreflight.check_cluster` — what it asks the cluster's API server (OpenShift: OLM's catalog, the
   operator namespaces, MachineSets, feature gates, the internal registry's route, Kueue);
4. images: :meth:`PlatformPreflight.image_on_nodes` when no registry serves one (kind: loaded on the node).

Platform-neutral pieces (the report, the kubeconfig client, Docker, registries, monitoring CRDs) stay in
:mod:`batchplane.preflight`. A platform's half is handed the requirements model and the run's environment
(:mod:`batchplane.preflight.model`, plain data that imports no stack).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from batchplane.config.operators import OperatorsConfig
from batchplane.config.webhook import WebhookConfig

if TYPE_CHECKING:
    from batchplane.preflight.model import Environment, Requirements
    from batchplane.preflight.report import Report

__all__ = ["PlatformPreflight", "StackFacts"]


@dataclass(frozen=True)
class StackFacts:
    """What a platform's requirements read from the validated stack (plain data, so platforms import no stack).

    Attributes:
        name: the Pulumi stack name.
        environment: ``dev``, ``staging`` or ``production``.
        gcp_project: ``gcp:project`` when set, else ``None``.
        webhook: ``batchplane:webhook``.
        webhook_enabled: whether the stack deploys the quota webhook.
        operators: ``batchplane:operators``, or ``None``.
        kueue_api_version: the rendered ``kueue.x-k8s.io`` version (``kueue.x-k8s.io/v1beta2``).
        cluster_queues: the ClusterQueue names the stack declares.
    """

    name: str
    environment: str
    gcp_project: str | None
    webhook: WebhookConfig
    webhook_enabled: bool
    operators: OperatorsConfig | None
    kueue_api_version: str
    cluster_queues: tuple[str, ...]


class PlatformPreflight:
    """One platform's preflight half (defaults: nothing needed, nothing asked).

    Class attributes:
        checks_docker: the platform's own access check asks the Docker engine (kind), so the run does not ask it
            again for a webhook build. Defaults to false.
    """

    checks_docker: ClassVar[bool] = False

    def add_requirements(self, facts: StackFacts, targets: list[tuple[Any, str]], req: Requirements) -> None:
        """Add what this platform's targets need to ``req``, in place.

        Args:
            facts: the stack's facts.
            targets: ``(validated target, key path)`` of every target of this platform in the stack, the stack's
                own first (``batchplane:target``, ``batchplane:multiKueue.workers[i].target``).
            req: the stack's requirements.
        """
        return None

    def check_access(self, req: Requirements, report: Report, env: Environment) -> bool:
        """Ask what the platform needs before any cluster is reached; return whether the clusters can be asked
        (kind: its node runs). Defaults to asking nothing, true."""
        return True

    def check_cluster(self, req: Requirements, api_client: Any, report: Report) -> None:
        """Ask the cluster's API server (a ``kubernetes.client.ApiClient``) what the platform needs of it. Defaults to
        nothing."""
        return None

    def image_on_nodes(self, req: Requirements, reference: str) -> bool:
        """Whether the cluster's nodes already hold an image no registry serves (kind: ``kind load``). Defaults to
        false."""
        return False

    def image_fix(self, req: Requirements, reference: str) -> str:
        """What to add to the fix of an image no registry serves (kind: build and load it). Defaults to nothing."""
        return ""

"""``batchplane preflight``: what will fail before anything is created.

:mod:`~batchplane.preflight.requirements` computes, offline, into :mod:`~batchplane.preflight.model`, what a validated stack needs (APIs, quotas from the
pools at their maximum, org policies, zone offerings, GKE versions, images, OLM packages, kind); the checkers ask
the world with the user's credentials — each platform's preflight half in its home
(:class:`~batchplane.targets.preflight.PlatformPreflight`: :mod:`batchplane.targets.gke.preflight` with Google's client
libraries, :mod:`batchplane.targets.openshift.preflight` and :mod:`~batchplane.preflight.kube` with the kubernetes
client, :mod:`batchplane.targets.kind.preflight` with the docker and kind CLIs), :mod:`~batchplane.preflight.images`
(registries) — and :mod:`~batchplane.preflight.report` lists every
blocker and warning with its config key path and fix. :mod:`~batchplane.preflight.docs` prints the requirements
of each template (docs/requirements.md).
"""

from batchplane.preflight.model import Environment, Requirements
from batchplane.preflight.report import Finding, Report
from batchplane.preflight.requirements import stack_requirements
from batchplane.preflight.run import preflight

__all__ = ["Environment", "Finding", "Report", "Requirements", "preflight", "stack_requirements"]

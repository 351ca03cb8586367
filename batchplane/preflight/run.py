"""One preflight run: the stack's requirements, each platform's preflight half, one report.

:func:`preflight` is what ``batchplane preflight`` calls. Its collaborators are parameters so a caller (or a test)
can hand in credentials, a ``requests`` adapter and a kubeconfig; by default it uses Application Default
Credentials, the network and the kubeconfig of the target.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchplane.preflight.images import registry_serves
from batchplane.preflight.model import Environment, Requirements
from batchplane.preflight.report import Report
from batchplane.preflight.requirements import preflight_half, stack_requirements
from batchplane.stack import Stack
from batchplane.targets.preflight import PlatformPreflight
from batchplane.targets.registry import descriptor

if TYPE_CHECKING:
    import requests


def preflight(stack: Stack, env: Environment | None = None) -> Report:
    """Check everything the stack needs, with the user's credentials, and report every finding at once.

    The platforms among the stack's targets answer through their preflight halves
    (:class:`~batchplane.targets.preflight.PlatformPreflight`): first what each asks before any cluster is reached
    (GKE: Google Cloud's APIs; kind: Docker and the node), then — when every one of them can reach its cluster — each
    kubeconfig context and what each platform asks of the cluster (OpenShift: OLM, MachineSets, feature gates, Kueue),
    the monitoring CRDs, and the images.

    Args:
        stack: a validated stack.
        env: how to reach the world (:class:`Environment`). Defaults to ADC, the network, the kubeconfig.

    Returns:
        The :class:`~batchplane.preflight.report.Report` (exit code 1 when anything blocks).

    Raises:
        batchplane.preflight.report.CredentialsMissing: a GKE stack without Application Default Credentials or
            without a project to check.
    """
    env = env or Environment()
    req = stack_requirements(stack)
    report = Report(stack.name)
    halves = [preflight_half(kind) for kind in req.platforms]
    reachable = True
    for half in (h for h in halves if not h.checks_docker):
        reachable = half.check_access(req, report, env) and reachable
    if req.builds_image is not None and not any(half.checks_docker for half in halves):
        from batchplane.preflight.docker import check_docker

        check_docker(
            "batchplane:webhook.build",
            f"pulumi up builds the webhook image here with Docker (BuildKit) for {req.builds_image}",
            report,
        )
    for half in (h for h in halves if h.checks_docker):  # kind: Docker, the kind CLI, the node
        reachable = half.check_access(req, report, env) and reachable
    api_client = None
    if reachable:
        from batchplane.preflight.kube import kube_client

        for context in req.contexts:
            api_client = kube_client(context, report)
    if api_client is not None:
        for half in halves:
            half.check_cluster(req, api_client, report)
    if api_client is not None and req.user_workload_monitoring is not None:
        from batchplane.preflight.monitoring import check_user_workload_monitoring

        check_user_workload_monitoring(req.user_workload_monitoring, api_client, report)
    if api_client is not None and req.prometheus_operator is not None:
        from batchplane.preflight.monitoring import check_prometheus_operator_crds

        check_prometheus_operator_crds(req.prometheus_operator, api_client, report)
    if api_client is not None and req.grafana_operator is not None:
        from batchplane.preflight.monitoring import check_grafana_operator

        check_grafana_operator(*req.grafana_operator, api_client, report)
    if env.check_images:
        _images(req, report, env, halves)
    return report


def _session(env: Environment) -> requests.Session:
    import requests

    session = requests.Session()
    if env.adapter is not None:
        session.mount("https://", env.adapter)
    return session


def _images(req: Requirements, report: Report, env: Environment, halves: list[PlatformPreflight]) -> None:
    if not req.images:
        return
    session = _session(env)
    for image in req.images:
        answer = registry_serves(image.reference, session)
        if answer.served is True:
            report.ran("image")
            continue
        if any(half.image_on_nodes(req, image.reference) for half in halves):
            report.ran("image")
            continue
        load = "".join(half.image_fix(req, image.reference) for half in halves)
        builds = descriptor(req.platform).platform.image_registry is not None
        build = "; or omit webhook.image so that the stack builds it" if builds else ""
        fix = f"publish {image.reference} or point webhook.image at a published image{build}{load}"
        if answer.served is False:
            report.ran("image")
            report.blocker(
                "image", image.path, f"no registry serves {image.reference} ({answer.detail})", fix
            )
        else:
            report.warning(
                "image", image.path, f"could not tell whether {image.reference} exists: {answer.detail}", fix
            )

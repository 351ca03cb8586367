"""One preflight run: the stack's requirements, each platform's checker, one report.

:func:`preflight` is what ``batchplane preflight`` calls. Its collaborators are parameters so a caller (or a test)
can hand in credentials, a ``requests`` adapter and a kubeconfig; by default it uses Application Default
Credentials, the network and the kubeconfig of the target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from batchplane.preflight.images import registry_serves
from batchplane.preflight.kind import node_has_image
from batchplane.preflight.report import Report
from batchplane.preflight.requirements import Requirements, stack_requirements
from batchplane.stack import Stack

if TYPE_CHECKING:
    import requests
    from requests.adapters import BaseAdapter


@dataclass
class Environment:
    """How preflight reaches the world.

    Attributes:
        gcp_credentials: ``google.auth`` credentials, or None for Application Default Credentials.
        gcp_project: the project when neither the stack nor ``gcp:project`` gives one (ADC's project by default).
        adapter: a ``requests`` adapter for every HTTPS call (Google APIs and registries), or None for the network.
        check_images: ask registries about images. Defaults to true.
    """

    gcp_credentials: Any = None
    gcp_project: str | None = None
    adapter: BaseAdapter | None = None
    check_images: bool = True


def preflight(stack: Stack, env: Environment | None = None) -> Report:
    """Check everything the stack needs, with the user's credentials, and report every finding at once.

    Args:
        stack: a validated stack.
        env: how to reach the world (:class:`Environment`). Defaults to ADC, the network, the kubeconfig.

    Returns:
        The :class:`~batchplane.preflight.report.Report` (exit code 1 when anything blocks).

    Raises:
        batchplane.preflight.gcp.CredentialsMissing: a GKE stack without Application Default Credentials or without
            a project to check.
    """
    env = env or Environment()
    req = stack_requirements(stack)
    report = Report(stack.name)
    if req.clusters:
        _gcp(req, report, env)
    kind_running = False
    if req.kind is not None:
        from batchplane.preflight.kind import check_kind

        kind_running = check_kind(req.kind, report)
    api_client = None
    if req.kind is None or kind_running:
        from batchplane.preflight.olm import kube_client

        for context in req.contexts:
            api_client = kube_client(context, report)
    if api_client is not None and req.olm_packages:
        from batchplane.preflight.olm import check_olm

        check_olm(req.olm_packages, api_client, report)
    if api_client is not None and req.registry_route is not None:
        from batchplane.preflight.olm import check_registry_route

        check_registry_route(req.registry_route, api_client, report)
    if api_client is not None and req.user_workload_monitoring is not None:
        from batchplane.preflight.monitoring import check_user_workload_monitoring

        check_user_workload_monitoring(req.user_workload_monitoring, api_client, report)
    if api_client is not None and req.prometheus_operator is not None:
        from batchplane.preflight.monitoring import check_prometheus_operator_crds

        check_prometheus_operator_crds(req.prometheus_operator, api_client, report)
    if env.check_images:
        _images(req, report, env, kind_running)
    return report


def _gcp(req: Requirements, report: Report, env: Environment) -> None:
    from batchplane.preflight.gcp import CredentialsMissing, check_gcp, default_credentials, make_clients

    credentials, adc_project = (env.gcp_credentials, None) if env.gcp_credentials else default_credentials()
    project = req.project or env.gcp_project or adc_project
    if project is None:
        raise CredentialsMissing(
            "no GCP project: set target.project or gcp:project (pulumi config set gcp:project …), or give "
            "--project"
        )
    if req.project is None:
        req.project = project
    check_gcp(req, report, make_clients(credentials, env.adapter), project)


def _session(env: Environment) -> requests.Session:
    import requests

    session = requests.Session()
    if env.adapter is not None:
        session.mount("https://", env.adapter)
    return session


def _images(req: Requirements, report: Report, env: Environment, kind_running: bool) -> None:
    if not req.images:
        return
    session = _session(env)
    for image in req.images:
        answer = registry_serves(image.reference, session)
        if answer.served is True:
            report.ran("image")
            continue
        if req.kind is not None and kind_running and node_has_image(req.kind, image.reference):
            report.ran("image")
            continue
        load = (
            f"; or build and load it: docker build -f webhook/Dockerfile -t {image.reference} . && kind load "
            f"docker-image {image.reference} --name {req.kind.cluster_name}"
            if req.kind is not None
            else ""
        )
        build = "" if req.platform == "existing" else "; or omit webhook.image so that the stack builds it"
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

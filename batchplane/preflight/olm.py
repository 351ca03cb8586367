"""Preflight for clusters reached through a kubeconfig: the context, and OLM's catalog for OpenShift.

The kubeconfig is read with the kubernetes client (``kubernetes.config``), as the Kubernetes provider reads it. For
an OpenShift target each Subscription's package must be in its CatalogSource, with the channel it names and, when
``startingCSV`` is set, that CSV in the channel. OLM's package server answers that as ``PackageManifest`` objects
(``packages.operators.coreos.com/v1``, namespaced in the catalog's namespace, labelled ``catalog=<CatalogSource>``):
``status.channels[].name``, ``.currentCSV``, ``status.defaultChannel`` (operator-framework
``operator-lifecycle-manager`` ``pkg/package-server/apis/operators/v1/packagemanifest_types.go``) and, on package
servers that list them, ``.entries[].name`` (every CSV of the channel); without entries only the head is known and a
``startingCSV`` other than the head is a warning.

When the stack pushes the webhook image through the internal registry's default route (``webhook.build`` on
OpenShift without ``registryHost``), Route ``default-route`` in ``openshift-image-registry`` must exist with a
``spec.host`` (:func:`check_registry_route`), as ``pulumi up``'s registry-route gate requires.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

from batchplane.operators.readiness import (
    EXPOSE_REGISTRY,
    REGISTRY_NAMESPACE,
    REGISTRY_ROUTE,
    ROUTE_API,
    route_host,
)
from batchplane.preflight.report import Report
from batchplane.preflight.requirements import KubeContext, OlmPackage

PACKAGES_GROUP = "packages.operators.coreos.com"


def kube_client(need: KubeContext, report: Report) -> Any | None:
    """An ``ApiClient`` for the context, or None with a blocker when the kubeconfig or the context is missing."""
    from kubernetes import config
    from kubernetes.config.config_exception import ConfigException

    # $KUBECONFIG read now (the client reads it once, at import); a list of files is merged by the client.
    kubeconfig = need.kubeconfig or os.environ.get("KUBECONFIG") or None
    try:
        contexts, _ = config.list_kube_config_contexts(config_file=kubeconfig)  # type: ignore[no-untyped-call]
    except (ConfigException, OSError) as exc:
        report.blocker(
            "kube-context",
            need.path,
            f"no usable kubeconfig ({exc}); the stack needs context {need.context}",
            _context_fix(need),
        )
        return None
    if need.context not in {c["name"] for c in contexts}:
        names = ", ".join(sorted(c["name"] for c in contexts)) or "none"
        report.blocker(
            "kube-context",
            need.path,
            f'kubeconfig has no context "{need.context}" (contexts: {names})',
            _context_fix(need),
        )
        return None
    report.ran("kube-context")
    return config.new_client_from_config(  # type: ignore[no-untyped-call]
        config_file=kubeconfig, context=need.context
    )


def _context_fix(need: KubeContext) -> str:
    if need.context.startswith("kind-"):
        return f"kind create cluster --name {need.context[len('kind-') :]}"
    return "log in to the cluster (oc login …) or set target.context to an existing context (kubectl config get-contexts)"


def check_olm(packages: list[OlmPackage], api_client: Any, report: Report) -> None:
    """Every subscribed package, channel and starting CSV against the cluster's ``PackageManifest`` objects.

    Args:
        packages: the target's subscriptions (:func:`~batchplane.preflight.requirements.olm_packages`).
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go.
    """
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    api = client.CustomObjectsApi(api_client)
    by_catalog: dict[tuple[str, str], list[OlmPackage]] = defaultdict(list)
    for package in packages:
        by_catalog[(package.source_namespace, package.source)].append(package)
    for (namespace, source), wanted in by_catalog.items():
        try:
            listing = api.list_namespaced_custom_object(
                PACKAGES_GROUP, "v1", namespace, "packagemanifests", label_selector=f"catalog={source}"
            )
        except ApiException as exc:
            if exc.status == 404:
                report.blocker(
                    "olm",
                    wanted[0].path,
                    f"the cluster serves no {PACKAGES_GROUP}/v1 PackageManifests in {namespace}: OLM is not "
                    "installed, or the namespace is wrong",
                    "use an OpenShift cluster (OLM is part of it), or check target.*.sourceNamespace",
                )
            else:
                report.warning(
                    "olm", wanted[0].path, f"OLM catalog {source} not checked: {exc.status} {exc.reason}"
                )
            continue
        report.ran("olm")
        listed: dict[str, Any] = listing if isinstance(listing, dict) else {}
        items = {item["metadata"]["name"]: item for item in listed.get("items", [])}
        for package in wanted:
            _check_package(package, items.get(package.package), report)


def _check_package(package: OlmPackage, manifest: dict[str, Any] | None, report: Report) -> None:
    where = f"CatalogSource {package.source} ({package.source_namespace})"
    if manifest is None:
        report.blocker(
            "olm",
            f"{package.path}.source",
            f"package {package.package} is not in {where}",
            f"oc get packagemanifests -n {package.source_namespace} | grep {package.package}; set source to the "
            "catalog that has it, or add that CatalogSource (a disconnected cluster mirrors it with oc-mirror)",
        )
        return
    status = manifest.get("status", {})
    channels = {c.get("name"): c for c in status.get("channels", [])}
    channel = channels.get(package.channel)
    if channel is None:
        listed = ", ".join(sorted(str(n) for n in channels)) or "none"
        report.blocker(
            "olm",
            f"{package.path}.channel",
            f"package {package.package} in {where} has no channel {package.channel} (channels: {listed}; default "
            f"{status.get('defaultChannel', '-')})",
            "set channel to one of them",
        )
        return
    if package.starting_csv is None:
        return
    if package.starting_csv == channel.get("currentCSV"):
        return
    if "entries" not in channel:  # package servers before channel entries were added list only the head
        report.warning(
            "olm",
            f"{package.path}.startingCsv",
            f"the package server lists only the head of channel {package.channel} ({channel.get('currentCSV')}); "
            f"cannot tell whether {package.starting_csv} is in it",
        )
        return
    if package.starting_csv not in {e.get("name") for e in channel["entries"]}:
        report.blocker(
            "olm",
            f"{package.path}.startingCsv",
            f"channel {package.channel} of {package.package} has no CSV {package.starting_csv} (head: "
            f"{channel.get('currentCSV')})",
            "set startingCsv to a CSV of the channel, or remove it to start at the head",
        )


def check_registry_route(path: str, api_client: Any, report: Report) -> None:
    """The internal image registry's default route (``route.openshift.io/v1`` Route ``default-route`` in
    ``openshift-image-registry``) exists and has a ``spec.host``: a blocker naming ``path`` and the ``oc patch`` fix
    when it does not (the registry is not exposed), a warning when it cannot be read.

    Args:
        path: the key path whose omission makes the stack need the route (``batchplane:webhook.build.registryHost``).
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go.
    """
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    group, _, version = ROUTE_API.partition("/")
    where = f"Route {REGISTRY_NAMESPACE}/{REGISTRY_ROUTE}"
    try:
        route = client.CustomObjectsApi(api_client).get_namespaced_custom_object(
            group, version, REGISTRY_NAMESPACE, "routes", REGISTRY_ROUTE
        )
    except ApiException as exc:
        if exc.status != 404:
            report.warning("registry-route", path, f"{where} not checked: {exc.status} {exc.reason}")
            return
        route = None
    report.ran("registry-route")
    if route_host(route if isinstance(route, dict) else None) is None:
        report.blocker(
            "registry-route",
            path,
            f"the internal image registry is not exposed ({where} has no host), and the stack pushes the webhook "
            "image through it",
            f"{EXPOSE_REGISTRY}; or set webhook.build.registryHost to a route of your own",
        )

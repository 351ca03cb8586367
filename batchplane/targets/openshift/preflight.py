"""OpenShift's preflight half (:class:`OpenShiftPreflight`, :class:`~batchplane.targets.preflight.PlatformPreflight`):
what ``pulumi up`` will find in the cluster, read with the user's kubeconfig through the kubernetes client
(:func:`batchplane.preflight.kube.kube_client`), before anything changes. The requirements come from
:mod:`batchplane.targets.openshift.requirements`.

OLM's catalog (:func:`check_olm`): each Subscription's package must be in its CatalogSource, with the channel it
names and, when ``startingCSV`` is set, that CSV in the channel. OLM's package server answers that as
``PackageManifest`` objects (``packages.operators.coreos.com/v1``, namespaced in the catalog's namespace, labelled
``catalog=<CatalogSource>``): ``status.channels[].name``, ``.currentCSV``, ``status.defaultChannel`` (operator-framework
``operator-lifecycle-manager`` ``pkg/package-server/apis/operators/v1/packagemanifest_types.go``) and, on package
servers that list them, ``.entries[].name`` (every CSV of the channel); without entries only the head is known and a
``startingCSV`` other than the head is a warning. When the stack pushes the webhook image through the internal
registry's default route (``webhook.build`` on OpenShift without ``registryHost``), Route ``default-route`` in
``openshift-image-registry`` must exist with a ``spec.host`` (:func:`check_registry_route`), as ``pulumi up``'s
registry-route gate requires.

The deploy-time lookups, from the same answers and the same decision functions as ``pulumi up``:

* :func:`check_operator_namespaces` — per operator namespace, the ``operators.coreos.com`` OperatorGroups and
  Subscriptions (:func:`batchplane.operators.olm_lookup.plan_namespace`): an existing OperatorGroup to reuse and a
  Subscription to adopt are notes; two OperatorGroups, or a Subscription of another channel or package without
  ``adopt: true``, are blockers (the ``olm-namespace`` lookup refuses them);
* :func:`check_machine_set_sources` — per GPU pool that copies a worker MachineSet, the ``machine.openshift.io/v1beta1``
  MachineSets of ``openshift-machine-api`` (:func:`batchplane.targets.openshift.machines.choose_worker_machine_set`):
  the MachineSet it will copy (a note, with its subnet and security groups), or a blocker when its zone has none;
* :func:`check_upgrade_targets` — per ``Manual`` Subscription with a target CSV (``targetCsv``/``startingCsv``): the
  target in the channel, and an installed CSV not newer than it (the CSV gate approves the path to it, step by step).

What the cluster must already be:

* :func:`check_feature_gates` — ``featuregates.config.openshift.io/cluster``: each gate the stack needs must be
  enabled for every version in ``status.featureGates`` (:func:`batchplane.operators.readiness.read_feature_gate`,
  the same reading as ``pulumi up``'s ``feature-gate`` gate). A disabled gate is a blocker naming ``featureSet`` and
  the irreversible fix; a FeatureGate that cannot be read is a warning that says it was not checked.
* :func:`check_kueue_api` — a Kueue that already runs must serve the ``kueue.x-k8s.io`` version the stack renders
  (the Red Hat build of Kueue 1.0-1.2 serves ``v1beta1`` only), and a ClusterQueue ``default`` the stack does not
  declare (OpenShift AI 3.0-3.4 create one sized to the whole cluster) is reported.
* :func:`check_kueue_cr` — ``kueue.openshift.io/v1`` ``Kueue`` ``cluster``: an existing CR without the frameworks the
  stack needs is reported (a warning: ``pulumi up`` applies them server-side; until then those jobs are not
  queued). No CR yet is fine (the operator or the stack creates it).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from batchplane.operators.olm_lookup import OPERATOR_GROUP_API, SUBSCRIPTION_API, StackInstall, plan_namespace
from batchplane.operators.readiness import (
    CLUSTER_FEATURE_GATE,
    CONFIG_API,
    EXPOSE_REGISTRY,
    PACKAGES_API,
    REGISTRY_NAMESPACE,
    REGISTRY_ROUTE,
    ROUTE_API,
    channel_head,
    channel_versions,
    enable_feature_set_fix,
    parse_semver,
    read_feature_gate,
    route_host,
    skip_range_overtakes,
)
from batchplane.preflight.kube import KubeContext
from batchplane.preflight.report import Report
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.gpu import PROVISIONING_FEATURE_GATE, PROVISIONING_FEATURE_SETS
from batchplane.targets.openshift.machines import (
    MACHINE_API_NAMESPACE,
    MACHINE_API_VERSION,
    MachineSetSource,
    choose_worker_machine_set,
    machine_set_sources,
)
from batchplane.targets.openshift.olm import kueue_cr_frameworks
from batchplane.targets.openshift.requirements import (
    FeatureGateNeed,
    KueueApiNeed,
    KueueCrNeed,
    OlmPackage,
    UpgradeTarget,
    olm_namespaces,
    olm_packages,
    upgrade_targets,
)
from batchplane.targets.preflight import PlatformPreflight, StackFacts

if TYPE_CHECKING:
    from batchplane.preflight.model import Requirements

KUEUE_CR_API = "kueue.openshift.io/v1"


def _list(api_client: Any, api_version: str, namespace: str, plural: str) -> list[dict[str, Any]]:
    from kubernetes import client

    group, _, version = api_version.partition("/")
    answer = client.CustomObjectsApi(api_client).list_namespaced_custom_object(
        group, version, namespace, plural
    )
    return [dict(i) for i in (answer or {}).get("items") or []] if isinstance(answer, dict) else []


def check_operator_namespaces(
    installs: list[tuple[StackInstall, str]], api_client: Any, report: Report
) -> None:
    """Every operator namespace's OperatorGroups and Subscriptions against what the stack declares there.

    Args:
        installs: ``(what the stack declares, key path of the operator's settings)``
            (:func:`~batchplane.targets.openshift.requirements.olm_namespaces`).
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go.
    """
    from kubernetes.client.exceptions import ApiException

    for install, path in installs:
        try:
            groups = _list(api_client, OPERATOR_GROUP_API, install.namespace, "operatorgroups")
            subs = _list(api_client, SUBSCRIPTION_API, install.namespace, "subscriptions")
        except ApiException as exc:
            report.warning(
                "olm-namespace",
                path,
                f"OperatorGroups/Subscriptions in {install.namespace} not checked: {exc.status} {exc.reason}",
            )
            continue
        report.ran("olm-namespace")
        plan = plan_namespace(install, groups, subs)
        for problem in plan.problems:
            channel = "Subscription" in problem
            report.blocker(
                "olm-namespace",
                f"{path}.channel" if channel else path,
                problem,
                f"set {path.removeprefix('batchplane:')}.channel to the running one, or adopt: true"
                if channel
                else f"oc get operatorgroups -n {install.namespace}; keep one",
            )
        for note in plan.notes:
            report.note("olm-namespace", path, note)


def _filter_names(value: Any) -> list[str]:
    """The ``tag:Name`` values of an AWS filter reference (``{filters: [{name, values}]}``), or its ``id``."""
    if not isinstance(value, dict):
        return []
    if value.get("id"):
        return [str(value["id"])]
    return [str(v) for f in value.get("filters") or [] for v in f.get("values") or []]


def check_machine_set_sources(sources: list[MachineSetSource], api_client: Any, report: Report) -> None:
    """Per GPU pool that copies a worker MachineSet: the one ``pulumi up`` will copy (a note), or a blocker.

    Args:
        sources: the pools' lookups (:func:`~batchplane.targets.openshift.machines.machine_set_sources`).
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go.
    """
    from kubernetes.client.exceptions import ApiException

    if not sources:
        return
    try:
        items = _list(api_client, MACHINE_API_VERSION, MACHINE_API_NAMESPACE, "machinesets")
    except ApiException as exc:
        for source in sources:
            report.warning(
                "machineset",
                source.path,
                f"the MachineSets of {MACHINE_API_NAMESPACE} not checked: {exc.status} {exc.reason}",
            )
        return
    report.ran("machineset")
    for source in sources:
        choice = choose_worker_machine_set(items, source.zone, source.infrastructure_id, source.explicit)
        if choice.problem is not None or choice.provider_spec is None:
            report.blocker(
                "machineset",
                f"{source.path}.sourceMachineSet" if source.explicit else f"{source.path}.zone",
                f'GPU pool "{source.pool}": {choice.problem}',
                f"oc get machinesets -n {MACHINE_API_NAMESPACE} -o wide; set aws.zone or aws.sourceMachineSet",
            )
            continue
        spec = choice.provider_spec
        groups = [n for g in spec.get("securityGroups") or [] for n in _filter_names(g)]
        report.note(
            "machineset",
            source.path,
            f'GPU pool "{source.pool}" copies MachineSet {MACHINE_API_NAMESPACE}/{choice.name} (subnet '
            f"{', '.join(_filter_names(spec.get('subnet'))) or '-'}, security groups {', '.join(groups) or '-'}, "
            f"AMI {(spec.get('ami') or {}).get('id', '-')}); settings given under aws win",
        )


def check_upgrade_targets(targets: list[UpgradeTarget], api_client: Any, report: Report) -> None:
    """Per ``Manual``-approval Subscription with a target CSV: the target is in the channel (the ``PackageManifest``
    entries), and the operator already installed, if any, is not newer than it (OLM never downgrades, so the CSV gate
    would wait for an InstallPlan that never comes); an upgrade still to make is a note naming the versions the gate
    will approve on the way.

    Args:
        targets: the targets (:func:`~batchplane.targets.openshift.requirements.upgrade_targets`).
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go.
    """
    from kubernetes.client.exceptions import ApiException

    for up in targets:
        catalog = up.catalog
        try:
            manifests = _list_selected(api_client, catalog.source_namespace, f"catalog={catalog.source}")
            subs = _list(api_client, SUBSCRIPTION_API, up.namespace, "subscriptions")
        except ApiException as exc:
            report.warning("olm", up.path, f"target CSV {up.target} not checked: {exc.status} {exc.reason}")
            continue
        manifest = next(
            (m for m in manifests if (m.get("metadata") or {}).get("name") == catalog.package), None
        )
        versions = channel_versions(manifest, catalog.channel)
        if versions is None:
            report.warning(
                "olm",
                up.path,
                f"the package server lists no entries for channel {catalog.channel} of {catalog.package}: cannot "
                f"tell whether {up.target} is in it, nor the upgrade path to it",
            )
            continue
        if up.target not in versions:
            if up.path.endswith(
                ".startingCsv"
            ):  # the olm check reports a startingCSV missing from the channel
                continue
            report.blocker(
                "olm",
                up.path,
                f"channel {catalog.channel} of {catalog.package} has no CSV {up.target} (CSVs: "
                f"{', '.join(sorted(versions))})",
                "set targetCsv to a CSV of the channel",
            )
            continue
        installed = next(
            (
                str((s.get("status") or {}).get("installedCSV") or "")
                for s in subs
                if (s.get("spec") or {}).get("name") == catalog.package
            ),
            "",
        )
        if not installed or installed == up.target:
            continue
        have, want = parse_semver(versions.get(installed, "")), parse_semver(versions[up.target])
        if have is not None and want is not None and want < have:
            report.blocker(
                "olm",
                up.path,
                f"{installed} ({versions[installed]}) is installed in {up.namespace}, newer than the target "
                f"{up.target} ({versions[up.target]}): OLM never downgrades, the CSV gate would wait for nothing",
                f"set targetCsv to {installed} or a later CSV of the channel",
            )
            continue
        head = channel_head(manifest, catalog.channel)
        overtaken = skip_range_overtakes(installed, up.target, versions, head)
        if overtaken is not None:
            report.blocker(
                "olm",
                up.path,
                f"{installed} is installed in {up.namespace} and the CSV gate waits for {up.target}, but {overtaken}",
                f"set targetCsv to {head[0] if head else 'the channel head'} (the only upgrade OLM offers), or to "
                f"{installed} to stay",
            )
            continue
        steps = sorted(
            (
                n
                for n, v in versions.items()
                if (k := parse_semver(v)) and want and (have is None or have < k) and k <= want
            ),
            key=lambda n: parse_semver(versions[n]) or ((), (0, ())),
        )
        report.note(
            "olm",
            up.path,
            f"{installed} is installed: the CSV gate approves the channel's InstallPlans on the way to {up.target} one "
            f"at a time ({', '.join(steps)})",
        )


def _list_selected(api_client: Any, namespace: str, selector: str) -> list[dict[str, Any]]:
    from kubernetes import client

    group, _, version = PACKAGES_API.partition("/")
    answer = client.CustomObjectsApi(api_client).list_namespaced_custom_object(
        group, version, namespace, "packagemanifests", label_selector=selector
    )
    return [dict(i) for i in (answer or {}).get("items") or []] if isinstance(answer, dict) else []


def _get_cluster_object(api_client: Any, api_version: str, plural: str, name: str) -> tuple[Any, Any]:
    """``(object or None on 404, ApiException or None)``."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    group, _, version = api_version.partition("/")
    try:
        return client.CustomObjectsApi(api_client).get_cluster_custom_object(
            group, version, plural, name
        ), None
    except ApiException as exc:
        if exc.status == 404:
            return None, None
        return None, exc


def check_feature_gates(needs: list[FeatureGateNeed], api_client: Any, report: Report) -> None:
    """Every feature gate the stack needs against the cluster's FeatureGate ``cluster``.

    Args:
        needs: the gates (:attr:`~batchplane.preflight.model.Requirements.feature_gates`).
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go (check class ``feature-gate``).
    """
    if not needs:
        return
    obj, error = _get_cluster_object(api_client, CONFIG_API, "featuregates", CLUSTER_FEATURE_GATE)
    if error is not None:
        for need in needs:
            report.warning(
                "feature-gate",
                need.path,
                f"not checked: FeatureGate {CLUSTER_FEATURE_GATE} could not be read ({error.status} {error.reason}); "
                f"{need.why} needs {need.gate}",
                "run preflight with a user who can get featuregates.config.openshift.io",
            )
        return
    report.ran("feature-gate")
    for need in needs:
        reading = read_feature_gate(obj if isinstance(obj, dict) else None, need.gate, need.enabling_sets)
        if reading.state == "enabled":
            continue
        if reading.state in ("rolling-out", "pending"):
            report.warning(
                "feature-gate", need.path, f"{reading.detail}; {need.why} waits until it is enabled", ""
            )
            continue
        report.blocker(
            "feature-gate",
            need.path,
            f"{reading.detail}: {need.why} never becomes Active and its ClusterQueues admit nothing",
            enable_feature_set_fix(need.enabling_sets) + "; or set provisioning: none on the GPU pools",
        )


def check_kueue_cr(need: KueueCrNeed | None, api_client: Any, report: Report) -> None:
    """An existing ``Kueue`` CR ``cluster`` that lacks frameworks the stack needs (a warning naming them).

    Args:
        need: the frameworks (:attr:`~batchplane.preflight.model.Requirements.kueue_cr`), or None.
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go (check class ``kueue-cr``).
    """
    if need is None:
        return
    obj, error = _get_cluster_object(api_client, KUEUE_CR_API, "kueues", "cluster")
    if error is not None:
        report.warning(
            "kueue-cr",
            need.path,
            f"not checked: Kueue CR cluster could not be read ({error.status} {error.reason})",
            "run preflight with a user who can get kueues.kueue.openshift.io",
        )
        return
    report.ran("kueue-cr")
    if not isinstance(obj, dict):
        return
    integrations = ((obj.get("spec") or {}).get("config") or {}).get("integrations") or {}
    present = {str(n) for n in integrations.get("frameworks") or []}
    missing = [name for name in need.frameworks if name not in present]
    if missing:
        report.warning(
            "kueue-cr",
            need.path,
            f"the existing Kueue CR cluster enables {', '.join(sorted(present)) or 'no framework'}, not "
            f"{', '.join(missing)}: until pulumi up applies them (server-side, the CR's other frameworks stay) those "
            "jobs are not queued",
            "pulumi up adds them; or oc patch kueue cluster --type merge with the frameworks listed",
        )


def check_kueue_api(need: KueueApiNeed | None, api_client: Any, report: Report) -> None:
    """The served ``kueue.x-k8s.io`` versions (API discovery) against the stack's, and an undeclared ClusterQueue
    ``default``. Nothing when Kueue is not installed yet (the stack installs it).

    Args:
        need: :attr:`~batchplane.preflight.model.Requirements.kueue_api`, or None.
        api_client: a ``kubernetes.client.ApiClient`` for the cluster.
        report: where findings go (check class ``kueue-api``).
    """
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    if need is None:
        return
    group, _, version = need.api_version.partition("/")
    try:
        served = client.ApisApi(api_client).get_api_versions()
    except ApiException as exc:
        report.warning(
            "kueue-api", need.path, f"not checked: API discovery failed ({exc.status} {exc.reason})", ""
        )
        return
    report.ran("kueue-api")
    versions = [v.version for g in served.groups or [] if g.name == group for v in g.versions or []]
    if not versions:
        return  # Kueue is not installed yet
    if version not in versions:
        report.blocker(
            "kueue-api",
            need.path,
            f"the cluster's Kueue serves {group} {', '.join(versions)}, not {version}: every Kueue object of the stack "
            "would be refused",
            f"set kueue.apiVersion to {group}/{versions[0]}, or subscribe a Red Hat build of Kueue that serves {version}",
        )
        return
    if "default" in need.cluster_queues:
        return
    cq, error = _get_cluster_object(api_client, need.api_version, "clusterqueues", "default")
    if error is None and isinstance(cq, dict):
        report.warning(
            "kueue-api",
            need.queues_path,
            'the cluster has a ClusterQueue "default" the stack does not declare (OpenShift AI 3.0-3.4 create one '
            'sized to the whole cluster, and a LocalQueue "default" in every managed namespace): jobs that reach it '
            "run around the stack's quotas",
            "use OpenShift AI 3.5+ (autoCreateQueues: false) and delete it, and set webhook.refuseUndeclaredQueues: true",
        )


PACKAGES_GROUP = "packages.operators.coreos.com"


def check_olm(packages: list[OlmPackage], api_client: Any, report: Report) -> None:
    """Every subscribed package, channel and starting CSV against the cluster's ``PackageManifest`` objects.

    Args:
        packages: the target's subscriptions (:func:`~batchplane.targets.openshift.requirements.olm_packages`).
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


class OpenShiftPreflight(PlatformPreflight):
    """OpenShift's preflight half: its requirements, then OLM's catalog, the operator namespaces, the target CSVs,
    the MachineSets to copy, the internal registry's route, the feature gates and Kueue, asked of the cluster."""

    def add_requirements(self, facts: StackFacts, targets: list[tuple[Any, str]], req: Requirements) -> None:
        target, path = targets[0]
        assert isinstance(target, OpenShiftTarget)
        req.olm_packages = olm_packages(target)
        req.contexts.append(KubeContext(target.kube_context(), target.kubeconfig, f"{path}.context"))
        req.olm_namespaces = olm_namespaces(target, facts.environment)
        req.machine_set_sources = [s for s in machine_set_sources(target, path) if s is not None]
        req.upgrade_targets = upgrade_targets(target, facts.environment)
        gated = [i for i, pool in enumerate(target.gpu_pools) if pool.provisioning != "none"]
        if gated:
            req.feature_gates.append(
                FeatureGateNeed(
                    PROVISIONING_FEATURE_GATE,
                    PROVISIONING_FEATURE_SETS,
                    f"{path}.featureSet",
                    f"the ProvisioningRequest admission check of {path}.gpuPools[{gated[0]}] "
                    f'"{target.gpu_pools[gated[0]].name}"',
                )
            )
        req.pod_security = (
            "the webhook's pods run under the default SCC `restricted-v2` (UID and fsGroup from the namespace's "
            "range); no SCC grant needed."
        )
        req.kueue_api = KueueApiNeed(
            facts.kueue_api_version,
            facts.cluster_queues,
            "batchplane:kueue.apiVersion",
            f"{path}.openshiftAi",
        )
        if target.installs_rhbok():
            req.kueue_cr = KueueCrNeed(tuple(kueue_cr_frameworks(target)), f"{path}.kueue.frameworks")
        build = facts.webhook.build
        if (
            facts.webhook_enabled
            and build is not None
            and build.registry == "openshift"
            and build.registry_host is None
            and not build.in_cluster
        ):
            req.registry_route = "batchplane:webhook.build.registryHost"

    def check_cluster(self, req: Requirements, api_client: Any, report: Report) -> None:
        if req.olm_packages:
            check_olm(req.olm_packages, api_client, report)
        if req.olm_namespaces or req.machine_set_sources:
            check_operator_namespaces(req.olm_namespaces, api_client, report)
            check_upgrade_targets(req.upgrade_targets, api_client, report)
            check_machine_set_sources(req.machine_set_sources, api_client, report)
        if req.registry_route is not None:
            check_registry_route(req.registry_route, api_client, report)
        if req.feature_gates or req.kueue_cr is not None or req.kueue_api is not None:
            check_feature_gates(req.feature_gates, api_client, report)
            check_kueue_api(req.kueue_api, api_client, report)
            check_kueue_cr(req.kueue_cr, api_client, report)

"""OpenShift preflight: what ``pulumi up`` will find in the cluster, read with the user's kubeconfig through the
kubernetes client (as :mod:`batchplane.preflight.olm`), before anything changes.

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

from typing import Any

from batchplane.operators.olm_lookup import OPERATOR_GROUP_API, SUBSCRIPTION_API, StackInstall, plan_namespace
from batchplane.operators.readiness import (
    CLUSTER_FEATURE_GATE,
    CONFIG_API,
    PACKAGES_API,
    channel_versions,
    enable_feature_set_fix,
    parse_semver,
    read_feature_gate,
)
from batchplane.preflight.report import Report
from batchplane.preflight.requirements import FeatureGateNeed, KueueApiNeed, KueueCrNeed, UpgradeTarget
from batchplane.targets.openshift.machines import (
    MACHINE_API_NAMESPACE,
    MACHINE_API_VERSION,
    MachineSetSource,
    choose_worker_machine_set,
)

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
            (:func:`~batchplane.preflight.requirements.olm_namespaces`).
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
        targets: the targets (:func:`~batchplane.preflight.requirements.upgrade_targets`).
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
        needs: the gates (:attr:`~batchplane.preflight.requirements.Requirements.feature_gates`).
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
        need: the frameworks (:attr:`~batchplane.preflight.requirements.Requirements.kueue_cr`), or None.
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
        need: :attr:`~batchplane.preflight.requirements.Requirements.kueue_api`, or None.
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

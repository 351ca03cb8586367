"""OpenShift preflight of the deploy-time lookups: what ``pulumi up`` will find in the cluster, before anything changes.

With the user's kubeconfig (the kubernetes client, as :mod:`batchplane.preflight.olm`), from the same answers and the
same decision functions as the lookups ``pulumi up`` runs:

* :func:`check_operator_namespaces` — per operator namespace, the ``operators.coreos.com`` OperatorGroups and
  Subscriptions (:func:`batchplane.operators.olm_lookup.plan_namespace`): an existing OperatorGroup to reuse and a
  Subscription to adopt are notes; two OperatorGroups, or a Subscription of another channel or package without
  ``adopt: true``, are blockers (the ``olm-namespace`` lookup refuses them);
* :func:`check_machine_set_sources` — per GPU pool that copies a worker MachineSet, the ``machine.openshift.io/v1beta1``
  MachineSets of ``openshift-machine-api`` (:func:`batchplane.targets.openshift.machines.choose_worker_machine_set`):
  the MachineSet it will copy (a note, with its subnet and security groups), or a blocker when its zone has none.
"""

from __future__ import annotations

from typing import Any

from batchplane.operators.olm_lookup import OPERATOR_GROUP_API, SUBSCRIPTION_API, StackInstall, plan_namespace
from batchplane.preflight.report import Report
from batchplane.targets.openshift.machines import (
    MACHINE_API_NAMESPACE,
    MACHINE_API_VERSION,
    MachineSetSource,
    choose_worker_machine_set,
)


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

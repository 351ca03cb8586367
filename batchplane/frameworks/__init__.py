"""The job-framework registry: everything Batchplane knows about each Kueue job integration, in one place.

One module per framework, like Kueue's ``pkg/controller/jobs/<framework>/`` at v0.19.2
(https://github.com/kubernetes-sigs/kueue/tree/v0.19.2/pkg/controller/jobs), each holding one
:class:`~batchplane.frameworks.framework.JobFramework`; this package registers each once (as Kueue's
``jobframework.RegisterIntegration`` does) and resolves the lookups at import time into plain dicts and tuples.
Everything else derives from it:

* the Kueue Configuration's ``integrations.frameworks`` names (:data:`KUEUE_INTEGRATIONS`),
* the Red Hat build of Kueue's framework names and their Kueue integration (:data:`RHBOK_NAMES`,
  :data:`KUEUE_INTEGRATION_OF_RHBOK`),
* the quota webhook's kind → integration table, the kinds it reviews and the accounting's PodSet extractors,
* the MultiKueue worker ClusterRole (:func:`worker_cluster_role_rules`),
* which job operator switches on which integration (:data:`INTEGRATIONS_OF_OPERATOR`), read by the program's
  Kueue Configuration and the policy pack alike (the pack imports this package).

Pure data: imports nothing else from Batchplane, no Pulumi, no Kubernetes client.
"""

from __future__ import annotations

from collections.abc import Iterable

from batchplane.frameworks import (
    appwrapper,
    batch_job,
    deployment,
    jaxjob,
    jobset,
    leaderworkerset,
    mpijob,
    paddlejob,
    pod,
    pytorchjob,
    raycluster,
    rayjob,
    rayservice,
    sparkapplication,
    statefulset,
    tfjob,
    trainjob,
    xgboostjob,
)
from batchplane.frameworks.framework import (
    JOB_OPERATOR_NAMES,
    KUEUE_TAG,
    MULTIKUEUE_SCRIPT,
    JobFramework,
    JobOperator,
    PodSetSource,
    PolicyRule,
)

__all__ = [
    "ALWAYS_ON",
    "BY_GVK",
    "BY_KIND",
    "BY_NAME",
    "FRAMEWORKS",
    "INTEGRATIONS_OF_OPERATOR",
    "JOB_OPERATOR_NAMES",
    "KUEUE_CHART_DEFAULT_FRAMEWORKS",
    "KUEUE_INTEGRATIONS",
    "KUEUE_INTEGRATION_OF_KIND",
    "KUEUE_INTEGRATION_OF_RHBOK",
    "KUEUE_TAG",
    "MULTIKUEUE_SCRIPT",
    "RHBOK_NAMES",
    "WORKER_COMMON_RULES",
    "JobFramework",
    "JobOperator",
    "PodSetSource",
    "PolicyRule",
    "worker_cluster_role_rules",
]

_REGISTERED: dict[str, JobFramework] = {}


def _register(framework: JobFramework) -> None:
    """Add one framework; a name, kind or RHBoK name registered twice, or ``update_review`` without
    ``admission_review``, is a programming error."""
    if framework.update_review and not framework.admission_review:
        raise ValueError(f"job framework {framework.name} reviews UPDATE but not CREATE")
    for other in _REGISTERED.values():
        clash = (
            other.name == framework.name
            or other.kind == framework.kind
            or (framework.rhbok_name is not None and other.rhbok_name == framework.rhbok_name)
        )
        if clash:
            raise ValueError(f"job framework {framework.name} ({framework.kind}) is registered twice")
    _REGISTERED[framework.name] = framework


# In the order of Kueue's API docs for Integrations.Frameworks
# (apis/config/v1beta2/configuration_types.go at v0.19.2): the order Batchplane writes integrations.frameworks in.
for _module in (
    batch_job,
    mpijob,
    rayjob,
    rayservice,
    raycluster,
    jobset,
    paddlejob,
    pytorchjob,
    tfjob,
    xgboostjob,
    jaxjob,
    trainjob,
    appwrapper,
    sparkapplication,
    pod,
    deployment,
    statefulset,
    leaderworkerset,
):
    _register(_module.FRAMEWORK)

FRAMEWORKS: tuple[JobFramework, ...] = tuple(_REGISTERED.values())
"""Every registered framework, in Kueue's documented order."""
BY_NAME: dict[str, JobFramework] = {f.name: f for f in FRAMEWORKS}
"""Kueue integration name (``ray.io/rayjob``) → framework."""
BY_KIND: dict[str, JobFramework] = {f.kind: f for f in FRAMEWORKS}
"""Kind (``RayJob``) → framework."""
BY_GVK: dict[tuple[str, str], JobFramework] = {f.gvk: f for f in FRAMEWORKS}
"""``(apiVersion, kind)`` → framework, for the API version Batchplane reads."""
KUEUE_INTEGRATIONS: tuple[str, ...] = tuple(BY_NAME)
"""Every ``integrations.frameworks`` name Kueue v0.19.2 accepts, in its documented order."""
KUEUE_INTEGRATION_OF_KIND: dict[str, str] = {f.kind: f.name for f in FRAMEWORKS}
"""Kind → Kueue integration name."""
KUEUE_CHART_DEFAULT_FRAMEWORKS: tuple[str, ...] = tuple(f.name for f in FRAMEWORKS if f.kueue_chart_default)
"""``integrations.frameworks`` of the Kueue chart's default Configuration (``charts/kueue/values.yaml``)."""
ALWAYS_ON: tuple[str, ...] = ("batch/job",)
"""Integrations Batchplane switches on whatever the stack installs."""
INTEGRATIONS_OF_OPERATOR: dict[JobOperator, tuple[str, ...]] = {
    operator: tuple(f.name for f in FRAMEWORKS if f.operator == operator) for operator in JOB_OPERATOR_NAMES
}
"""Job operator → the Kueue integrations its install switches on, in Kueue's documented order: the one statement
the program (:func:`batchplane.config.operators.derived_frameworks`) and the policy pack both read."""

#: The ``Kueue`` CR's framework enum (``kueue.openshift.io/v1``, kueue-operator release-1.4
#: ``spec.config.integrations.frameworks``) in its order, which Batchplane writes the CR's list in.
RHBOK_NAMES: tuple[str, ...] = (
    "BatchJob", "RayJob", "RayCluster", "RayService", "JobSet", "MPIJob", "PaddleJob", "PyTorchJob", "TFJob",
    "TrainJob", "XGBoostJob", "JaxJob", "AppWrapper", "Pod", "Deployment", "StatefulSet", "LeaderWorkerSet",
    "SparkApplication",
)  # fmt: skip
KUEUE_INTEGRATION_OF_RHBOK: dict[str, str] = {
    name: next(f.name for f in FRAMEWORKS if f.rhbok_name == name) for name in RHBOK_NAMES
}
"""RHBoK framework name (``BatchJob``) → the Kueue integration the operator enables (``batch/job``)."""
if set(RHBOK_NAMES) != {f.rhbok_name for f in FRAMEWORKS if f.rhbok_name}:  # pragma: no cover - registry bug
    raise ValueError("RHBOK_NAMES must list every registered rhbok_name once")

WORKER_COMMON_RULES: tuple[PolicyRule, ...] = (
    PolicyRule(
        ("kueue.x-k8s.io",), ("workloads",), ("create", "delete", "get", "list", "watch", "update", "patch")
    ),
    PolicyRule(("kueue.x-k8s.io",), ("clusterqueues", "localqueues"), ("get", "list", "watch")),
    PolicyRule(("kueue.x-k8s.io",), ("workloads/status",), ("get", "patch", "update")),
)
"""What Kueue's :data:`MULTIKUEUE_SCRIPT` grants the manager on a worker whatever it dispatches: Workloads (created,
deleted, watched, and updated or patched when the manager's priority changes or an elastic workload scales), the
queues read, and the Workload status written."""


def worker_cluster_role_rules(integrations: Iterable[str]) -> list[dict[str, list[str]]]:
    """The ClusterRole rules (manifest form) the MultiKueue manager needs on a worker whose Kueue enables
    ``integrations`` (Kueue integration names): :data:`WORKER_COMMON_RULES`, then each enabled framework's
    ``worker_rules`` in registry order, each rule once (Deployment and Pod share the ``pods`` rule).

    Mirrors Kueue's :data:`MULTIKUEUE_SCRIPT` rule for rule, restricted to the enabled frameworks (plus the rules
    of frameworks it omits although MultiKueue dispatches them, see ``worker_rules_beyond_script``).

    Raises:
        KeyError: an integration name that is not registered.
    """
    enabled = {BY_NAME[name].name for name in integrations}
    rules = list(WORKER_COMMON_RULES)
    for framework in FRAMEWORKS:
        if framework.name in enabled:
            rules.extend(r for r in framework.worker_rules if r not in rules)
    return [r.manifest() for r in rules]

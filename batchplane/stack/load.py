"""The whole stack config (``batchplane:*`` keys) and its loader.

:func:`load_stack` is the one entry point: it takes the config map of a stack (as in
``stacks/Pulumi.<stack>.yaml`` or as the Pulumi engine passes it), validates every key with
pydantic, expands shorthands, runs every cross-object rule, and either returns a :class:`Stack`
or raises :class:`~batchplane.errors.ConfigValidationError` listing every error at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from batchplane.backed_pools import fit_quotas_to_pools
from batchplane.config.dashboards import check_dashboards
from batchplane.config.kueue import ClusterQueue, LocalQueue
from batchplane.config.operators import check_operators, kueue_frameworks
from batchplane.config.renames import renamed
from batchplane.config.rules import ExpandedKueue, KeyPath, Located, check_kueue, tenant_namespaces
from batchplane.config.suggest import keys_at, nearest_key
from batchplane.config.teams import expand_team
from batchplane.config.webhook import (
    check_image_choice,
    check_webhook,
    check_webhook_tenants,
    with_platform_build,
)
from batchplane.errors import ConfigIssue, ConfigValidationError
from batchplane.multikueue.config import MultiKueueSection
from batchplane.multikueue.objects import expand_multikueue
from batchplane.multikueue.rules import missing_local_queues, quota_balance
from batchplane.multikueue.worker import DISPATCHED_INTEGRATIONS
from batchplane.stack.model import CONFIG_NAMESPACE, Stack, StackConfig, webhook_deployed
from batchplane.stack.observability import resolve_observability
from batchplane.stack.partial import PartialTeams, outside_stand_ins, partial_teams
from batchplane.stack.pool_hooks import backed_pools, check_pools, expand_pools
from batchplane.stack.repair import Repair, outside_removed, repair_section
from batchplane.stack.target import TARGET_KINDS, cluster_identity, platform_for
from batchplane.targets.gke.config import project_id_problem
from batchplane.targets.registry import REGISTRY


def split_config(raw: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a Pulumi config map into ``batchplane:`` keys (prefix removed) and all other keys.

    Keys without a namespace belong to the project (``batchplane``), as in Pulumi. Values that the
    Pulumi engine passes as JSON text (objects, lists, numbers, booleans) are decoded.
    """
    ours: dict[str, Any] = {}
    other: dict[str, Any] = {}
    for key, value in raw.items():
        namespace, sep, name = key.partition(":")
        if not sep:
            namespace, name = CONFIG_NAMESPACE, key
        if namespace == CONFIG_NAMESPACE:
            ours[name] = _decode(value)
        else:
            other[key] = value
    return ours, other


def _decode(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def load_stack(raw: Mapping[str, Any], stack_name: str = "stack", *, size_to_pools: bool = False) -> Stack:
    """Validate a stack's config map and expand it, reporting every error at once.

    Each top-level key is parsed on its own: a key that fails pydantic parsing is reported, and every
    cross-object rule whose inputs all parsed still runs (a rule that needs a failed key is skipped, so it
    cannot report a consequence of the first error). Rule inputs: the Kueue rules need ``target``, ``kueue``
    and ``teams``; the operator rules ``operators``, ``target`` and ``kueue``; the webhook's namespace rules
    ``webhook``, ``kueue`` and ``teams``.

    Args:
        raw: config map, ``{"batchplane:target": {...}, "batchplane:kueue": {...}, "gcp:project": ...}``.
        stack_name: the stack's name, kept on the result.
        size_to_pools: scale nominal quota on pool-backed flavors down to what each pool holds, keeping the
            queues' proportions, before the capacity check (a declared MultiKueue worker that inherits the
            manager's queues); each scaling is a warning. Defaults to false.

    Returns:
        The validated :class:`Stack`.

    Raises:
        ConfigValidationError: one or more errors; ``.issues`` lists them all with key paths
            (warnings found alongside are included).
    """
    ours, other = split_config(raw)
    parse_issues, unparsed, repairs = _parse_sections(ours)
    failed = unparsed - set(
        repairs
    )  # a repaired section's rules run; its removed keys' issues are dropped below
    issues = namespace_warnings(other) + parse_issues
    project = other.get("gcp:project")
    if isinstance(project, str) and (why := project_id_problem(project)) is not None:
        issues.append(ConfigIssue("gcp:project", why))
    parsed = {key: value for key, value in ours.items() if key not in failed}
    parsed.update({key: repair.value for key, repair in repairs.items()})
    if "target" in failed:
        parsed["target"] = {"kind": "kind"}  # a stand-in; the rules that need the target are skipped
    # teams whose failed members are stand-ins (stack/partial.py): the reference rules still run
    partial = (
        partial_teams(ours["teams"], f"{CONFIG_NAMESPACE}:teams")
        if failed & {"target", "kueue", "teams"} == {"teams"} and "teams" in ours
        else None
    )
    if partial is not None:
        parsed["teams"] = partial.value
    config = StackConfig.model_validate(parsed)
    config, image_issues = _default_build(config, failed)
    issues += image_issues
    expanded_ok = not failed & {"target", "kueue", "teams"}
    kueue, expand_issues = _expand_reporting(config)
    if partial is not None:
        expand_issues = [i for i in expand_issues if outside_stand_ins(i.path, partial.stand_ins)]
    issues += expand_issues
    if config.multi_kueue is not None and expanded_ok and not expand_issues and "multiKueue" not in failed:
        issues += expand_multikueue(config.multi_kueue, kueue)
    if not expand_issues and (expanded_ok or partial is not None):
        issues += _queue_rules(config, kueue, partial, size_to_pools=size_to_pools)
    elif "target" not in failed:  # the queues did not parse: the target's own rules still run
        platform = platform_for(config.target)
        issues += platform.check_target(config.environment, kueue)
        issues += platform.check_queues(config.environment, kueue)
    if config.operators is not None and not failed & {"operators", "target", "kueue"}:
        host = platform_for(config.target).operator_host
        issues += check_operators(
            config.operators, host, config.kueue.api_version, environment=config.environment
        )
    if config.webhook.build is not None and not failed & {"webhook", "target"}:
        issues += _build_problems(config)
    config, observability = resolve_observability(
        config, failed, kueue if expanded_ok and not expand_issues else None
    )
    issues += observability
    issues += _dashboard_problems(config, failed)
    tenants_known = not failed & {"webhook", "kueue", "teams"} or (
        partial is not None and "webhook" not in failed
    )
    if tenants_known and not expand_issues:
        installed = config.operators.installed_namespaces() if config.operators is not None else {}
        issues += check_webhook(config.webhook, [ns.name for ns in tenant_namespaces(kueue)], installed)
        queues = [(lq.obj.namespace, str(lq.path.key("namespace"))) for lq in kueue.local_queues]
        issues += check_webhook_tenants(config.webhook, queues)
    servers = _worker_servers(config.multi_kueue) if config.multi_kueue and "multiKueue" not in failed else []
    issues += servers
    workers: dict[str, Stack] = {}
    if (
        config.multi_kueue is not None and not unparsed and not servers
    ):  # workers inherit every section: all must parse as written
        workers, worker_issues = _load_workers(
            ours, other, config, kueue if not expand_issues else None, stack_name
        )
        issues += [i for i in worker_issues if i.severity == "error" or i not in issues]
    if repairs:  # what a rule says about a key that did not parse repeats, or follows from, its parse error
        issues = [
            i
            for i in issues
            if i in parse_issues
            or all(
                outside_removed(i.path, f"{CONFIG_NAMESPACE}:{key}", repair.removed)
                for key, repair in repairs.items()
            )
        ]
    errors = [i for i in issues if i.severity == "error"]
    if errors:
        raise ConfigValidationError(issues)
    return Stack(
        name=stack_name, config=config, kueue=kueue, warnings=issues, other_config=other, workers=workers
    )


def _queue_rules(
    config: StackConfig, kueue: ExpandedKueue, partial: PartialTeams | None, *, size_to_pools: bool
) -> list[ConfigIssue]:
    """The Kueue, pool and platform rules on the expanded objects: all of them when ``target``, ``kueue`` and
    ``teams`` parsed; on a partial ``teams`` (stack/partial.py) the rules needing only names, references, cohorts
    and namespaces — no quota sums (pool capacity) — with what they say at a stand-in dropped."""
    platform = platform_for(config.target)
    if partial is not None:
        found = check_kueue(kueue) + platform.check_target(config.environment, kueue)
        found += platform.check_queues(config.environment, kueue)
        return [i for i in found if outside_stand_ins(i.path, partial.stand_ins)]
    issues = check_kueue(kueue)
    if size_to_pools:
        issues += fit_quotas_to_pools(kueue, backed_pools(config))
    issues += check_pools(config, kueue)  # target rules, pool-backed flavors, capacity
    issues += platform.check_queues(config.environment, kueue)
    if not kueue.cluster_queues and not kueue.local_queues:
        issues.append(
            ConfigIssue(
                f"{CONFIG_NAMESPACE}:kueue",
                "the stack declares no ClusterQueue and no LocalQueue: nothing will be admitted "
                "(declare kueue.clusterQueues/localQueues or teams)",
                severity="warning",
            )
        )
    return issues


def load_stack_config(
    config: StackConfig, stack_name: str = "stack", other_config: Mapping[str, Any] | None = None
) -> Stack:
    """Validate typed config models (a :class:`StackConfig` built in Python, e.g. by another Pulumi program) with
    every rule :func:`load_stack` runs, reporting every error at once.

    The models are turned back into the config map they stand for (camelCase keys, only the fields that were set,
    so defaults stay defaults) and loaded as a stack file would be.

    Args:
        config: the typed ``batchplane:`` sections, ``StackConfig(target=ExistingTarget(kind="existing", …), …)``.
        stack_name: the stack's name, kept on the result. Defaults to ``stack``.
        other_config: config keys of other namespaces (``gcp:project`` …). Defaults to none.

    Returns:
        The validated :class:`Stack`.

    Raises:
        ConfigValidationError: one or more errors, with key paths (``batchplane:kueue.clusterQueues[0]…``).
    """
    sections = config.model_dump(mode="json", by_alias=True, exclude_unset=True)
    raw = {f"{CONFIG_NAMESPACE}:{key}": value for key, value in sections.items()}
    return load_stack({**raw, **(other_config or {})}, stack_name)


def _default_build(config: StackConfig, failed: set[str]) -> tuple[StackConfig, list[ConfigIssue]]:
    """Where the webhook's image comes from (:func:`~batchplane.config.webhook.check_image_choice`), and the config
    with the platform's build made explicit when neither ``webhook.image`` nor ``webhook.build`` is given
    (:func:`~batchplane.config.webhook.with_platform_build`), so every reader (the program, preflight, requirements)
    sees the build the stack deploys. Skipped (the config unchanged) when ``webhook`` or ``target`` did not parse."""
    if failed & {"webhook", "target"}:
        return config, []
    platform = platform_for(config.target)
    deployed = webhook_deployed(config, platform)
    registry = platform.image_registry
    issues = check_image_choice(
        config.webhook, config.environment, registry, config.target.kind, deployed=deployed
    )
    webhook = with_platform_build(config.webhook, registry, deployed=deployed)
    if webhook is config.webhook:
        return config, issues
    return config.model_copy(update={"webhook": webhook}), issues


def _dashboard_problems(config: StackConfig, failed: set[str]) -> list[ConfigIssue]:
    """:func:`~batchplane.config.dashboards.check_dashboards` on ``observability.dashboards`` (skipped when
    ``observability`` or ``target`` did not parse)."""
    if failed & {"observability", "target"}:
        return []
    platform = platform_for(config.target)
    return check_dashboards(
        config.observability.dashboards,
        platform.kind,
        platform.dashboard_deliveries,
        "batchplane:observability.dashboards",
        platform.dashboard_delivery,
    )


def _build_problems(config: StackConfig) -> list[ConfigIssue]:
    """``webhook.build``: the registry must be the one the target's platform builds with
    (:attr:`~batchplane.targets.platform.Platform.image_registry`), then the platform's own build rules (``kind``
    loads the image under ``webhook.image``'s tag, so that must be a tag, not a digest)."""
    build = config.webhook.build
    assert build is not None
    platform = platform_for(config.target)
    if platform.image_registry != build.registry:
        needs = next(kind for kind, d in REGISTRY.items() if d.platform.image_registry == build.registry)
        return [
            ConfigIssue(
                f"{CONFIG_NAMESPACE}:webhook.build.registry",
                f"registry {build.registry} needs a {needs} target, not {config.target.kind}: use artifact-registry "
                "on gke, openshift on openshift, kind on kind (docs/webhook.md)",
            )
        ]
    return platform.check_build(config.webhook)


def _load_workers(
    ours: Mapping[str, Any],
    other: Mapping[str, Any],
    manager: StackConfig,
    manager_kueue: ExpandedKueue | None,
    stack_name: str,
) -> tuple[dict[str, Stack], list[ConfigIssue]]:
    """Validate each declared MultiKueue worker as a stack of its own: the manager's keys (operators, webhook,
    kueue, teams, environment) with the worker's ``target`` and, when given, its ``kueue``/``teams``. A worker's
    issues point at its own keys (``multiKueue.workers[i].target…``) or, for keys it inherits, name the worker.
    The cross-cluster rules need the manager's expanded Kueue objects (``manager_kueue``; skipped when None)."""
    section = manager.multi_kueue
    assert section is not None
    workers: dict[str, Stack] = {}
    issues: list[ConfigIssue] = []
    base = {f"{CONFIG_NAMESPACE}:{key}": value for key, value in ours.items() if key != "multiKueue"}
    manager_integrations = kueue_integrations(manager)
    for index, worker in section.declared():
        here = f"{CONFIG_NAMESPACE}:multiKueue.workers[{index}]"
        own = {"target": worker.target, "kueue": worker.kueue, "teams": worker.teams}
        raw = dict(base) | dict(other)
        known = REGISTRY.get(str((worker.target or {}).get("kind")))
        if known is not None and known.platform.operator_host.helm_refusal is not None:
            raw.pop(f"{CONFIG_NAMESPACE}:operators", None)  # its platform installs the operators (OLM)
        raw.update({f"{CONFIG_NAMESPACE}:{key}": value for key, value in own.items() if value is not None})
        try:
            inherits_queues = worker.kueue is None and worker.teams is None
            workers[worker.name] = loaded = load_stack(
                raw, f"{stack_name}-{worker.name}", size_to_pools=inherits_queues
            )
            found = loaded.warnings + _declared_worker_problems(loaded, manager_integrations)
            found += _unreachable_endpoint(loaded, worker.server, index)
        except ConfigValidationError as exc:
            found = exc.issues
        for issue in found:
            key = issue.path.removeprefix(f"{CONFIG_NAMESPACE}:")
            section_key = key.split(".", 1)[0].split("[", 1)[0]
            if own.get(section_key) is not None:
                path = f"{here}.{key}"
                message = issue.message.replace(f"{CONFIG_NAMESPACE}:{section_key}", f"{here}.{section_key}")
            else:
                path, message = issue.path, f'on MultiKueue worker "{worker.name}" ({here}): {issue.message}'
            if issue.severity == "warning" and own.get(section_key) is None:
                path, message = issue.path, issue.message  # the manager's own warning, reported once
            issues.append(ConfigIssue(path, message, issue.severity))
    if workers and not any(i.severity == "error" for i in issues):
        issues += (
            _same_clusters(manager, section, workers)
            or _node_account_clashes(manager, section, workers)
            or _repository_clashes(manager, section, workers)
        )
    if workers and manager_kueue is not None and not any(i.severity == "error" for i in issues):
        kueues = {name: w.kueue for name, w in workers.items()}
        missing = missing_local_queues(section, manager_kueue, kueues)
        issues += missing or quota_balance(section, manager_kueue, kueues)
    return workers, issues


def _unreachable_endpoint(worker: Stack, server: str | None, index: int) -> list[ConfigIssue]:
    """A declared worker whose control plane has only a private IP (GKE ``privateNodes.privateEndpoint``) and no
    ``server``: the manager's Kueue, in another cluster and usually another region, cannot reach the endpoint the
    program knows (docs/multikueue.md, "Private workers")."""
    key = worker.platform.private_endpoint_key()
    if key is None or server is not None:
        return []
    return [
        ConfigIssue(
            f"{CONFIG_NAMESPACE}:target.{key}",
            "the manager's Kueue cannot reach this worker's control plane at a private IP (another cluster, another "
            "region): set privateEndpoint: false (GKE's authorized networks still restrict who reaches it), or set "
            f"multiKueue.workers[{index}].server to an https URL the manager reaches (VPN, peering, Connect gateway)",
        )
    ]


def _worker_servers(section: MultiKueueSection) -> list[ConfigIssue]:
    """A declared worker on an existing cluster needs ``server``: the program knows the API endpoint only of a
    cluster it declares (:attr:`~batchplane.targets.platform.Platform.declares_cluster`)."""
    issues = []
    for index, worker in section.declared():
        known = REGISTRY.get(str((worker.target or {}).get("kind")))
        platform = known.platform if known is not None else None
        if platform is not None and not platform.declares_cluster and worker.server is None:
            issues.append(
                ConfigIssue(
                    f"{CONFIG_NAMESPACE}:multiKueue.workers[{index}]",
                    f"a declared {platform.kind} worker needs server: the https URL at which the manager reaches its "
                    "API server (only a gke worker's endpoint is known to the program)",
                )
            )
    return issues


def _same_clusters(
    manager: StackConfig, section: MultiKueueSection, workers: Mapping[str, Stack]
) -> list[ConfigIssue]:
    """Errors for a declared worker whose target is the manager's cluster or another worker's: MultiKueue needs
    distinct clusters, and two BatchClusters would declare the same cluster twice."""
    seen = {cluster_identity(manager.target): "the manager"}
    issues = []
    for index, worker in section.declared():
        identity = cluster_identity(workers[worker.name].config.target)
        if identity in seen:
            issues.append(
                ConfigIssue(
                    f"{CONFIG_NAMESPACE}:multiKueue.workers[{index}].target",
                    f'worker "{worker.name}" is the same cluster as {seen[identity]} ({", ".join(identity)}): '
                    "a worker must be a cluster of its own",
                )
            )
        else:
            seen[identity] = f'worker "{worker.name}"'
    return issues


def _node_account_clashes(
    manager: StackConfig, section: MultiKueueSection, workers: Mapping[str, Stack]
) -> list[ConfigIssue]:
    """Errors for clusters of one project whose created node service accounts would get the same id
    (:meth:`~batchplane.targets.platform.Platform.created_node_account`; on GKE derived from the cluster name, which
    is unique only per location): the second account could not be created."""
    entries = [(manager.target, "the manager", f"{CONFIG_NAMESPACE}:target")]
    for index, worker in section.declared():
        where = f"{CONFIG_NAMESPACE}:multiKueue.workers[{index}].target"
        entries.append((workers[worker.name].config.target, f'worker "{worker.name}"', where))
    seen: dict[tuple[str | None, str], str] = {}
    issues = []
    for target, who, path in entries:
        key = platform_for(target).created_node_account()
        if key is None:
            continue
        if key in seen:
            issues.append(
                ConfigIssue(
                    f"{path}.clusterName",
                    f'{who} would create the node service account "{key[1]}" that {seen[key]} creates in the same '
                    "project (its id comes from clusterName): give the clusters different clusterNames, or set "
                    "nodeServiceAccount",
                )
            )
        else:
            seen[key] = who
    return issues


def _repository_clashes(
    manager: StackConfig, section: MultiKueueSection, workers: Mapping[str, Stack]
) -> list[ConfigIssue]:
    """Errors for clusters of one stack that would create the same image repository
    (:meth:`~batchplane.targets.platform.Platform.image_repository`: on GKE one Artifact Registry repository per
    project, region and id): the second creation fails with 409 ``ALREADY_EXISTS``."""
    entries = [(manager, "the manager")]
    entries += [(workers[w.name].config, f'worker "{w.name}"') for _, w in section.declared()]
    seen: dict[tuple[str | None, str, str], str] = {}
    issues = []
    for config, who in entries:
        key = platform_for(config.target).image_repository(config.webhook)
        if key is None:
            continue
        if key in seen:
            issues.append(
                ConfigIssue(
                    f"{CONFIG_NAMESPACE}:webhook.build.repository",
                    f"{who} would create the image repository {key[1]}/{key[2]} that {seen[key]} creates in the same "
                    "project: remove webhook.build.repository (each cluster then gets <clusterName>-images) or give "
                    "the workers their own",
                )
            )
        else:
            seen[key] = who
    return issues


def kueue_integrations(config: StackConfig) -> list[str] | None:
    """The Kueue integrations (``batch/job``, ``ray.io/rayjob``, …) a stack's Kueue enables: from ``operators``
    (Helm install), or on OpenShift from the Red Hat build of Kueue's ``Kueue`` CR; ``None`` when unknown (Kueue
    installed outside the stack)."""
    if (own := platform_for(config.target).kueue_integrations()) is not None:
        return own
    ops = config.operators
    if ops is None or not ops.kueue.enabled:
        return None
    return kueue_frameworks(ops)


def _declared_worker_problems(worker: Stack, manager: list[str] | None) -> list[ConfigIssue]:
    """What a declared worker needs beyond being a valid stack: a Kueue this program installs (Helm, or the Red
    Hat build through OLM on OpenShift) managing every kind MultiKueue may dispatch from the manager."""
    mine = kueue_integrations(worker.config)
    if mine is None:
        return [
            ConfigIssue(
                f"{CONFIG_NAMESPACE}:operators.kueue",
                "a declared worker needs Kueue installed by this program (operators.kueue enabled), with the "
                "manager's integrations: MultiKueue dispatches only what the worker's Kueue manages",
            )
        ]
    absent = [f for f in manager or [] if f in DISPATCHED_INTEGRATIONS and f not in mine]
    if not absent:
        return []
    where = worker.platform.integrations_key
    return [
        ConfigIssue(
            f"{CONFIG_NAMESPACE}:{where}",
            f"the manager's Kueue manages {', '.join(absent)} but this worker's does not: MultiKueue would dispatch "
            "such workloads to a worker that never admits them",
        )
    ]


#: Sections parsed again without their refused keys (:mod:`batchplane.stack.repair`) so that their own rules still
#: run. Not ``kueue`` or ``teams``: their objects refer to each other (a removed ``cohortName`` would make every
#: borrowing limit of that queue look wrong), so a rule there could report a consequence of the parse error.
REPAIRABLE_SECTIONS = frozenset({"target", "operators", "webhook", "multiKueue"})


def _parse_sections(ours: Mapping[str, Any]) -> tuple[list[ConfigIssue], set[str], dict[str, Repair]]:
    """Pydantic errors of every top-level key (unknown keys included), the keys that failed, and the failed
    sections of :data:`REPAIRABLE_SECTIONS` that parse once their refused keys are removed."""
    try:
        StackConfig.model_validate(ours)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        failed = {str(err["loc"][0]) for err in errors if err["loc"]}
        # an unknown top-level key that stands for an absent section (`team` for `teams`): that section's rules
        # would report the consequences of the typo (a LocalQueue naming a team's ClusterQueue), so it counts as failed
        failed |= {
            meant
            for err in errors
            if err["type"] == "extra_forbidden"
            and len(err["loc"]) == 1
            and (meant := _meant_section(str(err["loc"][0]))) is not None
            and meant not in ours
        }
        repairs: dict[str, Repair] = {}
        for key in sorted(failed & REPAIRABLE_SECTIONS):
            if key in ours and (repair := repair_section(ours[key], _section_errors(key))) is not None:
                repairs[key] = repair
        return _pydantic_issues(exc), failed, repairs
    return [], set(), {}


def _section_errors(key: str) -> Callable[[Any], list[ErrorDetails]]:
    """Pydantic's errors for one top-level section's value, located relative to the section."""

    def errors_of(value: Any) -> list[ErrorDetails]:
        probe = {key: value} if key == "target" else {key: value, "target": {"kind": "kind"}}
        try:
            StackConfig.model_validate(probe)
        except ValidationError as exc:
            found = exc.errors(include_url=False)
            return [
                ErrorDetails(**{**err, "loc": err["loc"][1:]}) for err in found if err["loc"][:1] == (key,)
            ]
        return []

    return errors_of


def _expand_reporting(config: StackConfig) -> tuple[ExpandedKueue, list[ConfigIssue]]:
    """:func:`expand`, with a shorthand that expands into an invalid object reported at its key."""
    try:
        return expand(config), []
    except ExpansionError as exc:
        return ExpandedKueue(config.kueue.api_version, config.kueue.named_default_queues), [exc.issue]


class ExpansionError(ValueError):
    """A shorthand (a ``teams`` member) expands into an object Kueue would refuse."""

    def __init__(self, issue: ConfigIssue) -> None:
        super().__init__(str(issue))
        self.issue = issue


_OUR_NAME = CONFIG_NAMESPACE


def namespace_warnings(other: Mapping[str, Any]) -> list[ConfigIssue]:
    """Warn on config keys whose namespace looks like ``batchplane`` but is not (``Batchplane:kueue``,
    ``batchplane.kueue``, ``batchplan:teams``): Pulumi passes them on, and Batchplane would ignore them."""
    issues = []
    for key in other:
        namespace, sep, _ = key.partition(":")
        head = namespace if sep else key
        squashed = head.lower().replace("-", "").replace("_", "")
        candidate = squashed.split(".")[0] if "." in squashed else squashed
        if candidate == _OUR_NAME or _edit_distance(candidate, _OUR_NAME) <= 2:
            suggestion = f"{CONFIG_NAMESPACE}:{key.partition(':')[2] or key.split('.', 1)[-1]}"
            issues.append(
                ConfigIssue(
                    key,
                    f"this key is not in the {CONFIG_NAMESPACE}: namespace and is ignored; did you mean "
                    f"{suggestion!r}?",
                    severity="warning",
                )
            )
    return issues


def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (short strings only: namespaces)."""
    if abs(len(a) - len(b)) > 2:
        return 3
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def expand(config: StackConfig) -> ExpandedKueue:
    """Expand shorthands into the full Kueue model, keeping each object's config key path."""
    kc = config.kueue
    base = f"{CONFIG_NAMESPACE}:kueue"

    def located(items: list[Any], key: str) -> list[Located[Any]]:
        return [Located(obj, KeyPath(f"{base}.{key}[{i}]")) for i, obj in enumerate(items)]

    api_version = kc.api_version
    if "api_version" not in kc.model_fields_set:  # defaulted: the version the cluster's Kueue serves
        api_version = platform_for(config.target).default_kueue_api_version(config.environment) or api_version
    k = ExpandedKueue(
        api_version=api_version,
        named_default_queues=kc.named_default_queues,
        resource_flavors=located(kc.resource_flavors, "resourceFlavors"),
        topologies=located(kc.topologies, "topologies"),
        cohorts=located(kc.cohorts, "cohorts"),
        cluster_queues=located(kc.cluster_queues, "clusterQueues"),
        local_queues=located(kc.local_queues, "localQueues"),
        admission_checks=located(kc.admission_checks, "admissionChecks"),
        provisioning_request_configs=located(kc.provisioning_request_configs, "provisioningRequestConfigs"),
        workload_priority_classes=located(kc.workload_priority_classes, "workloadPriorityClasses"),
        namespaces=located(kc.namespaces, "namespaces"),
    )
    if config.teams is not None:
        # Declared flavors, then GPU pools (whose derived flavors are named after them).
        flavor_order = [f.name for f in kc.resource_flavors] + platform_for(config.target).pool_names()
        for i, team in enumerate(config.teams.members):
            path = f"{CONFIG_NAMESPACE}:teams.members[{i}]"
            try:
                cq, lq = expand_team(config.teams, team, flavor_order)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(to_camel(str(part)) for part in e['loc'])}: {_message(e, ClusterQueue)}"
                    for e in exc.errors()
                )
                raise ExpansionError(
                    ConfigIssue(
                        path, f"expands into a ClusterQueue/LocalQueue Kueue would refuse: {problems}"
                    )
                ) from None
            k.cluster_queues.append(Located(cq, KeyPath(path, f'generated ClusterQueue "{cq.name}"')))
            k.local_queues.append(
                Located(lq, KeyPath(path, f'generated LocalQueue "{lq.namespace}/{lq.name}"'))
            )
    if k.named_default_queues:
        for lq_loc in list(k.local_queues):
            lq = lq_loc.obj
            if (
                lq.default
                and lq.name != "default"
                and not any(
                    o.obj.namespace == lq.namespace and o.obj.name == "default" for o in k.local_queues
                )
            ):
                alias = LocalQueue(name="default", namespace=lq.namespace, cluster_queue=lq.cluster_queue)
                k.local_queues.append(
                    Located(
                        alias,
                        KeyPath(
                            f"{CONFIG_NAMESPACE}:kueue.namedDefaultQueues",
                            f'generated LocalQueue "{lq.namespace}/default"',
                        ),
                    )
                )
    platform_for(config.target).adjust_kueue(k)  # OpenShift: tenant namespaces opt in to its Kueue
    expand_pools(config, k)  # flavors derived from node pools, ProvisioningRequest checks
    return k


# --- pydantic errors → key paths -------------------------------------------------------------

_UNION_TAGS = {"target": set(TARGET_KINDS)}


def _pydantic_issues(exc: ValidationError) -> list[ConfigIssue]:
    return [ConfigIssue(_loc_path(err), _message(err)) for err in exc.errors(include_url=False)]


def _unknown_key(loc: list[int | str], root: type[BaseModel] | None) -> str:
    """``unknown key``, with what it became when it is a key of an older release (:mod:`batchplane.config.renames`:
    "renamed in 0.1.0: use `maxNodes`") or else the nearest key the model at that path accepts ("did you mean
    `maxNodes`?", :mod:`batchplane.config.suggest`); a top-level key is named with its namespace."""
    key = str(loc[-1]) if loc else ""
    head, dot, rest = key.partition(".")
    top = len(loc) == 1
    if top and dot and _edit_distance(head.lower(), CONFIG_NAMESPACE) <= 2:
        return f"unknown key; did you mean '{CONFIG_NAMESPACE}:{rest}'?"
    model = root or StackConfig
    if root is None and (rename := renamed(_strip_tags(loc))) is not None:
        new = f"{CONFIG_NAMESPACE}:{rename.new}" if top else rename.new_key
        return f"unknown key: renamed in {rename.release}: use `{new}`"
    near = nearest_key(key, keys_at(model, loc[:-1]))
    if near is None:
        return "unknown key"
    return (
        f"unknown key; did you mean `{CONFIG_NAMESPACE}:{near}`?"
        if top
        else f"unknown key; did you mean `{near}`?"
    )


def _meant_section(key: str) -> str | None:
    """The top-level key an unknown top-level ``key`` stands for: its rename, else the nearest key; or None."""
    rename = renamed([key])
    if rename is not None:
        return rename.new
    return nearest_key(key, keys_at(StackConfig, []))


def _strip_tags(loc: list[int | str]) -> list[int | str]:
    """An error location without pydantic's union tags and ``[key]`` markers, as the stack file spells it."""
    out = list(loc)
    if len(out) >= 2 and isinstance(out[0], str) and out[1] in _UNION_TAGS.get(out[0], ()):
        del out[1]
    return [part for part in out if part != "[key]"]


def _loc_path(err: ErrorDetails) -> str:
    loc = list(err["loc"])
    if len(loc) >= 2 and isinstance(loc[0], str) and loc[1] in _UNION_TAGS.get(loc[0], ()):
        del loc[1]
    # dict-key validation errors carry "[key]" markers; keep the key itself.
    path = f"{CONFIG_NAMESPACE}:"
    for i, part in enumerate(loc):
        if isinstance(part, int):
            path += f"[{part}]"
        elif part == "[key]":
            continue
        else:
            path += ("" if i == 0 else ".") + str(part)
    return path


def _message(err: ErrorDetails, root: type[BaseModel] | None = None) -> str:
    """The message of one pydantic error; ``root`` is the model its location starts from (:class:`StackConfig`
    when None), which an unknown key's suggestion walks."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "value_error":
        return str(ctx.get("error", err["msg"]))
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        return _unknown_key(list(err["loc"]), root)
    if kind == "union_tag_invalid":
        return f"unknown kind {ctx.get('tag')!r}; expected one of {ctx.get('expected_tags')}"
    if kind == "union_tag_not_found":
        return f"the {ctx.get('discriminator')} key is required"
    if kind == "literal_error":
        return f"{_show(err.get('input'))} is not allowed; expected {ctx.get('expected')}"
    if kind in ("too_long", "too_short"):
        bound = "at most" if kind == "too_long" else "at least"
        limit = ctx.get("max_length" if kind == "too_long" else "min_length")
        given = ctx.get("actual_length")
        if given is None and hasattr(err.get("input"), "__len__"):
            given = len(err["input"])
        return f"{bound} {limit} entries allowed, {given} given"
    value = err.get("input")
    shown = (
        f"{value!r}: " if isinstance(value, str | int | float | bool) and not isinstance(value, dict) else ""
    )
    return shown + err["msg"]


def _show(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)

"""A team's environment from a shipped template: what ``batchplane new ENV --from TEMPLATE`` asks and writes.

:func:`settings_for` is the one list of what a user must decide per template, derived from the template itself:

==========================  ======================================================================================
target kind                 settings (flag)
==========================  ======================================================================================
``gke``                     ``gcp:project`` (``--project``, required: no default), ``target.region`` or ``.zone``
                            (``--region``: moving it moves every pool's ``nodeLocations`` to the same zone letters
                            of the new region), ``target.clusterName`` (``--cluster-name``, default the
                            environment's name), ``target.privateNodes.masterIpv4CidrBlock`` when present, each
                            declared MultiKueue worker's ``clusterName`` (default ``<env>-<worker>``)
``openshift``               ``target.context`` (``--context``, required), ``target.infrastructureId`` and each GPU
                            pool's ``aws.ami``/``region``/``zone`` when present (required),
                            ``target.openshiftAi.channel`` of a 2.x release
``kind``                    ``target.clusterName`` (``--cluster-name``, default the template's)
``existing``                ``target.context`` (``--context``, required)
every template              each GPU pool's size (``maxNodes``/``maxReplicas``) and every GPU quota
                            (``*/gpu`` resources of ``teams`` and ``kueue.clusterQueues``; an anchored quota map
                            that several teams share is asked once)
==========================  ======================================================================================

Keys are Pulumi config paths, as ``pulumi config set --path`` spells them (``batchplane:target.gpuPools[0].maxNodes``,
``batchplane:teams.members[0].quotas.h100["nvidia.com/gpu"].nominalQuota``); ``--set KEY=VALUE`` sets any other.
The template's YAML is edited in place with ruamel.yaml's round trip (comments, key order, anchors and flow style
kept: https://yaml.dev/doc/ruamel.yaml/detail/ , ruamel.yaml 0.19), then read back by the project's own reader and
validated in full (:func:`~batchplane.stack.files.load_stack_file`) before anything is written.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from batchplane.config.settings import Setting, Step, format_path
from batchplane.stack.layout import environment_path, template_path
from batchplane.stack.target import Target, platform_for

__all__ = [
    "Scaffold",
    "ScaffoldError",
    "Setting",
    "format_path",
    "parse_path",
    "parse_value",
    "settings_for",
]

#: Pulumi stack names: letters, digits, ``-``, ``_`` and ``.`` (pulumi/pulumi sdk/go/common/tokens/names.go,
#: ``stackNameRE`` at v3.272.0); Batchplane also uses the name in file names, so no leading dot.
STACK_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}$")


class ScaffoldError(ValueError):
    """A usage problem: a bad environment or template name, an unknown key in ``--set``, a file already there."""


_TOKEN = re.compile(r'\.([A-Za-z0-9_-]+)|\[(\d+)\]|\["([^"]+)"\]')


def parse_path(text: str) -> tuple[str, tuple[Step, ...]]:
    """A Pulumi config path → ``(key, steps)``: ``batchplane:teams.members[0].quotas.h100["nvidia.com/gpu"]`` →
    ``("batchplane:teams", ("members", 0, "quotas", "h100", "nvidia.com/gpu"))``.

    Raises:
        ScaffoldError: not ``namespace:key`` followed by ``.name``, ``[index]`` or ``["key"]`` steps.
    """
    match = re.match(r"^([A-Za-z0-9_-]+:[A-Za-z0-9_-]+)", text)
    if match is None:
        raise ScaffoldError(
            f"{text!r}: a config key is namespace:key[.path] (e.g. batchplane:target.clusterName)"
        )
    key, rest = match.group(1), text[match.end() :]
    steps: list[Step] = []
    while rest:
        token = _TOKEN.match(rest)
        if token is None:
            raise ScaffoldError(f'{text!r}: cannot read the path at {rest!r} (use .name, [0] or ["a.b/c"])')
        name, index, quoted = token.groups()
        steps.append(int(index) if index is not None else (name or quoted))
        rest = rest[token.end() :]
    return key, tuple(steps)


def parse_value(text: str) -> Any:
    """A value typed at a prompt or given to ``--set``, read as a YAML 1.2 scalar (``8`` → 8, ``true`` → True,
    ``8Gi`` and ``us-east4`` stay strings); an empty text is the empty string."""
    from ruamel.yaml import YAML

    try:
        value = YAML(typ="safe", pure=True).load(text)
    except Exception:
        return text
    return value if isinstance(value, str | int | float | bool) else text


def _get(node: Any, steps: Sequence[Step]) -> Any:
    for step in steps:
        node = node[step]
    return node


def _gpu_resource(name: str) -> bool:
    return name.endswith("/gpu")


def _quota_settings(config: Mapping[str, Any]) -> Iterator[Setting]:
    """Every GPU quota of ``teams`` and hand-written ClusterQueues; an anchored (shared) map once."""
    seen: set[int] = set()
    teams = config.get("batchplane:teams")
    members = teams.get("members", []) if isinstance(teams, Mapping) else []
    for i, member in enumerate(members):
        quotas = member.get("quotas") if isinstance(member, Mapping) else None
        if not isinstance(quotas, Mapping) or id(quotas) in seen:
            continue
        seen.add(id(quotas))
        sharing = [m.get("name") for m in members if isinstance(m, Mapping) and m.get("quotas") is quotas]
        who = f"team {member.get('name')}" if len(sharing) == 1 else f"teams {', '.join(map(str, sharing))}"
        for flavor, resources in quotas.items():
            for resource, quota in (resources or {}).items():
                if not _gpu_resource(str(resource)):
                    continue
                steps: tuple[Step, ...] = ("members", i, "quotas", flavor, resource)
                value = quota
                if isinstance(quota, Mapping):
                    steps, value = (*steps, "nominalQuota"), quota.get("nominalQuota")
                yield Setting("batchplane:teams", steps, f"{resource} quota of {who} on {flavor}", value)
    kueue = config.get("batchplane:kueue")
    queues = kueue.get("clusterQueues", []) if isinstance(kueue, Mapping) else []
    for qi, queue in enumerate(queues):
        for gi, group in enumerate(queue.get("resourceGroups", []) or []):
            for fi, flavor in enumerate(group.get("flavors", []) or []):
                for ri, resource in enumerate(flavor.get("resources", []) or []):
                    if _gpu_resource(str(resource.get("name", ""))):
                        steps = ("clusterQueues", qi, "resourceGroups", gi, "flavors", fi, "resources", ri)
                        yield Setting(
                            "batchplane:kueue",
                            (*steps, "nominalQuota"),
                            f"{resource['name']} quota of ClusterQueue {queue.get('name')} on {flavor.get('name')}",
                            resource.get("nominalQuota"),
                        )


def _target_settings(env: str, config: Mapping[str, Any], target: Mapping[str, Any]) -> list[Setting]:
    """The target's own settings, as its platform states them
    (:meth:`~batchplane.targets.platform.Platform.environment_settings`); none for a target that does not parse
    (validation names it after the file is written)."""
    try:
        typed = TypeAdapter(Target).validate_python(target)
    except ValidationError:
        return []
    return platform_for(typed).environment_settings(env, config, target)


def _pool_settings(target: Mapping[str, Any]) -> Iterator[Setting]:
    """Each GPU pool's size and, on OpenShift, the AWS facts of the cluster's own MachineSets."""
    t = "batchplane:target"
    aws_facts = (
        ("ami", "RHCOS AMI of your worker MachineSets"),
        ("region", "AWS region"),
        ("zone", "AWS zone"),
    )
    for i, pool in enumerate(target.get("gpuPools", []) or []):
        if not isinstance(pool, Mapping):
            continue
        aws = pool.get("aws")
        aws_keys = set(aws) if isinstance(aws, Mapping) else set()
        for key, what in aws_facts:
            if key in aws_keys:
                yield Setting(t, ("gpuPools", i, "aws", key), f"GPU pool {pool.get('name')}: {what}")
        for size in ("maxNodes", "maxReplicas"):
            if size in pool:
                yield Setting(t, ("gpuPools", i, size), f"GPU pool {pool.get('name')}: {size}", pool[size])


def _worker_settings(env: str, config: Mapping[str, Any]) -> Iterator[Setting]:
    """Each declared MultiKueue worker's cluster name (default ``<env>-<worker>``)."""
    multi = config.get("batchplane:multiKueue")
    for i, worker in enumerate(multi.get("workers", []) if isinstance(multi, Mapping) else []):
        worker_target = worker.get("target") if isinstance(worker, Mapping) else None
        if isinstance(worker_target, Mapping) and "clusterName" in worker_target:
            yield Setting(
                "batchplane:multiKueue",
                ("workers", i, "target", "clusterName"),
                f"cluster name of MultiKueue worker {worker.get('name')}",
                f"{env}-{worker.get('name')}",
            )


def settings_for(env: str, config: Mapping[str, Any]) -> list[Setting]:
    """What a user decides for environment ``env`` made from a template whose ``config:`` map is ``config``.

    Args:
        env: the new environment's name (the default of a GKE cluster name).
        config: the template's ``config:`` map as read (any mapping type).

    Returns:
        The settings in prompt order (module docstring): the target's, the pools', the workers', the GPU quotas.
    """
    target = config.get("batchplane:target")
    if not isinstance(target, Mapping):
        return []
    return [
        *_target_settings(env, config, target),
        *_pool_settings(target),
        *_worker_settings(env, config),
        *_quota_settings(config),
    ]


@dataclass
class Scaffold:
    """A template loaded for editing into a new environment.

    Attributes:
        root: the project directory.
        env: the new environment's name.
        template: the template's name.
        document: the template's YAML, round-trip loaded (comments kept).
        settings: :func:`settings_for` of it.
        changed: the paths set so far, with their values, in order.
    """

    root: Path
    env: str
    template: str
    document: Any
    settings: list[Setting]
    changed: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def open(cls, root: Path, env: str, template: str) -> Scaffold:
        """Load ``templates/Pulumi.<template>.yaml`` for ``stacks/Pulumi.<env>.yaml``.

        Raises:
            ScaffoldError: a bad environment name, an unknown template, or the environment exists already.
        """
        from ruamel.yaml import YAML

        if not STACK_NAME.fullmatch(env):
            raise ScaffoldError(
                f"environment name {env!r}: use letters, digits, '-', '_' and '.' (a Pulumi stack name)"
            )
        source = template_path(root, template)
        if not source.is_file():
            from batchplane.stack.layout import template_names

            known = ", ".join(template_names(root)) or "none"
            raise ScaffoldError(f"no template {template!r} in {source.parent} (templates: {known})")
        target = environment_path(root, env)
        if target.exists():
            raise ScaffoldError(f"{target} exists: not overwritten (pick another name or edit that file)")
        document = YAML().load(source.read_text(encoding="utf-8"))
        config = document.get("config") if isinstance(document, Mapping) else None
        if not isinstance(config, Mapping):
            raise ScaffoldError(f"{source}: no config: map")
        return cls(root, env, template, document, settings_for(env, config))

    @property
    def config(self) -> Any:
        """The ``config:`` map being edited."""
        return self.document["config"]

    def current(self, setting: Setting) -> Any:
        """The value at ``setting``'s path now (None when absent)."""
        try:
            return (
                _get(self.config[setting.key], setting.steps)
                if setting.steps
                else self.config.get(setting.key)
            )
        except (KeyError, IndexError, TypeError):
            return None

    def set(self, key: str, steps: Sequence[Step], value: Any) -> None:
        """Set one config path, creating mapping keys on the way (never list items).

        Raises:
            ScaffoldError: the path goes through a list index that does not exist or through a scalar.
        """
        from ruamel.yaml.comments import CommentedMap

        path = format_path(key, steps)
        if not steps:
            self.config[key] = value
            self.changed[path] = value
            return
        if key not in self.config:
            self.config[key] = CommentedMap()
        node = self.config[key]
        for step in steps[:-1]:
            if isinstance(step, int):
                if not isinstance(node, list) or not 0 <= step < len(node):
                    raise ScaffoldError(f"{path}: no list item [{step}] in the template")
                node = node[step]
            else:
                if not isinstance(node, dict):
                    raise ScaffoldError(f"{path}: {step!r} is below a value that is not a map")
                if step not in node:
                    node[step] = CommentedMap()
                node = node[step]
        last = steps[-1]
        if isinstance(last, int):
            if not isinstance(node, list) or not 0 <= last < len(node):
                raise ScaffoldError(f"{path}: no list item [{last}] in the template")
        elif not isinstance(node, dict):
            raise ScaffoldError(f"{path}: {last!r} is below a value that is not a map")
        node[last] = value
        self.changed[path] = value

    def apply(self, setting: Setting, value: Any) -> None:
        """Set ``setting`` to ``value``, with what follows from it (a new GKE region moves the pools' zones)."""
        if setting.flag == "region" and setting.key == "batchplane:target" and value != setting.default:
            self._move_zones(str(setting.default), str(value))
        self.set(setting.key, setting.steps, value)

    def _move_zones(self, old: str, new: str) -> None:
        """Every ``nodeLocations`` zone ``<old region>-x`` becomes ``<new region>-x`` (``<old zone>`` → the zone)."""
        old_region, new_region = _region_of(old), _region_of(new)
        target = self.config["batchplane:target"]
        for i, pool in enumerate(target.get("gpuPools", []) or []):
            zones = pool.get("nodeLocations") if isinstance(pool, Mapping) else None
            if not isinstance(zones, list):
                continue
            for z, zone in enumerate(zones):
                moved = new if zone == old else f"{new_region}-{zone.rsplit('-', 1)[1]}"
                if str(zone).startswith(f"{old_region}-") and moved != zone:
                    self.set("batchplane:target", ("gpuPools", i, "nodeLocations", z), moved)

    def text(self) -> str:
        """The environment's file: a header naming its template, then the template's YAML as edited."""
        from ruamel.yaml import YAML

        out = io.StringIO()
        yaml = YAML()
        yaml.width = 4096  # never re-wrap the template's long lines
        yaml.indent(
            mapping=2, sequence=4, offset=2
        )  # the templates' style: list items indented under their key
        yaml.dump(self.document, out)
        header = (
            f"# Environment {self.env}, made from templates/Pulumi.{self.template}.yaml by "
            f"`batchplane new {self.env} --from {self.template}`.\n"
        )
        return header + out.getvalue()


def _region_of(location: str) -> str:
    """``us-central1`` for ``us-central1`` or ``us-central1-a``."""
    return location if re.fullmatch(r"[a-z]+-[a-z]+\d+", location) else location.rsplit("-", 1)[0]

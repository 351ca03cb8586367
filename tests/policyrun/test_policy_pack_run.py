"""End-to-end: the fixture pack runs as a child process, the way the Pulumi CLI runs it."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from batchplane.policyrun import (
    UNKNOWN,
    PolicyConfigError,
    PolicyInfo,
    PolicyPackProcess,
    PolicyReport,
    PolicyRunError,
    Violation,
    run_policy_pack,
)
from batchplane.policyrun.runner import pack_environment

if TYPE_CHECKING:
    from tests.policyrun.conftest import StackBuilder

pytestmark = pytest.mark.slow

Run = Callable[..., PolicyReport]


def by_policy(report: PolicyReport, policy: str) -> list[Violation]:
    return [v for v in report.violations if v.policy == policy]


def test_pack_starts_and_lists_its_policies_sorted_with_levels(run_fixture_pack: Run) -> None:
    report = run_fixture_pack([])

    assert report.pack == "fixture-pack"
    assert report.pack_version == "0.3.0"
    assert [(p.name, p.policy_type, p.enforcement_level) for p in report.policies] == [
        ("allowed-namespaces", "resource", "advisory"),
        ("configmap-has-provider", "resource", "advisory"),
        ("configmap-needs-namespace", "stack", "mandatory"),
        ("max-stack-resources", "stack", "advisory"),
        ("no-bad-configmap-key", "resource", "mandatory"),
        ("raises-on-boom", "resource", "advisory"),
        ("stack-sets-env", "stack", "advisory"),
    ]
    assert report.policies[3] == PolicyInfo(
        name="max-stack-resources",
        description="A stack holds a bounded number of resources.",
        enforcement_level="advisory",
        policy_type="stack",
        config_schema={
            "properties": {"maxResources": {"type": "integer", "minimum": 0, "default": 5}},
            "required": ["maxResources"],
        },
        config={"maxResources": 5},
    )


def test_clean_stack_has_no_violations(run_fixture_pack: Run, stack: StackBuilder) -> None:
    report = run_fixture_pack(stack.clean())

    assert report.violations == []
    assert not report.has_mandatory


def test_analyze_flags_configmap_with_bad_key_as_mandatory(
    run_fixture_pack: Run, stack: StackBuilder
) -> None:
    provider = stack.provider()
    bad = stack.configmap("bad-cm", data={"bad": "x"}, provider=provider)

    report = run_fixture_pack([provider, bad])

    assert by_policy(report, "no-bad-configmap-key") == [
        Violation(
            policy="no-bad-configmap-key",
            pack="fixture-pack",
            enforcement_level="mandatory",
            message="ConfigMaps must not carry a 'bad' data key.\nConfigMap bad-cm has data key 'bad'",
            urn=bad.urn,
            resource_type="kubernetes:core/v1:ConfigMap",
            resource_name="bad-cm",
            description="ConfigMaps must not carry a 'bad' data key.",
        )
    ]
    assert report.has_mandatory


def test_analyze_stack_follows_parent_and_dependencies(run_fixture_pack: Run, stack: StackBuilder) -> None:
    provider, team, ns, _ = stack.clean()
    orphan = stack.configmap("orphan", parent=team, provider=provider)

    report = run_fixture_pack([provider, team, ns, orphan])

    assert [
        (v.urn, v.message, v.enforcement_level) for v in by_policy(report, "configmap-needs-namespace")
    ] == [
        (
            orphan.urn,
            "Every ConfigMap depends on a Namespace.\nConfigMap orphan (parent team) depends on no Namespace",
            "mandatory",
        )
    ]


@pytest.mark.parametrize(
    ("context", "record_provider", "exp_messages"),
    [
        ("kind", True, []),
        ("prod", True, ["ConfigMap cm uses provider kind outside the kind context"]),
        ("kind", False, ["ConfigMap cm uses no explicit provider"]),
    ],
    ids=["kind-provider", "other-context", "provider-not-recorded"],
)
def test_analyze_attaches_the_recorded_provider_resource(
    run_fixture_pack: Run, stack: StackBuilder, context: str, record_provider: bool, exp_messages: list[str]
) -> None:
    provider = stack.provider(context)
    cm = stack.configmap("cm", provider=provider)

    report = run_fixture_pack([provider, cm] if record_provider else [cm])

    assert [v.message.split("\n")[1] for v in by_policy(report, "configmap-has-provider")] == exp_messages


@pytest.mark.parametrize(
    ("count", "policy_config", "exp_levels"),
    [
        (5, None, []),
        (6, None, ["advisory"]),
        (6, {"all": "mandatory"}, ["mandatory"]),
        (3, {"max-stack-resources": {"maxResources": 2}}, ["advisory"]),
        (3, {"max-stack-resources": {"maxResources": 3}}, []),
        (
            3,
            {"all": "advisory", "max-stack-resources": {"enforcementLevel": "mandatory", "maxResources": 2}},
            ["mandatory"],
        ),
        (9, {"max-stack-resources": "disabled"}, []),
    ],
    ids=[
        "default-limit-ok",
        "default-limit-hit",
        "all-mandatory",
        "lower-limit",
        "at-limit",
        "policy-entry-beats-all",
        "disabled",
    ],
)
def test_policy_config_sets_level_and_threshold(
    run_fixture_pack: Run,
    stack: StackBuilder,
    count: int,
    policy_config: dict[str, Any] | None,
    exp_levels: list[str],
) -> None:
    resources = [stack.component(f"team-{i}") for i in range(count)]

    report = run_fixture_pack(resources, policy_config=policy_config)

    assert [v.enforcement_level for v in by_policy(report, "max-stack-resources")] == exp_levels
    assert report.has_mandatory == ("mandatory" in exp_levels)


def test_all_sets_every_listed_policy_level_unless_a_policy_entry_says_otherwise(
    run_fixture_pack: Run,
) -> None:
    report = run_fixture_pack([], policy_config={"all": "mandatory", "stack-sets-env": "disabled"})

    assert {p.name: p.enforcement_level for p in report.policies} == {
        "allowed-namespaces": "mandatory",
        "configmap-has-provider": "mandatory",
        "configmap-needs-namespace": "mandatory",
        "max-stack-resources": "mandatory",
        "no-bad-configmap-key": "mandatory",
        "raises-on-boom": "mandatory",
        "stack-sets-env": "disabled",
    }


def test_policy_config_properties_reach_a_resource_policy(run_fixture_pack: Run, stack: StackBuilder) -> None:
    cm = stack.configmap("cm", namespace="team-a")

    default = run_fixture_pack([cm])
    allowed = run_fixture_pack([cm], policy_config={"allowed-namespaces": {"allowed": ["team-a", "team-b"]}})

    assert [v.message for v in by_policy(default, "allowed-namespaces")] == [
        "ConfigMaps live in an allowed namespace.\nnamespace team-a is not one of default"
    ]
    assert by_policy(allowed, "allowed-namespaces") == []
    assert {p.name: p.config for p in allowed.policies}["allowed-namespaces"] == {
        "allowed": ["team-a", "team-b"]
    }


def test_invalid_policy_config_is_rejected_like_the_cli(run_fixture_pack: Run) -> None:
    policy_config = {"max-stack-resources": {"maxResources": "many"}, "allowed-namespaces": {"allowed": 3}}

    with pytest.raises(PolicyConfigError) as caught:
        run_fixture_pack([], policy_config=policy_config)

    assert str(caught.value) == (
        "invalid policy config for policy pack fixture-pack 0.3.0:\n"
        "  allowed-namespaces: allowed: 3 is not of type 'array'\n"
        "  max-stack-resources: maxResources: 'many' is not of type 'integer'"
    )


@pytest.mark.parametrize(
    ("project", "config", "exp_messages"),
    [
        ("fixture", {}, ["The stack config sets fixture:env.\nstack fixture/dev sets no fixture:env"]),
        ("fixture", {"fixture:env": "prod"}, []),
        ("fixture", {"env": "prod"}, []),
        (
            "other",
            {"env": "prod"},
            ["The stack config sets fixture:env.\nstack other/dev sets no fixture:env"],
        ),
    ],
    ids=["no-config", "namespaced-key", "project-key", "other-project-key"],
)
def test_stack_names_and_config_reach_the_pack(
    run_fixture_pack: Run, project: str, config: dict[str, Any], exp_messages: list[str]
) -> None:
    report = run_fixture_pack([], project=project, config=config)

    assert [v.message for v in by_policy(report, "stack-sets-env")] == exp_messages


@pytest.mark.parametrize("kind", ["sentinel", "pulumi-unknown"], ids=["sentinel", "pulumi-unknown-object"])
def test_unknown_input_makes_the_policy_say_it_cannot_run_during_preview(
    run_fixture_pack: Run, stack: StackBuilder, kind: str
) -> None:
    from pulumi.output import Unknown

    cm = stack.configmap("cm", namespace=UNKNOWN if kind == "sentinel" else Unknown())

    report = run_fixture_pack([cm])

    assert [(v.enforcement_level, v.urn, v.message) for v in by_policy(report, "allowed-namespaces")] == [
        (
            "advisory",
            cm.urn,
            "can't run policy 'allowed-namespaces' from policy pack 'fixture-pack@v0.0.1' during preview: "
            "string value at .metadata.namespace can't be known during preview",
        )
    ]


def test_pack_logs_are_captured(run_fixture_pack: Run, stack: StackBuilder) -> None:
    report = run_fixture_pack([stack.component("a"), stack.component("b")])

    assert report.logs == ["info: max-stack-resources: 2 resources, limit 5"]


def test_policy_that_raises_fails_the_run_with_its_error(
    run_fixture_pack: Run, stack: StackBuilder, fixture_pack: Path
) -> None:
    boom = stack.res(stack.BOOM, "kaboom")

    with pytest.raises(PolicyRunError) as caught:
        run_fixture_pack([boom])

    assert str(caught.value).splitlines()[0] == (
        f"policy pack {fixture_pack}: Analyze({boom.urn}) failed: UNKNOWN: "
        "Exception calling application: policy bug triggered by kaboom"
    )


def test_broken_pack_raises_policy_run_error_with_stderr_tail(
    stack: StackBuilder, pack_with_main: Callable[[str], Path]
) -> None:
    pack = pack_with_main("from pulumi_policy import PolicyPack\nPolicyPack(name='x', policies=[\n")

    with pytest.raises(PolicyRunError) as caught:
        run_policy_pack(pack, [], project=stack.project, stack=stack.stack)

    assert str(caught.value).splitlines()[0] == f"policy pack {pack} exited with code 1 before it served:"
    assert "SyntaxError: '[' was never closed" in caught.value.stderr_tail
    assert str(caught.value).endswith(caught.value.stderr_tail)


def test_pack_that_never_serves_gives_a_clear_error(
    stack: StackBuilder, pack_with_main: Callable[[str], Path]
) -> None:
    pack = pack_with_main("import fixture_policies\n")

    with pytest.raises(PolicyRunError) as caught:
        run_policy_pack(pack, [], project=stack.project, stack=stack.stack)

    assert str(caught.value) == f"policy pack {pack} exited with code 0 before it served"


def test_pack_that_hangs_times_out(stack: StackBuilder, pack_with_main: Callable[[str], Path]) -> None:
    pack = pack_with_main("import time\ntime.sleep(600)\n")

    started = time.monotonic()
    with pytest.raises(PolicyRunError) as caught:
        run_policy_pack(pack, [], project=stack.project, stack=stack.stack, timeout=1.0)

    assert str(caught.value) == f"policy pack {pack} did not print its port in time"
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("scenario", ["ok", "policy-raises", "syntax-error", "hangs", "bad-config"])
def test_no_child_process_is_left_behind(
    stack: StackBuilder,
    fixture_pack: Path,
    pack_with_main: Callable[[str], Path],
    child_pids: Callable[[], set[int]],
    scenario: str,
) -> None:
    before = child_pids()
    pack, resources, kwargs = fixture_pack, stack.clean(), dict[str, Any]()
    if scenario == "policy-raises":
        resources = [stack.res(stack.BOOM, "kaboom")]
    elif scenario == "syntax-error":
        pack = pack_with_main("PolicyPack(\n")
    elif scenario == "hangs":
        pack = pack_with_main("import time\ntime.sleep(600)\n")
        kwargs["timeout"] = 1.0
    elif scenario == "bad-config":
        kwargs["policy_config"] = {"max-stack-resources": {"maxResources": -1}}

    try:
        run_policy_pack(pack, resources, project=stack.project, stack=stack.stack, **kwargs)
        failed = False
    except PolicyRunError:
        failed = True

    assert failed == (scenario != "ok")
    assert child_pids() == before


def test_process_context_manager_reaps_the_pack(
    stack: StackBuilder, fixture_pack: Path, child_pids: Callable[[], set[int]]
) -> None:
    env = pack_environment(project=stack.project, stack=stack.stack, config={})
    with PolicyPackProcess(fixture_pack, env) as process:
        port = process.start(time.monotonic() + 30)
        pid = process.pid
        assert port > 0
        assert pid in child_pids()

    assert pid not in child_pids()


def test_importing_policyrun_does_not_import_pulumi_or_grpc() -> None:
    code = (
        "import sys, batchplane.policyrun\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'pulumi', 'pulumi_policy', 'grpc'}))"
    )

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout

    assert out.strip() == "[]"


def test_a_started_pack_boots_while_the_caller_works_and_then_analyzes_the_resources(
    fixture_pack: Path, stack: StackBuilder
) -> None:
    """Issue #40: ``batchplane check`` spawns the pack before it runs the program; the pack's start (its imports,
    most of a check's time) overlaps the caller's work instead of following it."""
    from batchplane.policyrun import start_policy_pack

    provider = stack.provider()
    bad = stack.configmap("bad-cm", data={"bad": "x"}, provider=provider)
    began = time.monotonic()
    with start_policy_pack(
        fixture_pack, project=stack.project, stack=stack.stack, config={"fixture:env": "test"}
    ) as pack:
        assert pack.process.pid is not None  # spawned before any resource is known
        returned = time.monotonic() - began
        time.sleep(1.0)  # the caller's work (the program run)
        report = pack.analyze([provider, bad])
    assert returned < 1.0, returned  # start_policy_pack does not wait for the pack's port
    assert report.timings["start"] >= 1.0  # the start counts from the spawn, across the caller's work
    assert [v.resource_name for v in by_policy(report, "no-bad-configmap-key")] == ["bad-cm"]

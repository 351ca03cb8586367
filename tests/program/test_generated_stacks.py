"""The promise of `validate`, on generated stack configs: it either rejects a config with errors at key paths
(and the program declares nothing), or the real program runs without an exception and every object it
renders passes the CRD check (schema after defaults, and the CEL rules).

The program runs under the Pulumi SDK's mock engine, as ``batchplane preview``/``render`` run it and as
``pulumi up`` would; configs come from tests/config/strategies.py (plausible, then mutated).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

from batchplane.errors import ConfigValidationError
from batchplane.offline import run_program
from batchplane.offline.render import render_resources
from batchplane.stack import load_stack
from batchplane.stack.files import replace_secure
from tests.config.strategies import plausible_config, stack_configs
from tests.conftest import REPO_ROOT
from tests.support.stacks import shared_crd_catalog as catalog

#: Generated configs per run of the property (bounded so the suite stays fast; raise locally to search more).
EXAMPLES = 60


def validate_then_run(config: dict[str, Any]) -> str:
    """Check the promise for one config; returns ``"invalid"`` or ``"valid"``, raises AssertionError if broken."""
    try:  # as `batchplane validate` reads a file: secure values become the placeholder, as in `preview`
        load_stack({key: replace_secure(value)[0] for key, value in config.items()}, "generated")
    except ConfigValidationError as exc:
        assert exc.errors, "a ConfigValidationError without errors"
        for issue in exc.errors:
            assert ":" in issue.path and issue.message, f"issue without a key path: {issue}"
        with pytest.raises(ConfigValidationError):
            run_program(REPO_ROOT, "generated", config, preview=True)
        return "invalid"
    run = run_program(REPO_ROOT, "generated", config, preview=False)
    known = set(catalog().kinds())
    problems = {}
    for rendered in render_resources(run.resources).objects:
        obj = rendered.manifest
        if (obj["apiVersion"].rpartition("/")[0], obj["kind"]) in known:
            issues = catalog().validate(obj)
            if issues:
                problems[f"{obj['kind']}/{obj['metadata'].get('name')}"] = [str(i) for i in issues]
    assert problems == {}, problems
    return "valid"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=stack_configs)
def test_validate_accepts_only_configs_the_program_deploys_with_crd_valid_objects(
    config: dict[str, Any],
) -> None:
    validate_then_run(config)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=plausible_config())
def test_plausible_configs_are_often_valid_so_the_program_path_is_exercised(config: dict[str, Any]) -> None:
    validate_then_run(config)


def test_generator_reaches_both_outcomes() -> None:
    find(
        plausible_config(),
        lambda c: _outcome(c) == "valid",
        settings=settings(max_examples=200, deadline=None),
    )
    find(
        stack_configs, lambda c: _outcome(c) == "invalid", settings=settings(max_examples=200, deadline=None)
    )


def _outcome(config: dict[str, Any]) -> str:
    try:
        load_stack(config)
    except ConfigValidationError:
        return "invalid"
    return "valid"


def test_the_property_catches_the_workload_priority_class_crash_when_it_is_reintroduced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Put back the old declaration (``CustomResource(..., **extra)``) and the property must fail."""
    import pulumi
    import pulumi_kubernetes as k8s

    import batchplane.components.kueue_queues as kueue_queues

    def old_declaration(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions | None = None) -> Any:
        extra = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata", "spec")}
        return k8s.apiextensions.CustomResource(
            name,
            api_version=obj["apiVersion"],
            kind=obj["kind"],
            metadata=obj["metadata"],
            spec=obj.get("spec"),
            opts=opts,
            **extra,
        )

    monkeypatch.setattr(kueue_queues, "KubernetesObject", old_declaration)
    found: list[BaseException] = []

    def breaks(config: dict[str, Any]) -> bool:
        try:
            validate_then_run(config)
        except Exception as exc:  # the crash the property must surface
            found.append(exc)
            return True
        return False

    # No shrinking: the first config that breaks is the proof (each shrink step re-runs the whole program, which made
    # this the slowest test of the suite: docs/performance.md). `find` stops at the first breaking config, so the
    # budget of 1,000 costs only in an unlucky run: with 200 one run of five found none (NoSuchExample, 2026-11-28).
    no_shrink = settings(
        max_examples=1000, deadline=None, database=None, phases=(Phase.explicit, Phase.generate)
    )
    failing = find(stack_configs, breaks, settings=no_shrink)
    assert failing["batchplane:kueue"]["workloadPriorityClasses"]
    assert "unexpected keyword argument 'value'" in str(found[-1])

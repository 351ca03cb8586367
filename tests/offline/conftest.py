"""Shared helpers for the offline-engine tests: fixture projects and cached runs of them.

Each fixture project under ``fixtures/<name>/`` is a small Pulumi program with its own
``Pulumi.yaml`` and ``stacks/``. Running one costs about a second, so runs are cached per
(project, stack, preview) for the whole session; tests that need a fresh run call
:func:`run_fixture` themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from batchplane.offline import ProgramRun, RecordedResource, read_stack_file, run_program

FIXTURES = Path(__file__).resolve().parent / "fixtures"
RunFixture = Callable[..., ProgramRun]


def stack_urn(project: str, stack: str) -> str:
    """The mock engine's URN of the root stack resource."""
    return f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}"


def top_urn(project: str, stack: str, type_: str, name: str) -> str:
    """The mock engine's URN of a top-level resource (parent: the stack)."""
    return f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack${type_}::{name}"


def run_fixture(name: str, stack: str, *, preview: bool = True) -> ProgramRun:
    """Run ``fixtures/<name>`` with its ``stacks/Pulumi.<stack>.yaml`` (a fresh, uncached run)."""
    project = FIXTURES / name
    return run_program(
        project, stack, read_stack_file(project / "stacks" / f"Pulumi.{stack}.yaml"), preview=preview
    )


@pytest.fixture(scope="session")
def cached_run() -> RunFixture:
    """``cached_run(name, stack, preview=True)``: :func:`run_fixture`, run once per session."""
    cache: dict[tuple[str, str, bool], ProgramRun] = {}

    def get(name: str, stack: str, *, preview: bool = True) -> ProgramRun:
        key = (name, stack, preview)
        if key not in cache:
            cache[key] = run_fixture(name, stack, preview=preview)
        return cache[key]

    return get


def recorded(
    type_: str,
    name: str,
    inputs: dict[str, Any] | None = None,
    *,
    parent: str = "urn:stack",
    dependencies: list[str] | None = None,
    custom: bool = True,
    secret_paths: tuple[tuple[str | int, ...], ...] = (),
) -> RecordedResource:
    """A hand-made :class:`RecordedResource` with URN ``urn:<name>``."""
    return RecordedResource(
        type=type_,
        name=name,
        urn=f"urn:{name}",
        parent=parent,
        dependencies=dependencies or [],
        property_dependencies={},
        provider=None,
        custom=custom,
        inputs=inputs or {},
        secret_paths=secret_paths,
    )


def k8s_object(
    kind: str, name: str, *, api_version: str = "v1", namespace: str | None = None, **fields: Any
) -> dict[str, Any]:
    """Inputs of a Kubernetes object as the provider sees them."""
    metadata: dict[str, Any] = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields}

"""Helpers for the operators tests: stack configs with operators, a fake cluster and a fake clock."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from batchplane.offline.engine import run_program
from batchplane.offline.model import ProgramRun
from batchplane.offline.stackfile import read_stack_file
from batchplane.operators.readiness import ClusterApiError
from tests.config.factories import base_config
from tests.conftest import template_path

REPO_ROOT = Path(__file__).resolve().parents[2]


def with_operators(
    operators: dict[str, Any] | None = None, target: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``base_config()`` (kind target, team-a LocalQueue) plus ``batchplane:operators`` (and a target)."""
    cfg = copy.deepcopy(base_config())
    if operators is not None:
        cfg["batchplane:operators"] = operators
    if target is not None:
        cfg["batchplane:target"] = target
    return cfg


def openshift_target(**changes: Any) -> dict[str, Any]:
    """A minimal ``openshift`` target with ``changes`` merged at the top level."""
    return {"kind": "openshift", "context": "ocp", **changes}


@dataclass
class FakeClock:
    """A monotonic clock that only moves when ``sleep`` is called."""

    now: float = 0.0
    sleeps: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


Answer = Callable[[], Any]


@dataclass
class FakeCluster:
    """A scripted :class:`~batchplane.operators.readiness.ClusterClient`: each call pops the next
    answer of its method (a value, or a ``ClusterApiError`` to raise); the last answer repeats."""

    endpoints: list[int | ClusterApiError] = field(default_factory=list)
    dry_runs: list[ClusterApiError | None] = field(default_factory=list)
    objects: dict[tuple[str, str], list[dict[str, Any] | ClusterApiError | None]] = field(
        default_factory=dict
    )
    secrets: list[dict[str, str] | ClusterApiError | None] = field(default_factory=list)
    lists: dict[tuple[str, str], list[Any]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    approvals: list[str] = field(default_factory=list)

    @staticmethod
    def _next(answers: list[Any]) -> Any:
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(answer, ClusterApiError):
            raise answer
        return answer

    def ready_endpoints(self, namespace: str, service: str) -> int:
        self.calls.append(f"endpoints {namespace}/{service}")
        return int(self._next(self.endpoints))

    def dry_run_create(self, api_version: str, plural: str, body: Mapping[str, Any]) -> None:
        self.calls.append(f"dry-run {api_version} {plural} {body['metadata']['name']}")
        self._next(self.dry_runs)

    def get(self, api_version: str, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        self.calls.append(f"get {plural} {namespace}/{name}")
        answer: dict[str, Any] | None = self._next(self.objects[(plural, name)])
        return answer

    def list(
        self, api_version: str, plural: str, namespace: str, label_selector: str | None = None
    ) -> list[dict[str, Any]]:
        self.calls.append(f"list {plural} {namespace} {label_selector or ''}".rstrip())
        answer: list[dict[str, Any]] = self._next(self.lists[(plural, namespace)])
        return answer

    def approve_install_plan(self, namespace: str, name: str) -> None:
        self.calls.append(f"approve installplans {namespace}/{name}")
        self.approvals.append(f"{namespace}/{name}")

    def secret_data(self, namespace: str, name: str) -> dict[str, str] | None:
        self.calls.append(f"secret {namespace}/{name}")
        data: dict[str, str] | None = self._next(self.secrets)
        return data


def run_stack(name: str, config: dict[str, Any] | None = None) -> ProgramRun:
    """Run the real program under the offline engine for ``templates/Pulumi.<name>.yaml`` (or ``config``)."""
    cfg = config if config is not None else read_stack_file(template_path(name))
    return run_program(REPO_ROOT, name, cfg)


@pytest.fixture(scope="session")
def kind_run() -> ProgramRun:
    """The kind template under the offline engine (shared by the program tests)."""
    return run_stack("kind")


@pytest.fixture(scope="session")
def openshift_run() -> ProgramRun:
    """The openshift-ai template under the offline engine."""
    return run_stack("openshift-ai")

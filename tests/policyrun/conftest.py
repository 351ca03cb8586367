"""Fixtures for the offline policy engine tests: recorded resources, packs and child processes.

Helpers are handed out as fixtures (not imported from this file), so that test areas with their
own ``conftest.py`` cannot shadow them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from batchplane.policyrun import PolicyReport, run_policy_pack

FIXTURE_PACK = Path(__file__).resolve().parent / "fixtures" / "pack"


@dataclass(frozen=True)
class Res:
    """A stand-in for ``batchplane.offline.model.RecordedResource`` (same attributes)."""

    type: str
    name: str
    urn: str
    parent: str | None = None
    dependencies: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    provider: str | None = None
    custom: bool = True
    inputs: dict[str, Any] = field(default_factory=dict)


class StackBuilder:
    """Builds the recorded resources of one test stack (project ``fixture``, stack ``dev``)."""

    project = "fixture"
    stack = "dev"
    CONFIGMAP = "kubernetes:core/v1:ConfigMap"
    NAMESPACE = "kubernetes:core/v1:Namespace"
    PROVIDER = "pulumi:providers:kubernetes"
    COMPONENT = "fixture:index:Team"
    BOOM = "fixture:index:Boom"

    def urn(self, type_: str, name: str, parent: Res | None = None) -> str:
        """The URN of ``name`` of ``type_`` under ``parent`` (qualified with the parent type chain)."""
        qualified = type_ if parent is None else f"{parent.urn.split('::')[2]}${type_}"
        return f"urn:pulumi:{self.stack}::{self.project}::{qualified}::{name}"

    def res(
        self,
        type_: str,
        name: str,
        *,
        parent: Res | None = None,
        depends_on: Sequence[Res] = (),
        provider: Res | None = None,
        custom: bool = True,
        **inputs: Any,
    ) -> Res:
        """A resource with its URN, parent URN, dependency URNs and provider reference filled in."""
        return Res(
            type=type_,
            name=name,
            urn=self.urn(type_, name, parent),
            parent=parent.urn if parent is not None else None,
            dependencies=[d.urn for d in depends_on],
            property_dependencies={"metadata": [d.urn for d in depends_on]} if depends_on else {},
            provider=f"{provider.urn}::{provider.name}-id" if provider is not None else None,
            custom=custom,
            inputs=dict(inputs),
        )

    def component(self, name: str) -> Res:
        """A component resource of type :attr:`COMPONENT`."""
        return self.res(self.COMPONENT, name, custom=False)

    def provider(self, context: str = "kind") -> Res:
        """An explicit Kubernetes provider named ``kind`` in ``context``."""
        return self.res(self.PROVIDER, "kind", context=context)

    def configmap(self, name: str, *, namespace: Any = "default", data: Any = None, **kwargs: Any) -> Res:
        """A ConfigMap in ``namespace`` with ``data`` (default ``{"ok": "1"}``)."""
        metadata = {"name": name, "namespace": namespace}
        return self.res(self.CONFIGMAP, name, metadata=metadata, data=data or {"ok": "1"}, **kwargs)

    def clean(self) -> list[Res]:
        """A stack no policy objects to: provider, component, Namespace, ConfigMap depending on it."""
        provider = self.provider()
        team = self.component("team")
        ns = self.res(self.NAMESPACE, "default", parent=team, provider=provider, metadata={"name": "default"})
        cm = self.configmap("settings", parent=team, depends_on=[ns], provider=provider)
        return [provider, team, ns, cm]


def _child_pids() -> set[int]:
    """Process ids whose parent is this process (Linux ``/proc``)."""
    me = str(os.getpid())
    pids: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split after the last ")".
        if stat.rsplit(")", 1)[1].split()[1] == me:
            pids.add(int(entry.name))
    return pids


@pytest.fixture
def stack() -> StackBuilder:
    """Builds recorded resources for the fixture project/stack."""
    return StackBuilder()


@pytest.fixture
def fixture_pack() -> Path:
    """The fixture policy pack directory (``tests/policyrun/fixtures/pack``)."""
    return FIXTURE_PACK


@pytest.fixture
def run_fixture_pack(stack: StackBuilder) -> Callable[..., PolicyReport]:
    """``run(resources, **kwargs)``: :func:`run_policy_pack` on the fixture pack; the stack config
    defaults to ``{"fixture:env": "test"}`` so that ``stack-sets-env`` stays quiet."""

    def run(resources: Sequence[Res], **kwargs: Any) -> PolicyReport:
        kwargs.setdefault("project", stack.project)
        kwargs.setdefault("stack", stack.stack)
        kwargs.setdefault("config", {"fixture:env": "test"})
        return run_policy_pack(FIXTURE_PACK, resources, **kwargs)

    return run


@pytest.fixture
def pack_with_main(tmp_path: Path) -> Callable[[str], Path]:
    """``make(main)``: a copy of the fixture pack whose ``__main__.py`` holds ``main``."""

    def make(main: str) -> Path:
        pack = tmp_path / "pack"
        shutil.copytree(FIXTURE_PACK, pack, ignore=shutil.ignore_patterns("__pycache__"))
        (pack / "__main__.py").write_text(main)
        return pack

    return make


@pytest.fixture
def child_pids() -> Callable[[], set[int]]:
    """Returns the ids of this process's live children (to check that packs are reaped)."""
    return _child_pids

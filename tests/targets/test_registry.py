"""The one platform registry (`batchplane.targets.registry`, issue #29): every target kind has one descriptor whose
three halves live in the platform's home, and the Pulumi and preflight halves load only when asked for."""

from __future__ import annotations

import json
import subprocess
import sys
import typing

import pytest

from batchplane.stack.target import Target
from batchplane.targets.deploy import PlatformDeploy
from batchplane.targets.preflight import PlatformPreflight
from batchplane.targets.registry import REGISTRY, descriptor
from tests.conftest import REPO_ROOT, template_path


def _union_kinds() -> set[str]:
    union = typing.get_args(Target)[0]
    return {typing.get_args(m.model_fields["kind"].annotation)[0] for m in typing.get_args(union)}


def test_every_kind_of_the_target_union_has_exactly_one_descriptor() -> None:
    assert set(REGISTRY) == _union_kinds()
    assert all(kind == d.platform.kind for kind, d in REGISTRY.items())


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_each_half_of_a_platform_lives_in_its_home(kind: str) -> None:
    d = descriptor(kind)
    home = d.platform.__module__.rsplit(".", 1)[0]
    deploy, preflight = d.deploy_class(), d.preflight_class()
    assert issubclass(deploy, PlatformDeploy) and deploy.__module__ == f"{home}.deploy"
    assert issubclass(preflight, PlatformPreflight) and preflight.__module__ == f"{home}.preflight"
    assert home == f"batchplane.targets.{home.rsplit('.', 1)[1]}"


def test_an_unknown_kind_has_no_descriptor() -> None:
    with pytest.raises(KeyError):
        descriptor("aks")


def _modules_after(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_loading_a_stack_loads_neither_pulumi_nor_any_preflight_half() -> None:
    loaded = _modules_after(
        "from batchplane.stack import load_stack_file\n"
        f"load_stack_file({str(template_path('openshift-ai'))!r}, 'openshift-ai')"
    )
    assert "pulumi" not in loaded
    assert not [m for m in loaded if m.endswith(".preflight") and m.startswith("batchplane.targets.")]


def test_computing_requirements_loads_the_stack_platforms_preflight_half_but_no_client_library_or_pulumi() -> (
    None
):
    loaded = _modules_after(
        "from batchplane.stack import load_stack_file\n"
        "from batchplane.preflight.requirements import stack_requirements\n"
        f"stack_requirements(load_stack_file({str(template_path('gke-dev'))!r}, 'gke-dev'))"
    )
    assert "batchplane.targets.gke.preflight" in loaded
    assert "batchplane.targets.openshift.preflight" not in loaded
    assert not [m for m in loaded if m == "pulumi" or m.startswith(("google.cloud", "kubernetes"))]


@pytest.mark.parametrize(
    "module",
    sorted(
        {d.preflight.partition(":")[0] for d in REGISTRY.values()}
        | {"batchplane.targets.gke.requirements", "batchplane.targets.openshift.requirements"}
        | {"batchplane.targets.kind.requirements", "batchplane.preflight.kube"}
    ),
)
def test_each_preflight_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    # A platform's half imports the shared preflight modules, whose package imports the requirements model, which
    # names the platforms' requirement types: a model type kept in a half would make this import circular.
    assert module in _modules_after(f"import {module}")

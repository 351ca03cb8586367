"""Packaging (issue #21): the library declares ranges, the program and the webhook image pin exactly, and each
process's extra covers what it imports."""

from __future__ import annotations

import importlib.metadata as metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO_ROOT

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)")


def pins(path: Path) -> dict[str, str]:
    """``name -> version`` of a requirements file's ``name==version`` lines."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if match := PIN.match(line.strip()):
            found[canonicalize_name(match.group(1))] = match.group(2)
    return found


def requirements(dist: str, extras: frozenset[str]) -> list[Requirement]:
    """The requirements of an installed distribution that apply with ``extras`` (markers evaluated here)."""
    out = []
    for text in metadata.requires(dist) or []:
        req = Requirement(text)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras | {""}):
            out.append(req)
    return out


def closure(extras: frozenset[str]) -> set[str]:
    """Every distribution ``batchplane[extras]`` installs (batchplane itself excluded), from installed metadata."""
    seen: set[str] = set()
    todo: list[tuple[str, frozenset[str]]] = [("batchplane", extras)]
    expanded: set[tuple[str, frozenset[str]]] = set()
    while todo:
        dist, dist_extras = todo.pop()
        if (dist, dist_extras) in expanded:
            continue
        expanded.add((dist, dist_extras))
        for req in requirements(dist, dist_extras):
            name = canonicalize_name(req.name)
            if name != "batchplane":
                seen.add(name)
            todo.append((name, frozenset(req.extras)))
    return seen


def declared(extras: frozenset[str]) -> list[Requirement]:
    """batchplane's own requirements with ``extras`` (self-references expanded)."""
    out, todo, done = [], [extras], set()
    while todo:
        wanted = todo.pop()
        for req in requirements("batchplane", wanted):
            if canonicalize_name(req.name) == "batchplane":
                if frozenset(req.extras) not in done:
                    done.add(frozenset(req.extras))
                    todo.append(frozenset(req.extras))
            else:
                out.append(req)
    return out


LOCKS = {
    "requirements.txt": frozenset({"cli"}),  # the Pulumi program (pulumi install)
    "webhook/requirements.txt": frozenset({"webhook"}),  # the webhook image
}


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_a_lock_pins_every_declared_requirement_inside_its_range(lock: str) -> None:
    pinned = pins(REPO_ROOT / lock)
    wrong = [
        f"{req}: {pinned.get(canonicalize_name(req.name), 'not pinned')}"
        for req in declared(LOCKS[lock])
        if req.specifier
        and not req.specifier.contains(pinned.get(canonicalize_name(req.name), "0"), prereleases=True)
    ]
    assert wrong == []


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_a_lock_holds_exactly_the_closure_of_its_extra(lock: str) -> None:
    """Nothing unpinned is left for pip to pick, and nothing beyond the extra is installed (the image: no Pulumi)."""
    assert set(pins(REPO_ROOT / lock)) == closure(LOCKS[lock])


def test_the_library_declares_ranges_not_pins() -> None:
    exact = [str(r) for r in declared(frozenset({"cli"})) if any(s.operator == "==" for s in r.specifier)]
    assert exact == []


def test_the_program_requirements_install_the_package_itself() -> None:
    lines = (REPO_ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert "-e .[cli]" in lines


def test_the_webhook_image_installs_no_pulumi_and_no_kubernetes_client() -> None:
    pinned = pins(REPO_ROOT / "webhook" / "requirements.txt")
    assert [n for n in pinned if n.startswith("pulumi") or n in ("kubernetes", "grpcio")] == []


#: What a process imports → the extras it installs.
SURFACES = {
    "webhook": (("batchplane.webhook.server", "batchplane.webhook.command"), frozenset({"webhook"})),
    "core": (
        (
            "batchplane.stack",
            "batchplane.kueue",
            "batchplane.accounting",
            "batchplane.multikueue",
            "batchplane.yamlfile",
        ),
        frozenset(),
    ),
    "program": (
        (
            "batchplane.components.batch_cluster",
            "batchplane.operators.readiness",
            "batchplane.operators.readiness_gate",
        ),
        frozenset({"program"}),
    ),
    "cli": (("batchplane.cli", "batchplane.policyrun.runner", "batchplane.offline"), frozenset({"cli"})),
}


_PROBE = """
import importlib, json, sys, sysconfig
for name in sys.argv[1:]:
    importlib.import_module(name)
site = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
tops = set()
for name, module in list(sys.modules.items()):
    origin = getattr(module, "__file__", None) or ""
    if any(origin.startswith(s + "/") for s in site):
        tops.add(origin[len(next(s for s in site if origin.startswith(s + "/"))) + 1 :].split("/")[0])
print(json.dumps(sorted(tops)))
"""


def _third_party_imports(modules: tuple[str, ...]) -> set[str]:
    """Top-level names (packages or module files) under site-packages that importing ``modules`` loads."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *modules], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    tops = {t.removesuffix(".py").split(".")[0] for t in json.loads(done.stdout)}
    return {t for t in tops if not t.startswith("__editable__")} - {"batchplane", "_distutils_hack"}


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_each_extra_covers_every_third_party_module_its_process_imports(surface: str) -> None:
    modules, extras = SURFACES[surface]
    providers = metadata.packages_distributions()
    allowed = closure(extras)
    missing = {}
    for top in sorted(_third_party_imports(modules)):
        dists = {canonicalize_name(d) for d in providers.get(top, [])}
        if not dists & allowed:
            missing[top] = sorted(dists) or "no distribution"
    assert missing == {}

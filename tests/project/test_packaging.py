"""Packaging (issues #21, #30): the library declares ranges; uv.lock pins everything; the pip-readable pins
(requirements.txt for the program, webhook/requirements.txt for the image) are exported from it; each process's extra
covers what it imports."""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO_ROOT

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)")


def pins(path: Path) -> dict[str, str]:
    """``name -> version`` of a requirements file's ``name==version`` lines whose marker holds here."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if match := PIN.match(line.strip()):
            req = Requirement(line.strip())
            if req.marker is None or req.marker.evaluate():
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
    assert "-e ." in lines


UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")


def uv(*args: str, cwd: Path = REPO_ROOT, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run uv; with ``cache``, against that cache directory instead of the machine's (``UV_CACHE_DIR``)."""
    assert UV is not None, "uv is a dev dependency (pyproject.toml `dev` extra)"
    env = {**os.environ, "UV_CACHE_DIR": str(cache)} if cache is not None else None
    return subprocess.run([UV, *args], cwd=cwd, capture_output=True, text=True, check=False, env=env)


def test_uv_lock_agrees_with_pyproject() -> None:
    """`make lock` (`uv lock`) after changing a range; the lead's merge re-locks the same way."""
    done = uv("lock", "--check", "--offline")
    assert done.returncode == 0, done.stderr


#: uv's own verdict (``-v``) that the lock no longer satisfies pyproject.toml. uv says it before it resolves, so it is
#: the same on a warm and a cold cache; after it, ``--check --offline`` fails with "--check" only when the registry's
#: answers are cached, and with "network was disabled" on a fresh machine (issue #40).
STALE = "Resolving despite existing lockfile due to mismatched requirements for: `batchplane=="


def lock_check_in_empty_cache(tmp_path: Path, pyproject: str) -> subprocess.CompletedProcess[str]:
    """``uv lock --check --offline -v`` on the repo's uv.lock and ``pyproject`` with an empty cache (a fresh machine)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "uv.lock").write_bytes((REPO_ROOT / "uv.lock").read_bytes())
    (project / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return uv("lock", "--check", "--offline", "-v", cwd=project, cache=tmp_path / "empty-uv-cache")


def test_a_changed_range_without_a_new_lock_is_caught(tmp_path: Path) -> None:
    text = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"PyYAML>=6.0.2,<7",' in text
    done = lock_check_in_empty_cache(tmp_path, text.replace('"PyYAML>=6.0.2,<7",', '"PyYAML>=6.0.3,<7",'))
    assert done.returncode != 0 and STALE in done.stderr, done.stderr[-2000:]


def test_the_unchanged_pyproject_passes_the_lock_check_with_an_empty_cache(tmp_path: Path) -> None:
    """The counterpart: the check needs no registry and no cache when the lock is current."""
    done = lock_check_in_empty_cache(tmp_path, (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert done.returncode == 0 and STALE not in done.stderr, done.stderr[-2000:]


#: Each pip-readable file and the `uv export` that writes it (`make lock`).
EXPORTS = {
    "requirements.txt": ["--output-file", "requirements.txt"],
    "webhook/requirements.txt": [
        *("--no-default-groups", "--extra", "webhook", "--no-emit-project"),
        *("--output-file", "webhook/requirements.txt"),
    ],
}


@pytest.mark.parametrize("path", sorted(EXPORTS))
def test_the_pip_requirements_are_exactly_what_uv_exports_from_the_lock(path: str, tmp_path: Path) -> None:
    done = uv("export", "--frozen", "--no-hashes", "--quiet", *EXPORTS[path][:-1], str(tmp_path / "out.txt"))
    assert done.returncode == 0, done.stderr
    exported = (tmp_path / "out.txt").read_text(encoding="utf-8")
    # the header names the command with the output path as given; compare the pins and the header's rest
    assert exported.replace(str(tmp_path / "out.txt"), path) == (REPO_ROOT / path).read_text(encoding="utf-8")


def test_the_default_group_pulumi_install_syncs_is_the_cli_extra_and_nothing_of_dev() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["uv"]["default-groups"] == ["run"]
    assert project["dependency-groups"]["run"] == ["batchplane[cli]"]
    lock = tomllib.loads((REPO_ROOT / "uv.lock").read_text(encoding="utf-8"))
    (me,) = [p for p in lock["package"] if p["name"] == "batchplane"]
    assert [d["name"] for d in me["dev-dependencies"]["run"]] == ["batchplane"]


def test_the_makefile_bootstraps_the_uv_the_dev_extra_pins() -> None:
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(r"^UV_VERSION := (\S+)$", makefile, re.M)
    assert match is not None
    (dev_uv,) = [r for r in declared(frozenset({"dev"})) if canonicalize_name(r.name) == "uv"]
    assert str(dev_uv.specifier) == f"=={match.group(1)}"
    workflows = "".join(
        f.read_text(encoding="utf-8") for f in (REPO_ROOT / ".github" / "workflows").glob("*.yml")
    )
    assert set(re.findall(r"\buv==(\S+)", workflows)) <= {match.group(1)}


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

"""The mypyc-compiled decision path (batchplane/webhook/compile.py): what it covers and how the image builds it."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import yaml

from batchplane.components.quota_webhook.policy import render_policy
from batchplane.stack import load_stack_file
from batchplane.webhook.compile import MODULES, mypy_config, runtime_packages
from batchplane.webhook.decisions import Decider
from tests.conftest import REPO_ROOT, SHARED, template_path

PACKAGE = REPO_ROOT / "batchplane"


def _reviews() -> Iterator[tuple[dict[str, Any], str]]:
    samples = SHARED / "samples"
    for rel in ("kuberay/ray-job.pytorch-image-classifier.yaml", "kueue/sample-job.yaml"):
        obj = next(d for d in yaml.safe_load_all((samples / rel).read_text()) if d)
        obj.setdefault("metadata", {})["namespace"] = "default"
        obj["metadata"].setdefault("labels", {})["kueue.x-k8s.io/queue-name"] = "user-queue"
        yield obj, "allowed"
        greedy = yaml.safe_load(yaml.safe_dump(obj))
        for container in _containers(greedy):
            container.setdefault("resources", {}).setdefault("requests", {})["nvidia.com/gpu"] = "64"
        yield greedy, "denied"


def _containers(obj: Any) -> Iterator[dict[str, Any]]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "containers" and isinstance(value, list):
                yield from (c for c in value if isinstance(c, dict))
            else:
                yield from _containers(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from _containers(item)


def test_every_module_whose_code_a_review_runs_is_compiled() -> None:
    """Profile real reviews (allowed and denied, RayJob and Job) and require every batchplane module that runs
    code on the way to be in the compiled set: a new hot-path module must be added to batchplane/webhook/compile.py."""
    decider = Decider(render_policy(load_stack_file(template_path("gke-dws"))))
    ran: set[str] = set()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            path = Path(frame.f_code.co_filename)
            if path.is_relative_to(PACKAGE):
                ran.add(path.relative_to(REPO_ROOT).as_posix())

    outcomes = []
    sys.setprofile(profile)
    try:
        for obj, _ in _reviews():
            outcomes.append(decider.validate(obj, "default", "CREATE").allowed)
    finally:
        sys.setprofile(None)
    assert outcomes == [expected == "allowed" for _, expected in _reviews()]
    assert ran <= set(MODULES), f"not compiled: {sorted(ran - set(MODULES))}"


def test_the_image_compiles_with_the_pinned_mypy() -> None:
    pyproject = (REPO_ROOT / "pyproject.toml").read_text()
    dev_pin = re.search(r'"mypy==([^"]+)"', pyproject)
    build_pin = re.search(
        r"^mypy==(\S+)$", (REPO_ROOT / "webhook" / "compile-requirements.txt").read_text(), re.M
    )
    assert dev_pin and build_pin and dev_pin.group(1) == build_pin.group(1)
    dockerfile = (REPO_ROOT / "webhook" / "Dockerfile").read_text()
    assert "python -m batchplane.webhook.compile --in-place" in dockerfile
    ignore = (REPO_ROOT / "webhook" / "Dockerfile.dockerignore").read_text().splitlines()
    assert {"!batchplane/", "!webhook/compile-requirements.txt"} <= set(ignore)


@pytest.mark.parametrize("module", MODULES, ids=[m.rsplit("/", 1)[-1] for m in MODULES])
def test_compiled_modules_exist_in_the_package(module: str) -> None:
    assert (REPO_ROOT / module).is_file()


@pytest.mark.slow
def test_the_image_build_stage_compiles_the_package_installed_under_a_prefix(tmp_path: Path) -> None:
    """webhook/Dockerfile's build stage without Docker: a Python with only webhook/compile-requirements.txt; the
    webhook's dependencies and the package installed under a prefix (``--prefix``, as the Dockerfile's pip does);
    ``python -m batchplane.webhook.compile --in-place <site-packages>`` with PYTHONPATH there — the only place
    pydantic is. The other top-level modules of that site-packages (typing_extensions.py, ...) must not be taken for
    project code, and the extension modules land in the installed package and import from there, without Pulumi."""
    import shutil
    import subprocess
    import sysconfig

    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    assert uv is not None, "uv is a dev dependency (pyproject.toml `dev` extra)"
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    env.pop("VIRTUAL_ENV", None)
    stage, prefix = tmp_path / "build-stage", tmp_path / "install"

    def run(*args: str | Path) -> None:
        done = subprocess.run([str(a) for a in args], env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-4000:]

    run(uv, "venv", "-q", stage, "--python", sys.executable)
    python = stage / "bin" / "python"
    run(uv, "pip", "install", "-q", "-p", python, "-r", REPO_ROOT / "webhook" / "compile-requirements.txt")
    run(
        uv,
        "pip",
        "install",
        "-q",
        "-p",
        python,
        "--prefix",
        prefix,
        "-r",
        REPO_ROOT / "webhook" / "requirements.txt",
    )
    run(uv, "pip", "install", "-q", "-p", python, "--prefix", prefix, "--no-deps", REPO_ROOT)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(prefix)}))
    assert (site / "typing_extensions.py").is_file() and (
        site / "batchplane" / "webhook" / "decisions.py"
    ).is_file()
    no_pydantic = subprocess.run([python, "-c", "import pydantic"], env=env, capture_output=True, check=False)
    assert no_pydantic.returncode != 0, "the build stage's own Python must not have pydantic"
    done = subprocess.run(
        [python, "-m", "batchplane.webhook.compile", "--in-place", str(site)],
        cwd=tmp_path,
        # the C compiler's -O0: this test is about where modules are found and land, not their speed (the image and
        # `make test-compiled` keep mypyc's default -O3)
        env={**env, "PYTHONPATH": str(site), "MYPYC_OPT_LEVEL": "0"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert not (site / "build").exists() and not (site / ".mypy_cache").exists()
    probe = (
        "import sys, batchplane.webhook.decisions as d, batchplane.frameworks.rayjob as r; "
        "print(d.__file__); print(r.__file__); print(any(m.startswith('pulumi') for m in sys.modules))"
    )
    imported = subprocess.run(
        [python, "-c", probe],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
    )
    decisions, rayjob, pulumi_loaded = imported.stdout.split()
    assert decisions.startswith(str(site / "batchplane" / "webhook" / "decisions.cpython-"))
    assert rayjob.startswith(str(site / "batchplane" / "frameworks" / "rayjob.cpython-"))
    assert pulumi_loaded == "False"


def test_mypycs_type_pass_skips_the_pulumi_providers_the_compiled_modules_never_import() -> None:
    """batchplane/__init__.py's type-only imports reach Pulumi's providers (~4,000 modules); mypyc's mypy pass must
    not follow them, and must still follow pydantic, which the decision path's policy models use."""
    config = mypy_config(REPO_ROOT)
    skipped = re.search(r"^\[mypy-(.*)\]\nfollow_imports = skip$", config, re.M)
    assert skipped, config
    patterns = set(skipped.group(1).split(","))
    assert {"pulumi_gcp", "pulumi_gcp.*", "pulumi_kubernetes.*", "kubernetes.*", "pulumi.*"} <= patterns
    followed = {"pydantic", "pydantic_core", "batchplane", "typing_extensions", "annotated_types"}
    assert not followed & patterns and not {f"{name}.*" for name in followed} & patterns


def test_a_package_a_compiled_module_starts_importing_is_followed_again(tmp_path: Path) -> None:
    """The skip list is derived from what the compiled modules import at run time, not typed: a compiled module
    that imports yaml makes mypyc's type pass follow yaml."""
    import shutil

    shutil.copytree(PACKAGE, tmp_path / "batchplane", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    assert "yaml" in re.search(r"^\[mypy-(.*)\]$", mypy_config(tmp_path), re.M).group(1).split(",")  # type: ignore[union-attr]
    quantity = tmp_path / "batchplane" / "quantity.py"
    quantity.write_text(
        quantity.read_text().replace(
            "from __future__ import annotations\n",
            "from __future__ import annotations\n\nimport yaml  # noqa: F401\n",
            1,
        )
    )
    assert "yaml" in runtime_packages(tmp_path)
    assert "yaml" not in re.search(r"^\[mypy-(.*)\]$", mypy_config(tmp_path), re.M).group(1).split(",")  # type: ignore[union-attr]


def test_a_dependency_only_pythonpath_reaches_counts_as_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """webhook/Dockerfile installs the webhook's dependencies under a prefix and compiles with PYTHONPATH pointing
    there: the import probe must see them (it failed the image build when it ignored PYTHONPATH)."""
    import shutil

    tree = tmp_path / "tree"
    shutil.copytree(PACKAGE, tree / "batchplane", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    prefix = tmp_path / "prefix"
    (prefix / "only_on_pythonpath").mkdir(parents=True)
    (prefix / "only_on_pythonpath" / "__init__.py").write_text("")
    quantity = tree / "batchplane" / "quantity.py"
    quantity.write_text(
        quantity.read_text().replace(
            "from __future__ import annotations\n",
            "from __future__ import annotations\n\nimport only_on_pythonpath  # noqa: F401\n",
            1,
        )
    )
    monkeypatch.setenv("PYTHONPATH", str(prefix))
    assert "only_on_pythonpath" in runtime_packages(tree)

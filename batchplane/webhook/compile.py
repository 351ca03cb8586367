"""Compile the quota webhook's decision path with mypyc, for throughput on the admission hot path.

The modules every admission review runs through — quantity parsing, Kueue-exact accounting, the quota model and
the decisions — are plain, fully typed Python; mypyc (part of mypy, pinned in pyproject.toml) compiles them to C
extension modules, which Python imports in place of the ``.py`` files beside them. Same source, same tests: the
package stays pure Python for development, ``make test`` runs the webhook and accounting tests against the compiled
modules too, and the webhook image (webhook/Dockerfile) ships them.

Usage (``make compile`` runs the first)::

    python -m batchplane.webhook.compile --out build/compiled   # a compiled copy of batchplane/ (PYTHONPATH=build/compiled)
    python -m batchplane.webhook.compile --in-place DIR         # add them to the package installed under DIR (the image)

A copy is compiled rather than the working tree, so a stale extension module never shadows an edited ``.py``.
Needs a C compiler and the Python headers. Exits non-zero when mypyc fails or a module did not come out compiled.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.metadata
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: The directory that holds this ``batchplane/`` package: the repository (editable install) or site-packages.
PACKAGE_ROOT = Path(__file__).resolve().parents[2]

#: The package of the job-framework modules (:mod:`batchplane.frameworks`), relative to the directory that holds
#: ``batchplane/``.
FRAMEWORKS_DIR = "batchplane/frameworks"
#: Modules of that package that are not a framework's: the registry (``__init__``) and the record type.
_NOT_COMPILED_FRAMEWORK_MODULES = frozenset({"__init__.py", "framework.py"})


def framework_modules() -> tuple[str, ...]:
    """Every module of :mod:`batchplane.frameworks` but the registry and the record type, sorted: each framework's
    PodSet extraction and webhook checks (its module registers them) and the helpers they share (``ray_common``).
    Derived from the package, so a framework added there is compiled without a line here."""
    found = (PACKAGE_ROOT / FRAMEWORKS_DIR).glob("*.py")
    return tuple(
        sorted(f"{FRAMEWORKS_DIR}/{p.name}" for p in found if p.name not in _NOT_COMPILED_FRAMEWORK_MODULES)
    )


#: The hot path of a review (paths relative to the directory that holds ``batchplane/``; mypyc compiles them as one
#: group, so their order does not matter).
MODULES = (
    "batchplane/quantity.py",
    "batchplane/accounting/model.py",
    "batchplane/accounting/pod_requests.py",
    "batchplane/accounting/podsets.py",
    *framework_modules(),
    "batchplane/accounting/validity.py",
    "batchplane/accounting/workload.py",
    "batchplane/webhook/queues.py",
    "batchplane/webhook/flavors.py",
    "batchplane/webhook/assign.py",
    "batchplane/webhook/capacity.py",
    "batchplane/webhook/topology.py",
    "batchplane/explain/sentences.py",
    "batchplane/webhook/decisions.py",
)

#: mypyc's own mypy run: the modules are checked --strict by `make typecheck` (pyproject.toml); here the same
#: pydantic plugin, and third-party packages without types are Any.
_MYPY_CONFIG = "[mypy]\nplugins = pydantic.mypy\nignore_missing_imports = True\n"

#: Prints the top-level third-party packages that importing :data:`MODULES` loads, one per line (run in the tree
#: being compiled, so it sees that tree's ``batchplane/``).
_RUNTIME_PACKAGES_SCRIPT = """
import importlib, sys
before = set(sys.modules)
for module in sys.argv[1:]:
    importlib.import_module(module)
loaded = {name.split(".")[0] for name in set(sys.modules) - before}
print("\\n".join(sorted(loaded - set(sys.stdlib_module_names) - {"batchplane"})))
"""


def runtime_packages(root: Path) -> set[str]:
    """The top-level third-party packages the compiled modules import at run time (pydantic and its own
    dependencies today), found by importing :data:`MODULES` from ``root`` in a fresh interpreter.

    Raises:
        RuntimeError: a module does not import.
    """
    names = [module.removesuffix(".py").replace("/", ".") for module in MODULES]
    # The working directory comes first on ``sys.path`` for ``-c``, so ``batchplane`` is the copy in ``root``; PYTHONPATH
    # is kept: the image build installs the webhook's dependencies under a prefix that only PYTHONPATH reaches.
    done = subprocess.run(
        [sys.executable, "-c", _RUNTIME_PACKAGES_SCRIPT, *names],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the compiled modules do not import:\n{done.stderr[-4000:]}")
    return set(done.stdout.split())


def mypy_config(root: Path) -> str:
    """mypyc's mypy configuration: :data:`_MYPY_CONFIG`, and ``follow_imports = skip`` for every installed
    third-party package the compiled modules do not import at run time.

    Without it mypy follows ``batchplane/__init__.py``'s type-only imports (the public façade names
    ``BatchCluster``) into Pulumi's providers — about 4,000 modules of pulumi_gcp, pulumi_kubernetes and the
    Kubernetes client, most of the compile's time — although no compiled module can reach them. A skipped
    package is ``Any`` to mypy; the packages the compiled code does import (:func:`runtime_packages`) are
    followed as before, so mypyc sees the same types for everything it compiles.
    """
    keep = runtime_packages(root) | {"batchplane"}
    installed = {name for name in importlib.metadata.packages_distributions() if name.isidentifier()}
    skipped = sorted(installed - keep - set(sys.stdlib_module_names))
    if not skipped:
        return _MYPY_CONFIG
    patterns = ",".join(f"{name},{name}.*" for name in skipped)
    return f"{_MYPY_CONFIG}\n[mypy-{patterns}]\nfollow_imports = skip\n"


def compile_tree(root: Path) -> list[Path]:
    """Compile :data:`MODULES` under ``root`` in place; returns the extension modules written.

    Raises:
        RuntimeError: mypyc failed, or a module has no extension module afterwards.
    """
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "mypy.ini"
        config.write_text(mypy_config(root))
        # mypyc drives setuptools in the working directory: run it where no pyproject.toml is read.
        done = subprocess.run(
            [sys.executable, "-m", "mypyc", "--config-file", str(config), *MODULES],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
    shutil.rmtree(root / "build", ignore_errors=True)  # mypyc's C sources and objects
    shutil.rmtree(root / ".mypy_cache", ignore_errors=True)
    if done.returncode != 0:
        raise RuntimeError(f"mypyc failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    built = []
    for module in MODULES:
        source = root / module
        suffixes = importlib.machinery.EXTENSION_SUFFIXES
        found = [source.with_suffix(s) for s in suffixes if source.with_suffix(s).exists()]
        if not found:
            raise RuntimeError(f"{module}: no extension module was built")
        built.extend(found)
    return built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path, help="write a compiled copy of batchplane/ into this directory")
    where.add_argument(
        "--in-place", type=Path, help="add the extension modules to the batchplane/ package in this directory"
    )
    args = parser.parse_args()
    source = PACKAGE_ROOT if args.out is not None else args.in_place.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        # Compile a copy of the package alone: mypy must not take the other modules of an installation
        # directory (site-packages) for project code.
        work = Path(tmp)
        shutil.copytree(
            source / "batchplane", work / "batchplane", ignore=shutil.ignore_patterns("__pycache__", "*.so")
        )
        try:
            built = compile_tree(work)
        except RuntimeError as exc:
            sys.exit(str(exc))
        if args.out is not None:
            target: Path = args.out.resolve()
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(work, target)
        else:
            target = source
            for path in [*built, *work.glob("*__mypyc*")]:
                destination = target / path.relative_to(work)
                shutil.copy2(path, destination)
    print(f"compiled {len(built)} modules into {target}")


if __name__ == "__main__":
    main()

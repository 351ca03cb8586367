"""Which stacks a pull request touches: the matrix of the PR workflow's ``check`` and ``diff`` jobs.

    python -m batchplane.ci matrix --base BASE_SHA [--head HEAD] [--github-output]
    batchplane ci-matrix --base BASE_SHA

From the files changed between ``--base`` and ``--head`` (``git diff --name-only --no-renames BASE HEAD``; a rename
is a removal and an addition):

- a changed environment ``stacks/Pulumi.<env>.yaml`` → that environment (``removed`` when the PR deletes it);
- a changed template ``templates/Pulumi.<name>.yaml`` → that template;
- a changed policy config ``policies/config/<name>.json`` → the environment and the template of that name;
- a changed program or package file (:data:`PROGRAM_PATHS`: the Pulumi program, the ``batchplane`` package, the
  policy pack, the webhook image, the dependency locks) → every environment and every template.

Each entry names its file, its ``policies/config/<name>.json`` when that file exists at the head, and a ``key``
unique per file (the environment's name; ``templates/<name>`` for a template), which the ``diff`` job puts in its
PR comment's marker: one comment per stack file. Other files (docs, tests) touch no stack.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from batchplane.stack.layout import (
    STACKS_DIR,
    TEMPLATES_DIR,
    environment_names,
    stack_name_of,
    template_names,
)

__all__ = ["PROGRAM_PATHS", "MatrixEntry", "changed_files", "main", "matrix"]

#: Files and folders whose change can change what every stack deploys or how it is checked. ``policies/config/``
#: is per stack (above), so not here.
PROGRAM_PATHS = (
    "__main__.py",
    "Pulumi.yaml",
    "requirements.txt",
    "pyproject.toml",
    "uv.lock",
    "batchplane/",
    "policies/",
    "webhook/",
)
POLICY_CONFIG_DIR = "policies/config"


@dataclass(frozen=True, order=True)
class MatrixEntry:
    """One stack file to check and diff.

    Attributes:
        key: unique per stack file: the environment's name, or ``templates/<name>`` for a template.
        name: the stack name (``Pulumi.<name>.yaml``).
        file: the stack file, relative to the project directory.
        kind: ``environment`` (``stacks/``) or ``template`` (``templates/``).
        policyConfig: ``policies/config/<name>.json`` when it exists at the head, else ``""``.
        removed: the pull request deletes the file (nothing to check; the diff says so).
    """

    key: str
    name: str
    file: str
    kind: str
    policyConfig: str
    removed: bool = False


def changed_files(root: Path, base: str, head: str = "HEAD") -> list[str]:
    """The files changed between ``base`` and ``head`` in ``root``'s git work tree, relative to its top.

    Raises:
        RuntimeError: ``git diff`` fails (not a work tree, an unknown ref), with git's message.
    """
    done = subprocess.run(
        ["git", "diff", "--name-only", "--no-renames", "-z", base, head],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"git diff {base} {head}: {done.stderr.decode(errors='replace').strip()}")
    return [name for name in done.stdout.decode().split("\0") if name]


def _is_program(path: str) -> bool:
    if path.startswith(f"{POLICY_CONFIG_DIR}/"):
        return False
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in PROGRAM_PATHS)


def _stack_file(path: str, folder: str) -> str | None:
    """The stack name of ``<folder>/Pulumi.<name>.yaml`` (directly in the folder), else None."""
    head, _, file = path.rpartition("/")
    if head != folder or not file.startswith("Pulumi.") or not file.endswith((".yaml", ".yml")):
        return None
    return stack_name_of(Path(file))


def matrix(root: Path, changed: Iterable[str]) -> list[MatrixEntry]:
    """The stack files the changed paths touch (module docstring), sorted: environments, then templates.

    Args:
        root: the project directory at the head (``stacks/``, ``templates/``, ``policies/config/``).
        changed: paths relative to ``root``, as :func:`changed_files` gives them.
    """
    environments: set[str] = set()
    templates: set[str] = set()
    removed: set[str] = set()
    present_envs, present_templates = set(environment_names(root)), set(template_names(root))
    for path in changed:
        if _is_program(path):
            environments |= present_envs
            templates |= present_templates
        elif (env := _stack_file(path, STACKS_DIR)) is not None:
            environments.add(env)
            if env not in present_envs:
                removed.add(env)
        elif (template := _stack_file(path, TEMPLATES_DIR)) is not None:
            if template in present_templates:  # a template the PR deletes has no environment to check
                templates.add(template)
        elif path.startswith(f"{POLICY_CONFIG_DIR}/") and path.endswith(".json"):
            name = path[len(POLICY_CONFIG_DIR) + 1 : -len(".json")]
            environments |= {name} & present_envs
            templates |= {name} & present_templates

    def policy_config(name: str) -> str:
        path = f"{POLICY_CONFIG_DIR}/{name}.json"
        return path if (root / path).is_file() else ""

    out = [
        MatrixEntry(
            env, env, f"{STACKS_DIR}/Pulumi.{env}.yaml", "environment", policy_config(env), env in removed
        )
        for env in sorted(environments)
    ]
    out += [
        MatrixEntry(
            f"{TEMPLATES_DIR}/{t}", t, f"{TEMPLATES_DIR}/Pulumi.{t}.yaml", "template", policy_config(t)
        )
        for t in sorted(templates)
    ]
    return out


def github_matrix(entries: Sequence[MatrixEntry]) -> str:
    """The ``strategy.matrix`` value for GitHub Actions (``fromJSON``): ``{"include": [entry, …]}``, compact."""
    return json.dumps({"include": [asdict(e) for e in entries]}, separators=(",", ":"), sort_keys=True)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m batchplane.ci matrix``: print the matrix JSON; with ``--github-output`` also append ``matrix=``
    and ``count=`` to ``$GITHUB_OUTPUT``. Exit 0, or 2 when git fails."""
    parser = argparse.ArgumentParser(prog="python -m batchplane.ci", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("matrix", help="the stacks a change touches, as a GitHub Actions matrix")
    cmd.add_argument("--base", required=True, help="the PR's base commit")
    cmd.add_argument("--head", default="HEAD", help="the PR's head (default HEAD)")
    cmd.add_argument("--project-dir", type=Path, default=Path.cwd(), help="the project directory")
    cmd.add_argument(
        "--github-output", action="store_true", help="write matrix= and count= to $GITHUB_OUTPUT"
    )
    args = parser.parse_args(argv)
    try:
        entries = matrix(args.project_dir, changed_files(args.project_dir, args.base, args.head))
    except RuntimeError as exc:
        print(f"batchplane: {exc}", file=sys.stderr)
        return 2
    text = github_matrix(entries)
    print(text)
    if args.github_output:
        with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
            out.write(f"matrix={text}\ncount={len(entries)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

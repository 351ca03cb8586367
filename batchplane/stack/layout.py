"""Where stack files live in a Batchplane project: the team's environments and the shipped templates.

A project directory (the one holding ``Pulumi.yaml``) has two folders of ``Pulumi.<name>.yaml`` files:

- ``stacks/`` — the team's environments. It is Pulumi's ``stackConfigDir`` (``Pulumi.yaml``), so ``pulumi up -s
  <env>`` reads ``stacks/Pulumi.<env>.yaml``. Nothing shipped lives here; ``batchplane new ENV --from TEMPLATE``
  writes here.
- ``templates/`` — the templates this project ships (``kind``, ``gke-prod-dws``, …), owned by the project's tests
  (goldens, graphs, the README table). A team merges updates to them from upstream (docs/upgrading.md).

Every CLI command that takes ``--stack NAME`` resolves it with :func:`find_stack_file`: the environment
``stacks/Pulumi.NAME.yaml`` when there is one, else the template ``templates/Pulumi.NAME.yaml`` — so ``batchplane
preview --stack kind`` (``make preview``) works on a fresh clone, and a team's own ``stacks/Pulumi.kind.yaml`` wins
over the template of the same name.
"""

from __future__ import annotations

from pathlib import Path

#: The team's environments: Pulumi's ``stackConfigDir`` (``Pulumi.yaml``).
STACKS_DIR = "stacks"
#: The templates this project ships.
TEMPLATES_DIR = "templates"
#: The search order of ``--stack NAME``: environments first, then templates.
SEARCH_ORDER = (STACKS_DIR, TEMPLATES_DIR)


def stack_file_name(name: str) -> str:
    """``Pulumi.<name>.yaml``: a stack's settings file name, as Pulumi names it."""
    return f"Pulumi.{name}.yaml"


def stack_name_of(path: Path) -> str:
    """The stack name of a settings file: ``gke-dev`` for ``…/Pulumi.gke-dev.yaml`` (or ``.yml``); the file stem
    for any other name."""
    name = path.name
    if name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")):
        return name[len("Pulumi.") :].rsplit(".", 1)[0]
    return path.stem


def names_in(root: Path, folder: str) -> list[str]:
    """The stack names of ``<root>/<folder>/Pulumi.*.yaml``, sorted (``[]`` when the folder is missing)."""
    return sorted(stack_name_of(p) for p in (root / folder).glob("Pulumi.*.yaml"))


def environment_names(root: Path) -> list[str]:
    """The team's environments: every ``stacks/Pulumi.<name>.yaml`` under ``root``, sorted."""
    return names_in(root, STACKS_DIR)


def template_names(root: Path) -> list[str]:
    """The shipped templates: every ``templates/Pulumi.<name>.yaml`` under ``root``, sorted."""
    return names_in(root, TEMPLATES_DIR)


def environment_path(root: Path, name: str) -> Path:
    """``<root>/stacks/Pulumi.<name>.yaml`` (whether or not it exists): where an environment lives."""
    return root / STACKS_DIR / stack_file_name(name)


def template_path(root: Path, name: str) -> Path:
    """``<root>/templates/Pulumi.<name>.yaml`` (whether or not it exists): where a template lives."""
    return root / TEMPLATES_DIR / stack_file_name(name)


def find_stack_file(root: Path, name: str) -> Path | None:
    """The file ``--stack NAME`` means: ``stacks/Pulumi.NAME.yaml``, else ``templates/Pulumi.NAME.yaml``; ``None``
    when neither exists."""
    for folder in SEARCH_ORDER:
        path = root / folder / stack_file_name(name)
        if path.is_file():
            return path
    return None

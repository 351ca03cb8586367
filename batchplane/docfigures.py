"""The figures docs/ gives about the code, measured and written in place (``make docs``), never typed.

A page marks a figure with an HTML comment pair, invisible once rendered::

    it loads <!-- generated: webhook-loaded-modules -->52<!-- /generated --> batchplane modules

:func:`update_figures` replaces what sits between the markers with the figure's current value (:data:`FIGURES`
names each figure and how it is measured); ``python -m batchplane.docfigures FILE…`` rewrites the files (what
``make docs`` runs after ``batchplane config-reference`` and ``batchplane preflight --requirements``), and
``--check`` only reports the stale ones (exit 1). ``tests/docs/test_docfigures.py`` holds every page of docs/ to
the measured values. Development tooling: the program, the CLI and the webhook never import it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["FIGURES", "Figure", "FigureError", "figure_value", "update_figures"]

#: The server and the command the webhook container runs (``python -m batchplane.webhook serve``).
WEBHOOK_ENTRY_MODULES = ("batchplane.webhook.server", "batchplane.webhook.command")

_MARKER = re.compile(r"<!-- generated: ([a-z0-9-]+) -->(.*?)<!-- /generated -->", re.S)
_OPENING = re.compile(r"<!-- generated: ([^>]*?) ?-->")


class FigureError(ValueError):
    """A page names a figure that does not exist, or opens a marker it never closes (the message lists each)."""


@dataclass(frozen=True)
class Figure:
    """One generated figure: its marker name, what it states, and how it is measured."""

    name: str
    """The marker name (``<!-- generated: <name> -->``)."""
    meaning: str
    """What the figure states, in one sentence."""
    measure: Callable[[], str]
    """Returns the figure as the page prints it."""


def loaded_batchplane_modules(*entry: str) -> list[str]:
    """The ``batchplane`` modules a fresh interpreter holds after importing ``entry`` (sorted names).

    Raises:
        subprocess.CalledProcessError: an import failed in the probe interpreter.
    """
    probe = f"import sys, json, {', '.join(entry)}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded: list[str] = json.loads(done.stdout)
    return [m for m in loaded if m == "batchplane" or m.startswith("batchplane.")]


def _webhook_loaded_modules() -> str:
    return str(len(loaded_batchplane_modules(*WEBHOOK_ENTRY_MODULES)))


def _framework_modules() -> str:
    from batchplane.frameworks import FRAMEWORKS

    return str(len(FRAMEWORKS))


def _bring_up_stages() -> str:
    from batchplane.components.stages import stages_markdown

    return stages_markdown()


def _upgrade_steps_kueue() -> str:
    from batchplane.upgrade.docs import steps_markdown

    return steps_markdown()


#: Every figure a page may mark, by marker name.
FIGURES: dict[str, Figure] = {
    f.name: f
    for f in (
        Figure(
            "webhook-loaded-modules",
            "How many batchplane modules the webhook server loads (docs/webhook.md).",
            _webhook_loaded_modules,
        ),
        Figure(
            "framework-modules",
            "How many job-framework modules batchplane.frameworks registers (docs/architecture.md).",
            _framework_modules,
        ),
        Figure(
            "bring-up-stages",
            "BatchCluster's bring-up stages, a table (docs/architecture.md).",
            _bring_up_stages,
        ),
        Figure(
            "upgrade-steps-kueue",
            "The Kueue upgrade steps batchplane upgrade plan uses, as a table (docs/upgrading.md).",
            _upgrade_steps_kueue,
        ),
    )
}


@cache
def figure_value(name: str) -> str:
    """The current value of figure ``name`` (measured once per process).

    Raises:
        KeyError: no such figure.
    """
    return FIGURES[name].measure()


def update_figures(text: str) -> str:
    """``text`` with every marked figure set to its current value; unchanged when every figure is current.

    Raises:
        FigureError: a marker names an unknown figure or is never closed (all such markers in one message).
    """
    closed = {m.start() for m in _MARKER.finditer(text)}
    problems = []
    for opening in _OPENING.finditer(text):
        line = text.count("\n", 0, opening.start()) + 1
        if opening.start() not in closed:
            problems.append(f"line {line}: marker {opening.group(0)!r} has no <!-- /generated --> after it")
        elif opening.group(1) not in FIGURES:
            problems.append(
                f"line {line}: unknown figure {opening.group(1)!r} (known: {', '.join(sorted(FIGURES))})"
            )
    if problems:
        raise FigureError("; ".join(problems))
    return _MARKER.sub(
        lambda m: f"<!-- generated: {m.group(1)} -->{figure_value(m.group(1))}<!-- /generated -->", text
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m batchplane.docfigures [--check] FILE…``: 0 all current (or rewritten), 1 stale (``--check``) or a
    bad marker, 2 usage."""
    parser = argparse.ArgumentParser(
        prog="python -m batchplane.docfigures", description="Write the measured figures into doc pages."
    )
    parser.add_argument("files", nargs="+", type=Path, help="Markdown pages to update in place")
    parser.add_argument("--check", action="store_true", help="only list the stale pages (exit 1 if any)")
    args = parser.parse_args(argv)
    stale: list[Path] = []
    failed = False
    for path in args.files:
        text = path.read_text(encoding="utf-8")
        try:
            new = update_figures(text)
        except FigureError as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            failed = True
            continue
        if new != text:
            stale.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in stale:
        print(f"{path}: {'stale figures: run `make docs`' if args.check else 'figures updated'}")
    return 1 if failed or (args.check and stale) else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Run the project's real Pulumi program offline, under the Pulumi SDK's mock engine.

:func:`run_program` does what ``pulumi preview`` makes the Python language host do
(``sdk/python/cmd/pulumi-language-python-exec`` and the automation API's inline
``LanguageServer.Run``): set config (``set_all_config`` and the ``PULUMI_CONFIG`` environment bag),
configure the runtime settings, change into the program directory, and run ``__main__.py`` with
``runpy.run_path(..., run_name="__main__")`` inside ``pulumi.runtime.run_in_stack`` on a fresh
event loop. The only difference: the resource monitor is a recording ``MockMonitor`` and the
providers are :mod:`batchplane.offline.mocks`, so nothing leaves the process (no CLI, no plugins,
no network, no cluster). The settings are what ``pulumi.runtime.set_mocks`` configures, set
directly: ``set_mocks`` also creates and *finishes* a root stack at once, after which
``pulumi.export`` values are never registered; here ``run_in_stack`` owns the root stack, as under
the CLI, so stack outputs are captured.

Limits: ``Resource.get`` reads are not recorded (they create nothing); remote components
(``helm.v4.Chart``, ``yaml/v2``, ``kustomize/v2``) are single resources without children; dynamic
providers' ``create`` never runs (their inputs come back as state).

Isolation between runs in one process (pytest runs several stacks in a row): every run executes in
a copy of the caller's ``contextvars`` context (where all Pulumi runtime state lives: settings,
config, root stack resource, monitor), gets brand-new settings, a new event loop and its own
executor threads (their event loops are closed afterwards), and restores the working directory,
``sys.argv``, ``sys.path`` and the ``PULUMI_CONFIG*`` environment variables. Modules the program
imported from its own directory (e.g. a ``helpers.py``) are dropped from ``sys.modules`` unless
their top-level package was imported before the run, so each run imports them fresh, as a new CLI
process would. Runs are serialised by a lock (they change process-wide state such as the cwd).

Cost: linear in the number of resources, dominated by the SDK itself. 1000 CustomResources took
2.1–3.5 s on a loaded 2-core build machine, against 1.9–2.0 s for the SDK's bare ``set_mocks`` +
``@pulumi.runtime.test`` loop measured alongside; decoding and recording add ~0.1 s of that
(``tests/offline/test_engine.py::test_thousand_custom_resources_are_recorded_in_order`` prints it).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import runpy
import sys
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from batchplane.lookups import canned_answers
from batchplane.offline import mocks
from batchplane.offline.model import ProgramRun
from batchplane.offline.stackfile import encode_config, read_project

__all__ = ["ProgramRun", "run_program"]

_RUN_LOCK = threading.Lock()
_ENV_KEYS = ("PULUMI_CONFIG", "PULUMI_CONFIG_SECRET_KEYS")
#: The organization name runs report (``pulumi.get_organization()``), as the automation API's default.
ORGANIZATION = "organization"


def run_program(
    project_dir: Path, stack: str, config: Mapping[str, Any], *, preview: bool = True
) -> ProgramRun:
    """Run the Pulumi program in ``project_dir`` for ``stack`` and record what it registers.

    Args:
        project_dir: the directory holding ``Pulumi.yaml`` (its ``name`` is the project name, its
            optional ``main`` the program directory or file, its ``config`` block the defaults).
        stack: the stack name (``pulumi.get_stack()``).
        config: the stack's config map as :func:`~batchplane.offline.stackfile.read_stack_file`
            returns it (``{"namespace:key": YAML value}``); encoded as the CLI encodes it (objects as
            JSON text, ``secure:`` values as a placeholder with the key marked secret).
        preview: ``True`` (default) runs as ``pulumi preview`` (``pulumi.runtime.is_dry_run()``;
            outputs the mocks do not provide stay unknown and show up as
            :data:`~batchplane.offline.model.UNKNOWN` in inputs); ``False`` as ``pulumi up``.

    Returns:
        The recorded resources in declaration order, and the stack outputs.

    Raises:
        ConfigLoadError: ``Pulumi.yaml`` is missing or unusable.
        RuntimeError: called while an asyncio event loop is running in this thread.
        Exception: whatever the program raises (e.g. ``ConfigValidationError``) propagates as
            itself; nothing is returned then.
    """
    project = read_project(Path(project_dir))
    merged = {**project.config_defaults, **dict(config)}
    encoded, secret_keys = encode_config(project.name, merged)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("run_program cannot run inside a running asyncio event loop")
    from batchplane.offline import _runtime  # Pulumi is imported here, not at package import

    with _RUN_LOCK:
        context = contextvars.copy_context()
        return context.run(
            _run_isolated,
            _runtime,
            project.directory,
            project.program,
            project.name,
            stack,
            encoded,
            secret_keys,
            preview,
        )


def _run_isolated(
    runtime: Any,
    project_dir: Path,
    program: Path,
    project: str,
    stack: str,
    config: dict[str, str],
    secret_keys: list[str],
    preview: bool,
) -> ProgramRun:
    from pulumi.runtime import config as runtime_config
    from pulumi.runtime import settings as runtime_settings
    from pulumi.runtime.stack import run_in_stack

    engine = runtime.RecordingEngine()
    monitor = runtime.RecordingMonitor(runtime.OfflineMocks(config))
    runtime_settings.ROOT.set(None)
    runtime_settings.configure(
        runtime_settings.Settings(
            project=project,
            stack=stack,
            monitor=monitor,
            engine=engine,
            dry_run=preview,
            organization=ORGANIZATION,
            root_directory=str(project_dir),
        )
    )
    runtime_config.set_all_config(config, secret_keys)
    program_dir = program if program.is_dir() else program.parent

    def main() -> None:
        runpy.run_path(str(program), run_name="__main__")

    with (
        _process_state(program_dir, str(program), config, secret_keys),
        _event_loop() as loop,
        canned_answers(mocks.CANNED_LOOKUPS),
    ):
        loop.run_until_complete(run_in_stack(main))
    return ProgramRun(
        resources=runtime.declaration_order(monitor.records, engine.declarations),
        outputs=monitor.outputs,
        output_secret_paths=tuple(monitor.output_secret_paths),
        stack_urn=monitor.stack_urn,
        logs=list(engine.logs),
        component_outputs=dict(monitor.component_outputs),
        component_secret_paths=dict(monitor.component_secret_paths),
    )


class _LoopFactory:
    """Executors whose worker threads get their own event loop, closed with everything else.

    The SDK's mock monitor runs ``_sync_await`` on executor threads (creating a loop per thread),
    and those loops may use their own default executor in turn (e.g. re-hydrating a resource
    reference), so every executor handed out is one of these, to any depth.
    """

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self.loops: list[asyncio.AbstractEventLoop] = []
        self.executors: list[ThreadPoolExecutor] = []

    def executor(self) -> ThreadPoolExecutor:
        executor = ThreadPoolExecutor(thread_name_prefix="batchplane-offline", initializer=self._thread_loop)
        with self._guard:
            self.executors.append(executor)
        return executor

    def loop(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.new_event_loop()
        loop.set_default_executor(self.executor())
        with self._guard:
            self.loops.append(loop)
        return loop

    def _thread_loop(self) -> None:
        asyncio.set_event_loop(self.loop())

    def close(self) -> None:
        """Stop every executor thread (waiting for them), then close every loop."""
        index = 0
        while index < len(self.executors):  # shutting one down may not add more, but be safe
            self.executors[index].shutdown(wait=True)
            index += 1
        for loop in self.loops:
            loop.close()


@contextmanager
def _event_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """A fresh main loop; it and every executor thread's loop are closed afterwards."""
    # The loop the caller had set (if any) is put back afterwards; peeking at the policy's thread-local
    # slot avoids get_event_loop(), which would create (and leak) a loop when none is set.
    previous = getattr(getattr(asyncio.get_event_loop_policy(), "_local", None), "_loop", None)
    factory = _LoopFactory()
    loop = factory.loop()
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        # As the automation API's LanguageServer: cancel what a failed program left pending.
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        asyncio.set_event_loop(previous)
        factory.close()


@contextmanager
def _process_state(
    program_dir: Path, argv0: str, config: dict[str, str], secret_keys: list[str]
) -> Iterator[None]:
    """cwd, argv, sys.path and ``PULUMI_CONFIG*`` as the language host sets them; restored after."""
    saved_cwd = os.getcwd()
    saved_argv = sys.argv
    saved_path = list(sys.path)
    saved_env = {key: os.environ.get(key) for key in _ENV_KEYS}
    modules_before = set(sys.modules)
    local_names = _local_module_names(program_dir)
    os.environ["PULUMI_CONFIG"] = json.dumps(config)
    os.environ["PULUMI_CONFIG_SECRET_KEYS"] = json.dumps(secret_keys)
    sys.argv = [argv0]
    sys.path.insert(0, str(program_dir))
    os.chdir(program_dir)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        sys.path[:] = saved_path
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        tops_before = {name.split(".", 1)[0] for name in modules_before}
        for name in [n for n in sys.modules if n not in modules_before]:
            top = name.split(".", 1)[0]
            if top in local_names and top not in tops_before:
                del sys.modules[name]


def _local_module_names(directory: Path) -> set[str]:
    """Top-level module and package names importable from ``directory`` (``*.py`` and sub-dirs)."""
    names: set[str] = set()
    for entry in directory.iterdir():
        if entry.suffix == ".py" and entry.stem != "__main__":
            names.add(entry.stem)
        elif entry.is_dir() and entry.name.isidentifier():
            names.add(entry.name)
    return names

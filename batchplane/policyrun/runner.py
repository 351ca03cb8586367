"""Run a Python CrossGuard policy pack offline, the way ``pulumi preview --policy-pack`` runs it.

The Pulumi CLI (3.x, ``NewPolicyAnalyzer`` in ``sdk/go/common/resource/plugin/analyzer_plugin.go``
and ``installAndLoadPolicyPlugins`` in ``pkg/engine/plugins.go``) starts a Python pack with the
``pulumi-analyzer-policy-python`` shim, i.e. ``python -u -m pulumi.policy <engine-address> .``
in the pack directory, adding ``PULUMI_PROJECT``, ``PULUMI_STACK``, ``PULUMI_ORGANIZATION``,
``PULUMI_DRY_RUN`` and ``PULUMI_CONFIG`` (the stack config as JSON) to its environment. The pack
prints the port of its Analyzer gRPC server on stdout; the CLI then calls ``Handshake``,
``ConfigureStack``, ``GetAnalyzerInfo``, ``Configure`` (the reconciled policy config), ``Analyze``
per resource and ``AnalyzeStack`` once. This module does the same with :data:`sys.executable`.

The engine address: ``pulumi.policy`` (pulumi 3.272.0) parses it but never dials it; it configures
the runtime without an engine, so ``pulumi.log`` in a policy prints ``info: ...`` to stderr (and
``print`` writes to stdout). No Engine service is needed: the runner passes :data:`ENGINE_ADDRESS`
(``127.0.0.1:0``, which nothing can dial) and keeps the pack's stderr/stdout lines as its logs.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from batchplane.errors import ConfigLoadError
from batchplane.policyrun.config import parse_policy_config, reconcile_policy_config
from batchplane.policyrun.errors import PolicyConfigError, PolicyRunError
from batchplane.policyrun.report import PolicyReport, Violation
from batchplane.policyrun.resources import ResourceLike, stack_config_strings, wire_properties
from batchplane.yamlfile import read_yaml_file

ENGINE_ADDRESS = "127.0.0.1:0"
"""What the runner passes as ``<engine-address>``: Python packs never dial it (see the module doc)."""

_TAIL_LINES = 20
_STOP_GRACE_SECONDS = 5.0


def load_pack_version(pack_dir: Path) -> str:
    """Read ``PulumiPolicy.yaml`` of a pack and return its ``version`` (``""`` if unset).

    Raises:
        PolicyRunError: the file is missing or not YAML, or the runtime is not ``python``.
    """
    path = pack_dir / "PulumiPolicy.yaml"
    if not path.is_file():
        raise PolicyRunError(f"{pack_dir} is not a policy pack: it has no PulumiPolicy.yaml")
    try:
        project = read_yaml_file(path) or {}
    except ConfigLoadError as err:
        raise PolicyRunError(f"failed to load policy pack project {path}: {err}") from None
    if not isinstance(project, Mapping):
        raise PolicyRunError(f"failed to load policy pack project {path}: not a YAML mapping")
    runtime = project.get("runtime")
    name = runtime.get("name") if isinstance(runtime, Mapping) else runtime
    if name != "python":
        raise PolicyRunError(
            f"policy pack {pack_dir} has runtime {name!r}; only Python policy packs run offline"
        )
    version = project.get("version")
    return "" if version is None else str(version)


def pack_environment(
    *, project: str, stack: str, config: Mapping[str, Any], organization: str | None = None
) -> dict[str, str]:
    """The environment the CLI gives a policy pack: ours plus the stack's identity and config.

    ``PULUMI_CONFIG`` is the JSON of :func:`~batchplane.policyrun.resources.stack_config_strings`
    (left out when the config is empty, as the CLI does), bounded by :func:`bounded_config`: the whole
    config also reaches the pack through the analyzer's ``ConfigureStack`` call, and an environment
    variable larger than the kernel's per-string limit (``MAX_ARG_STRLEN``, 128 KiB on Linux) would make
    the pack fail to start (``E2BIG``). ``PULUMI_ORGANIZATION`` is left out when ``organization`` is
    ``None``. Inherited values of these variables are dropped.
    """
    import json

    env = {k: v for k, v in os.environ.items() if k not in {"PULUMI_CONFIG", "PULUMI_ORGANIZATION"}}
    env.update({"PULUMI_PROJECT": project, "PULUMI_STACK": stack, "PULUMI_DRY_RUN": "true"})
    strings = stack_config_strings(project, config)
    if strings:
        env["PULUMI_CONFIG"] = json.dumps(bounded_config(strings), sort_keys=True)
    if organization:
        env["PULUMI_ORGANIZATION"] = organization
    return env


#: Most bytes of ``PULUMI_CONFIG`` JSON handed to a policy pack in its environment (far below Linux's
#: 128 KiB ``MAX_ARG_STRLEN`` per string and 2 MiB ``ARG_MAX`` for argv + environment together).
PULUMI_CONFIG_ENV_MAX_BYTES = 32 * 1024


def bounded_config(strings: Mapping[str, str], limit: int = PULUMI_CONFIG_ENV_MAX_BYTES) -> dict[str, str]:
    """The config keys that fit in ``limit`` bytes of JSON: all when they fit, else the smallest first.

    Policies read scalar keys (``batchplane:environment``) from the environment; large structured values
    (thousands of LocalQueues) are left to ``ConfigureStack``, which has no such limit.
    """
    import json

    if len(json.dumps(dict(strings), sort_keys=True).encode()) <= limit:
        return dict(strings)
    kept: dict[str, str] = {}
    used = 2  # "{}"
    for key, value in sorted(strings.items(), key=lambda item: (len(item[0]) + len(item[1]), item[0])):
        size = len(json.dumps({key: value}).encode())  # includes the braces: an upper bound with ", "
        if used + size > limit:
            break
        kept[key] = value
        used += size
    return kept


class PolicyPackProcess:
    """A running policy pack child process: start it, read its port, keep its output, stop it.

    Use as a context manager; leaving the block always stops the process (SIGTERM to its process
    group, SIGKILL after 5 s) and reaps it.

    Args:
        pack_dir: the pack directory (holds ``PulumiPolicy.yaml`` and ``__main__.py``).
        env: the full environment for the child (see :func:`pack_environment`).
    """

    def __init__(self, pack_dir: Path, env: Mapping[str, str]) -> None:
        self.pack_dir = pack_dir
        self._env = dict(env)
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._logs: list[str] = []
        self._stderr: deque[str] = deque(maxlen=_TAIL_LINES)
        self._port: queue.Queue[str | None] = queue.Queue(maxsize=1)
        self._threads: list[threading.Thread] = []

    @property
    def label(self) -> str:
        """How messages name this pack: ``"policy pack <dir>"``."""
        return f"policy pack {self.pack_dir}"

    @property
    def pid(self) -> int | None:
        """The child's process id, ``None`` before :meth:`start`."""
        return self._proc.pid if self._proc is not None else None

    @property
    def logs(self) -> list[str]:
        """Lines the pack wrote after it printed its port (stdout) and all of its stderr."""
        with self._lock:
            return list(self._logs)

    def stderr_tail(self) -> str:
        """The last 20 lines of the pack's stderr."""
        with self._lock:
            return "\n".join(self._stderr)

    def start(self, deadline: float) -> int:
        """Start the pack and wait until it prints its port (:meth:`spawn`, then :meth:`wait_port`).

        Args:
            deadline: ``time.monotonic()`` value by which the port must be printed.

        Returns:
            The TCP port on 127.0.0.1 the pack serves on.

        Raises:
            PolicyRunError: see :meth:`spawn` and :meth:`wait_port`.
        """
        self.spawn()
        return self.wait_port(deadline)

    def spawn(self) -> None:
        """Start ``python -u -m pulumi.policy <engine-address> .`` in the pack directory.

        Raises:
            PolicyRunError: the process cannot be started (or was started already).
        """
        if self._proc is not None:
            raise PolicyRunError(f"{self.label} was started already")
        command = [sys.executable, "-u", "-m", "pulumi.policy", ENGINE_ADDRESS, "."]
        try:
            self._proc = subprocess.Popen(
                command,
                cwd=self.pack_dir,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=os.name == "posix",
            )
        except OSError as err:
            raise PolicyRunError(f"{self.label} could not be started: {err}") from None
        assert self._proc.stdout is not None and self._proc.stderr is not None
        for target, stream in (
            (self._read_stdout, self._proc.stdout),
            (self._read_stderr, self._proc.stderr),
        ):
            thread = threading.Thread(
                target=target, args=(stream,), daemon=True, name=f"policy-pack-{target.__name__}"
            )
            thread.start()
            self._threads.append(thread)

    def wait_port(self, deadline: float) -> int:
        """Wait until the spawned pack prints its port.

        Args:
            deadline: ``time.monotonic()`` value by which the port must be printed.

        Returns:
            The TCP port on 127.0.0.1 the pack serves on.

        Raises:
            PolicyRunError: the pack exits before it prints a port (the message carries its stderr
                tail), prints something else, or misses the deadline.
        """
        try:
            line = self._port.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise PolicyRunError(
                f"{self.label} did not print its port in time", stderr_tail=self.stderr_tail()
            ) from None
        if line is None:
            code = self._wait_exit()
            tail = self.stderr_tail()
            raise PolicyRunError(
                f"{self.label} exited with code {code} before it served" + (f":\n{tail}" if tail else ""),
                stderr_tail=tail,
            )
        try:
            return int(line.strip())
        except ValueError:
            raise PolicyRunError(
                f"{self.label} printed {line.strip()!r} instead of its port", stderr_tail=self.stderr_tail()
            ) from None

    def _wait_exit(self) -> int | None:
        """Reap the exited child and let the stderr reader drain; returns the exit code."""
        assert self._proc is not None
        try:
            code = self._proc.wait(timeout=_STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            return None
        for thread in self._threads:
            thread.join(timeout=_STOP_GRACE_SECONDS)
        return code

    def _read_stdout(self, stream: IO[bytes]) -> None:
        first = True
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if first:
                first = False
                self._port.put(line)
                continue
            with self._lock:
                self._logs.append(line)
        if first:
            self._port.put(None)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            with self._lock:
                self._logs.append(line)
                self._stderr.append(line)

    def stop(self) -> int | None:
        """Stop the pack (no-op if it has exited), reap it, join the readers; returns the exit code."""
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                proc.wait(timeout=_STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL if os.name == "posix" else signal.SIGTERM)
                proc.wait()
        for thread in self._threads:
            thread.join(timeout=_STOP_GRACE_SECONDS)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        return proc.returncode

    def _signal(self, signum: int) -> None:
        assert self._proc is not None
        with contextlib.suppress(ProcessLookupError):
            if os.name == "posix":
                os.killpg(self._proc.pid, signum)
            elif signum == signal.SIGTERM:
                self._proc.terminate()
            else:
                self._proc.kill()

    def __enter__(self) -> PolicyPackProcess:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class StartedPolicyPack:
    """A policy pack started for one stack and booting (importing Pulumi, gRPC and its rules: most of a run's time)
    while the caller does other work — ``batchplane check`` runs the program meanwhile; :meth:`analyze` then sends
    the resources. Made by :func:`start_policy_pack`; use as a context manager (leaving it stops the pack).

    The pack reads the stack's name and config from its environment when it starts (as under the Pulumi CLI), so one
    started pack serves one stack.
    """

    def __init__(self, process: PolicyPackProcess, pack_version: str, run: Mapping[str, Any]) -> None:
        self.started = time.monotonic()
        self.process, self.pack_dir, self.pack_version = process, process.pack_dir, pack_version
        self.project: str = run["project"]
        self.stack: str = run["stack"]
        self.config: Mapping[str, Any] = run["config"] or {}
        self.organization: str | None = run["organization"]
        self.timeout: float = run["timeout"]

    def __enter__(self) -> StartedPolicyPack:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.process.stop()

    def analyze(
        self, resources: Sequence[ResourceLike], *, policy_config: Mapping[str, Any] | None = None
    ) -> PolicyReport:
        """Wait for the pack's port, configure it, analyze ``resources``, stop it; arguments and errors as for
        :func:`run_policy_pack`. The ``timeout`` counts from this call: the caller's work while the pack booted
        (a program run over thousands of resources) is not the pack's."""
        given = parse_policy_config(policy_config) if policy_config is not None else None
        items = [(r, wire_properties(r)) for r in resources]
        by_urn = {r.urn: r for r in resources}
        project, stack, organization, process = self.project, self.stack, self.organization, self.process
        timings: dict[str, float] = {}
        deadline = time.monotonic() + self.timeout
        with process:
            # Import gRPC and the protos (~0.25 s) while the pack boots.
            from batchplane.policyrun.analyzer import AnalyzerClient, to_violation

            port = process.wait_port(deadline)
            timings["start"] = time.monotonic() - self.started
            client = AnalyzerClient(f"127.0.0.1:{port}", deadline, process.label, process.stderr_tail)
            try:
                mark = time.monotonic()
                client.handshake(ENGINE_ADDRESS, str(self.pack_dir))
                client.configure_stack(
                    project=project,
                    stack=stack,
                    organization=organization or "",
                    config=stack_config_strings(project, self.config),
                )
                info, policies, initial = client.analyzer_info()
                version = self.pack_version or info.version
                if not info.supportsConfig:
                    if policy_config:
                        raise PolicyRunError(f"{process.label} ({info.name}) does not support config")
                else:
                    try:
                        reconciled = reconcile_policy_config(policies, given, initial=initial)
                    except PolicyConfigError as err:
                        raise PolicyConfigError(err.issues, pack=f"{info.name} {version}") from None
                    client.configure(reconciled)
                    policies = [
                        p.__class__(
                            name=p.name,
                            description=p.description,
                            enforcement_level=reconciled[p.name].enforcement_level or p.enforcement_level,
                            policy_type=p.policy_type,
                            display_name=p.display_name,
                            config_schema=p.config_schema,
                            config=dict(reconciled[p.name].properties or {}),
                        )
                        for p in policies
                    ]
                timings["configure"] = time.monotonic() - mark

                violations: list[Violation] = []
                mark = time.monotonic()
                for resource, properties in items:
                    for diagnostic in client.analyze(resource, properties, by_urn):
                        violations.append(to_violation(diagnostic, by_urn, default_urn=resource.urn))
                timings["analyze"] = time.monotonic() - mark

                mark = time.monotonic()
                for diagnostic in client.analyze_stack(items, by_urn):
                    violations.append(to_violation(diagnostic, by_urn))
                timings["analyze_stack"] = time.monotonic() - mark
            finally:
                client.close()
        timings["total"] = time.monotonic() - self.started
        return PolicyReport(
            policies=policies,
            violations=violations,
            pack=info.name,
            pack_version=version,
            logs=process.logs,
            timings=timings,
        )


def start_policy_pack(
    pack_dir: Path,
    *,
    project: str,
    stack: str,
    config: Mapping[str, Any] | None = None,
    timeout: float = 60,
    organization: str | None = None,
) -> StartedPolicyPack:
    """Start a Python policy pack for one stack and return at once; arguments as for :func:`run_policy_pack`.

    Raises:
        PolicyRunError: the pack is not a Python pack or cannot be started.
    """
    pack_dir = Path(pack_dir).resolve()
    pack_version = load_pack_version(pack_dir)
    env = pack_environment(project=project, stack=stack, config=config or {}, organization=organization)
    process = PolicyPackProcess(pack_dir, env)
    process.spawn()
    run = {
        "project": project,
        "stack": stack,
        "config": config,
        "organization": organization,
        "timeout": timeout,
    }
    return StartedPolicyPack(process, pack_version, run)


def run_policy_pack(
    pack_dir: Path,
    resources: Sequence[ResourceLike],
    *,
    project: str,
    stack: str,
    config: Mapping[str, Any] | None = None,
    policy_config: Mapping[str, Any] | None = None,
    timeout: float = 60,
    organization: str | None = None,
) -> PolicyReport:
    """Run a Python policy pack over recorded resources, as ``pulumi preview --policy-pack`` would.

    Args:
        pack_dir: the policy pack directory (``PulumiPolicy.yaml`` with ``runtime: python``).
        resources: the program's resources in registration order; each is sent to ``Analyze``,
            all together to ``AnalyzeStack``. Providers referenced by ``provider`` are attached
            when they are in the list.
        project: the Pulumi project name (``PULUMI_PROJECT``, ``pulumi.get_project()``).
        stack: the stack name (``PULUMI_STACK``, ``pulumi.get_stack()``).
        config: the stack config, ``{"<ns>:<key>" or "<key>": value}`` (un-namespaced keys get the
            project's namespace); default none.
        policy_config: the content of a ``--policy-pack-config`` file,
            ``{"all": "<level>", "<policy>": "<level>" | {"enforcementLevel": ..., <props>}}``;
            default none (each policy at its own level with its schema defaults).
        timeout: seconds for the whole run, start-up included (default 60).
        organization: ``PULUMI_ORGANIZATION``; default unset (``pulumi.get_organization()`` then
            answers ``"organization"``, as with a DIY backend).

    Returns:
        The pack's policies (effective levels and config) and every violation.

    Raises:
        PolicyConfigError: ``policy_config`` does not parse or breaks a policy's config schema.
        PolicyRunError: the pack is not a Python pack, does not start (with its stderr tail), a
            call fails (e.g. a policy raised) or the run exceeds ``timeout``; a resource input has
            no wire form. The pack process is always stopped before this returns or raises.
    """
    if policy_config is not None:
        parse_policy_config(policy_config)  # a config that does not parse starts no process
    for r in resources:
        wire_properties(r)  # nor does a resource input without a wire form
    with start_policy_pack(
        pack_dir, project=project, stack=stack, config=config, timeout=timeout, organization=organization
    ) as pack:
        return pack.analyze(resources, policy_config=policy_config)

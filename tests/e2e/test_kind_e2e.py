"""Opt-in end to end on a real kind cluster: ``pulumi up`` the ``kind`` stack, queue jobs, tear down.

Marker ``kind``; run with ``make e2e-kind`` (``pytest -m kind tests/e2e -rs``). Skipped, with the
reason, where ``docker`` (with a running engine), ``kind``, ``kubectl`` or the ``pulumi`` CLI are
missing. Steps (docs/onboarding.md):

1. create the kind cluster of ``tests/e2e/kind-config.yaml`` (pinned node image) with its own kubeconfig;
2. (no manual image step: the kind stack builds ``webhook/Dockerfile`` and ``kind load``s it itself, its default);
3. in a temporary copy of the project (so nothing in the work tree changes), point
   ``stacks/Pulumi.kind.yaml`` at that cluster, use a local file backend in a temporary directory
   (``PULUMI_BACKEND_URL=file://...``: what ``pulumi login --local`` does, without touching the user's
   login) with ``PULUMI_CONFIG_PASSPHRASE``, ``pulumi stack init kind`` and ``pulumi up --yes``;
4. wait for every operator Deployment to be Available and every ClusterQueue and LocalQueue Active;
5. submit a small RayJob and a PyTorchJob through team-a's LocalQueue and wait until Kueue admits
   both (their Workloads' ``Admitted`` condition);
6. submit a RayJob that can never fit and check ``kubectl apply`` fails with the quota webhook's
   message — the very message :class:`batchplane.webhook.decisions.Decider` gives offline;
7. delete the jobs, ``pulumi preview --expect-no-changes``, ``pulumi destroy --yes``;
8. always (finalizer): delete the kind cluster.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from batchplane.components.quota_webhook.policy import render_policy
from batchplane.stack import Stack, load_stack_file
from batchplane.webhook.decisions import Decider
from tests.conftest import REPO_ROOT, template_path
from tests.e2e.conftest import KIND_CONFIG, MANIFESTS, NEVER_FITS, SMALL_JOBS, missing_tools

pytestmark = pytest.mark.kind

STACK = "kind"
TENANT = "team-a"
UP_TIMEOUT = 1800  # seconds: image pulls of four operators on a fresh node
WAIT_TIMEOUT = 300


@dataclass(frozen=True)
class Cluster:
    """The running kind cluster and the environment every command of the test runs with."""

    name: str
    env: Mapping[str, str]
    project: Path


def run(
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: Path = REPO_ROOT,
    timeout: float = WAIT_TIMEOUT,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run a command; on failure (when ``check``) fail the test with its output."""
    print("$", " ".join(args), flush=True)
    done = subprocess.run(
        list(args), cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        pytest.fail(
            f"`{' '.join(args)}` exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
        )
    return done


def copy_project(into: Path, cluster_name: str) -> Path:
    """A copy of the Pulumi project (the program, the kind stack file, a link to .venv, whose installed
    ``batchplane`` package holds the components, and the webhook image's build context: ``webhook/``,
    ``batchplane/``, ``pyproject.toml``, ``README.md``) whose kind stack targets ``cluster_name``."""
    project = into / "project"
    (project / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py", "pyproject.toml", "README.md"):
        shutil.copy2(REPO_ROOT / name, project / name)
    for tree in ("webhook", "batchplane"):
        shutil.copytree(REPO_ROOT / tree, project / tree, ignore=shutil.ignore_patterns("__pycache__"))
    (project / ".venv").symlink_to(REPO_ROOT / ".venv", target_is_directory=True)
    doc = yaml.safe_load((template_path(STACK)).read_text(encoding="utf-8"))
    doc["config"]["batchplane:target"]["clusterName"] = cluster_name
    (project / "stacks" / f"Pulumi.{STACK}.yaml").write_text(
        yaml.safe_dump(doc, sort_keys=False), encoding="utf-8"
    )
    return project


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A kind cluster and a Pulumi project copy with a local backend;
    the cluster is deleted however the test ends."""
    reason = missing_tools()
    if reason is not None:
        pytest.skip(reason)
    tmp = tmp_path_factory.mktemp("kind-e2e")
    name = str(yaml.safe_load(KIND_CONFIG.read_text(encoding="utf-8"))["name"])
    (tmp / "state").mkdir()
    env = {
        **os.environ,
        "KUBECONFIG": str(tmp / "kubeconfig"),  # never touch the user's kubeconfig
        "PULUMI_BACKEND_URL": f"file://{tmp / 'state'}",
        "PULUMI_CONFIG_PASSPHRASE": "batchplane-e2e",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
    }
    run(
        [
            "kind",
            "create",
            "cluster",
            "--config",
            str(KIND_CONFIG),
            "--kubeconfig",
            env["KUBECONFIG"],
            "--wait",
            "180s",
        ],
        env,
        timeout=600,
    )
    try:
        yield Cluster(name=name, env=env, project=copy_project(tmp, name))
    finally:
        run(
            ["kind", "delete", "cluster", "--name", name, "--kubeconfig", env["KUBECONFIG"]],
            env,
            timeout=300,
            check=False,
        )


def wait_ready(c: Cluster, stack: Stack) -> None:
    ops = stack.config.operators
    assert ops is not None
    namespaces = [
        ops.cert_manager.namespace,
        ops.kuberay.namespace,
        ops.training.resolved_namespace(),
        ops.kueue.namespace,
        stack.config.webhook.namespace,
    ]
    for ns in namespaces:
        run(
            [
                "kubectl",
                "wait",
                "deployment",
                "--all",
                "-n",
                ns,
                "--for=condition=Available",
                f"--timeout={WAIT_TIMEOUT}s",
            ],
            c.env,
            timeout=WAIT_TIMEOUT + 30,
        )
    for cq in stack.kueue.cluster_queues:
        run(
            ["kubectl", "wait", f"clusterqueue/{cq.obj.name}", "--for=condition=Active", "--timeout=120s"],
            c.env,
            timeout=150,
        )
    for lq in stack.kueue.local_queues:
        run(
            [
                "kubectl",
                "wait",
                f"localqueue/{lq.obj.name}",
                "-n",
                lq.obj.namespace,
                "--for=condition=Active",
                "--timeout=120s",
            ],
            c.env,
            timeout=150,
        )


def workload_of(c: Cluster, kind: str, name: str) -> dict[str, Any] | None:
    listing = json.loads(run(["kubectl", "get", "workloads", "-n", TENANT, "-o", "json"], c.env).stdout)
    for item in listing["items"]:
        owners = item["metadata"].get("ownerReferences", [])
        if any(o.get("kind") == kind and o.get("name") == name for o in owners):
            return dict(item)
    return None


def wait_admitted(c: Cluster, kind: str, name: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    last: dict[str, Any] | None = None
    while time.monotonic() < deadline:
        last = workload_of(c, kind, name)
        conditions = (last or {}).get("status", {}).get("conditions", [])
        if any(cond["type"] == "Admitted" and cond["status"] == "True" for cond in conditions):
            return
        time.sleep(3)
    pytest.fail(
        f"{kind} {TENANT}/{name} not admitted by Kueue within {timeout}s; its Workload: {json.dumps(last, indent=2)}"
    )


def test_kind_stack_deploys_queues_jobs_refuses_never_fitting_ones_and_tears_down(cluster: Cluster) -> None:
    c = cluster
    stack = load_stack_file(c.project / "stacks" / f"Pulumi.{STACK}.yaml")
    assert stack.config.webhook.build is not None  # `pulumi up` builds the image and `kind load`s it

    run(
        ["pulumi", "stack", "init", STACK, "--secrets-provider", "passphrase", "--non-interactive"],
        c.env,
        cwd=c.project,
    )
    run(
        ["pulumi", "up", "-s", STACK, "--yes", "--skip-preview", "--non-interactive"],
        c.env,
        cwd=c.project,
        timeout=UP_TIMEOUT,
    )
    wait_ready(c, stack)

    for manifest in SMALL_JOBS:
        run(["kubectl", "apply", "-f", str(MANIFESTS / manifest)], c.env)
    for manifest in SMALL_JOBS:
        obj = yaml.safe_load((MANIFESTS / manifest).read_text(encoding="utf-8"))
        wait_admitted(c, obj["kind"], obj["metadata"]["name"])

    never = yaml.safe_load((MANIFESTS / NEVER_FITS).read_text(encoding="utf-8"))
    expected = Decider(render_policy(stack)).validate(never, TENANT)
    assert not expected.allowed
    refused = run(["kubectl", "apply", "-f", str(MANIFESTS / NEVER_FITS)], c.env, check=False)
    assert refused.returncode != 0, refused.stdout
    assert "denied the request" in refused.stderr and expected.message in refused.stderr, refused.stderr
    gone = run(["kubectl", "get", "rayjob", never["metadata"]["name"], "-n", TENANT], c.env, check=False)
    assert gone.returncode != 0

    for manifest in SMALL_JOBS:
        run(
            ["kubectl", "delete", "-f", str(MANIFESTS / manifest), "--wait=true", "--timeout=180s"],
            c.env,
            timeout=240,
        )
    run(
        ["pulumi", "preview", "-s", STACK, "--expect-no-changes", "--non-interactive"],
        c.env,
        cwd=c.project,
        timeout=600,
    )
    run(
        ["pulumi", "destroy", "-s", STACK, "--yes", "--skip-preview", "--non-interactive"],
        c.env,
        cwd=c.project,
        timeout=UP_TIMEOUT,
    )
    run(["pulumi", "stack", "rm", STACK, "--yes", "--non-interactive"], c.env, cwd=c.project)

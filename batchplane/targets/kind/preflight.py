"""kind's preflight half (:class:`KindPreflight`, :class:`~batchplane.targets.preflight.PlatformPreflight`): Docker,
the kind CLI, the cluster's node container and the images on its nodes.

kind runs each node as a Docker container named ``<cluster>-control-plane`` (kind ``pkg/cluster/internal/providers/
docker``, v0.30.0) from a ``kindest/node`` image; ``kind load docker-image`` copies an image into every node's
containerd, where ``crictl inspecti`` finds it. Everything here goes through the ``docker`` and ``kind`` executables
on ``PATH`` (there is no Docker engine API client in the dependencies), with a timeout.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any, ClassVar

from batchplane.preflight.commands import run
from batchplane.preflight.kube import KubeContext
from batchplane.preflight.report import Report
from batchplane.targets.kind.config import KindTarget
from batchplane.targets.kind.requirements import KindCluster
from batchplane.targets.preflight import PlatformPreflight, StackFacts

if TYPE_CHECKING:
    from batchplane.preflight.model import Environment, Requirements


def node_container(cluster: KindCluster) -> str:
    """The control-plane node's container name."""
    return f"{cluster.cluster_name}-control-plane"


def check_kind(cluster: KindCluster, report: Report) -> bool:
    """Docker, the engine, the kind CLI and the cluster's node. Returns True when the node runs (images on it can be
    inspected)."""
    from batchplane.preflight.docker import check_docker

    if not check_docker(cluster.path, "kind runs its nodes as Docker containers", report):
        return False
    if shutil.which("kind") is None:
        report.blocker(
            "kind",
            cluster.path,
            "the kind CLI is not on PATH: it creates the cluster"
            + (" and loads the webhook image into it" if cluster.loads_image else ""),
            "go install sigs.k8s.io/kind@v0.30.0 (or a release binary from github.com/kubernetes-sigs/kind)",
        )
    node = run(
        ["docker", "inspect", "--format", "{{.State.Running}} {{.Config.Image}}", node_container(cluster)]
    )
    if node.returncode != 0:
        report.blocker(
            "kind",
            cluster.path,
            f'kind cluster "{cluster.cluster_name}" does not exist (no node container {node_container(cluster)})',
            f"kind create cluster --name {cluster.cluster_name}",
        )
        return False
    running, _, image = node.output.partition(" ")
    if running != "true":
        report.blocker(
            "kind",
            cluster.path,
            f"the node {node_container(cluster)} of kind cluster {cluster.cluster_name} is stopped (image {image})",
            f"docker start {node_container(cluster)}",
        )
        return False
    report.ran("kind")
    return True


def node_has_image(cluster: KindCluster, image: str) -> bool:
    """True when the control-plane node's containerd has ``image`` (``kind load docker-image`` put it there)."""
    found = run(["docker", "exec", node_container(cluster), "crictl", "inspecti", "-q", image])
    return found.returncode == 0


class KindPreflight(PlatformPreflight):
    """kind's preflight half: the cluster and the image ``webhook.build: {registry: kind}`` loads (requirements);
    Docker, the kind CLI and the node container (access); images loaded on the node."""

    checks_docker: ClassVar[bool] = True

    def __init__(self) -> None:
        self._running = False

    def add_requirements(self, facts: StackFacts, targets: list[tuple[Any, str]], req: Requirements) -> None:
        target, path = targets[0]
        assert isinstance(target, KindTarget)
        build = facts.webhook.build
        loads = facts.webhook.resolved_image if build is not None and build.registry == "kind" else None
        req.kind = KindCluster(target.cluster_name, loads, path)
        req.contexts.append(
            KubeContext(
                target.kube_context(),
                None,
                f"{path}.context",
                f"kind create cluster --name {target.cluster_name}",
            )
        )

    def check_access(self, req: Requirements, report: Report, env: Environment) -> bool:
        self._running = req.kind is not None and check_kind(req.kind, report)
        return self._running

    def image_on_nodes(self, req: Requirements, reference: str) -> bool:
        return req.kind is not None and self._running and node_has_image(req.kind, reference)

    def image_fix(self, req: Requirements, reference: str) -> str:
        if req.kind is None:
            return ""
        return (
            f"; or build and load it: docker build -f webhook/Dockerfile -t {reference} . && kind load "
            f"docker-image {reference} --name {req.kind.cluster_name}"
        )

"""Preflight for kind stacks: Docker, the kind CLI, the cluster's node container and the images on its nodes.

kind runs each node as a Docker container named ``<cluster>-control-plane`` (kind ``pkg/cluster/internal/providers/
docker``, v0.30.0) from a ``kindest/node`` image; ``kind load docker-image`` copies an image into every node's
containerd, where ``crictl inspecti`` finds it. Everything here goes through the ``docker`` and ``kind`` executables
on ``PATH`` (there is no Docker engine API client in the dependencies), with a timeout.
"""

from __future__ import annotations

import shutil

from batchplane.preflight.commands import run
from batchplane.preflight.report import Report
from batchplane.preflight.requirements import KindCluster


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

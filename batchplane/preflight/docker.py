"""Docker where ``pulumi up`` runs: the webhook image build (pulumi-docker-build's ``Image``, BuildKit through the
local Docker engine) and kind's node containers need an engine that answers.

Checked through the ``docker`` executable on ``PATH`` (``docker version --format '{{.Server.Version}}'`` asks the
engine: the client alone prints its own version and fails on the server part), with a timeout, as
:mod:`batchplane.targets.kind.preflight` runs its commands.
"""

from __future__ import annotations

from batchplane.preflight.commands import run
from batchplane.preflight.report import Report

__all__ = ["check_docker"]


def check_docker(path: str, purpose: str, report: Report) -> bool:
    """Docker installed and its engine answering, else a blocker at ``path``.

    Args:
        path: the config key that makes Docker needed (``batchplane:webhook.build``, a kind target).
        purpose: what needs it, for the message (``pulumi up builds the webhook image``).
        report: where the finding goes.

    Returns:
        True when the engine answered (check ``docker`` ran).
    """
    docker = run(["docker", "version", "--format", "{{.Server.Version}}"])
    if docker.returncode == 127:
        report.blocker(
            "docker",
            path,
            f"docker is not installed (not on PATH): {purpose}",
            "install Docker Engine (docs.docker.com/engine/install) or Docker Desktop where pulumi up runs",
        )
        return False
    if docker.returncode != 0:
        last = docker.output.splitlines()[-1] if docker.output else "no output"
        report.blocker(
            "docker",
            path,
            f"the Docker engine does not answer ({last}): {purpose}",
            "start it (sudo systemctl start docker) and check that your user may use it (docker version)",
        )
        return False
    report.ran("docker")
    return True

"""Helpers for the preflight tests: small stacks built in code, recorded answers, a fake ``docker``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from batchplane.offline import read_stack_file
from batchplane.stack import Stack, load_stack
from tests.conftest import template_path
from tests.support.stacks import template as template  # the shared loader, re-exported for this folder

PROJECT = "bp-demo-123456"
"""The project every GCP recording answers for."""


def gke_stack(pools: list[dict[str, Any]], **target: Any) -> Stack:
    """A GKE stack (``us-central1`` unless overridden) with these GPU pools and one CPU ClusterQueue."""
    config: dict[str, Any] = {
        "batchplane:target": {"kind": "gke", "region": "us-central1", "minMasterVersion": "1.33", **target},
        "batchplane:kueue": {
            "resourceFlavors": [{"name": "default-flavor"}],
            "clusterQueues": [
                {
                    "name": "cq",
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu"],
                            "flavors": [
                                {"name": "default-flavor", "resources": [{"name": "cpu", "nominalQuota": 2}]}
                            ],
                        }
                    ],
                }
            ],
        },
    }
    if "gpuPools" not in target:
        config["batchplane:target"]["gpuPools"] = pools
    return load_stack(config, "test")


def template_with(name: str, **webhook: Any) -> Stack:
    """A stack template from ``templates/`` with ``batchplane:webhook`` set to ``webhook``."""
    config = read_stack_file(template_path(name))
    return load_stack({**config, "batchplane:webhook": webhook}, name)


def pool(name: str, provisioning: str, machine_type: str, zones: list[str], **more: Any) -> dict[str, Any]:
    """One GPU pool's config."""
    return {
        "name": name,
        "provisioning": provisioning,
        "machineType": machine_type,
        "nodeLocations": zones,
        **more,
    }


def fake_executable(directory: Path, name: str, script: str) -> Path:
    """Write an executable shell script ``name`` into ``directory`` (put on ``PATH`` by the test)."""
    path = directory / name
    path.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    path.chmod(0o755)
    return path


FAKE_DOCKER = """
case "$1" in
  version) echo 28.5.1 ;;
  *) echo "fake docker: $*" >&2; exit 1 ;;
esac
"""


@pytest.fixture(autouse=True)
def docker_engine(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``docker`` whose engine answers, first on ``PATH`` (the machine running the tests has none): preflight asks
    it for every stack that builds the webhook image. Tests about Docker itself put their own ``PATH`` in place."""
    bin_dir = tmp_path_factory.mktemp("docker-bin")
    fake_executable(bin_dir, "docker", FAKE_DOCKER)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return bin_dir

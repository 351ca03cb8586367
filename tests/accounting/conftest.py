"""Builders for pod templates and job objects used by the accounting tests."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

SAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "samples"
SAMPLE_DIRS = ("kuberay", "training-operator", "appwrapper")

Gi = 2**30
Mi = 2**20


def load_documents(path: Path) -> list[Any]:
    """Every non-empty YAML document of ``path``."""
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


def sample(relative: str, index: int = 0) -> dict[str, Any]:
    """Document ``index`` of ``shared/samples/<relative>``."""
    document = load_documents(SAMPLES / relative)[index]
    assert isinstance(document, dict)
    return document


def container(
    requests: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    *,
    name: str = "c",
    sidecar: bool = False,
) -> dict[str, Any]:
    """A container; ``sidecar=True`` makes it a restartable init container (``restartPolicy: Always``)."""
    result: dict[str, Any] = {"name": name, "image": "busybox"}
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    if resources:
        result["resources"] = resources
    if sidecar:
        result["restartPolicy"] = "Always"
    return result


def pod_template(
    *containers: dict[str, Any], init: tuple[dict[str, Any], ...] = (), **spec: Any
) -> dict[str, Any]:
    """A pod template with ``containers``, init containers ``init`` and extra ``spec`` fields."""
    pod_spec: dict[str, Any] = {"containers": list(containers), **spec}
    if init:
        pod_spec["initContainers"] = list(init)
    return {"spec": pod_spec}


def batch_job(template: dict[str, Any], name: str = "job", **spec: Any) -> dict[str, Any]:
    """A batch/v1 Job running ``template``."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": {"template": template, **spec},
    }


def cores(text: str) -> Decimal:
    """``"1500m"`` → ``Decimal("1.5")`` (test shorthand, not a parser under test)."""
    return Decimal(text[:-1]) / 1000 if text.endswith("m") else Decimal(text)

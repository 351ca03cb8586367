"""Offline checks of what the kind end-to-end test submits, so its expectations hold before any cluster:
the manifests are valid against the real CRDs, Kueue's accounting of them fits (or never fits) the
kind stack's queue, and the quota webhook allows the small jobs and refuses the never-fitting one."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.components.quota_webhook.policy import render_policy
from batchplane.quantity import parse_quantity
from batchplane.stack import load_stack_file
from batchplane.webhook.decisions import Decider
from tests.conftest import template_path
from tests.e2e.conftest import KIND_CONFIG, MANIFESTS, NEVER_FITS, SMALL_JOBS, missing_tools
from tests.support.crdcheck import CrdCatalog

ALL = (*SMALL_JOBS, NEVER_FITS)


def manifest(name: str) -> dict[str, Any]:
    doc = yaml.safe_load((MANIFESTS / name).read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


@pytest.fixture(scope="module")
def decider() -> Decider:
    return Decider(render_policy(load_stack_file(template_path("kind"))))


@pytest.mark.parametrize("name", ALL, ids=ALL)
def test_e2e_manifest_is_valid_against_its_crd(catalog: CrdCatalog, name: str) -> None:
    assert catalog.validate(manifest(name)) == []


@pytest.mark.parametrize(
    ("name", "exp_total"),
    [
        (
            "rayjob-small.yaml",
            {"cpu": "1500m", "memory": "2248Mi"},
        ),  # head + worker + Kueue's submitter PodSet
        ("pytorchjob-small.yaml", {"cpu": "500m", "memory": "512Mi"}),
        ("rayjob-never-fits.yaml", {"cpu": "9", "memory": "5320Mi"}),
    ],
    ids=["rayjob-small", "pytorchjob-small", "rayjob-never-fits"],
)
def test_batchplane_requests_accounts_each_e2e_manifest(name: str, exp_total: dict[str, str]) -> None:
    result = CliRunner().invoke(app, ["requests", str(MANIFESTS / name)])
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout)["total"] == exp_total


def test_small_jobs_fit_the_kind_queue_together_so_kueue_admits_both() -> None:
    stack = load_stack_file(template_path("kind"))
    (cq,) = stack.kueue.cluster_queues
    nominal = {
        r.name: parse_quantity(r.nominal_quota) for r in cq.obj.resource_groups[0].flavors[0].resources
    }
    totals: dict[str, Decimal] = {}
    for name in SMALL_JOBS:
        report = json.loads(CliRunner().invoke(app, ["requests", str(MANIFESTS / name)]).stdout)
        for resource, amount in report["total"].items():
            totals[resource] = totals.get(resource, Decimal(0)) + parse_quantity(amount)
    assert nominal == {"cpu": Decimal(4), "memory": Decimal(8 * 2**30)}
    assert all(totals[r] <= nominal[r] for r in nominal), totals


@pytest.mark.parametrize("name", SMALL_JOBS, ids=SMALL_JOBS)
def test_webhook_allows_the_small_jobs(decider: Decider, name: str) -> None:
    decision = decider.validate(manifest(name), "team-a")
    assert (decision.allowed, decision.reason, decision.warnings) == (True, "ok", ())


def test_webhook_refuses_the_never_fitting_rayjob_with_the_numbers(decider: Decider) -> None:
    decision = decider.validate(manifest(NEVER_FITS), "team-a")
    assert (decision.allowed, decision.reason) == (False, "never-admissible")
    assert decision.details == (
        'RayJob "team-a/rayjob-never-fits": can never be admitted by ClusterQueue "cluster-queue" '
        '(LocalQueue "default"): PodSet "big-group" needs cpu 8 (2 pods × 4), memory 4Gi (2 pods × 2Gi), '
        'but flavor "default-flavor" offers at most cpu 4 (nominal quota, no cohort)'
    )


def test_kind_config_pins_the_node_image_by_digest() -> None:
    config = yaml.safe_load(KIND_CONFIG.read_text(encoding="utf-8"))
    (node,) = config["nodes"]
    assert re.fullmatch(r"kindest/node:v1\.\d+\.\d+@sha256:[0-9a-f]{64}", node["image"])
    assert config["name"] == "batchplane-e2e"


def test_e2e_skip_reason_names_the_missing_tools(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert missing_tools() == (
        "kind e2e needs docker, kind, kubectl, pulumi on PATH (docker with a running engine, kind, kubectl, "
        "the pulumi CLI); see docs/onboarding.md, `make e2e-kind`"
    )


def test_e2e_skip_reason_names_a_docker_without_engine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for tool in ("kind", "kubectl", "pulumi"):
        (tmp_path / tool).write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        (tmp_path / tool).chmod(0o755)
    (tmp_path / "docker").write_text(
        "#!/bin/sh\necho 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock.' >&2\nexit 1\n",
        encoding="utf-8",
    )
    (tmp_path / "docker").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert missing_tools() == (
        "kind e2e needs a running Docker engine: `docker info` failed: "
        "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."
    )

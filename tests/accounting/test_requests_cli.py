"""``batchplane requests``: JSON shape, skipped documents, ``--with``, options and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from tests.accounting.conftest import SAMPLES

RUNNER = CliRunner()

LIMIT_RANGE_AND_RUNTIME = """\
apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
  - type: Container
    defaultRequest: {cpu: 250m, memory: 64Mi}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata}
handler: kata
overhead: {podFixed: {cpu: 100m}}
"""

BARE_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: bare}
spec:
  parallelism: 2
  template:
    spec:
      runtimeClassName: kata
      containers: [{name: c, image: busybox}]
"""


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = RUNNER.invoke(app, ["requests", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_single_document_prints_one_report_object() -> None:
    code, out, err = invoke(SAMPLES / "appwrapper" / "wrapped-gpu-job.yaml")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "kind": "AppWrapper",
        "name": "sample-gpu-job",
        "podSets": [
            {
                "name": "sample-gpu-job-0",
                "count": 1,
                "perPod": {"cpu": "1", "nvidia.com/gpu": "4"},
                "requests": {"cpu": "1", "nvidia.com/gpu": "4"},
            }
        ],
        "total": {"cpu": "1", "nvidia.com/gpu": "4"},
    }


def test_multi_document_manifest_prints_a_list_and_skips_configmaps() -> None:
    code, out, err = invoke(SAMPLES / "kuberay" / "ray-cluster.tls.yaml")  # RayCluster, Secret, ConfigMap
    assert (code, err) == (0, "")
    reports = json.loads(out)
    assert [(r["kind"], r["name"]) for r in reports] == [("RayCluster", "raycluster-tls")]
    assert reports[0]["total"] == {"cpu": "2", "memory": "3Gi"}


def test_with_objects_apply_limit_range_defaults_and_overhead(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(BARE_JOB)
    (tmp_path / "cluster.yaml").write_text(LIMIT_RANGE_AND_RUNTIME)
    code, out, _ = invoke(tmp_path / "job.yaml", "--with", tmp_path / "cluster.yaml")
    assert code == 0
    # per pod: LimitRange 250m/64Mi + RuntimeClass overhead 100m; two pods.
    assert json.loads(out)["podSets"][0] == {
        "name": "main",
        "count": 2,
        "perPod": {"cpu": "350m", "memory": "64Mi"},
        "requests": {"cpu": "700m", "memory": "128Mi"},
    }


def test_resource_options_file_applies_transformations(tmp_path: Path) -> None:
    (tmp_path / "options.yaml").write_text(
        "resources:\n  transformations:\n  - input: nvidia.com/gpu\n    strategy: Replace\n"
        "    outputs: {example.com/credits: '100'}\n"
    )
    code, out, _ = invoke(
        SAMPLES / "appwrapper" / "wrapped-gpu-job.yaml", "--resource-options", tmp_path / "options.yaml"
    )
    assert code == 0
    assert json.loads(out)["total"] == {"cpu": "1", "example.com/credits": "400"}


def test_unaccountable_document_exits_1_and_names_document_kind_and_field(tmp_path: Path) -> None:
    (tmp_path / "jobs.yaml").write_text(
        BARE_JOB
        + "---\napiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: broken}\nspec: {entrypoint: x}\n"
    )
    code, out, err = invoke(tmp_path / "jobs.yaml")
    assert code == 1
    assert [r["name"] for r in json.loads(out)] == ["bare"]
    assert err == (
        'batchplane: document 2: RayJob "broken": spec.rayClusterSpec: is required '
        "(Kueue rejects a RayJob without it)\n"
    )


USAGE_CASES = [
    (
        "missing-manifest",
        ["missing.yaml"],
        "batchplane: cannot read {tmp}/missing.yaml: No such file or directory\n",
    ),
    (
        "not-yaml",
        ["bad.yaml"],
        "batchplane: {tmp}/bad.yaml is not valid YAML (line 2, column 1): expected ',' or ']', but got '<stream end>'\n",
    ),
    (
        "with-wrong-kind",
        ["job.yaml", "--with", "job.yaml"],
        "batchplane: --with {tmp}/job.yaml: document 1 is Job; expected one of LimitRange, RuntimeClass, "
        "TrainingRuntime, ClusterTrainingRuntime\n",
    ),
    (
        "bad-resource-options",
        ["job.yaml", "--resource-options", "options.yaml"],
        'batchplane: --resource-options {tmp}/options.yaml: Configuration "resources": '
        "transformations[0].strategy: must be Retain or Replace, not 'Keep'\n",
    ),
]


@pytest.mark.parametrize(
    ("args", "exp_stderr"), [c[1:] for c in USAGE_CASES], ids=[c[0] for c in USAGE_CASES]
)
def test_usage_and_io_errors_exit_2(tmp_path: Path, args: list[str], exp_stderr: str) -> None:
    (tmp_path / "job.yaml").write_text(BARE_JOB)
    (tmp_path / "bad.yaml").write_text("kind: [unclosed\n")
    (tmp_path / "options.yaml").write_text("transformations: [{input: a, strategy: Keep}]\n")
    code, out, err = invoke(*(tmp_path / a if a.endswith(".yaml") else a for a in args))
    assert (code, out) == (2, "")
    assert err == exp_stderr.format(tmp=tmp_path)

"""``batchplane check`` end to end: the real program under the offline engine, the real pack started
as the Pulumi CLI starts it (``python -m pulumi.policy``, gRPC), exit codes and output formats.

Every shipped template must pass (exit 0); ``fixtures/Pulumi.bad-prod.yaml`` passes ``batchplane
validate`` but breaks policies on purpose and must fail with exactly the violations pinned here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES, template_path

pytestmark = pytest.mark.slow

BAD = Path(__file__).resolve().parent / "fixtures" / "Pulumi.bad-prod.yaml"

BAD_VIOLATIONS = [
    (
        "mandatory",
        "gke-production-private-nodes",
        "gke-cluster",
        "privateClusterConfig.enablePrivateNodes is not true on a production stack",
    ),
    ("mandatory", "gke-workload-identity", "gke-cluster", "workloadIdentityConfig.workloadPool is not set"),
    (
        "mandatory",
        "gke-gpu-pool-scales-from-zero",
        "gke-l4",
        "GPU pool keeps at least 1 node(s) running; the minimum may be at most 0",
    ),
    (
        "mandatory",
        "kueue-finite-quotas",
        "kueue-clusterqueue-research",
        'flavor "default-flavor" cpu nominalQuota 10000 is an "infinite" quota (≥ 10000) on a production stack',
    ),
    (
        "mandatory",
        "kueue-finite-quotas",
        "kueue-clusterqueue-research",
        'flavor "default-flavor" memory nominalQuota 10000Gi is an "infinite" quota (≥ 10000Gi) on a production stack',
    ),
    (
        "advisory",
        "kueue-cohort-borrowing",
        "kueue-clusterqueue-research",
        'ClusterQueue "research" flavor "l4" nvidia.com/gpu: borrowingLimit 4 exceeds what the rest of cohort "ml" '
        "can lend (2)",
    ),
    (
        "mandatory",
        "kueue-dws-multi-podset",
        "kueue-clusterqueue-research",
        'ClusterQueue "research" uses AdmissionCheck "bare-dws" (queued-provisioning.gke.io) whose '
        'ProvisioningRequestConfig "bare-dws" has neither podSetMergePolicy nor managedResources: GKE provisions one '
        "PodSet per request, so multi-PodSet jobs (RayJob head + workers, PyTorchJob master + workers) are never admitted",
    ),
    (
        "mandatory",
        "cert-manager-present",
        "quota-webhook-issuer",
        'Issuer "batchplane-quota-webhook-selfsigned" is a cert-manager object but the stack installs no cert-manager',
    ),
    (
        "mandatory",
        "cert-manager-present",
        "quota-webhook-cert",
        'Certificate "batchplane-quota-webhook-serving-cert" is a cert-manager object but the stack installs no '
        "cert-manager",
    ),
    (
        "mandatory",
        "cert-manager-present",
        "quota-webhook-validating",
        'ValidatingWebhookConfiguration "batchplane-quota-webhook" gets its CA bundle from cert-manager\'s CA injector '
        "but the stack installs no cert-manager",
    ),
    (
        "mandatory",
        "cert-manager-present",
        "quota-webhook-mutating",
        'MutatingWebhookConfiguration "batchplane-quota-webhook" gets its CA bundle from cert-manager\'s CA injector '
        "but the stack installs no cert-manager",
    ),
    (
        "mandatory",
        "webhook-high-availability",
        "quota-webhook-deployment",
        'Deployment "batchplane-quota-webhook" serves a webhook with 1 replica(s); at least 2 required',
    ),
]


def run_check(*args: str, env: dict[str, str] | None = None) -> Any:
    """Invoke ``batchplane check`` in-process from the repository root (no GitHub environment)."""
    environment = {"GITHUB_ACTIONS": ""}
    environment.update(env or {})
    return CliRunner().invoke(app, ["check", "--project-dir", str(REPO_ROOT), *args], env=environment)


def violations(report_json: str) -> list[tuple[str, str, str | None, str]]:
    report = json.loads(report_json)
    return [
        (v["enforcement_level"], v["policy"], v["resource_name"], v["message"].split("\n", 1)[1])
        for v in report["violations"]
    ]


@pytest.fixture(scope="module")
def bad_report() -> Any:
    return run_check("--config", str(BAD), "--json")


@pytest.mark.parametrize("stack", TEMPLATE_NAMES, ids=TEMPLATE_NAMES)
def test_every_shipped_template_passes_the_policy_pack(stack: str) -> None:
    result = run_check("--stack", stack)
    assert result.exit_code == 0, result.output + result.stderr
    assert (
        f"stack {stack}: 0 violation(s), 0 mandatory; 29 policies of pack batchplane 0.1.0" in result.stdout
    )


def test_bad_fixture_fails_with_the_pinned_violations(bad_report: Any) -> None:
    assert bad_report.exit_code == 1, bad_report.stderr
    assert violations(bad_report.stdout) == BAD_VIOLATIONS


def test_bad_fixture_passes_config_validation() -> None:
    result = CliRunner().invoke(app, ["validate", "--config", str(BAD)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "stack bad-prod: valid (2 ClusterQueues, 2 LocalQueues, 3 ResourceFlavors, 1 AdmissionChecks)\n"
    )


def test_json_report_lists_every_policy_with_its_effective_level(bad_report: Any) -> None:
    report = json.loads(bad_report.stdout)
    assert (report["pack"], report["packVersion"]) == ("batchplane", "0.1.0")
    levels = {p["name"]: p["enforcement_level"] for p in report["policies"]}
    assert len(levels) == 29
    assert levels["kueue-cohort-borrowing"] == "advisory"
    assert levels["gke-dws-pool-rules"] == "mandatory"


def test_plain_output_prints_level_policy_resource_and_message() -> None:
    result = run_check("--config", str(BAD))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "[mandatory] gke-production-private-nodes (gcp:container/cluster:Cluster: gke-cluster): "
        "privateClusterConfig.enablePrivateNodes is not true on a production stack"
    )
    assert len(lines) == len(BAD_VIOLATIONS) + 1
    assert lines[-1].startswith(
        "stack bad-prod: 12 violation(s), 11 mandatory; 29 policies of pack batchplane 0.1.0 "
    )


def test_github_annotations_are_printed_on_github_actions() -> None:
    result = run_check("--config", str(BAD), env={"GITHUB_ACTIONS": "true"})
    assert result.exit_code == 1
    notes = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert len(notes) == len(BAD_VIOLATIONS)
    assert notes[0] == (
        "::error file=tests/policies/fixtures/Pulumi.bad-prod.yaml,title=gke-production-private-nodes::"
        "gcp:container/cluster:Cluster: gke-cluster: privateClusterConfig.enablePrivateNodes is not true on a "
        "production stack"
    )
    # a violation on a resource declared from a config key sits on that key's line (the "research" ClusterQueue)
    assert notes[5].startswith(
        "::warning file=tests/policies/fixtures/Pulumi.bad-prod.yaml,line=37,col=9,title=kueue-cohort-borrowing::"
    )


def test_policy_config_can_lower_every_level_to_advisory(tmp_path: Path) -> None:
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"all": "advisory"}))
    result = run_check("--config", str(BAD), "--policy-config", str(config), "--json")
    assert result.exit_code == 0, result.stderr
    assert {v[0] for v in violations(result.stdout)} == {"advisory"}


def test_policy_config_can_set_a_threshold(tmp_path: Path) -> None:
    config = tmp_path / "policy.json"
    config.write_text(
        json.dumps({"gke-gpu-pool-scales-from-zero": {"maxMinNodes": 1}, "kueue-finite-quotas": "disabled"})
    )
    result = run_check("--config", str(BAD), "--policy-config", str(config), "--json")
    policies = {v[1] for v in violations(result.stdout)}
    assert "gke-gpu-pool-scales-from-zero" not in policies
    assert "kueue-finite-quotas" not in policies
    assert "gke-workload-identity" in policies


def test_invalid_policy_config_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"all": "strict"}))
    result = run_check("--stack", "kind", "--policy-config", str(config))
    assert result.exit_code == 2
    assert result.stderr == (
        "batchplane: invalid policy config:\n"
        '  parsing enforcement level for "all": "strict" is not a valid enforcement level\n'
    )


def test_invalid_stack_config_prints_its_issues_and_exits_1(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.broken.yaml"
    stack.write_text("config:\n  batchplane:target: {kind: kind}\n  batchplane:colour: blue\n")
    result = run_check("--config", str(stack))
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "batchplane:colour: unknown key",
        "warning: batchplane:kueue: the stack declares no ClusterQueue and no LocalQueue: nothing will be "
        "admitted (declare kueue.clusterQueues/localQueues or teams)",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--stack", "kind", "--config", "x.yaml"],
            "batchplane: give exactly one of --stack NAME or --config PATH\n",
        ),
        ([], "batchplane: give exactly one of --stack NAME or --config PATH\n"),
        (
            ["--config", "/nonexistent/Pulumi.x.yaml"],
            "batchplane: cannot read /nonexistent/Pulumi.x.yaml: No such file or directory\n",
        ),
    ],
    ids=["both", "neither", "unreadable"],
)
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = run_check(*args)
    assert result.exit_code == 2
    assert result.stderr == message


def test_a_stack_config_over_the_kernels_128_kib_argument_limit_passes_through_the_policy_pack(
    tmp_path: Path,
) -> None:
    """Issue #11 item 8: 2,000 LocalQueues failed with E2BIG, a config over Linux's 128 KiB limit on one
    environment string (MAX_ARG_STRLEN). 750 LocalQueues with 63-character names (DNS labels at their maximum) make a
    config as large with 1,500 resources instead of 4,000 (the program's run is most of this test's time)."""
    from batchplane.yamlfile import read_yaml_file

    doc = read_yaml_file(template_path("kind"))
    doc["config"]["batchplane:kueue"]["localQueues"] = [
        {
            "name": f"queue-{i:04d}".ljust(63, "q"),
            "namespace": f"team-{i:04d}".ljust(63, "t"),
            "clusterQueue": "cluster-queue",
        }
        for i in range(750)
    ]
    config = tmp_path / "Pulumi.big.yaml"
    config.write_text(json.dumps(doc), encoding="utf-8")  # JSON is YAML
    assert config.stat().st_size > 128 * 1024
    result = run_check("--config", str(config))
    assert result.exit_code == 0, result.output + result.stderr
    assert "stack big: 0 violation(s), 0 mandatory" in result.stdout


def test_the_base_preview_joins_the_replacement_policies_config_unless_they_set_a_baseline(
    tmp_path: Path,
) -> None:
    from batchplane.cli.check import RELEASE_POLICY, REPLACEMENT_POLICY, with_baseline

    base = tmp_path / "base-preview.json"
    both = {RELEASE_POLICY: {"baseline": str(base)}}
    assert with_baseline(None, base) == {REPLACEMENT_POLICY: {"baseline": str(base)}, **both}
    given = {REPLACEMENT_POLICY: {"allowReplace": ["l4"]}, "budget-gpu-cost": "advisory"}
    assert with_baseline(given, base) == {
        REPLACEMENT_POLICY: {"allowReplace": ["l4"], "baseline": str(base)},
        "budget-gpu-cost": "advisory",
        **both,
    }
    assert with_baseline({REPLACEMENT_POLICY: "advisory"}, base) == {
        REPLACEMENT_POLICY: {"enforcementLevel": "advisory", "baseline": str(base)},
        **both,
    }
    own = {REPLACEMENT_POLICY: {"baseline": "mine.json"}, RELEASE_POLICY: {"baseline": "mine.json"}}
    assert with_baseline(own, base) == own
    assert given[REPLACEMENT_POLICY] == {"allowReplace": ["l4"]}  # the caller's config is not changed


def test_a_base_ref_without_the_stack_file_is_a_new_stack_with_no_baseline(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(tmp_path),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "empty",
        ],
        check=True,
    )
    stack = tmp_path / "Pulumi.kind.yaml"
    shutil.copy(template_path("kind"), stack)
    result = run_check("--config", str(stack), "--base", "HEAD", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    replacement = next(p for p in report["policies"] if p["name"] == "production-node-pool-replacement")
    assert "baseline" not in (replacement.get("config") or {})


def test_a_base_that_is_not_a_commit_is_a_usage_error() -> None:
    result = run_check("--stack", "kind", "--base", "no-such-ref-anywhere")
    assert result.exit_code == 2
    assert "--base no-such-ref-anywhere: not a commit" in result.output

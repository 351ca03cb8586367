"""``batchplane preview`` and ``batchplane render`` on the fixture programs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from batchplane.cli import app
from tests.offline.conftest import FIXTURES

PLATFORM = str(FIXTURES / "platform")
# Program log lines on stderr: severity-prefixed once, even when the message already starts with it.
WARNING = "warning: fixture warning: queues are not production-sized\ninfo: already prefixed\n"
NOT_RENDERED = (
    "batchplane: not rendered: kubernetes:helm.sh/v4:Chart kueue (chart oci://registry.k8s.io/kueue/charts/kueue, "
    "version 0.19.2): a Helm chart, expanded by the provider at deploy time\n"
)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_preview_prints_the_resource_tree_and_a_summary(runner: CliRunner) -> None:
    result = runner.invoke(app, ["preview", "--project-dir", PLATFORM, "--stack", "dev"])
    assert (result.exit_code, result.stderr) == (0, WARNING)
    assert result.stdout.splitlines() == [
        "pulumi:pulumi:Stack platform-fixture-dev",
        "├── pulumi:providers:kubernetes k8s  namespace=default",
        "├── kubernetes:core/v1:Namespace team-ns  Namespace team",
        "├── fixture:index:Queues queues",
        "│   ├── kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor queues-flavor  ResourceFlavor gpu",
        "│   └── kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue queues-cq  ClusterQueue team",
        "├── kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue team-lq  LocalQueue team/team",
        "├── kubernetes:apps/v1:Deployment web  Deployment team/web",
        "├── kubernetes:core/v1:Secret token  Secret team/token",
        "├── kubernetes:core/v1:ConfigMap ns-phase  ConfigMap team/ns-phase",
        "└── kubernetes:helm.sh/v4:Chart kueue  oci://registry.k8s.io/kueue/charts/kueue@0.19.2  namespace=kueue-system",
        "10 resources: 1 fixture:index:Queues, 1 kubernetes:apps/v1:Deployment, 1 kubernetes:core/v1:ConfigMap, "
        "1 kubernetes:core/v1:Namespace, 1 kubernetes:core/v1:Secret, 1 kubernetes:helm.sh/v4:Chart, "
        "1 kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue, 1 kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue, "
        "1 kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor, 1 pulumi:providers:kubernetes "
        "(1 with inputs unknown until deployment)",
    ]


def test_preview_shows_node_pool_machine_accelerators_and_autoscaling(runner: CliRunner) -> None:
    result = runner.invoke(app, ["preview", "--project-dir", str(FIXTURES / "gke"), "--stack", "dev"])
    assert result.exit_code == 0
    pool_line = next(line for line in result.stdout.splitlines() if "nodePool" in line)
    assert pool_line == (
        "├── gcp:container/nodePool:NodePool gpu  autoscaling=0..4  locationPolicy=ANY  "
        "accelerators=1×nvidia-l4  machineType=g2-standard-8  queuedProvisioning.enabled=true"
    )


def test_preview_json_prints_resources_and_outputs_with_secrets_masked(runner: CliRunner) -> None:
    result = runner.invoke(app, ["preview", "--project-dir", PLATFORM, "--stack", "dev", "--json"])
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert sorted(document) == ["outputs", "resources"]
    assert document["outputs"] == {"gpus": 8, "namespace": "team", "token": "[secret]"}
    assert {tuple(r) for r in document["resources"]} == {
        (
            "type",
            "name",
            "urn",
            "engineUrn",
            "aliases",
            "parent",
            "dependencies",
            "propertyDependencies",
            "provider",
            "inputs",
        )
    }
    secret = next(r for r in document["resources"] if r["name"] == "token")
    assert secret["inputs"]["stringData"] == "[secret]"


def test_preview_json_show_secrets_prints_secret_values(runner: CliRunner) -> None:
    result = runner.invoke(
        app, ["preview", "--project-dir", PLATFORM, "-s", "dev", "--json", "--show-secrets"]
    )
    assert json.loads(result.stdout)["outputs"]["token"] == "secret-placeholder"


def test_preview_of_an_invalid_config_prints_each_issue_and_exits_1(runner: CliRunner) -> None:
    result = runner.invoke(app, ["preview", "--project-dir", PLATFORM, "--stack", "bad"])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "batchplane:queues.gpus: must be a positive integer\nbatchplane:queues.replicas: must be a positive integer\n"
    )


def test_preview_of_an_unknown_stack_exits_2(runner: CliRunner) -> None:
    result = runner.invoke(app, ["preview", "--project-dir", PLATFORM, "--stack", "nope"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"batchplane: no stack config {FIXTURES / 'platform' / 'stacks' / 'Pulumi.nope.yaml'} or "
        f"{FIXTURES / 'platform' / 'templates' / 'Pulumi.nope.yaml'} (environments: bad, dev; templates: none)\n"
    )


def test_preview_of_a_config_file_that_is_not_yaml_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.broken.yaml"
    path.write_text("config: [\n", encoding="utf-8")
    result = runner.invoke(app, ["preview", "--project-dir", PLATFORM, "--config", str(path)])
    assert (result.exit_code, result.stderr) == (
        2,
        f"batchplane: {path} is not valid YAML (line 2, column 1): expected the node content, "
        "but found '<stream end>'\n",
    )


def test_preview_needs_exactly_one_of_stack_and_config(runner: CliRunner) -> None:
    result = runner.invoke(app, ["preview", "--project-dir", PLATFORM])
    assert (result.exit_code, result.stderr) == (
        2,
        "batchplane: give exactly one of --stack NAME or --config PATH\n",
    )


SECRET_NOTE = "batchplane: Secret token: stringData.token is a secret: written as 'secret-placeholder'\n"


def test_render_writes_a_yaml_stream_and_lists_what_it_cannot_render(runner: CliRunner) -> None:
    result = runner.invoke(app, ["render", "--project-dir", PLATFORM, "--stack", "dev"])
    assert (result.exit_code, result.stderr) == (0, WARNING + NOT_RENDERED + SECRET_NOTE)
    documents = list(yaml.safe_load_all(result.stdout))
    assert [(d["kind"], d["metadata"]["name"]) for d in documents] == [
        ("Namespace", "team"),
        ("ResourceFlavor", "gpu"),
        ("ClusterQueue", "team"),
        ("LocalQueue", "team"),
        ("Deployment", "web"),
        ("Secret", "token"),
        ("ConfigMap", "ns-phase"),
    ]
    secret = next(d for d in documents if d["kind"] == "Secret")
    assert secret["stringData"] == {"token": "secret-placeholder"}  # a Pulumi secret is never written


def test_render_output_writes_one_file_per_object(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "manifests"
    result = runner.invoke(app, ["render", "--project-dir", PLATFORM, "--stack", "dev", "--output", str(out)])
    assert (result.exit_code, result.stderr) == (
        0,
        WARNING + NOT_RENDERED + SECRET_NOTE + f"batchplane: wrote 7 files to {out}\n",
    )
    assert sorted(p.name for p in out.iterdir()) == [
        "00-namespace-team.yaml",
        "01-resourceflavor-gpu.yaml",
        "02-clusterqueue-team.yaml",
        "03-localqueue-team-team.yaml",
        "04-deployment-team-web.yaml",
        "05-secret-team-token.yaml",
        "06-configmap-team-ns-phase.yaml",
    ]
    assert yaml.safe_load((out / "00-namespace-team.yaml").read_text(encoding="utf-8")) == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"labels": {"flavor": "platform-helpers"}, "name": "team"},
    }


def test_render_refuses_a_non_empty_output_directory(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep", encoding="utf-8")
    result = runner.invoke(app, ["render", "--project-dir", PLATFORM, "--stack", "dev", "-o", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.endswith(
        f"batchplane: output directory {tmp_path} is not empty (use --overwrite to replace its NN-*.yaml files)\n"
    )


def test_render_overwrite_replaces_only_numbered_yaml_files(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep", encoding="utf-8")
    (tmp_path / "99-old-thing.yaml").write_text("stale", encoding="utf-8")
    args = ["render", "--project-dir", PLATFORM, "--stack", "dev", "-o", str(tmp_path), "--overwrite"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0
    remaining = sorted(p.name for p in tmp_path.iterdir())
    assert "99-old-thing.yaml" not in remaining
    assert ("notes.txt", len(remaining)) == (remaining[-1], 8)


def test_render_of_an_invalid_config_exits_1(runner: CliRunner) -> None:
    result = runner.invoke(app, ["render", "--project-dir", PLATFORM, "--stack", "bad"])
    assert (result.exit_code, result.stdout) == (1, "")

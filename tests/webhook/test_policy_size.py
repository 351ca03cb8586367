"""The webhook's policy document must fit in its ConfigMap (1 MiB): `batchplane validate` and the program refuse
an oversized one with the same message, before anything is declared."""

from __future__ import annotations

import base64
import copy
import gzip
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.components.quota_webhook import manifests
from batchplane.components.quota_webhook.manifests import MAX_CONFIGMAP_BYTES, deployment_problems
from batchplane.components.quota_webhook.policy import render_policy
from batchplane.errors import ConfigValidationError
from batchplane.offline import load_stack_file, run_program
from batchplane.stack import load_stack
from batchplane.webhook import policy as policy_module
from batchplane.webhook.errors import PolicyError
from batchplane.webhook.policy import load_policy, policy_json
from tests.conftest import REPO_ROOT, template_path

MESSAGE = (
    "batchplane:webhook: the webhook's policy document for this stack's queues and its 3 MultiKueue workers' "
    "is {size:,} bytes as shipped, over the 1,000-byte ConfigMap limit: split the teams or workers over more stacks"
)


def template() -> dict[str, object]:
    return copy.deepcopy(load_stack_file(template_path("gke-multiregion-dws")))


def test_the_templates_fit_with_room_to_spare() -> None:
    size = len(policy_json(render_policy(load_stack(template(), "gke-multiregion-dws"))).encode())
    assert size < MAX_CONFIGMAP_BYTES / 10
    assert MAX_CONFIGMAP_BYTES == 1_048_576


def test_validate_and_the_program_refuse_the_same_oversized_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifests, "MAX_CONFIGMAP_BYTES", 1000)
    stack = load_stack(template(), "gke-multiregion-dws")
    size = len("policy.json") + len(policy_json(render_policy(stack)).encode())
    want = MESSAGE.format(size=size)
    assert [str(p) for p in deployment_problems(stack)] == [want]

    result = CliRunner().invoke(app, ["validate", "--config", str(template_path("gke-multiregion-dws"))])
    assert (result.exit_code, want in result.stderr) == (1, True), result.stderr

    with pytest.raises(ConfigValidationError) as caught:
        run_program(REPO_ROOT, "gke-multiregion-dws", template())
    assert [str(e) for e in caught.value.errors] == [want]


def test_a_library_program_gets_the_same_refusal_from_the_component(monkeypatch: pytest.MonkeyPatch) -> None:
    """BatchClusterArgs runs the deployment checks itself, so a program of its own (no __main__.py) cannot skip them."""
    from batchplane.components.batch_cluster import BatchClusterArgs

    monkeypatch.setattr(manifests, "MAX_CONFIGMAP_BYTES", 1000)
    stack = load_stack(template(), "gke-multiregion-dws")
    with pytest.raises(ConfigValidationError) as caught:
        BatchClusterArgs(stack=stack).resolve("primary")
    assert [str(e) for e in caught.value.errors] == [str(p) for p in deployment_problems(stack)]


def test_a_stack_without_the_webhook_is_not_measured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(manifests, "MAX_CONFIGMAP_BYTES", 10)
    config = template()
    config["batchplane:webhook"] = {"enabled": False}
    assert deployment_problems(load_stack(config, "t")) == []


def test_a_large_policy_ships_gzip_compressed_and_loads_back_equal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(manifests, "COMPRESS_ABOVE", 1000)
    stack = load_stack(template(), "gke-multiregion-dws")
    deployment = manifests.webhook_deployment(stack)
    cm = manifests.config_map(deployment)
    assert sorted(cm) == ["apiVersion", "binaryData", "kind", "metadata"]
    blob = base64.b64decode(cm["binaryData"]["policy.json.gz"])
    assert len(blob) < len(deployment.policy_json) / 5  # the embedded worker documents compress well
    args = manifests.deployment(deployment)["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--policy") + 1] == "/etc/batchplane/policy/policy.json.gz"
    path = tmp_path / "policy.json.gz"
    path.write_bytes(blob)
    assert load_policy(path) == render_policy(stack)
    assert (
        manifests.compressed_policy(deployment.policy_json) == blob
    )  # deterministic: no rollout without change


def test_a_small_policy_stays_readable_json() -> None:
    cm = manifests.config_map(manifests.webhook_deployment(load_stack(template(), "gke-multiregion-dws")))
    assert sorted(cm["data"]) == ["policy.json"] and "binaryData" not in cm


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x1f\x8bnot gzip at all", "is not valid gzip"),
        (gzip.compress(b"{" + b" " * 5000 + b"}"), "expands to more than 4,096 bytes"),
    ],
    ids=["corrupt", "expands-too-far"],
)
def test_bad_compressed_policies_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: bytes, message: str
) -> None:
    monkeypatch.setattr(policy_module, "MAX_POLICY_BYTES", 4096)
    path = tmp_path / "policy.json.gz"
    path.write_bytes(content)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert message in str(caught.value)

"""The policy document: rendered from stack configs, printed by the CLI, validated on load; the
``batchplane:webhook`` config section and its pinned errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.components.quota_webhook.manifests import webhook_deployment
from batchplane.components.quota_webhook.policy import render_policy
from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from batchplane.webhook.errors import PolicyError
from batchplane.webhook.policy import load_policy, parse_policy, policy_json
from tests.conftest import template_path
from tests.webhook.conftest import stack_policy


def test_kind_stack_policy_maps_the_tenant_namespace_to_its_queues() -> None:
    policy = stack_policy("kind")
    assert policy.namespaces["team-a"].model_dump(by_alias=True) == {
        "localQueues": {"default": "cluster-queue"},
        "defaultQueue": "default",
        "limits": None,
    }
    assert policy.cluster_queues["cluster-queue"].resource_groups[0].covered_resources == ["cpu", "memory"]


def test_dws_stack_policy_carries_the_provisioning_request_config() -> None:
    check = stack_policy("gke-dws").admission_checks["rayjob-gpu"]
    assert check.controller_name == "kueue.x-k8s.io/provisioning-request"
    assert check.provisioning_request_config is not None
    assert check.provisioning_request_config.provisioning_class_name == "queued-provisioning.gke.io"


def _stack(**extra: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "batchplane:target": {"kind": "kind"},
        "batchplane:kueue": {
            "resourceFlavors": [{"name": "f"}],
            "cohorts": [{"name": "root"}, {"name": "c", "parentName": "root"}],
            "clusterQueues": [{"name": "cq", "cohortName": "c", "namespaceSelector": {},
                               "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                                   {"name": "f", "resources": [{"name": "cpu", "nominalQuota": 2, "borrowingLimit": 1}]}]}]}],
            "localQueues": [{"name": "lq", "namespace": "ml", "clusterQueue": "cq"}],
        },
    }  # fmt: skip
    raw.update({f"batchplane:{k}": v for k, v in extra.items()})
    return raw


def test_listed_namespaces_are_tenants_and_cohorts_keep_their_parents() -> None:
    policy = render_policy(load_stack(_stack(webhook={"namespaces": [{"name": "extra"}]}), "t"))
    assert list(policy.namespaces) == ["ml", "extra"]
    assert policy.cohorts["c"].parent == "root"
    assert policy.cluster_queues["cq"].resource_groups[0].flavors[0].resources["cpu"].borrowing_limit == "1"


@pytest.mark.parametrize(
    "namespace", ["kube-system", "openshift-monitoring", "kueue-system", "gke-managed-x"]
)
def test_a_local_queue_in_a_system_namespace_is_refused_while_the_webhook_is_on(namespace: str) -> None:
    raw = _stack()
    raw["batchplane:kueue"]["localQueues"].append(
        {"name": "sys", "namespace": namespace, "clusterQueue": "cq"}
    )
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(raw, "t")
    assert [str(i) for i in caught.value.errors] == [
        f'batchplane:kueue.localQueues[1].namespace: "{namespace}" is a system or operator namespace, which the '
        "quota webhook never acts on (so that its outage cannot block the operators): this LocalQueue's workloads "
        "would be neither checked nor labelled; put it in the team's own namespace, or set "
        "batchplane:webhook.enabled: false"
    ]
    raw["batchplane:webhook"] = {"enabled": False}
    assert load_stack(raw, "t").kueue.local_queues[1].obj.namespace == namespace


CONFIG_ERRORS = [
    ({"image": "ghcr.io/x/webhook"}, 'batchplane:webhook.image: "ghcr.io/x/webhook" is not pinned: give a version tag (not "latest") or an @sha256 digest'),
    ({"image": "ghcr.io/x/webhook:latest"}, 'batchplane:webhook.image: "ghcr.io/x/webhook:latest" is not pinned: give a version tag (not "latest") or an @sha256 digest'),
    ({"timeoutSeconds": 10}, "batchplane:webhook.timeoutSeconds: 10: Input should be less than or equal to 5"),
    ({"namespaces": [{"name": "kube-system"}]}, 'batchplane:webhook.namespaces[0].name: "kube-system" is a system or operator namespace; the webhook never acts there'),
    ({"namespace": "ml"}, 'batchplane:webhook.namespace: "ml" is a tenant namespace (it has LocalQueues); run the webhook in its own namespace'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("webhook", "exp"), CONFIG_ERRORS, ids=["untagged", "latest", "timeout", "system-ns", "tenant-ns"]
)
def test_bad_webhook_config_is_rejected_with_pinned_messages(webhook: dict[str, Any], exp: str) -> None:
    with pytest.raises(ConfigValidationError) as err:
        load_stack(_stack(webhook=webhook), "t")
    assert [str(i) for i in err.value.errors] == [exp]


def test_operator_namespaces_are_excluded_from_the_webhook() -> None:
    d = webhook_deployment(load_stack(_stack(operators={"kueue": {"namespace": "queueing"}}), "t"))
    assert "queueing" in d.excluded_namespaces
    assert d.tenant_namespaces == ("ml",)


def test_cli_prints_the_policy_of_a_stack() -> None:
    result = CliRunner().invoke(app, ["webhook", "policy", "--config", str(template_path("kind"))])
    assert result.exit_code == 0
    assert result.stdout == policy_json(stack_policy("kind"))


def test_policy_round_trips_through_its_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text(policy_json(stack_policy("gke-dws")))
    assert load_policy(path) == stack_policy("gke-dws")


@pytest.mark.parametrize(
    ("content", "exp"),
    [
        ("{", "is not JSON"),
        ('{"stack": "s", "kind": "Other"}', "invalid policy document: kind: Input should be 'QuotaPolicy'"),
        ('{"stack": "s", "extra": 1}', "invalid policy document: extra: Extra inputs are not permitted"),
    ],
    ids=["not-json", "wrong-kind", "unknown-key"],
)
def test_bad_policy_files_are_policy_errors(tmp_path: Path, content: str, exp: str) -> None:
    path = tmp_path / "policy.json"
    path.write_text(content)
    with pytest.raises(PolicyError, match=exp):
        load_policy(path)


def test_missing_policy_file_is_a_policy_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read policy file"):
        load_policy(tmp_path / "nope.json")


def test_policy_json_is_canonical() -> None:
    text = policy_json(stack_policy("kind"))
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert parse_policy(json.loads(text)) == stack_policy("kind")


@pytest.mark.parametrize(
    ("extra", "exp"),
    [
        ({}, False),
        ({"operators": {}}, True),
        ({"operators": {"certManager": {"enabled": False}, "kueue": {"useCertManager": False}}}, False),
        ({"webhook": {"enabled": True}}, True),
        ({"operators": {}, "webhook": {"enabled": False}}, False),
    ],
    ids=[
        "no-operators",
        "operators-install-cert-manager",
        "no-cert-manager",
        "explicitly-on",
        "explicitly-off",
    ],
)
def test_webhook_is_deployed_where_cert_manager_is(extra: dict[str, Any], exp: bool) -> None:
    from batchplane.stack.model import webhook_enabled

    assert webhook_enabled(load_stack(_stack(**extra), "t")) is exp


def test_the_policy_carries_the_feature_gates_the_decisions_depend_on_and_only_those() -> None:
    from tests.webhook.conftest import one_queue

    gates = {"FlavorFungibility": False, "PartialAdmission": True}
    policy = one_queue({"cpu": "4"}, operators={"kueue": {"configuration": {"featureGates": gates}}})
    assert policy.kueue.feature_gates == {"FlavorFungibility": False}


def test_the_policy_carries_a_cluster_queues_flavor_fungibility() -> None:
    from tests.webhook.conftest import one_queue

    policy = one_queue({"cpu": "4"}, cq_extra={"flavorFungibility": {"whenCanBorrow": "TryNextFlavor"}})
    ff = policy.cluster_queues["cq"].flavor_fungibility
    assert ff is not None and (ff.when_can_borrow, ff.when_can_preempt) == ("TryNextFlavor", "TryNextFlavor")
    assert one_queue({"cpu": "4"}).cluster_queues["cq"].flavor_fungibility is None


def test_a_stack_setting_no_fungibility_or_gates_keeps_its_policy_document_and_checksum() -> None:
    from batchplane.webhook.policy import parse_policy, policy_json
    from tests.webhook.conftest import one_queue

    plain = policy_json(one_queue({"cpu": "4"}))
    assert "flavorFungibility" not in plain and "featureGates" not in plain
    tuned = one_queue(
        {"cpu": "4"},
        cq_extra={"flavorFungibility": {"whenCanBorrow": "TryNextFlavor"}},
        operators={"kueue": {"configuration": {"featureGates": {"FlavorFungibility": False}}}},
    )
    text = policy_json(tuned)
    assert '"whenCanBorrow": "TryNextFlavor"' in text and '"FlavorFungibility": false' in text
    assert parse_policy(json.loads(text)) == tuned


def test_the_policy_document_names_resource_group_node_affinity_keys_and_refuses_another_value() -> None:
    assert (
        json.loads(policy_json(stack_policy("openshift-ai-2")))["kueue"]["nodeAffinityKeys"]
        == "ResourceGroup"
    )
    kind = json.loads(policy_json(stack_policy("kind")))  # the default is left out: the document is unchanged
    assert "nodeAffinityKeys" not in kind["kueue"]
    assert parse_policy(kind).kueue.node_affinity_keys == "Flavor"
    with pytest.raises(PolicyError, match=r"kueue\.nodeAffinityKeys"):
        parse_policy({"stack": "s", "kueue": {"nodeAffinityKeys": "Node"}})


def test_the_schema_leaves_out_each_unset_key_and_the_document_reads_back_the_same() -> None:
    """The keys a previous release's server does not know are left out when they hold nothing or their default
    (``exclude_if`` on the fields), and written once they do."""
    from batchplane.webhook.policy import (
        ClusterQueuePolicy,
        FlavorPolicy,
        KueueSettings,
        NodeShapePolicy,
        PolicyDocument,
    )

    bare = PolicyDocument(
        stack="s", cluster_queues={"cq": ClusterQueuePolicy()}, resource_flavors={"f": FlavorPolicy()}
    )
    data = json.loads(policy_json(bare))
    assert (
        "quotaKeys" not in data["clusterQueues"]["cq"]
        and "flavorFungibility" not in data["clusterQueues"]["cq"]
    )
    assert "nodes" not in data["resourceFlavors"]["f"]
    assert "featureGates" not in data["kueue"] and "nodeAffinityKeys" not in data["kueue"]
    assert "multiKueue" not in data and parse_policy(data) == bare
    full = PolicyDocument(
        stack="s",
        kueue=KueueSettings(node_affinity_keys="ResourceGroup", feature_gates={"FlavorFungibility": False}),
        cluster_queues={
            "cq": ClusterQueuePolicy(quota_keys={"f/cpu": "batchplane:teams.members[0].quotas.f.cpu"})
        },
        resource_flavors={"f": FlavorPolicy(nodes=[NodeShapePolicy(pool="p")])},
    )
    data = json.loads(policy_json(full))
    assert data["kueue"]["nodeAffinityKeys"] == "ResourceGroup" and data["kueue"]["featureGates"]
    assert data["clusterQueues"]["cq"]["quotaKeys"] and data["resourceFlavors"]["f"]["nodes"]
    assert parse_policy(data) == full

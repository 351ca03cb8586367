"""The ``multiKueue`` section of the webhook's policy document (:mod:`batchplane.multikueue.policy`)."""

from __future__ import annotations

import json

from batchplane.multikueue.config import MultiKueueSection
from batchplane.multikueue.policy import multi_kueue_policy
from batchplane.webhook.policy import PolicyDocument, policy_json


def _section() -> MultiKueueSection:
    return MultiKueueSection.model_validate(
        {
            "name": "dispatch",
            "workers": [
                {"name": "east", "target": {"kind": "kind"}},
                {"name": "legacy", "kubeconfigSecret": "legacy-kubeconfig"},
            ],
        }
    )


def test_without_multikueue_there_is_no_section() -> None:
    assert multi_kueue_policy(None, {}) is None


def test_declared_workers_carry_their_document_and_existing_ones_none_in_section_order() -> None:
    east = PolicyDocument(stack="test-east")
    section = multi_kueue_policy(_section(), {"east": east})
    assert section is not None
    assert section.admission_check == "dispatch"
    assert [(w.name, w.policy) for w in section.workers] == [("east", east), ("legacy", None)]


def test_the_manager_drops_an_unset_multikueue_key_but_a_workers_document_keeps_its_null() -> None:
    """The document (and checksum) every stack had before the key existed: the top-level ``multiKueue`` is left out
    when unset; a worker's document has always carried ``multiKueue: null``."""
    assert "multiKueue" not in json.loads(policy_json(PolicyDocument(stack="plain")))
    manager = PolicyDocument(
        stack="m", multi_kueue=multi_kueue_policy(_section(), {"east": PolicyDocument(stack="test-east")})
    )
    data = json.loads(policy_json(manager))
    assert data["multiKueue"]["workers"][0]["policy"]["multiKueue"] is None
    assert "multiKueue" in data["multiKueue"]["workers"][0]["policy"]
    assert data["multiKueue"]["workers"][1] == {"name": "legacy", "policy": None}

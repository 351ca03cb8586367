"""RecordedResource / ProgramRun: JSON contract, secret masking, lookups."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from batchplane.offline import UNKNOWN, ProgramRun
from batchplane.offline.model import Path, format_path, iter_unknown_paths, mask_secrets
from tests.offline.conftest import recorded


def test_to_json_has_exactly_the_documented_keys() -> None:
    resource = recorded("kubernetes:core/v1:Namespace", "ns", {"kind": "Namespace"})
    assert list(resource.to_json()) == [
        "type", "name", "urn", "engineUrn", "aliases", "parent", "dependencies", "propertyDependencies", "provider",
        "inputs",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "paths", "want"),
    [
        ({"a": 1, "b": {"c": 2}}, [("b", "c")], {"a": 1, "b": {"c": "[secret]"}}),
        ({"a": [1, 2]}, [("a", 1)], {"a": [1, "[secret]"]}),
        ({"a": 1}, [()], "[secret]"),
        ({"a": 1}, [("missing",)], {"a": 1}),
        ({"a": 1}, [], {"a": 1}),
    ],
    ids=["nested-key", "list-index", "whole-value", "missing-path", "no-secrets"],
)
def test_mask_secrets_replaces_only_the_given_paths(value: Any, paths: list[Path], want: Any) -> None:
    assert mask_secrets(value, paths) == want


@pytest.mark.parametrize(
    ("path", "want"),
    [(("spec", "groups", 0, "flavors"), "spec.groups[0].flavors"), ((), ""), ((2, "a"), "[2].a")],
    ids=["keys-and-index", "empty", "leading-index"],
)
def test_format_path(path: Path, want: str) -> None:
    assert format_path(path) == want


def test_unknown_paths_are_found_in_document_order() -> None:
    value = {"a": UNKNOWN, "b": [1, {"c": UNKNOWN}], "d": "known"}
    assert list(iter_unknown_paths(value)) == [("a",), ("b", 1, "c")]


def test_provider_reference_splits_at_the_last_separator() -> None:
    resource = recorded("kubernetes:core/v1:Namespace", "ns")
    with_provider = replace(resource, provider="urn:pulumi:s::p::pulumi:providers:k::k8s::k8s-id")
    assert (with_provider.provider_urn, with_provider.provider_id) == (
        "urn:pulumi:s::p::pulumi:providers:k::k8s",
        "k8s-id",
    )
    assert (resource.provider_urn, resource.provider_id) == (None, None)


def test_get_names_what_exists_when_nothing_matches() -> None:
    run = ProgramRun(resources=[recorded("t:m:A", "one"), recorded("t:m:A", "two")], outputs={})
    with pytest.raises(KeyError) as caught:
        run.get("t:m:A", "three")
    assert caught.value.args[0] == "0 resources t:m:A named 'three' (names of that type: one, two)"
    assert run.get("t:m:A", "two").urn == "urn:two"


def test_program_run_json_masks_secret_outputs() -> None:
    run = ProgramRun(resources=[], outputs={"a": "x", "b": "y"}, output_secret_paths=(("b",),))
    assert run.to_json() == {"resources": [], "outputs": {"a": "x", "b": "[secret]"}}
    assert run.to_json(show_secrets=True)["outputs"] == {"a": "x", "b": "y"}

"""The cluster version is checked against what the location offers when `pulumi up` runs, not pinned."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchplane.stack import load_stack
from batchplane.targets.gke.config import GkeTarget, version_floor
from batchplane.targets.gke.versions import EngineVersions, deploy_version_problems
from tests.config.factories import DELETE
from tests.gke.conftest import gke_with


def target(**changes: object) -> GkeTarget:
    stack = load_stack(gke_with(**changes))
    assert isinstance(stack.config.target, GkeTarget)
    return stack.config.target


def offered(default: str, latest: str, valid: tuple[str, ...] = ()) -> EngineVersions:
    return EngineVersions(
        default_cluster_version=default,
        release_channel_default_version={"REGULAR": default, "RAPID": latest},
        release_channel_latest_version={"REGULAR": latest, "RAPID": latest},
        valid_master_versions=valid or (latest, default),
    )


def test_an_unset_version_follows_a_channel_whose_default_meets_the_pools_floor() -> None:
    t = target(target__minMasterVersion=DELETE)
    assert deploy_version_problems(t, offered("1.35.2-gke.1000", "1.36.1-gke.200")) == []


def test_an_unset_version_on_a_channel_below_the_floor_is_refused_naming_the_channel() -> None:
    t = target(target__minMasterVersion=DELETE)
    assert deploy_version_problems(t, offered("1.30.9-gke.100", "1.31.4-gke.100")) == [
        "batchplane:target.releaseChannel: the REGULAR channel's default version in us-central1 is 1.30.9-gke.100, "
        "below 1.31.1, the minimum GKE version for queued provisioning with Kueue ≥ 0.13 (autoscaling.x-k8s.io/v1 "
        'ProvisioningRequests; gpuPools[0] "l4"); set minMasterVersion to a version of the channel at least '
        "1.31.1 (newest offered: 1.31.4-gke.100) or use the RAPID channel"
    ]


def test_a_pinned_minor_the_location_no_longer_offers_is_refused_with_what_it_offers() -> None:
    t = target(target__minMasterVersion="1.33")
    problems = deploy_version_problems(
        t, offered("1.35.2-gke.1000", "1.36.1-gke.200", ("1.36.1-gke.200", "1.35.2-gke.1000", "1.34.7-gke.3"))
    )
    assert problems == [
        'batchplane:target.minMasterVersion: "1.33" is not offered in us-central1 any more (offered: 1.34, 1.35, '
        "1.36); remove minMasterVersion to follow the REGULAR channel's default (1.35.2-gke.1000), or set a "
        "version it offers"
    ]


def test_a_pinned_version_newer_than_the_channel_is_refused() -> None:
    t = target(target__minMasterVersion="1.37")
    problems = deploy_version_problems(
        t, offered("1.35.2-gke.1000", "1.36.1-gke.200", ("1.37.0-gke.1", "1.36.1-gke.200"))
    )
    assert problems == [
        'batchplane:target.minMasterVersion: "1.37" is newer than the REGULAR channel\'s newest version '
        "(1.36.1-gke.200) in us-central1; GKE creates clusters on a channel only at its versions"
    ]


@pytest.mark.parametrize("version", ["1.35", "1.35.2-gke.1000"])
def test_a_pinned_version_the_channel_offers_is_accepted(version: str) -> None:
    t = target(target__minMasterVersion=version)
    assert deploy_version_problems(t, offered("1.35.2-gke.1000", "1.36.1-gke.200")) == []


def test_pools_without_provisioning_floors_accept_any_channel_default() -> None:
    t = target(target__minMasterVersion=DELETE, target__gpuPools__0__provisioning="on-demand")
    assert version_floor(t) is None
    assert deploy_version_problems(t, offered("1.28.1-gke.1", "1.29.0-gke.1")) == []


def test_engine_versions_read_pulumi_gcps_result_attributes() -> None:
    result = SimpleNamespace(
        default_cluster_version="1.35.2-gke.1000",
        release_channel_default_version={"REGULAR": "1.35.2-gke.1000"},
        release_channel_latest_version={"REGULAR": "1.36.1-gke.200"},
        valid_master_versions=["1.36.1-gke.200", "1.35.2-gke.1000"],
    )
    versions = EngineVersions.from_result(result)
    assert versions.release_channel_latest_version["REGULAR"] == "1.36.1-gke.200"
    assert versions.valid_master_versions == ("1.36.1-gke.200", "1.35.2-gke.1000")


def test_pulumi_up_stops_before_the_cluster_when_the_channel_default_is_below_the_pools_floor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from batchplane.offline import load_stack_file, mocks, run_program
    from batchplane.targets.gke.cluster import VersionUnavailableError
    from tests.conftest import REPO_ROOT, template_path

    monkeypatch.setattr(mocks, "GKE_VERSION", "1.30.9-gke.100")
    # as under `pulumi up`: the provider's answer is a fact (offline it is canned, and only noted: below)
    monkeypatch.setattr(mocks, "CANNED_LOOKUPS", frozenset())
    with pytest.raises(VersionUnavailableError) as caught:
        run_program(REPO_ROOT, "gke-dws", load_stack_file(template_path("gke-dws")))
    assert caught.value.problems == [
        "batchplane:target.releaseChannel: the REGULAR channel's default version in us-east4-c is 1.30.9-gke.100, "
        "below 1.31.1, the minimum GKE version for queued provisioning with Kueue ≥ 0.13 (autoscaling.x-k8s.io/v1 "
        'ProvisioningRequests; gpuPools[0] "gpu-node-pool"); set minMasterVersion to a version of the channel at '
        "least 1.31.1 (newest offered: 1.30.9-gke.100) or use the RAPID channel"
    ]


def test_the_templates_pin_no_version_and_their_clusters_follow_the_channel() -> None:
    from batchplane.offline import load_stack_file, run_program
    from tests.conftest import REPO_ROOT, template_path

    run = run_program(REPO_ROOT, "gke-dev", load_stack_file(template_path("gke-dev"))).to_json()
    clusters = [r for r in run["resources"] if r["type"] == "gcp:container/cluster:Cluster"]
    assert clusters and all("minMasterVersion" not in c["inputs"] for c in clusters)


# --- one version matcher for the deploy-time check and preflight (issue #29, item 15) ---------------------------


def test_a_pinned_patch_version_matches_the_offered_gke_builds_of_that_patch() -> None:
    # GKE's minMasterVersion accepts 1.X.Y, which the location offers as 1.X.Y-gke.N: it is offered.
    t = target(target__minMasterVersion="1.32.2")
    versions = offered("1.32.2-gke.1652000", "1.33.1-gke.100", ("1.33.1-gke.100", "1.32.2-gke.1652000"))
    assert deploy_version_problems(t, versions) == []


_part = st.integers(min_value=0, max_value=40)
_gke = st.tuples(st.just(1), _part, _part, st.integers(min_value=0, max_value=2_000_000))


def _text(v: tuple[int, int, int, int]) -> str:
    return f"{v[0]}.{v[1]}.{v[2]}-gke.{v[3]}"


@given(
    versions=st.lists(_gke, min_size=1, max_size=12, unique=True), depth=st.integers(min_value=2, max_value=4)
)
@settings(max_examples=200, deadline=None)
def test_a_version_prefix_selects_exactly_the_versions_that_agree_on_its_parts(
    versions: list[tuple[int, int, int, int]], depth: int
) -> None:
    from batchplane.targets.gke.preflight import matching_versions as preflight_matcher
    from batchplane.targets.gke.versions import matching_versions

    valid = [_text(v) for v in versions]
    wanted_parts = versions[0]
    wanted = ".".join(str(p) for p in wanted_parts[: min(depth, 3)])
    if depth == 4:
        wanted = _text(wanted_parts)
    keep = min(depth, 4)
    expected = {_text(v) for v in versions if v[:keep] == wanted_parts[:keep]}
    got = matching_versions(valid, wanted)
    assert set(got) == expected and _text(wanted_parts) in got
    # newest first, and preflight asks the same matcher
    assert got == sorted(
        got, key=lambda s: tuple(int(x) for x in s.replace("-gke.", ".").split(".")), reverse=True
    )
    assert preflight_matcher is matching_versions
    # a shorter number is never a prefix of a longer one (1.3 does not select 1.33.x)
    assert all(v.split(".")[1] == str(wanted_parts[1]) for v in got)


# --- offline, a canned answer is not a fact (issue #29, item 18) -------------------------------------------------


def test_offline_a_pinned_version_is_noted_as_not_checked_never_refused_or_claimed_about_the_region() -> None:
    from batchplane.offline import read_stack_file, run_program
    from batchplane.stack import load_stack
    from tests.conftest import REPO_ROOT, TEMPLATES_DIR

    config = read_stack_file(TEMPLATES_DIR / "Pulumi.gke-dev.yaml")
    config["batchplane:target"] = {**config["batchplane:target"], "minMasterVersion": "1.33"}
    load_stack(config, "gke-dev")  # a valid stack
    run = run_program(REPO_ROOT, "gke-dev", config)
    [cluster] = run.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["minMasterVersion"] == "1.33"
    notes = [m.message for m in run.logs if "not checked offline" in m.message]
    assert len(notes) == 1 and notes[0].startswith(
        'not checked offline: whether GKE offers minMasterVersion "1.33" in us-central1'
    )
    assert "(batchplane:target.minMasterVersion)" in notes[0] and "batchplane preflight" in notes[0]
    assert not any("offered:" in m.message or m.severity == "error" for m in run.logs)


@pytest.mark.parametrize("command", ["preview", "check"])
def test_preview_and_check_accept_a_pinned_version_offline_and_say_it_was_not_checked(
    command: str, tmp_path: Path
) -> None:
    import yaml
    from typer.testing import CliRunner

    from batchplane.cli import app
    from tests.conftest import REPO_ROOT, TEMPLATES_DIR

    document = yaml.safe_load((TEMPLATES_DIR / "Pulumi.gke-dev.yaml").read_text(encoding="utf-8"))
    document["config"]["batchplane:target"]["minMasterVersion"] = "1.33"
    path = tmp_path / "Pulumi.gke-dev.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    result = CliRunner().invoke(
        app, [command, "--config", str(path), "--project-dir", str(REPO_ROOT)], env={"GITHUB_ACTIONS": ""}
    )
    assert result.exit_code == 0, result.output + result.stderr
    assert "not offered" not in result.stderr
    assert 'not checked offline: whether GKE offers minMasterVersion "1.33" in us-central1' in result.stderr
    assert "batchplane preflight" in result.stderr

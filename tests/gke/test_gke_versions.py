"""The cluster version is checked against what the location offers when `pulumi up` runs, not pinned."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

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

"""GKE preflight through Google's client libraries, answered from recorded responses (no live call).

``ready.json`` is a project where everything the GKE templates need is in place; each blocker test puts one
recorded answer from ``recordings/gcp/blockers/`` in front of it, so exactly one class of problem appears.
"""

from __future__ import annotations

import copy

import pytest
import requests
from google.auth.credentials import AnonymousCredentials, Credentials
from google.auth.exceptions import RefreshError

from batchplane.preflight import Environment, Report, preflight
from batchplane.preflight.report import CredentialsMissing
from batchplane.stack import Stack, load_stack, read_stack_file
from tests.conftest import TEMPLATES_DIR, template_path
from tests.preflight.conftest import PROJECT, gke_stack, pool, template, template_with
from tests.preflight.replay import Replay, load


def run(stack: Stack, *recordings: str) -> tuple[Report, Replay]:
    replay = Replay(load(*recordings, "gcp/ready.json", "images/ghcr-served.json"))
    env = Environment(gcp_credentials=AnonymousCredentials(), gcp_project=PROJECT, adapter=replay)
    report = preflight(stack, env)
    assert replay.unmatched == []
    return report, replay


def blockers(report: Report) -> set[tuple[str, str]]:
    return {(f.check, f.path) for f in report.blockers}


@pytest.mark.parametrize("name", ["gke-dev", "gke-dws", "gke-prod-dws", "gke-multiregion-dws"])
def test_a_ready_project_passes_every_gke_template_with_every_check_run(name: str) -> None:
    report, replay = run(template(name))
    assert report.findings == []
    assert report.exit_code == 0
    assert report.checked == [
        "project",
        "api",
        "iam",
        "org-policy",
        "region",
        "zone-offering",
        "network",
        "quota",
        "repository",
        "version",
        "docker",
    ]  # no "image": the templates build the webhook image, no registry has to serve it
    assert any("/quotaInfos" in r for r in replay.requests)


def test_a_fresh_project_lists_every_blocker_at_once() -> None:
    # No API enabled, no GPU quota, and (skipDefaultNetworkCreation enforced) no default network to come.
    report, _ = run(template("gke-dev"), "gcp/fresh-project.json")
    assert blockers(report) == {
        ("api", "batchplane:target"),
        ("api", "batchplane:webhook.build.registry"),
        ("network", "batchplane:target.network"),
    }
    apis = [f for f in report.blockers if f.check == "api"]
    assert [f.fix for f in apis] == [
        f"gcloud services enable {api} --project {PROJECT}"
        for api in (
            "container.googleapis.com",
            "compute.googleapis.com",
            "iam.googleapis.com",
            "artifactregistry.googleapis.com",
        )
    ]
    # The flex-start pool starts empty: the missing GPU quota fails its first scale-up, not pulumi up (a warning).
    quota = {f.message.split(" ", 2)[1]: f for f in report.warnings if f.check == "quota"}
    assert set(quota) == {"PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region", "GPUS-ALL-REGIONS-per-project"}
    assert all(
        "--preferred-value=2" in f.fix and "scaling up past 0 fails later" in f.message
        for f in quota.values()
    )
    network = next(f for f in report.blockers if f.check == "network")
    assert "skipDefaultNetworkCreation" in network.message
    # What cannot be known until the APIs are on is said, not guessed. The enforced
    # iam.automaticIamGrantsForDefaultServiceAccounts does not matter: the stack creates its nodes' account.
    assert {w.check for w in report.warnings} == {"zone-offering", "version", "quota"}
    assert report.exit_code == 1
    text = report.text()
    assert text.index("blocker:") < text.index("warning:")
    assert "5 blockers, 4 warnings" in text


def test_nodes_on_the_default_account_are_warned_when_the_org_policy_leaves_it_without_roles() -> None:
    config = copy.deepcopy(read_stack_file(template_path("gke-dev")))
    config["batchplane:target"]["nodeServiceAccount"] = "default"
    report, _ = run(load_stack(config, "gke-dev"), "gcp/fresh-project.json")
    (warning,) = [w for w in report.warnings if w.check == "org-policy"]
    assert warning.path == "batchplane:target.nodeServiceAccount"
    assert "iam.automaticIamGrantsForDefaultServiceAccounts is enforced" in warning.message
    assert "roles/container.defaultNodeServiceAccount" in warning.fix


def test_project_missing_or_unreadable_is_a_blocker_on_the_project_key_and_stops_the_gcp_checks() -> None:
    report, replay = run(template("gke-dev"), "gcp/blockers/project-missing.json")
    assert blockers(report) == {("project", "gcp:project")}
    assert not any("serviceusage" in r for r in replay.requests)


def test_a_project_pending_deletion_is_a_blocker_with_the_undelete_fix() -> None:
    report, _ = run(template("gke-dev"), "gcp/blockers/project-deleted.json")
    [finding] = report.blockers
    assert "DELETE_REQUESTED" in finding.message and finding.fix == f"gcloud projects undelete {PROJECT}"


def test_disabled_apis_are_blockers_and_checks_that_need_them_become_warnings() -> None:
    report, replay = run(template("gke-dev"), "gcp/blockers/apis-disabled.json")
    assert {f.message.split(" ")[0] for f in report.blockers} == {
        "container.googleapis.com",
        "iam.googleapis.com",
    }
    assert not any("serverConfig" in r for r in replay.requests)
    assert any("/regions/us-central1" in r for r in replay.requests)  # compute is on: its checks still run
    assert [w.check for w in report.warnings] == ["version"]


def test_quota_below_the_pools_at_max_names_quota_id_amount_and_every_pool() -> None:
    report, _ = run(template("gke-prod-dws"), "gcp/blockers/quota-short.json")
    by_id = {f.message.split(" ", 2)[1]: f for f in report.findings if f.check == "quota"}
    # the GPU pools start empty (a later scale-up fails: warnings); the system pool's first node in each of the
    # region's 3 zones (3 × 8 vCPUs) does not fit 16 vCPUs: pulumi up itself fails (blockers)
    assert {f.message.split(" ", 2)[1] for f in report.blockers if f.check == "quota"} == {
        "CPUS-per-project-region",
        "CPUS-ALL-REGIONS-per-project",
    }
    # H100 flex-start + queued: 4 nodes × 8 on the family quota (8 granted)
    h100 = by_id["PREEMPTIBLE-GPUS-PER-GPU-FAMILY-per-project-region"]
    assert "allows 8" in h100.message and "need 32" in h100.message
    assert "--dimensions=region=us-central1,gpu_family=NVIDIA_H100" in h100.fix
    # on-demand L4: 12 nodes × 1 on the dedicated L4 quota (4 granted)
    assert "need 12" in by_id["NVIDIA-L4-GPUS-per-project-region"].message
    assert by_id["NVIDIA-L4-GPUS-per-project-region"].path == "batchplane:target.gpuPools[1]"
    assert "need 44" in by_id["GPUS-ALL-REGIONS-per-project"].message
    # vCPUs: 6 × e2-standard-8 + 4 × a3-highgpu-8g + 12 × g2-standard-8 against CPUS (16) and all regions (16)
    assert "need 976" in by_id["CPUS-per-project-region"].message
    assert "need 976" in by_id["CPUS-ALL-REGIONS-per-project"].message
    assert set(by_id) == {
        "PREEMPTIBLE-GPUS-PER-GPU-FAMILY-per-project-region",
        "NVIDIA-L4-GPUS-per-project-region",
        "GPUS-ALL-REGIONS-per-project",
        "CPUS-per-project-region",
        "CPUS-ALL-REGIONS-per-project",
    }


def test_a_machine_family_with_its_own_cpu_quota_is_checked_against_it() -> None:
    stack = gke_stack(
        [pool("a100", "on-demand", "a2-highgpu-1g", ["us-central1-a"], minNodes=2, maxNodes=2)],
        gpuPools=[pool("a100", "on-demand", "a2-highgpu-1g", ["us-central1-a"], minNodes=2, maxNodes=2)],
    )
    replay = Replay(load("gcp/ready.json", "images/ghcr-served.json"))
    env = Environment(
        gcp_credentials=AnonymousCredentials(), gcp_project=PROJECT, adapter=replay, check_images=False
    )
    report = preflight(stack, env)
    a2 = [f for f in report.blockers if "A2-CPUS-per-project-region" in f.message]
    assert len(a2) == 1 and "allows 0" in a2[0].message and "need 24" in a2[0].message
    # Compute fetched a zone answer it had no recording for? then unmatched would say so.
    assert [u for u in replay.unmatched if "a2-highgpu-1g" not in u and "nvidia-tesla-a100" not in u] == []


def test_missing_default_network_is_a_blocker_that_names_the_org_policy() -> None:
    report, _ = run(template("gke-dev"), "gcp/blockers/network-missing.json")
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("network", "batchplane:target.network")
    assert "skipDefaultNetworkCreation is enforced" in finding.message
    assert "gcloud compute networks create default --subnet-mode=auto" in finding.fix


def test_external_ips_denied_block_public_nodes_but_not_private_ones() -> None:
    public, _ = run(template("gke-dev"), "gcp/blockers/external-ip-denied.json")
    assert blockers(public) == {("org-policy", "batchplane:target.privateNodes")}
    assert "privateNodes: {enabled: true}" in public.blockers[0].fix
    private, _ = run(template("gke-prod-dws"), "gcp/blockers/external-ip-denied.json")
    assert private.findings == []


def test_a_resource_location_policy_denying_the_region_is_a_blocker() -> None:
    report, _ = run(template("gke-dev"), "gcp/blockers/resource-locations-denied.json")
    [finding] = report.blockers
    assert finding.check == "org-policy" and "denies us-central1" in finding.message


def test_an_unknown_region_is_a_blocker_on_the_region_key() -> None:
    report, _ = run(template("gke-dev"), "gcp/blockers/region-missing.json")
    assert blockers(report) == {("region", "batchplane:target.region")}


def test_zones_machine_types_and_accelerators_missing_are_blockers_on_the_pool() -> None:
    report, _ = run(template("gke-prod-dws"), "gcp/blockers/zone-offering-missing.json")
    messages = sorted(f.message for f in report.blockers)
    assert all(f.check == "zone-offering" for f in report.blockers)
    assert messages == [
        "accelerator nvidia-h100-80gb is not offered in zone us-central1-c",
        "machine type g2-standard-8 is not offered in zone us-central1-b",
        'zone "us-central1-a" does not exist in region us-central1 (zones: us-central1-b, us-central1-c, '
        "us-central1-f)",
        'zone "us-central1-a" does not exist in region us-central1 (zones: us-central1-b, us-central1-c, '
        "us-central1-f)",
    ]
    assert {f.path for f in report.blockers} == {
        "batchplane:target.gpuPools[0]",
        "batchplane:target.gpuPools[1]",
    }


def test_more_gpus_per_node_than_the_zone_lets_a_vm_have_is_a_blocker() -> None:
    stack = gke_stack(
        [],
        gpuPools=[
            pool(
                "t4",
                "on-demand",
                "n1-standard-8",
                ["us-central1-a"],
                maxNodes=1,
                accelerator={"type": "nvidia-tesla-t4", "count": 4},
            )
        ],
    )
    exchanges = load("gcp/ready.json")
    base = f"/compute/v1/projects/{PROJECT}/zones/us-central1-a"
    machine = copy.deepcopy(next(e for e in exchanges if e["path"] == f"{base}/machineTypes/g2-standard-4"))
    machine["path"] = f"{base}/machineTypes/n1-standard-8"
    machine["body"].update(name="n1-standard-8", guestCpus=8, memoryMb=30720)
    del machine["body"]["accelerators"]
    t4 = copy.deepcopy(next(e for e in exchanges if e["path"] == f"{base}/acceleratorTypes/nvidia-l4"))
    t4["path"] = f"{base}/acceleratorTypes/nvidia-tesla-t4"
    t4["body"].update(name="nvidia-tesla-t4", description="NVIDIA T4", maximumCardsPerInstance=2)
    replay = Replay([machine, t4, *exchanges])
    env = Environment(
        gcp_credentials=AnonymousCredentials(), gcp_project=PROJECT, adapter=replay, check_images=False
    )
    report = preflight(stack, env)
    assert replay.unmatched == []
    offering = [f for f in report.blockers if f.check == "zone-offering"]
    assert [f.message for f in offering] == [
        "4 × nvidia-tesla-t4 per node exceeds the 2 a VM can have in us-central1-a"
    ]
    assert offering[0].path == "batchplane:target.gpuPools[0]"


def test_a_version_not_in_the_channel_and_a_channel_default_below_the_floor_are_blockers() -> None:
    pinned = template("gke-dev")
    target = pinned.config.target.model_copy(update={"min_master_version": "1.33"})
    stack = Stack(pinned.name, pinned.config.model_copy(update={"target": target}), pinned.kueue)
    report, _ = run(stack, "gcp/blockers/version-invalid.json")
    [finding] = report.blockers
    assert finding.path == "batchplane:target.minMasterVersion"
    assert '"1.33" is not a valid version of the REGULAR channel' in finding.message
    assert "1.34.1-gke.1829001" in finding.message
    report, _ = run(template("gke-dev"), "gcp/blockers/version-invalid.json")  # the template pins no version
    [finding] = report.blockers
    assert finding.path == "batchplane:target.releaseChannel"
    assert "1.32.1-gke.1000" in finding.message and "below 1.32.2-gke.1652000" in finding.message


def test_a_failing_read_is_a_warning_that_names_what_was_not_checked_never_a_blocker() -> None:
    denied = {
        "method": "GET",
        "host": "cloudquotas.googleapis.com",
        "path": f"/v1/projects/{PROJECT}/locations/global/services/compute.googleapis.com/quotaInfos",
        "status": 403,
        "body": {"error": {"code": 403, "message": "Permission denied", "status": "PERMISSION_DENIED"}},
    }
    replay = Replay([denied, *load("gcp/ready.json", "images/ghcr-served.json")])
    report = preflight(
        template("gke-dev"),
        Environment(gcp_credentials=AnonymousCredentials(), gcp_project=PROJECT, adapter=replay),
    )
    assert report.blockers == []
    [warning] = report.warnings
    assert warning.check == "quota" and "not checked" in warning.message
    assert report.exit_code == 0


def test_when_enabled_apis_cannot_be_read_the_checks_still_run_and_disabled_apis_surface_as_warnings() -> (
    None
):
    unreadable = {
        "method": "GET",
        "host": "serviceusage.googleapis.com",
        "path": f"/v1/projects/{PROJECT}/services:batchGet",
        "status": 403,
        "body": {
            "error": {
                "code": 403,
                "message": "Permission denied to list services",
                "status": "PERMISSION_DENIED",
            }
        },
    }
    # The fresh project again, but Service Usage refuses to say what is enabled: Compute and GKE are asked anyway and
    # answer SERVICE_DISABLED, which preflight reports as not checked rather than guessing.
    report, replay = run(template("gke-dev"), "gcp/fresh-project.json")
    replay = Replay(
        [unreadable, *load("gcp/fresh-project.json", "gcp/ready.json", "images/ghcr-served.json")]
    )
    env = Environment(gcp_credentials=AnonymousCredentials(), gcp_project=PROJECT, adapter=replay)
    report = preflight(template("gke-dev"), env)
    assert replay.unmatched == []
    assert {f.check for f in report.blockers} <= {"quota"}  # quotas are still compared, not skipped
    assert any(f.check == "quota" and " allows " in f.message for f in report.findings)
    warned = {(w.check, w.path) for w in report.warnings}
    assert ("api", "batchplane:target") in warned
    assert ("region", "batchplane:target.region") in warned
    assert ("version", "batchplane:target") in warned
    disabled = [
        w for w in report.warnings if "SERVICE_DISABLED" in w.message or "has not been used" in w.message
    ]
    assert len(disabled) >= 2


def test_a_family_without_its_own_quota_is_held_to_the_family_quotas_default() -> None:
    # No NVIDIA-H100-GPUS quota exists: the H100 falls under GPUS-PER-GPU-FAMILY, whose default (no entry naming
    # NVIDIA_H100) is 0. The L4, which has its own quota, is not held to that default.
    stack = gke_stack(
        [],
        gpuPools=[
            pool("h100", "on-demand", "a3-highgpu-8g", ["us-central1-a"], minNodes=1, maxNodes=1),
            pool("l4", "on-demand", "g2-standard-4", ["us-central1-a"], minNodes=1, maxNodes=1),
        ],
    )
    replay = Replay(load("gcp/ready.json"))
    env = Environment(
        gcp_credentials=AnonymousCredentials(), gcp_project=PROJECT, adapter=replay, check_images=False
    )
    report = preflight(stack, env)
    assert replay.unmatched == []
    [finding] = report.blockers
    assert finding.path == "batchplane:target.gpuPools[0]"
    assert finding.message.startswith(
        "quota GPUS-PER-GPU-FAMILY-per-project-region (NVIDIA_H100_GPUS) allows 0"
    )
    assert "--dimensions=region=us-central1,gpu_family=NVIDIA_H100" in finding.fix


def test_quota_that_covers_the_pools_but_is_partly_in_use_is_a_warning_with_what_is_free() -> None:
    # us-central1 answers (Compute Region.quotas) 10 of 16 L4s and 990 of 1000 CPUs in use.
    report, _ = run(template("gke-prod-dws"), "gcp/region-in-use.json")
    assert report.blockers == []
    by_id = {w.message.split(" ", 2)[1]: w for w in report.warnings}
    assert set(by_id) == {"NVIDIA-L4-GPUS-per-project-region", "CPUS-per-project-region"}
    assert "allows 16 for NVIDIA_L4 GPUs in us-central1 and 10 are in use: 6 free, the pools need 12" in (
        by_id["NVIDIA-L4-GPUS-per-project-region"].message
    )
    assert by_id["NVIDIA-L4-GPUS-per-project-region"].fix == "free what else uses it, or request 22"
    assert report.exit_code == 0


class _Unreachable(Replay):
    """Every Google API host refuses the connection."""

    def send(self, request: requests.PreparedRequest, **kwargs: object) -> requests.Response:
        if "googleapis.com" in (request.url or ""):
            raise requests.ConnectionError(f"connection refused: {request.url}")
        return super().send(request)


def test_an_unreachable_api_is_a_warning_per_check_not_a_crash() -> None:
    replay = _Unreachable(load("gcp/ready.json"))
    env = Environment(
        gcp_credentials=AnonymousCredentials(), gcp_project=PROJECT, adapter=replay, check_images=False
    )
    report = preflight(template("gke-dev"), env)
    # The project check is the gate: it cannot tell, so it blocks with the reason, as cluster-toolkit's does.
    [finding] = report.blockers
    assert finding.check == "project" and finding.message.startswith("could not ask Resource Manager")
    assert "connection refused" in finding.message


class _Revoked(Credentials):
    """Credentials whose refresh fails, as expired or revoked ADC do."""

    def refresh(self, request: object) -> None:
        raise RefreshError("invalid_grant: Token has been expired or revoked.")


def test_credentials_that_cannot_be_refreshed_stop_the_run_as_missing_credentials() -> None:
    env = Environment(gcp_credentials=_Revoked(), gcp_project=PROJECT, adapter=Replay(load("gcp/ready.json")))
    with pytest.raises(CredentialsMissing, match="gcloud auth application-default login"):
        preflight(template("gke-dev"), env)


# --- preemptible quota: Spot VMs fall back to the standard quotas where the project has none -------------------


def _quota_infos(values: dict[str, int], region: str = "us-central1") -> list[dict[str, object]]:
    """ready.json's Cloud Quotas answer with ``{quota id: limit in region}`` set (a quota id ready.json lacks is added
    with that one regional entry), placed in front of ready.json."""
    ready = load("gcp/ready.json")
    exchange = copy.deepcopy(next(e for e in ready if e["path"].endswith("/quotaInfos")))
    infos = exchange["body"]["quotaInfos"]
    for quota_id, value in values.items():
        info = next((i for i in infos if i["quotaId"] == quota_id), None)
        if info is None:
            info = {"quotaId": quota_id, "dimensions": ["region"], "dimensionsInfos": []}
            infos.append(info)
        entry = {
            "dimensions": {"region": region},
            "details": {"value": str(value)},
            "applicableLocations": [region],
        }
        info["dimensionsInfos"] = [
            e for e in info["dimensionsInfos"] if e["dimensions"] != {"region": region}
        ]
        info["dimensionsInfos"].insert(0, entry)
    return [exchange, *ready]


def _quota_report(stack: Stack, values: dict[str, int]) -> Report:
    replay = Replay(_quota_infos(values))
    env = Environment(
        gcp_credentials=AnonymousCredentials(), gcp_project=PROJECT, adapter=replay, check_images=False
    )
    report = preflight(stack, env)
    assert replay.unmatched == []
    return report


def _quota_shortfalls(report: Report) -> dict[str, tuple[str, str]]:
    """Quota id → (key, message) of every quota below the pools at maxNodes: blockers, and the warnings for what only
    a later scale-up needs (these pools start empty)."""
    short = [
        f
        for f in report.findings
        if f.check == "quota" and " allows " in f.message and "in use" not in f.message
    ]
    return {f.message.split(" ", 2)[1]: (f.path, f.message) for f in short}


L4_SPOT = pool("l4-spot", "spot", "g2-standard-8", ["us-central1-a"], maxNodes=6)
L4_FLEX = pool("l4-flex", "flex-start", "g2-standard-8", ["us-central1-a"], maxNodes=6)


def test_spot_gpus_use_the_standard_quota_where_the_project_has_no_preemptible_quota_of_the_family() -> None:
    stack = gke_stack([L4_SPOT])
    # no preemptible L4 quota in the region, 16 standard L4s: the 6 Spot VMs' GPUs fit there
    assert _quota_shortfalls(_quota_report(stack, {"PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region": 0})) == {}
    # ... and when the standard quota is short too, the blocker is on the standard quota, naming the spot pool
    short = _quota_shortfalls(
        _quota_report(
            stack,
            {"PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region": 0, "NVIDIA-L4-GPUS-per-project-region": 4},
        )
    )
    assert set(short) == {"NVIDIA-L4-GPUS-per-project-region"}
    path, message = short["NVIDIA-L4-GPUS-per-project-region"]
    assert path == "batchplane:target.gpuPools[0]" and "allows 4" in message and "need 6" in message


def test_spot_gpus_count_only_against_a_preemptible_quota_the_project_has() -> None:
    stack = gke_stack([L4_SPOT])
    # 2 preemptible L4s granted: every Spot VM counts against it, even with standard L4s to spare
    short = _quota_shortfalls(_quota_report(stack, {"PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region": 2}))
    assert set(short) == {"PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region"}
    assert "need 6" in short["PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region"][1]


def test_flex_start_gpus_never_fall_back_to_the_standard_quota() -> None:
    report = _quota_report(gke_stack([L4_FLEX]), {"PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region": 0})
    short = _quota_shortfalls(report)
    assert set(short) == {"PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region"}
    assert "allows 0" in short["PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region"][1]


def test_spot_and_standard_gpus_of_one_family_add_up_on_the_standard_quota_without_preemptible_quota() -> (
    None
):
    on_demand = pool("l4", "on-demand", "g2-standard-8", ["us-central1-a"], maxNodes=10)
    stack = gke_stack([on_demand, L4_SPOT])
    values = {"PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region": 0, "NVIDIA-L4-GPUS-per-project-region": 12}
    short = _quota_shortfalls(_quota_report(stack, values))
    _, message = short["NVIDIA-L4-GPUS-per-project-region"]
    assert "need 16" in message and "batchplane:target.gpuPools[1]" in message
    # with the preemptible quota granted, the same 12 standard L4s hold the 10 on-demand VMs
    values["PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region"] = 6
    assert "NVIDIA-L4-GPUS-per-project-region" not in _quota_shortfalls(_quota_report(stack, values))


def test_spot_vcpus_move_to_the_preemptible_cpu_quota_once_the_project_has_one() -> None:
    stack = gke_stack([L4_SPOT])  # 6 × g2-standard-8 = 48 spot vCPUs, plus the system pool's 12 on CPUS
    # no preemptible CPU quota: Spot VMs use the standard one, 60 vCPUs in all
    standard = _quota_shortfalls(_quota_report(stack, {"CPUS-per-project-region": 40}))
    assert (
        set(standard) == {"CPUS-per-project-region"} and "need 60" in standard["CPUS-per-project-region"][1]
    )
    granted = _quota_shortfalls(
        _quota_report(stack, {"CPUS-per-project-region": 40, "PREEMPTIBLE-CPUS-per-project-region": 24})
    )
    assert "CPUS-per-project-region" not in granted
    path, message = granted["PREEMPTIBLE-CPUS-per-project-region"]
    assert path == "batchplane:target.gpuPools[0]" and "allows 24" in message and "need 48" in message
    assert (
        _quota_shortfalls(
            _quota_report(stack, {"CPUS-per-project-region": 40, "PREEMPTIBLE-CPUS-per-project-region": 48})
        )
        == {}
    )


# --- org policies that stop the first `pulumi up` (issue #29, item 12) ----------------------------------------


def test_service_account_creation_disabled_blocks_a_stack_that_creates_its_node_account() -> None:
    report, _ = run(template("gke-dev"), "gcp/blockers/service-account-creation-disabled.json")
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("org-policy", "batchplane:target.nodeServiceAccount")
    assert "constraints/iam.disableServiceAccountCreation is enforced" in finding.message
    assert "nodeServiceAccount" in finding.fix
    # a stack naming an existing account creates none: nothing to block
    config = copy.deepcopy(read_stack_file(TEMPLATES_DIR / "Pulumi.gke-dev.yaml"))
    config["batchplane:target"]["nodeServiceAccount"] = f"nodes@{PROJECT}.iam.gserviceaccount.com"
    named, _ = run(load_stack(config, "gke-dev"), "gcp/blockers/service-account-creation-disabled.json")
    assert named.blockers == []


def test_required_shielded_vms_block_pools_without_secure_boot_and_name_the_key_that_fixes_it() -> None:
    report, _ = run(template("gke-dev"), "gcp/blockers/shielded-vm-required.json")
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("org-policy", "batchplane:target.secureBoot")
    assert "constraints/compute.requireShieldedVm is enforced" in finding.message
    assert "secureBoot: true" in finding.fix
    config = copy.deepcopy(read_stack_file(TEMPLATES_DIR / "Pulumi.gke-dev.yaml"))
    config["batchplane:target"]["secureBoot"] = True
    secure, _ = run(load_stack(config, "gke-dev"), "gcp/blockers/shielded-vm-required.json")
    assert secure.blockers == []


def test_trusted_image_projects_without_gke_node_images_block_every_gke_template() -> None:
    report, _ = run(template("gke-prod-dws"), "gcp/blockers/trusted-images-exclude-gke.json")
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("org-policy", "batchplane:target")
    assert "constraints/compute.trustedImageProjects" in finding.message
    assert "projects/gke-node-images" in finding.message and "projects/gke-node-images" in finding.fix


# --- the deployer's permissions, asked with projects.testIamPermissions (issue #29, item 11) ------------------


def test_missing_permissions_are_blockers_naming_each_permission_the_resource_and_the_role() -> None:
    report, replay = run(template("gke-prod-dws"), "gcp/blockers/firewall-permissions-missing.json")
    assert any(r.startswith("POST ") and ":testIamPermissions" in r for r in replay.requests)
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("iam", "batchplane:target.privateNodes")
    assert (
        "compute.firewalls.create" in finding.message and "gcp:compute/firewall:Firewall" in finding.message
    )
    assert "roles/compute.securityAdmin" in finding.fix
    assert "iam" in report.checked


# --- an existing repository the stack does not own (issue #29, item 13) -------------------------------------


def test_an_existing_repository_of_another_stack_is_a_blocker_and_the_stacks_own_is_not() -> None:
    report, replay = run(template("gke-dev"), "gcp/blockers/repository-taken.json")
    assert any("/repositories/batchplane-dev-images" in r for r in replay.requests)
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("repository", "batchplane:webhook.build.repository")
    assert "us-central1/batchplane-dev-images already exists" in finding.message
    assert "gke-prod-dws" in finding.message and "409" in finding.message
    owned, _ = run(template("gke-dev"), "gcp/repository-owned.json")
    assert owned.blockers == [] and "repository" in owned.checked


# --- Docker where `pulumi up` builds the image, for every template that builds (issue #29, item 16) -------------


@pytest.mark.parametrize("engine", ["missing", "down"])
def test_a_gke_template_that_builds_the_image_needs_docker_where_pulumi_up_runs(
    engine: str, tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    from tests.preflight.conftest import fake_executable

    bin_dir = Path(str(tmp_path)) / "bin"
    bin_dir.mkdir()
    if engine == "down":
        fake_executable(bin_dir, "docker", 'echo "Cannot connect to the Docker daemon" >&2; exit 1\n')
    monkeypatch.setenv("PATH", str(bin_dir))
    report, _ = run(template("gke-dev"))
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("docker", "batchplane:webhook.build")
    assert "builds the webhook image" in finding.message
    published, _ = run(template_with("gke-dev", image="ghcr.io/batchplane/quota-webhook:0.1.0"))
    assert not [f for f in published.findings if f.check == "docker"]


# --- quotas: the whole preemptible VM, disks, local SSD, addresses, and what pulumi up itself creates (#29, 14) ---


def test_flex_start_vcpus_count_against_preemptible_cpus_once_granted_not_against_cpus() -> None:
    stack = gke_stack([L4_FLEX])  # 6 × g2-standard-8 = 48 flex-start vCPUs, plus the system pool's 12 on CPUS
    granted = _quota_report(stack, {"CPUS-per-project-region": 40, "PREEMPTIBLE-CPUS-per-project-region": 48})
    assert [f for f in granted.findings if f.check == "quota"] == []
    short = _quota_shortfalls(
        _quota_report(stack, {"CPUS-per-project-region": 40, "PREEMPTIBLE-CPUS-per-project-region": 24})
    )
    assert set(short) == {"PREEMPTIBLE-CPUS-per-project-region"}
    assert "need 48" in short["PREEMPTIBLE-CPUS-per-project-region"][1]


def test_a_shortfall_only_at_max_nodes_is_a_warning_and_one_at_deploy_time_is_a_blocker() -> None:
    empty = pool("l4", "on-demand", "g2-standard-8", ["us-central1-a"], maxNodes=6)
    started = pool("l4", "on-demand", "g2-standard-8", ["us-central1-a"], minNodes=3, maxNodes=6)
    later = _quota_report(gke_stack([empty]), {"NVIDIA-L4-GPUS-per-project-region": 2})
    assert [f.message.split(" ", 2)[1] for f in later.warnings if f.check == "quota"] == [
        "NVIDIA-L4-GPUS-per-project-region"
    ]
    assert not [f for f in later.blockers if f.check == "quota"]
    assert (
        "0 of them when pulumi up creates the pools: scaling up past 2 fails later"
        in later.warnings[0].message
    )
    now = _quota_report(gke_stack([started]), {"NVIDIA-L4-GPUS-per-project-region": 2})
    [blocker] = [f for f in now.blockers if f.check == "quota"]
    assert (
        blocker.message.startswith("quota NVIDIA-L4-GPUS-per-project-region") and "need 6" in blocker.message
    )


def test_public_nodes_need_external_addresses_and_boot_disks_count_by_type() -> None:
    stack = gke_stack(
        [
            pool(
                "l4",
                "on-demand",
                "g2-standard-8",
                ["us-central1-a"],
                minNodes=2,
                maxNodes=6,
                diskType="pd-standard",
                diskSizeGb=200,
            )
        ]
    )
    short = _quota_shortfalls(
        _quota_report(
            stack,
            {
                "IN-USE-ADDRESSES-per-project-region": 4,
                "DISKS-TOTAL-GB-per-project-region": 1000,
                "SSD-TOTAL-GB-per-project-region": 200,
            },
        )
    )
    # addresses: 3 system + 6 GPU nodes; pd-standard: 6 × 200 GB; pd-balanced (default): 3 system × 100 GB
    assert "need 9" in short["IN-USE-ADDRESSES-per-project-region"][1]
    assert "need 1200" in short["DISKS-TOTAL-GB-per-project-region"][1]
    assert "need 300" in short["SSD-TOTAL-GB-per-project-region"][1]
    private = gke_stack(
        [pool("l4", "on-demand", "g2-standard-8", ["us-central1-a"], maxNodes=6)],
        privateNodes={"enabled": True, "masterIpv4CidrBlock": "172.16.0.32/28"},
    )
    assert "IN-USE-ADDRESSES-per-project-region" not in _quota_shortfalls(
        _quota_report(private, {"IN-USE-ADDRESSES-per-project-region": 0})
    )


def test_an_a3_highgpu_8g_brings_6000_gb_of_local_ssd_each() -> None:
    h100 = pool("h100", "spot", "a3-highgpu-8g", ["us-central1-a"], maxNodes=2)
    short = _quota_shortfalls(
        _quota_report(gke_stack([h100]), {"LOCAL-SSD-TOTAL-GB-per-project-region": 6000})
    )
    assert "need 12000" in short["LOCAL-SSD-TOTAL-GB-per-project-region"][1]
    # with preemptible local SSD granted, the spot VMs' disks move there
    moved = _quota_shortfalls(
        _quota_report(
            gke_stack([h100]),
            {"LOCAL-SSD-TOTAL-GB-per-project-region": 0, "PREEMPTIBLE-LOCAL-SSD-GB-per-project-region": 6000},
        )
    )
    assert "LOCAL-SSD-TOTAL-GB-per-project-region" not in moved
    assert "need 12000" in moved["PREEMPTIBLE-LOCAL-SSD-GB-per-project-region"][1]


# --- actAs on a node account the same pulumi up creates; clusterAdmin without Kubernetes RBAC (issue #38, 14-15) ---


def test_missing_act_as_on_a_node_account_the_stack_creates_is_a_blocker() -> None:
    """gke-prod-dws creates its node account: no grant on it can exist when clusters.create needs actAs."""
    report, _ = run(template("gke-prod-dws"), "gcp/blockers/act-as-missing.json")
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("iam", "batchplane:target.nodeServiceAccount")
    assert "iam.serviceAccounts.actAs" in finding.message and "creates that account" in finding.message
    assert "roles/iam.serviceAccountUser" in finding.fix


def test_cluster_admin_without_the_kubernetes_rbac_permissions_is_a_blocker_naming_container_admin() -> None:
    """roles/container.clusterAdmin grants container.clusters.* only (iam-dataset container.clusterAdmin.json):
    the operator installs' CRDs and ClusterRoles need roles/container.admin."""
    report, _ = run(template("gke-prod-dws"), "gcp/blockers/cluster-admin-only.json")
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("iam", "batchplane:target")
    assert "container.customResourceDefinitions.create" in finding.message
    assert "container.clusterRoles.escalate" in finding.message
    assert "--role=roles/container.admin" in finding.fix


# --- Cloud NAT collision on the network and region (issue #38, item 12) ---------------------------------------


def test_another_cloud_nat_on_the_clusters_network_and_region_is_a_blocker_naming_it() -> None:
    """routers.list answers another stack's NAT on `default` in us-central1 (and one on another VPC, ignored): the
    stack's ALL_SUBNETWORKS_ALL_IP_RANGES NAT must be the network's only NAT in the region."""
    report, replay = run(template("gke-prod-dws"), "gcp/blockers/nat-on-network.json")
    assert any(r.endswith("/regions/us-central1/routers") for r in replay.requests)
    [finding] = report.blockers
    assert (finding.check, finding.path) == ("network", "batchplane:target.privateNodes")
    assert "Cloud NAT other-nat on router other-router" in finding.message
    assert "elsewhere" not in finding.message
    assert "gcloud compute routers nats delete other-nat --router=other-router" in finding.fix

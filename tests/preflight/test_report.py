"""The report: blockers before warnings, key path and fix on every line, exit codes, JSON."""

from __future__ import annotations

import json

from batchplane.preflight import Report


def test_warnings_alone_exit_0_and_a_blocker_exits_1() -> None:
    report = Report("s")
    report.warning("quota", "batchplane:target", "not checked")
    assert report.exit_code == 0
    report.blocker("api", "batchplane:target", "x is not enabled", "gcloud services enable x")
    assert report.exit_code == 1


def test_text_lists_blockers_first_each_with_path_class_and_fix() -> None:
    report = Report("s")
    report.warning("version", "batchplane:target", "not checked")
    report.blocker(
        "network", "batchplane:target.network", "no default network", "gcloud compute networks create"
    )
    report.ran("network")
    lines = report.text().splitlines()
    assert lines[0] == "blocker: batchplane:target.network: [network] no default network"
    assert lines[1] == "  fix: gcloud compute networks create"
    assert lines[2] == "warning: batchplane:target: [version] not checked"
    assert lines[-1] == "stack s: blocked (1 blockers, 1 warnings; checked: network)"


def test_json_has_every_field_of_every_finding() -> None:
    report = Report("s")
    report.blocker("olm", "batchplane:target.kueue.channel", "no channel", "set channel")
    data = json.loads(report.to_json())
    assert data == {
        "stack": "s",
        "ready": False,
        "blockers": [
            {
                "severity": "blocker",
                "check": "olm",
                "path": "batchplane:target.kueue.channel",
                "message": "no channel",
                "fix": "set channel",
            }
        ],
        "warnings": [],
        "notes": [],
        "checked": [],
    }


def test_notes_say_what_the_lookups_will_use_and_never_block() -> None:
    report = Report("s")
    report.note("machineset", "batchplane:target.gpuPools[0].aws", "copies MachineSet m")
    assert (report.findings, report.exit_code) == ([], 0)
    assert report.text().splitlines() == [
        "note: batchplane:target.gpuPools[0].aws: [machineset] copies MachineSet m",
        "stack s: ready (0 blockers, 0 warnings; checked: nothing)",
    ]
    assert json.loads(report.to_json())["notes"][0]["message"] == "copies MachineSet m"

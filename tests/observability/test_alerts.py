"""The alert rules generated from every template: ``promtool check rules`` accepts them and ``promtool test
rules`` shows each alert firing on a series that trips it and silent on one that does not."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

from batchplane.config.observability import AlertsConfig
from batchplane.observability.alerts import AlertInputs, WebhookInputs, alert_inputs, rule_file, rule_groups
from batchplane.observability.metrics import known_metric
from batchplane.stack import Stack, load_stack_file
from tests.observability.promtool_cases import promtool_tests

STACKS = sorted((Path(__file__).resolve().parents[2] / "templates").glob("Pulumi.*.yaml"))
DOCS = Path(__file__).resolve().parents[2] / "docs" / "observability.md"


def _stack(path: Path) -> Stack:
    return load_stack_file(path)


def _inputs(**alerts: object) -> AlertInputs:
    return AlertInputs(
        alerts=AlertsConfig.model_validate(alerts),
        kueue_namespace="kueue-system",
        cluster_queues=("team-a", "team-b.gpu"),
        provisioning_queues=("team-b.gpu",),
        gpu_resources=("nvidia.com/gpu",),
        webhook=WebhookInputs("batchplane-system", "batchplane-quota-webhook", 3, "Fail"),
    )


def _run_promtool(
    promtool: Path, tmp_path: Path, inputs: AlertInputs
) -> tuple[subprocess.CompletedProcess[str], int]:
    groups = rule_groups(inputs)
    rules = rule_file(groups)
    for group in rules[
        "groups"
    ]:  # annotations are templates of the value: checked by `check rules`, not here
        for rule in group["rules"]:
            rule.pop("annotations", None)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules, sort_keys=False), encoding="utf-8")
    cases = promtool_tests(inputs)
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": [case for _, case in cases]}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(tests, sort_keys=False), encoding="utf-8")
    result = subprocess.run(
        [str(promtool), "test", "rules", "tests.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return result, len(cases)


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.name.removeprefix("Pulumi.").removesuffix(".yaml"))
def test_every_templates_rules_pass_promtool_check_and_each_alert_has_a_tripping_and_a_silent_case(
    path: Path, promtool: Path, tmp_path: Path
) -> None:
    inputs = alert_inputs(_stack(path))
    groups = rule_groups(inputs)
    (tmp_path / "full.yaml").write_text(yaml.safe_dump(rule_file(groups), sort_keys=False), encoding="utf-8")
    check = subprocess.run(
        [str(promtool), "check", "rules", "full.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    alerts = {r.name for g in groups for r in g.rules if not r.recording}
    cases = Counter(name for name, _ in promtool_tests(inputs))
    assert set(cases) == alerts  # every alert has cases, and no case tests an alert that is not generated
    assert all(count >= 2 for count in cases.values())
    result, count = _run_promtool(promtool, tmp_path, inputs)
    assert result.returncode == 0, result.stdout + result.stderr
    assert count >= 2 * len(alerts)


def test_a_broken_rule_fails_its_promtool_case(
    promtool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness can fail: an alert whose threshold is off by a factor of 100 fires on its silent case."""
    import batchplane.observability.alerts as alerts

    monkeypatch.setattr(alerts, "_seconds", lambda duration: "36")  # every latency threshold 36 s
    result, _ = _run_promtool(promtool, tmp_path, _inputs())
    assert result.returncode != 0
    assert "KueueAdmissionWaitHigh" in result.stdout + result.stderr


def test_a_team_override_applies_to_its_queue_only(promtool: Path, tmp_path: Path) -> None:
    inputs = _inputs(clusterQueues={"team-a": {"pendingTooLong": "2h"}})
    pending = [r for g in rule_groups(inputs) for r in g.rules if r.name == "KueuePendingTooLong"]
    assert [(r.for_, r.expr.split("kueue_pending_workloads")[1][:40]) for r in pending] == [
        ("2h", '{cluster_queue="team-a"}) > 0) unless on'),
        ("30m", '{cluster_queue!~"team-a"}) > 0) unless o'),
    ]
    result, _ = _run_promtool(promtool, tmp_path, inputs)
    assert result.returncode == 0, result.stdout + result.stderr


def test_webhook_latency_alert_follows_the_stacks_timeout_and_unavailability_needs_fail_policy() -> None:
    slow = _inputs(webhook={"latencyFractionOfTimeout": 0.5})
    expr = next(r.expr for g in rule_groups(slow) for r in g.rules if r.name == "BatchplaneWebhookSlow")
    assert expr.endswith("> 1.5")  # 0.5 × timeoutSeconds 3
    ignore = AlertInputs(**{**slow.__dict__, "webhook": WebhookInputs("ns", "wh", 5, "Ignore")})
    names = {r.name for g in rule_groups(ignore) for r in g.rules}
    assert "BatchplaneWebhookUnavailable" not in names and "BatchplaneWebhookSlow" in names


def test_every_selector_names_a_known_metric_and_its_labels() -> None:
    selector = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}")
    for path in STACKS:
        for group in rule_groups(alert_inputs(_stack(path))):
            for rule in group.rules:
                names = set(
                    re.findall(
                        r"\b(kueue_[a-z_]+|multikueue_[a-z_]+|batchplane_webhook_[a-z_]+|kube_[a-z_]+)",
                        rule.expr,
                    )
                )
                for name in names:
                    assert known_metric(name) is not None, (rule.name, name)
                for name, matchers in selector.findall(rule.expr):
                    family = known_metric(name)
                    assert family is not None, (rule.name, name)
                    for label in re.findall(r"([a-z_]+)\s*(?:=~|!~|!=|=)", matchers):
                        assert label in family.series_labels(name), (rule.name, name, label)


def test_every_runbook_url_points_at_a_heading_of_docs_observability() -> None:
    anchors = {
        re.sub(r"[^a-z0-9 _-]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in DOCS.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    }
    seen = set()
    for path in STACKS:
        for group in rule_groups(alert_inputs(_stack(path))):
            for rule in group.rules:
                if rule.recording:
                    continue
                url = rule.annotations["runbook_url"]
                assert url.split("#")[0].endswith("docs/observability.md")
                seen.add(url.split("#")[1])
    assert seen and seen <= anchors, seen - anchors


def test_the_synthetic_series_carry_only_the_labels_their_exporters_write() -> None:
    series = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\}$")
    for path in STACKS:
        for _, case in promtool_tests(alert_inputs(_stack(path))):
            for entry in case["input_series"]:
                match = series.match(entry["series"])
                assert match is not None, entry
                family = known_metric(match.group(1))
                assert family is not None, entry
                labels = set(re.findall(r'([a-z_]+)="', match.group(2)))
                assert labels <= family.series_labels(match.group(1)), entry


def test_the_recorded_series_in_the_catalog_are_what_the_recording_rules_write() -> None:
    from batchplane.observability.metrics import RECORDED_METRICS

    rules = {r.name: r for g in rule_groups(_inputs()) for r in g.rules if r.recording}
    assert set(rules) == set(RECORDED_METRICS)
    for name, rule in rules.items():
        by = re.search(r"by \(([^)]*)\)", rule.expr)
        assert by is not None, name
        kept = tuple(label.strip() for label in by.group(1).split(",") if label.strip() != "le")
        assert kept == RECORDED_METRICS[name].labels, name


def test_the_refusal_share_counts_only_judged_reviews_and_every_not_judged_reason_is_a_webhook_reason() -> (
    None
):
    from batchplane.observability.alerts import NOT_JUDGED_REASONS
    from batchplane.webhook.decisions import ALLOW_REASONS

    assert set(NOT_JUDGED_REASONS) <= set(ALLOW_REASONS)


def test_the_unavailable_alert_says_whether_updates_are_held_too() -> None:
    from batchplane.observability.alerts import webhook_rules

    def description(update_failure_policy: str) -> str:
        inputs = AlertInputs(
            alerts=AlertsConfig(),
            kueue_namespace="kueue-system",
            cluster_queues=("team-a",),
            provisioning_queues=(),
            gpu_resources=("nvidia.com/gpu",),
            webhook=WebhookInputs(
                "batchplane-system", "batchplane-quota-webhook", 3, "Fail", update_failure_policy
            ),
        )
        group = webhook_rules(inputs)
        assert group is not None
        [rule] = [
            r.as_dict() for r in group.rules if r.as_dict().get("alert") == "BatchplaneWebhookUnavailable"
        ]
        return str(rule["annotations"]["description"])

    assert "updates pass unchecked" in description("Ignore")
    assert "Kueue's start of admitted jobs" in description("Fail")

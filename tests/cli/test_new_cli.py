"""``batchplane new ENV --from TEMPLATE``: a valid environment from every template, from flags or from prompts, the
template's comments kept; bad input refused with its key named and nothing written; never over an existing file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.stack import load_stack_file, read_stack_file
from batchplane.stack.scaffold import Scaffold, format_path, parse_path, parse_value, settings_for
from tests.conftest import TEMPLATE_NAMES, TEMPLATES_DIR, template_path

#: What a run without a terminal must be given per template (its required values).
REQUIRED = {
    "gke": ["--project", "team-ml-prod-42"],
    "openshift": ["--context", "admin/api-ocp-example-com:6443"],
}
OPENSHIFT_GPU = [
    "--set",
    "batchplane:target.infrastructureId=ocp-prod-9f8k2",
    "--set",
    "batchplane:target.gpuPools[0].aws.ami=ami-0123456789abcdef0",
    "--set",
    "batchplane:target.gpuPools[0].aws.region=us-west-2",
    "--set",
    "batchplane:target.gpuPools[0].aws.zone=us-west-2b",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory with the shipped templates and no environment."""
    shutil.copytree(TEMPLATES_DIR, tmp_path / "templates")
    return tmp_path


def new(project: Path, *args: str, input: str | None = None) -> object:
    return CliRunner().invoke(app, ["new", *args, "--project-dir", str(project)], input=input)


def required_args(template: str) -> list[str]:
    kind = read_stack_file(template_path(template))["batchplane:target"]["kind"]
    return [*REQUIRED.get(kind, []), *(OPENSHIFT_GPU if template == "openshift-ai-gpu" else [])]


def comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_a_run_without_a_terminal_writes_a_valid_environment_from_every_template(
    project: Path, template: str
) -> None:
    result = new(project, "my-env", "--from", template, "--no-interactive", *required_args(template))
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    written = project / "stacks" / "Pulumi.my-env.yaml"
    stack = load_stack_file(written, "my-env")
    text = written.read_text(encoding="utf-8")
    assert set(comments(template_path(template).read_text(encoding="utf-8"))) <= set(comments(text))
    assert text.startswith(f"# Environment my-env, made from templates/Pulumi.{template}.yaml")
    target = stack.config.target
    if target.kind == "gke":
        assert stack.other_config["gcp:project"] == "team-ml-prod-42"
        assert target.cluster_name == "my-env"  # the environment's name, not the template's cluster
    if target.kind == "openshift":
        assert target.context == "admin/api-ocp-example-com:6443"
    assert "validate --stack my-env" in result.output  # type: ignore[attr-defined]
    assert "pulumi stack init my-env" in result.output  # type: ignore[attr-defined]


def test_a_new_region_moves_the_pools_zones_and_keeps_everything_else(project: Path) -> None:
    result = new(project, "eu", "--from", "gke-prod-dws", "--no-interactive", "--project", "p-eu-123456",
                 "--region", "europe-west4")  # fmt: skip
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    written = (project / "stacks" / "Pulumi.eu.yaml").read_text(encoding="utf-8").splitlines()[1:]
    shipped = template_path("gke-prod-dws").read_text(encoding="utf-8").splitlines()
    changed = [(a, b) for a, b in zip(shipped, written, strict=False) if a != b]
    assert changed == [
        ("    region: us-central1", "    region: europe-west4"),
        ("    clusterName: batchplane-prod", "    clusterName: eu"),
        ("        nodeLocations: [us-central1-a, us-central1-c]", "        nodeLocations: [europe-west4-a, europe-west4-c]"),
        ("        nodeLocations: [us-central1-a, us-central1-b]", "        nodeLocations: [europe-west4-a, europe-west4-b]"),
    ]  # fmt: skip
    assert written[len(shipped)] == "  gcp:project: p-eu-123456"


def test_an_interactive_run_is_driven_through_stdin_and_asks_again_for_a_refused_value(project: Path) -> None:
    prompts = len(settings_for("dev", read_stack_file(template_path("gke-dev"))))
    answers = ["team-ml-dev-42", "", "Bad_Name"] + [""] * (prompts - 3) + ["ml-dev"]
    result = new(project, "dev", "--from", "gke-dev", "--interactive", input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert "GCP project id [gcp:project]" in result.output  # type: ignore[attr-defined]
    assert "batchplane:target.clusterName" in result.output  # type: ignore[attr-defined]  (the refusal, then asked again)
    stack = load_stack_file(project / "stacks" / "Pulumi.dev.yaml", "dev")
    assert stack.other_config["gcp:project"] == "team-ml-dev-42"
    assert stack.config.target.cluster_name == "ml-dev"


def test_an_interactive_quota_answer_is_a_number_and_a_shared_quota_map_is_asked_once(project: Path) -> None:
    settings = settings_for("p", read_stack_file(template_path("gke-prod-dws")))
    quota_paths = [s.path for s in settings if s.key == "batchplane:teams"]
    assert quota_paths == [  # team-a's map is the anchor team-b and team-c alias: asked once
        'batchplane:teams.members[0].quotas.default-flavor["nvidia.com/gpu"]',
        'batchplane:teams.members[0].quotas.h100["nvidia.com/gpu"].nominalQuota',
        'batchplane:teams.members[0].quotas.l4["nvidia.com/gpu"].nominalQuota',
    ]
    answers = ["team-ml-prod-42"] + ["" if s.path != quota_paths[2] else "3" for s in settings[1:]]
    result = new(project, "p", "--from", "gke-prod-dws", "--interactive", input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    stack = load_stack_file(project / "stacks" / "Pulumi.p.yaml", "p")
    gpus = [
        q.nominal_quota
        for m in stack.config.teams.members
        for q in [m.quotas["l4"]["nvidia.com/gpu"]]  # type: ignore[union-attr]
    ]
    assert gpus == ["3", "3", "3"]
    assert "quotas: *quotas" in (project / "stacks" / "Pulumi.p.yaml").read_text(encoding="utf-8")


def test_a_bad_value_is_refused_with_its_key_and_nothing_is_written(project: Path) -> None:
    result = new(project, "dev", "--from", "gke-dev", "--no-interactive", "--project", "team-ml-dev-42",
                 "--cluster-name", "Bad_Name")  # fmt: skip
    assert result.exit_code == 1
    assert "batchplane:target.clusterName" in result.stderr  # type: ignore[attr-defined]
    assert "not written" in result.stderr  # type: ignore[attr-defined]
    assert not (project / "stacks" / "Pulumi.dev.yaml").exists()


def test_a_bad_project_is_refused_with_its_key(project: Path) -> None:
    result = new(project, "dev", "--from", "gke-dev", "--no-interactive", "--project", "X")
    assert result.exit_code == 1
    assert "gcp:project" in result.stderr  # type: ignore[attr-defined]


def test_a_missing_required_value_names_the_flag_to_give(project: Path) -> None:
    result = new(project, "gpu", "--from", "openshift-ai-gpu", "--no-interactive")
    assert result.exit_code == 2
    assert "--context" in result.stderr and "batchplane:target.infrastructureId" in result.stderr  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["my-env", "--from", "nope"], "no template 'nope'"),
        (["bad/name", "--from", "kind"], "environment name 'bad/name'"),
        (["my-env", "--from", "kind", "--project", "p"], "--project does not apply to template kind"),
        (["my-env", "--from", "kind", "--set", "batchplane:target"], "give KEY=VALUE"),
        (["my-env", "--from", "kind", "--set", "batchplane:teams.members[7].name=x"], "no list item [7]"),
    ],
)
def test_usage_errors_exit_2(project: Path, args: list[str], message: str) -> None:
    result = new(project, *args, "--no-interactive")
    assert result.exit_code == 2
    assert message in result.stderr  # type: ignore[attr-defined]


def test_an_existing_environment_is_never_overwritten(project: Path) -> None:
    (project / "stacks").mkdir()
    (project / "stacks" / "Pulumi.kind.yaml").write_text("config: {}\n", encoding="utf-8")
    result = new(project, "kind", "--from", "kind", "--no-interactive")
    assert result.exit_code == 2
    assert "exists: not overwritten" in result.stderr  # type: ignore[attr-defined]
    assert (project / "stacks" / "Pulumi.kind.yaml").read_text(encoding="utf-8") == "config: {}\n"


def test_set_reaches_any_key_with_pulumis_path_syntax(project: Path) -> None:
    path = 'batchplane:teams.members[0].quotas.default-flavor["nvidia.com/gpu"]'
    result = new(project, "k", "--from", "kind", "--no-interactive", "--set", "batchplane:environment=staging",
                 "--set", "batchplane:target.clusterName=laptop")  # fmt: skip
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    stack = load_stack_file(project / "stacks" / "Pulumi.k.yaml", "k")
    assert (stack.config.environment, stack.config.target.cluster_name) == ("staging", "laptop")  # type: ignore[union-attr]
    assert parse_path(path) == (
        "batchplane:teams",
        ("members", 0, "quotas", "default-flavor", "nvidia.com/gpu"),
    )
    assert format_path(*parse_path(path)) == path


def test_values_read_as_yaml_scalars() -> None:
    assert [parse_value(v) for v in ("8", "8Gi", "true", "us-east4", "", "1.5")] == [
        8,
        "8Gi",
        True,
        "us-east4",
        "",
        1.5,
    ]


def test_the_settings_are_derived_from_each_templates_target() -> None:
    flags = {
        name: sorted({s.flag for s in settings_for("e", read_stack_file(template_path(name))) if s.flag})
        for name in TEMPLATE_NAMES
    }
    for name, found in flags.items():
        kind = read_stack_file(template_path(name))["batchplane:target"]["kind"]
        want = {
            "gke": ["cluster_name", "project", "region"],
            "kind": ["cluster_name"],
            "openshift": ["context"],
        }
        assert found == want[kind], name
    workers = [
        (s.path, s.default)
        for s in settings_for("e", read_stack_file(template_path("gke-multiregion-dws")))
        if s.key == "batchplane:multiKueue"
    ]
    assert workers == [
        ("batchplane:multiKueue.workers[0].target.clusterName", "e-us-east4"),
        ("batchplane:multiKueue.workers[1].target.clusterName", "e-europe-west4"),
        ("batchplane:multiKueue.workers[2].target.clusterName", "e-asia-southeast1"),
    ]


def test_scaffold_open_refuses_what_new_refuses(project: Path) -> None:
    from batchplane.stack.scaffold import ScaffoldError

    with pytest.raises(ScaffoldError, match="no template"):
        Scaffold.open(project, "x", "nope")

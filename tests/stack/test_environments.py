"""Every environment in ``stacks/`` (the team's own) gets the generic checks the templates get: ``validate``, the
policy pack through the check runner (with ``policies/config/<env>.json`` when present), the program offline and
every rendered object through the CRD check.

The shipped templates (``templates/``) are held to more than this (goldens, pictures, the README table, pinned
facts): those tests iterate ``TEMPLATE_NAMES`` and never read ``stacks/`` — so an environment is tested here and is
never a failure cause elsewhere by being there (tests/stack/test_environment_layout.py shows both on a copy).
With no environment yet the parameter sets are empty and pytest reports these as skipped: nothing to check.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from batchplane.cli import app
from batchplane.offline import read_stack_file, run_program
from batchplane.offline.render import render_resources
from tests.conftest import ENVIRONMENT_NAMES, REPO_ROOT, environment_path
from tests.support.stacks import shared_crd_catalog

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("env", ENVIRONMENT_NAMES)
def test_every_environment_validates(env: str) -> None:
    result = CliRunner().invoke(app, ["validate", "--config", str(environment_path(env))])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"stack {env}: valid ("), result.stdout


@pytest.mark.parametrize("env", ENVIRONMENT_NAMES)
def test_every_environment_passes_the_policy_pack_with_its_policy_config(env: str) -> None:
    args = ["check", "--project-dir", str(REPO_ROOT), "--config", str(environment_path(env))]
    policy_config = REPO_ROOT / "policies" / "config" / f"{env}.json"
    if policy_config.is_file():  # as the PR workflow passes it
        args += ["--policy-config", str(policy_config)]
    result = CliRunner().invoke(app, args, env={"GITHUB_ACTIONS": ""})
    assert result.exit_code == 0, result.output
    assert f"stack {env}: " in result.stdout and " 0 mandatory;" in result.stdout, result.stdout


@pytest.mark.parametrize("env", ENVIRONMENT_NAMES)
def test_every_environment_runs_offline_and_every_rendered_custom_resource_passes_the_crd_check(
    env: str,
) -> None:
    run = run_program(REPO_ROOT, env, read_stack_file(environment_path(env)), preview=False)
    crds = shared_crd_catalog()
    known = set(crds.kinds())
    manifests = [r.manifest for r in render_resources(run.resources).objects]
    checked = [o for o in manifests if (o["apiVersion"].rpartition("/")[0], o["kind"]) in known]
    assert any(o["kind"] == "ClusterQueue" for o in checked), f"{env}: no ClusterQueue rendered"
    problems = {
        f"{o['kind']}/{o['metadata'].get('namespace', '')}/{o['metadata']['name']}": [str(i) for i in issues]
        for o in checked
        if (issues := crds.validate(o))
    }
    assert problems == {}

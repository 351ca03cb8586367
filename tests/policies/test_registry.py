"""The pack as a whole: policy metadata, the pack's self-containment, allow-lists in step with
Batchplane's, the documented policy list, and the pack served exactly as the Pulumi CLI starts it."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from batchplane_policies import budget, gke, installs, kueue, multikueue, registry, releases, webhook
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy

from batchplane.config import operators as ops
from batchplane.policyrun import run_policy_pack
from tests.conftest import REPO_ROOT

PACK_DIR = REPO_ROOT / "policies"
NAMES = [p.name for p in registry.POLICIES]


def test_policy_names_are_unique_kebab_case() -> None:
    assert len(NAMES) == len(set(NAMES)) == 29
    assert [n for n in NAMES if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", n)] == []


@pytest.mark.parametrize("policy", registry.POLICIES, ids=NAMES)
def test_every_policy_has_description_level_and_remediation(policy: object) -> None:
    assert isinstance(policy, ResourceValidationPolicy | StackValidationPolicy)
    assert policy.description.endswith(".")
    assert policy.enforcement_level in (EnforcementLevel.MANDATORY, EnforcementLevel.ADVISORY)
    assert policy.remediation_steps and len(policy.remediation_steps) > 20


def test_registry_lists_every_area_module_in_order() -> None:
    assert [
        *gke.POLICIES,
        *kueue.POLICIES,
        *installs.POLICIES,
        *webhook.POLICIES,
        *multikueue.POLICIES,
        *budget.POLICIES,
        *releases.POLICIES,
    ] == registry.POLICIES
    assert registry.by_name("kueue-finite-quotas") is kueue.kueue_finite_quotas
    with pytest.raises(KeyError):
        registry.by_name("no-such-policy")


def _imported_top_levels(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_pack_imports_only_what_its_requirements_install() -> None:
    imported: set[str] = set()
    for path in PACK_DIR.rglob("*.py"):
        imported |= _imported_top_levels(path)
    third_party = imported - set(sys.stdlib_module_names) - {"batchplane_policies", "__future__"}
    assert third_party == {"pulumi_policy", "pulumi", "yaml", "batchplane"}
    requirements = (PACK_DIR / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert "-e .." in requirements  # the batchplane core package: pip runs in policies/
    for distribution in ("pulumi-policy==", "pulumi==", "PyYAML"):
        assert any(line.startswith(distribution) for line in requirements)


#: What the pack may load of batchplane: the shared rules and the core they stand on, no stack loading, no
#: platform beyond the GKE rules and the OpenShift DataScienceCluster module, no component, no kubernetes client.
PACK_MAY_LOAD = ("batchplane._version", "batchplane.quantity", "batchplane.config", "batchplane.targets.gke.rules", "batchplane.errors",
                 "batchplane.frameworks",  # the job-framework registry (pure data) the version rules read
                 "batchplane.wellknown",
                 # Kueue's quota model over the cohort tree (potentialAvailable), shared with the webhook and
                 # `batchplane diff`: Pulumi-free and kubernetes-client-free by the import contracts
                 "batchplane.webhook.queues", "batchplane.webhook.policy", "batchplane.webhook.errors",
                 "batchplane.accounting",
                 # "quota ≤ pool capacity" (PoolQuota), stated once for the program and the pack
                 "batchplane.backed_pools",
                 # DataScienceCluster component -> job operator, the table the program derives its Kueue CR from,
                 # and the YAML module dsc.py merges with (PyYAML is a pack requirement)
                 "batchplane.targets.openshift.dsc", "batchplane.yamlfile")  # fmt: skip


def test_pack_imports_the_shared_rules_from_the_core_package_only() -> None:
    probe = "import sys, json, batchplane_policies.registry; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=PACK_DIR, capture_output=True, text=True, check=True
    )
    loaded = json.loads(done.stdout)
    ours = [m for m in loaded if m.startswith("batchplane.")]
    packages = (
        "batchplane.targets",
        "batchplane.targets.gke",
        "batchplane.targets.openshift",
        "batchplane.webhook",
    )
    assert [m for m in ours if m not in packages and not m.startswith(PACK_MAY_LOAD)] == []
    assert "batchplane.quantity" in ours and "batchplane.config.operators" in ours
    assert "batchplane.webhook.queues" in ours  # the budget policies' cohort-tree maxima
    assert [m for m in loaded if m == "kubernetes" or m.startswith("kubernetes.")] == []


def test_pack_allow_lists_match_batchplane_config() -> None:
    assert {
        "cert-manager": list(ops.CERT_MANAGER_VERSIONS),
        "kuberay-operator": list(ops.KUBERAY_VERSIONS),
        "kueue": list(ops.KUEUE_VERSIONS),
        "kubeflow-trainer": list(ops.TRAINER_V2_VERSIONS),
    } == installs.SUPPORTED_CHART_VERSIONS
    assert {
        "github.com/ray-project/kuberay": [f"v{v}" for v in ops.KUBERAY_VERSIONS],
        "github.com/kubeflow/trainer": list(ops.TRAINING_OPERATOR_V1_VERSIONS),
        "github.com/project-codeflare/appwrapper": list(ops.APPWRAPPER_VERSIONS),
    } == installs.SUPPORTED_SOURCE_VERSIONS


def test_gpu_machine_families_cover_batchplane_fixed_gpu_machines() -> None:
    from batchplane.targets.gke.machines import FIXED_GPU_MACHINES

    assert [m for m in FIXED_GPU_MACHINES if not m.startswith(gke.GPU_MACHINE_PREFIXES)] == []


def test_docs_list_every_policy_with_its_level() -> None:
    docs = (REPO_ROOT / "docs" / "policies.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([a-z0-9-]+)` \| [^|]+ \| (mandatory|advisory) \|", docs, re.MULTILINE))
    assert rows == {
        p.name: (p.enforcement_level or EnforcementLevel.ADVISORY).value for p in registry.POLICIES
    }


@pytest.mark.slow
def test_pack_serves_every_policy_under_python_m_pulumi_policy() -> None:
    report = run_policy_pack(PACK_DIR, [], project="batchplane", stack="empty")
    assert (report.pack, report.pack_version, report.violations) == ("batchplane", "0.1.0", [])
    assert [p.name for p in report.policies] == sorted(NAMES)
    kinds = {p.name: p.policy_type for p in report.policies}
    assert {n for n, t in kinds.items() if t == "resource"} == {
        p.name for p in registry.POLICIES if isinstance(p, ResourceValidationPolicy)
    }
    configs = {p.name: p.config for p in report.policies}
    assert configs["cert-manager-present"] == {"preinstalled": False}


def test_the_pack_imports_the_framework_registry_instead_of_a_copy() -> None:
    """One statement of which operator switches on which Kueue integration: the program and the pack read the same
    registry (the pack once shipped a generated copy that left out RayService and JobSet)."""
    import batchplane.frameworks as registry

    assert not (PACK_DIR / "batchplane_policies" / "frameworks.py").exists()
    assert installs.KUEUE_CHART_DEFAULT_FRAMEWORKS is registry.KUEUE_CHART_DEFAULT_FRAMEWORKS
    assert installs.OPERATOR_INTEGRATIONS["KubeRay"] == registry.INTEGRATIONS_OF_OPERATOR["kuberay"]
    assert set(installs.OPERATOR_INTEGRATIONS.values()) == set(registry.INTEGRATIONS_OF_OPERATOR.values())

"""Issue #38, "done when": every template's objects need no CRD that the template does not install and the platform
does not serve on a fresh cluster. Each template is rendered offline (no lookup finds anything: the offline answers
are canned) and every object's API group must be Kubernetes' own, the platform's own, or one that an operator the
template installs brings (its Helm release / kustomize directory, or its OLM Subscription's package)."""

from __future__ import annotations

from functools import cache

import pytest

from batchplane.offline import read_stack_file, run_program
from batchplane.offline.render import Rendering, render_resources
from tests.conftest import REPO_ROOT, TEMPLATE_NAMES, template_path

#: Groups every Kubernetes API server serves (no CRD): the legacy/unsuffixed ones and ``*.k8s.io`` except the
#: ``*.x-k8s.io`` groups, which are SIG projects' CRDs (Kueue, JobSet, ...).
UNSUFFIXED = frozenset({"", "apps", "batch", "policy", "autoscaling"})

#: What a fresh cluster of the platform serves before the stack runs.
PLATFORM_GROUPS: dict[str, frozenset[str]] = {
    # OpenShift 4: OLM (operators.coreos.com), the Machine API and its autoscaler, the image and route APIs, the
    # cluster-monitoring stack's Prometheus Operator CRDs (monitoring.coreos.com), config and console.
    "openshift": frozenset(
        {
            "operators.coreos.com",
            "machine.openshift.io",
            "autoscaling.openshift.io",
            "image.openshift.io",
            "route.openshift.io",
            "config.openshift.io",
            "console.openshift.io",
            "monitoring.coreos.com",
        }
    ),
    # GKE: Managed Service for Prometheus's PodMonitoring/ClusterRules (monitoring.googleapis.com), on by default.
    "gke": frozenset({"monitoring.googleapis.com"}),
    "kind": frozenset(),
}

#: What each operator install brings: by Helm release / kustomize directory name fragment, or OLM package.
HELM_GROUPS = {
    "cert-manager": {"cert-manager.io"},
    "kueue": {"kueue.x-k8s.io"},
    "kuberay": {"ray.io"},
    "training": {"kubeflow.org"},
    "trainer": {"trainer.kubeflow.org"},
    "kube-prometheus-stack": {"monitoring.coreos.com"},
}
OLM_GROUPS = {
    "openshift-cert-manager-operator": {"cert-manager.io"},
    "kueue-operator": {"kueue.x-k8s.io", "kueue.openshift.io"},
    # OpenShift AI's operator brings the DSC and, managing Kueue in 2.x, Kueue's CRDs.
    "rhods-operator": {
        "datasciencecluster.opendatahub.io",
        "dscinitialization.opendatahub.io",
        "kueue.x-k8s.io",
    },
    # The JobSet Operator (Trainer's prerequisite from OpenShift AI 3.2 on) brings its JobSetOperator CR's group.
    "job-set": {"operator.openshift.io"},
    "nfd": {"nfd.openshift.io"},
    "gpu-operator-certified": {"nvidia.com"},
}

#: Known gaps, each a preflight blocker with its fix: kind's template collects metrics with the Prometheus Operator
#: it does not install (observability.prometheus: operator; check `monitoring` blocks without its CRDs).
KNOWN_PREFLIGHT_BLOCKED = {"kind": {"monitoring.coreos.com"}}


def _platform(name: str) -> str:
    return "openshift" if name.startswith("openshift") else "gke" if name.startswith("gke") else "kind"


@cache
def _rendering(name: str) -> Rendering:
    return render_resources(
        run_program(REPO_ROOT, name, read_stack_file(template_path(name)), preview=False).resources
    )


def _installed_groups(rendering: Rendering) -> set[str]:
    groups: set[str] = set()
    for skipped in rendering.skipped:
        if skipped.type in ("kubernetes:helm.sh/v3:Release", "kubernetes:kustomize/v2:Directory"):
            for fragment, brought in HELM_GROUPS.items():
                if fragment in skipped.name:
                    groups |= brought
    for obj in rendering.objects:
        if obj.manifest["kind"] == "Subscription":
            groups |= OLM_GROUPS.get(obj.manifest["spec"]["name"], set())
    return groups


def missing_groups(name: str) -> set[str]:
    """The API groups of the template's objects that nothing serves on a fresh cluster of its platform."""
    rendering = _rendering(name)
    served = PLATFORM_GROUPS[_platform(name)] | _installed_groups(rendering)
    missing = set()
    for obj in rendering.objects:
        group = obj.manifest["apiVersion"].rpartition("/")[0]
        builtin = group in UNSUFFIXED or (group.endswith(".k8s.io") and not group.endswith(".x-k8s.io"))
        if not builtin and group not in served:
            missing.add(group)
    return missing


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_templates_objects_need_only_crds_the_platform_or_the_template_brings(name: str) -> None:
    assert missing_groups(name) == KNOWN_PREFLIGHT_BLOCKED.get(name, set())

"""The upgrade step table: what each Kueue release between 0.13 and the pinned 0.19.2 requires of a running cluster.

Every row is transcribed from the release note it cites (``kubernetes-sigs/kueue`` ``CHANGELOG/CHANGELOG-0.<minor>.md``
at tag v0.19.2, line numbers given); :mod:`batchplane.upgrade.plan` orders and filters the rows for one cluster and
``docs/upgrading.md`` prints them (``python -m batchplane.docfigures``). Where the release notes say otherwise than
issue #41, the notes win: the Cohort ``v1alpha1`` removal is a step of 0.12 → 0.13, so an upgrade *from* 0.13.1 no
longer needs it; 0.16 planned to stop serving ``v1beta1`` in 0.18, yet v0.19.2 still serves it (deprecated), so the
storage migration is a step Batchplane runs, not yet a refusal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from batchplane.wellknown import KUEUE_CHART_CRDS

__all__ = [
    "KUEUE_CRDS",
    "KUEUE_STEPS",
    "REMOVED_VERSIONS",
    "Step",
    "Version",
    "parse_version",
    "stored_version_refusals",
    "version_text",
]

Version = tuple[int, int, int]
"""A release as ``(major, minor, patch)``."""

Actor = Literal["batchplane", "operator"]
"""Who does a step: ``batchplane`` (the program or a ``batchplane`` command does it) or ``operator`` (a person
with cluster-admin runs the commands the step lists)."""

Condition = Literal["always", "stored-v1alpha1", "stored-v1beta1", "no-wait-for-pods-ready", "ray", "tas"]
"""When a step applies to a cluster: ``always``; ``stored-v1alpha1`` / ``stored-v1beta1`` (the step's CRDs still
list that version in ``status.storedVersions``); ``no-wait-for-pods-ready`` (the Configuration in use sets no
``waitForPodsReady``); ``ray`` (KubeRay runs); ``tas`` (a Topology or a flavor with ``topologyName`` exists)."""

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")

CHANGELOG = "https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/CHANGELOG/CHANGELOG-{minor}.md#L{lines}"
"""Where each row's text comes from: the CHANGELOG file of the minor release at tag v0.19.2 (one file per minor)."""

KUEUE_CRDS = KUEUE_CHART_CRDS
"""The Kueue CRDs whose versions the planner reads (:data:`batchplane.wellknown.KUEUE_CHART_CRDS`)."""


def parse_version(text: str) -> Version:
    """``"0.13.1"``, ``"v0.13.1"`` or ``"0.16"`` (patch 0) as a :data:`Version`.

    Raises:
        ValueError: not ``[v]MAJOR.MINOR[.PATCH]``.
    """
    match = _VERSION.match(text.strip())
    if match is None:
        raise ValueError(f'"{text}" is not a version (MAJOR.MINOR[.PATCH], e.g. 0.13.1)')
    return int(match[1]), int(match[2]), int(match[3] or 0)


def version_text(version: Version) -> str:
    """``(0, 13, 1)`` → ``"0.13.1"``."""
    return ".".join(str(part) for part in version)


@dataclass(frozen=True)
class Step:
    """One upgrade step of an operator.

    Attributes:
        operator: ``kueue`` (the only operator whose notes require steps between the supported versions).
        key: a stable short name (``cohort-v1alpha1-removed``).
        introduced: the release that requires the step; it applies to an upgrade from below it to it or above.
        condition: when it applies to a given cluster (:data:`Condition`).
        stored_objects: what the upgrade does to objects stored in etcd.
        users_notice: what the cluster's users see.
        actor: who does it (:data:`Actor`).
        actions: the commands or program behaviour, in order.
        source: the release-note URL (tag v0.19.2, file and lines).
        tag: the release the note belongs to (``v0.13.0``).
        crds: the CRDs the stored-version condition reads (empty for other conditions).
    """

    operator: str
    key: str
    introduced: Version
    condition: Condition
    stored_objects: str
    users_notice: str
    actor: Actor
    actions: tuple[str, ...]
    source: str
    tag: str
    crds: tuple[str, ...] = ()

    def applies_between(self, current: Version, target: Version) -> bool:
        """Whether an upgrade from ``current`` to ``target`` crosses :attr:`introduced`."""
        return current < self.introduced <= target


KUEUE_STEPS: tuple[Step, ...] = (
    Step(
        operator="kueue",
        key="cohort-v1alpha1-removed",
        introduced=(0, 13, 0),
        condition="stored-v1alpha1",
        crds=("cohorts.kueue.x-k8s.io",),
        stored_objects="Cohort v1alpha1 is no longer served; `.spec.parent` becomes `.spec.parentName` in v1beta1. "
        "Cohorts stored as v1alpha1 cannot be read after the upgrade.",
        users_notice="Nothing if the restore runs in the same maintenance window; until it does, ClusterQueues "
        "lose the Cohort objects' quotas and hierarchy.",
        actor="operator",
        actions=(
            "kubectl get cohorts.kueue.x-k8s.io -o yaml > cohorts.yaml",
            "sed -i -e 's/v1alpha1/v1beta1/g' cohorts.yaml",
            r"sed -i -e 's/^    parent: \(\S*\)$/    parentName: \1/' cohorts.yaml",
            "kubectl delete crd cohorts.kueue.x-k8s.io",
            "install the pinned Kueue (`pulumi up`; it serves Cohort v1beta1)",
            "kubectl apply -f cohorts.yaml",
        ),
        source=CHANGELOG.format(minor="0.13", lines="272-305"),
        tag="v0.13.0",
    ),
    Step(
        operator="kueue",
        key="topology-v1alpha1-removed",
        introduced=(0, 14, 0),
        condition="stored-v1alpha1",
        crds=("topologies.kueue.x-k8s.io",),
        stored_objects="Topology v1alpha1 is no longer served; Topologies stored as v1alpha1 must be backed up, "
        "the CRD deleted (its objects' finalizers removed) and restored as v1beta1.",
        users_notice="Topology-aware scheduling stops until the Topologies are restored.",
        actor="operator",
        actions=(
            "kubectl get topologies.kueue.x-k8s.io -o yaml > topologies.yaml",
            "sed -i -e 's/v1alpha1/v1beta1/g' topologies.yaml",
            "kubectl delete crd topologies.kueue.x-k8s.io",
            "remove the finalizers of every Topology: kubectl patch topology.kueue.x-k8s.io NAME "
            '-p \'{"metadata":{"finalizers":[]}}\' --type=merge',
            "install the pinned Kueue (`pulumi up`; it serves Topology v1beta1)",
            "kubectl apply -f topologies.yaml",
        ),
        source=CHANGELOG.format(minor="0.14", lines="272-298"),
        tag="v0.14.0",
    ),
    Step(
        operator="kueue",
        key="v1beta2-served",
        introduced=(0, 15, 0),
        condition="always",
        stored_objects="None: v1beta2 is served beside v1beta1, which stays the storage version.",
        users_notice="Manifests may use kueue.x-k8s.io/v1beta2; Batchplane already emits v1beta2.",
        actor="batchplane",
        actions=("the program emits v1beta2 objects (nothing to do)",),
        source=CHANGELOG.format(minor="0.15", lines="311-316"),
        tag="v0.15.0",
    ),
    Step(
        operator="kueue",
        key="multikueue-insecure-kubeconfigs-rejected",
        introduced=(0, 15, 0),
        condition="always",
        stored_objects="None.",
        users_notice="A MultiKueueCluster whose kubeconfig uses exec plugins, auth providers, tokenFile, CA file "
        "paths or insecure TLS goes inactive (reason InsecureKubeConfig).",
        actor="batchplane",
        actions=(
            "Batchplane checks every worker kubeconfig it generates against the same rules before apply",
        ),
        source=CHANGELOG.format(minor="0.15", lines="300-304"),
        tag="v0.15.0",
    ),
    Step(
        operator="kueue",
        key="v1beta2-storage-migration",
        introduced=(0, 16, 0),
        condition="stored-v1beta1",
        crds=KUEUE_CRDS,
        stored_objects="New objects are stored as v1beta2; existing objects stay stored as v1beta1 until written "
        "(Topologies, ResourceFlavors, long-running Workloads may never be). Kueue's hack/migrate-to-v1beta2.sh "
        "rewrites each one through the conversion webhook; then v1beta1 can be pruned from status.storedVersions.",
        users_notice="Nothing; the rewrite is a no-op update of every Kueue object (it adds the annotation "
        "kueue.x-k8s.io/storage-version: v1beta2).",
        actor="batchplane",
        actions=(
            "Helm installs (kind, GKE): the program does it on the pulumi up that installs Kueue 0.16+, after the "
            "webhook serves (the kueue-storage-migration step; batchplane/upgrade/migrate.py), resuming where an "
            "interrupted run stopped",
            "OLM installs (OpenShift), or by hand: hack/migrate-to-v1beta2.sh from kubernetes-sigs/kueue v0.19.2",
            "kubectl patch crd CRD --subresource=status --type=merge "
            '-p \'{"status":{"storedVersions":["v1beta2"]}}\' for each Kueue CRD',
        ),
        source=CHANGELOG.format(minor="0.16", lines="371-380"),
        tag="v0.16.0",
    ),
    Step(
        operator="kueue",
        key="tas-label-no-longer-read",
        introduced=(0, 17, 0),
        condition="tas",
        stored_objects="Kueue stops evaluating the kueue.x-k8s.io/tas label.",
        users_notice="TAS workloads created before Kueue 0.14.0 may lose their topology handling; let them finish "
        "before the upgrade.",
        actor="operator",
        actions=("check that no TAS workload created before Kueue 0.14.0 still runs",),
        source=CHANGELOG.format(minor="0.17", lines="310-313"),
        tag="v0.17.0",
    ),
    Step(
        operator="kueue",
        key="kueue-namespace-excluded",
        introduced=(0, 18, 0),
        condition="always",
        stored_objects="None.",
        users_notice="Jobs in kube-system or in Kueue's own namespace are no longer managed by Kueue.",
        actor="operator",
        actions=("move Kueue-managed workloads out of kube-system and Kueue's namespace",),
        source=CHANGELOG.format(minor="0.18", lines="154-166"),
        tag="v0.18.0",
    ),
    Step(
        operator="kueue",
        key="wait-for-pods-ready-default",
        introduced=(0, 19, 0),
        condition="no-wait-for-pods-ready",
        stored_objects="None.",
        users_notice="WaitForPodsReady is on by default (30 minute timeout, 30 minute recovery timeout): an "
        "admitted workload whose pods are not all ready within 30 minutes is evicted and requeued.",
        actor="batchplane",
        actions=(
            "set operators.kueue.configuration.waitForPodsReady to choose the timeout, or accept Kueue's default",
        ),
        source=CHANGELOG.format(minor="0.19", lines="215"),
        tag="v0.19.0",
    ),
    Step(
        operator="kueue",
        key="ray-head-sidecars-counted",
        introduced=(0, 19, 0),
        condition="ray",
        stored_objects="None.",
        users_notice="A RayCluster head with in-tree autoscaling reserves the autoscaler sidecar (500m CPU / 512Mi "
        "memory by default); a RayJob with submissionMode: SidecarMode reserves the submitter (500m CPU / 200Mi).",
        actor="operator",
        actions=(
            "raise the cpu and memory nominalQuota of the ClusterQueues Ray heads use by the sidecars' requests",
        ),
        source=CHANGELOG.format(minor="0.19", lines="206-211"),
        tag="v0.19.0",
    ),
)
"""Kueue's steps from 0.13 to 0.19.2, in release order."""

REMOVED_VERSIONS: dict[str, tuple[Version, str]] = {
    "cohorts.kueue.x-k8s.io": ((0, 13, 0), "v1alpha1"),
    "topologies.kueue.x-k8s.io": ((0, 14, 0), "v1alpha1"),
}
"""CRD → (the release that stops serving a version, that version): an upgrade to that release or later with the
version still in ``status.storedVersions`` is refused (CHANGELOG-0.13.md L304-305, CHANGELOG-0.14.md L272-298)."""


def stored_version_refusals(stored: dict[str, tuple[str, ...]], target: Version) -> list[str]:
    """Why an install of Kueue ``target`` must not run: one sentence per CRD whose ``status.storedVersions``
    (``stored``: CRD name → versions; an absent CRD is left out) lists a version ``target`` no longer serves
    (:data:`REMOVED_VERSIONS`), naming the step to run first. Empty: the install may run."""
    out: list[str] = []
    for crd, (removed_in, version) in REMOVED_VERSIONS.items():
        if version not in stored.get(crd, ()) or target < removed_in:
            continue
        step = next(s for s in KUEUE_STEPS if crd in s.crds and s.introduced == removed_in)
        out.append(
            f"{crd} still lists {version} in status.storedVersions and Kueue {version_text(removed_in)} stops "
            f"serving it: run step {step.key} ({step.tag}, {step.source}) around the install of "
            f"{version_text(target)}: " + "; ".join(step.actions)
        )
    return out

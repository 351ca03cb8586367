"""Operators: stage 2 on kind / existing / GKE clusters, installed in order and gated on real readiness.

Order (each step ``depends_on`` the previous ones; the order Kueue's own e2e setup installs in,
``hack/testing/e2e-common.sh`` at https://github.com/kubernetes-sigs/kueue/tree/v0.19.2):

1. cert-manager (Helm, ``crds.enabled``);
2. job-operator CRDs and operators: KubeRay CRDs (kustomize, server-side apply, pinned tag) → KubeRay
   (Helm, ``skip_crds``); Trainer v2 (Helm, with JobSet) or the v1 Training Operator (kustomize,
   server-side apply — it has no chart, and its CRDs exceed the 256 KiB client-side-apply annotation);
3. Kueue (Helm) with the typed Configuration;
4. the Kueue webhook :class:`~batchplane.operators.readiness_gate.ReadinessGate`;
5. AppWrapper (its release manifest; needs Kueue serving).

Everything that needs Kueue (Kueue objects, tenant LocalQueues, the quota webhook) depends on
:attr:`Operators.kueue_ready`.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from batchplane.operators.helm_operator import HelmOperator, HelmOperatorArgs
from batchplane.operators.installs import HelmInstall, ManifestInstall, OperatorInstalls
from batchplane.operators.readiness_gate import ReadinessGate, ReadinessGateArgs

TYPE_TOKEN = "batchplane:operators:Operators"
STORAGE_MIGRATION_TIMEOUT_SECONDS = 1800
"""Seconds the Kueue storage migration may retry API errors before ``pulumi up`` fails (it resumes on the next)."""


class OperatorsArgs(TypedDict):
    """Inputs of :class:`Operators`."""

    plan: OperatorInstalls
    """Required. The installs, from :func:`batchplane.operators.operator_installs`."""
    context: pulumi.Input[str | None]
    """Required (``None`` = current context). The Kubernetes provider's kubeconfig context, for the gate."""
    kubeconfig: NotRequired[pulumi.Input[str | None]]
    """The provider's kubeconfig (content or path), for the gate; kept secret. Defaults to none."""


def _helm(name: str, install: HelmInstall, opts: pulumi.ResourceOptions) -> HelmOperator:
    args: HelmOperatorArgs = {
        "chart": install.chart,
        "version": install.version,
        "namespace": install.namespace,
        "release_name": install.release_name,
        "values": install.values,
        "repository": install.repository,
        "skip_crds": install.skip_crds,
        "retain_on_delete": bool(install.template_crds),
    }
    return HelmOperator(f"{name}-{install.role}", args, opts)


def _manifests(name: str, install: ManifestInstall, opts: pulumi.ResourceOptions) -> pulumi.Resource:
    if install.kind == "kustomize":
        return k8s.kustomize.v2.Directory(f"{name}-{install.role}", directory=install.source, opts=opts)
    return k8s.yaml.v2.ConfigFile(f"{name}-{install.role}", file=install.source, opts=opts)


class Operators(pulumi.ComponentResource):
    """The operators of one stack and the Kueue readiness gate.

    Attributes:
        installs: child install resources by role (``cert-manager``, ``kuberay-crds``, ``kuberay``,
            ``trainer``/``training-operator``, ``kueue``, ``appwrapper``).
        kueue_gate: the Kueue webhook gate, or ``None`` when Kueue is not installed.
        stored_versions: before the Kueue release, the check that no Kueue CRD stores a version the pinned Kueue no
            longer serves (the upgrade planner's refusal, at ``pulumi up``); ``None`` without Kueue.
        storage_migration: after the webhook gate, the step that rewrites Kueue objects still stored as ``v1beta1``
            and prunes ``storedVersions`` (:mod:`batchplane.upgrade.migrate`); ``None`` without Kueue.
        kueue_ready: what Kueue objects must depend on: ``[gate]``, or ``[]`` without a Kueue install.
    """

    installs: dict[str, pulumi.Resource]
    kueue_gate: ReadinessGate | None
    storage_migration: ReadinessGate | None
    stored_versions: ReadinessGate | None
    kueue_ready: list[pulumi.Resource]

    def __init__(self, name: str, args: OperatorsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        plan = args["plan"]
        self.installs = {}
        before: list[pulumi.Resource] = []

        def child(deps: list[pulumi.Resource]) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(parent=self, depends_on=list(deps))

        if plan.cert_manager is not None:
            cm = _helm(name, plan.cert_manager, child([]))
            self.installs["cert-manager"] = cm.release
            before.append(cm.release)
        job_operators: list[pulumi.Resource] = []
        if plan.kuberay_crds is not None:
            crds = _manifests(name, plan.kuberay_crds, child(before))
            self.installs["kuberay-crds"] = crds
            job_operators.append(crds)
        if plan.kuberay is not None:
            kr = _helm(name, plan.kuberay, child(before + job_operators))
            self.installs["kuberay"] = kr.release
            job_operators.append(kr.release)
        if plan.training is not None:
            if isinstance(plan.training, HelmInstall):
                tr: pulumi.Resource = _helm(name, plan.training, child(before)).release
            else:
                tr = _manifests(name, plan.training, child(before))
            self.installs[plan.training.role] = tr
            job_operators.append(tr)
        self.kueue_gate = None
        self.storage_migration = None
        self.stored_versions = None
        self.kueue_ready = []
        if plan.kueue is not None:
            gate_spec = plan.kueue_gate
            assert gate_spec is not None
            self.stored_versions = ReadinessGate(
                f"{name}-kueue-stored-versions",
                {
                    "gate": "kueue-stored-versions",
                    "namespace": gate_spec.namespace,
                    "timeout_seconds": gate_spec.timeout_seconds,
                    "interval_seconds": gate_spec.interval_seconds,
                    "context": args["context"],
                    "kubeconfig": args.get("kubeconfig"),
                    "version": gate_spec.version,
                },
                child(before),
            )
            kueue = _helm(name, plan.kueue, child([*before, *job_operators, self.stored_versions]))
            self.installs["kueue"] = kueue.release
            gate_args: ReadinessGateArgs = {
                "gate": "kueue-webhook",
                "namespace": gate_spec.namespace,
                "service": gate_spec.service,
                "resource_flavor_api_version": gate_spec.resource_flavor_api_version,
                "timeout_seconds": gate_spec.timeout_seconds,
                "interval_seconds": gate_spec.interval_seconds,
                "context": args["context"],
                "kubeconfig": args.get("kubeconfig"),
                "version": gate_spec.version,
            }
            self.kueue_gate = ReadinessGate(f"{name}-kueue-ready", gate_args, child([kueue.release]))
            self.kueue_ready = [self.kueue_gate]
            migration_args: ReadinessGateArgs = {
                **gate_args,
                "gate": "kueue-storage-migration",
                "timeout_seconds": STORAGE_MIGRATION_TIMEOUT_SECONDS,
            }
            del migration_args["service"], migration_args["resource_flavor_api_version"]
            self.storage_migration = ReadinessGate(
                f"{name}-kueue-storage-migration", migration_args, child([self.kueue_gate])
            )
        if plan.appwrapper is not None:
            aw = _manifests(name, plan.appwrapper, child(before + job_operators + self.kueue_ready))
            self.installs["appwrapper"] = aw
        self.register_outputs({})

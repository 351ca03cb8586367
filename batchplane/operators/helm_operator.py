"""HelmOperator: one pinned operator chart as a Helm release (``kubernetes:helm.sh/v3:Release``).

Why ``helm.v3.Release`` and not ``helm.v4.Chart`` (pulumi-kubernetes 4.34.2,
https://github.com/pulumi/pulumi-kubernetes):

* it is a real Helm release — ``helm list``/``helm rollback`` work, chart hooks run (cert-manager's
  ``startupapicheck`` is a hook; Chart v4 drops hooks), ``create_namespace`` and ``atomic`` exist;
* CRDs shipped by a Release are read into the provider's cache during Check
  (https://github.com/pulumi/pulumi-kubernetes/pull/4417), so Kueue objects whose CRDs come from the Kueue
  release preview and deploy in the same run ("failed to determine if the following GVK is namespaced",
  https://github.com/pulumi/pulumi-kubernetes/issues/3176, hits Chart v4 children);
* the release waits for its workloads (like ``helm --wait``); the webhook itself is awaited by
  :class:`batchplane.operators.readiness_gate.ReadinessGate`.

Retained on delete (``retain_on_delete``) when the chart ships CRDs under ``templates/`` (Kueue): a Release that
Pulumi deletes — a ``pulumi destroy`` of the operators, a changed release name or namespace (a replacement) — is
dropped from the state without a ``helm uninstall``, so the CRDs and every object of their kinds stay. A
``helm.sh/resource-policy: keep`` annotation would do it per object, but the Kueue chart offers no value for CRD
annotations and a Release's rendered objects are out of reach of Pulumi transforms (docs/upgrading.md).

The cost: the chart's objects are one resource to Pulumi (policies and previews see the release and
its values, not the rendered children) and render mode is unsupported
(https://github.com/pulumi/pulumi-kubernetes/issues/1716).
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

TYPE_TOKEN = "batchplane:helm_operator:HelmOperator"


class HelmOperatorArgs(TypedDict):
    """Inputs of :class:`HelmOperator` (see :class:`batchplane.operators.installs.HelmInstall`)."""

    chart: str
    """Required. Chart name (with ``repository``) or ``oci://`` reference."""
    version: str
    """Required. Pinned chart version."""
    namespace: str
    """Required. Release namespace; created by the release."""
    release_name: str
    """Required. Helm release name (fixes the chart's fullname and so its Service names)."""
    values: dict[str, Any]
    """Required. Final Helm values (typed options with the raw escape hatch merged in)."""
    repository: NotRequired[str | None]
    """Chart repository URL for non-OCI charts. Defaults to none (OCI reference or local chart)."""
    skip_crds: NotRequired[bool]
    """Skip the chart's ``crds/`` directory (CRDs applied separately). Defaults to false."""
    timeout_seconds: NotRequired[int]
    """How long the release waits for its resources, seconds. Defaults to 600."""
    retain_on_delete: NotRequired[bool]
    """Keep the release in the cluster when Pulumi deletes or replaces it (no ``helm uninstall``): for a chart
    that ships CRDs as templates (Kueue), whose uninstall would delete every object of those kinds. Defaults to
    false."""


class HelmOperator(pulumi.ComponentResource):
    """A pinned Helm release of an operator chart.

    Attributes:
        release: the ``helm.v3.Release`` child (``<name>-release``).
    """

    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: HelmOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, {}, opts)
        repo = args.get("repository")
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            name=args["release_name"],
            chart=args["chart"],
            version=args["version"],
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=repo) if repo else None,
            namespace=args["namespace"],
            create_namespace=True,
            values=args["values"],
            skip_crds=args.get("skip_crds", False),
            timeout=args.get("timeout_seconds", 600),
            atomic=False,
            cleanup_on_fail=True,
            max_history=10,
            # A component's depends_on does not hold back its children: repeat it on the release.
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=opts.depends_on if opts else None,
                retain_on_delete=args.get("retain_on_delete", False),
            ),
        )
        self.register_outputs({"status": self.release.status})

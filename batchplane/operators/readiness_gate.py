"""ReadinessGate: a Pulumi dynamic resource that blocks until an install really serves.

Pulumi waits for a Helm release's Deployments, not for chart CRDs or webhooks to answer
(pulumi-kubernetes #861, #3188), so Kueue objects created right after the Kueue release fail with
"failed calling webhook … no endpoints available" (kueue #2791, cert-manager #2908). This resource
sits between the install and its dependants: on create and update its provider polls the cluster
(:func:`batchplane.operators.readiness.run_gate`) until the Kueue webhook serves or an OLM CSV
reaches ``Succeeded``, or fails after a timeout with the last check's result. Delete does nothing.

It talks to the cluster with the ``kubernetes`` package using the same kubeconfig and context as the
Kubernetes provider (passed as inputs; the kubeconfig as a secret). During ``pulumi preview`` nothing
is polled; under the offline engine the resource is recorded as ``pulumi-python:dynamic:Resource``
with its inputs. The provider (:mod:`batchplane.operators.readiness_provider`) is pickled by reference
to the installed ``batchplane`` package, so the dynamic-provider host loads it from any working directory.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi.dynamic

from batchplane.operators.readiness_provider import ReadinessGateProvider


class ReadinessGateArgs(TypedDict):
    """Inputs of :class:`ReadinessGate`."""

    gate: str
    """Required. ``kueue-webhook``, ``olm-csv``, ``service-account-token``, ``registry-route``, ``feature-gate``, or
    the ``olm-namespace`` lookup."""
    namespace: str
    """Required. Kueue's namespace (kueue-webhook) or the operator's namespace (olm-csv)."""
    timeout_seconds: int
    """Required. Fail after this many seconds."""
    interval_seconds: int
    """Required. Seconds between checks."""
    context: pulumi.Input[str | None]
    """Required (may be ``None`` for the current context). The kubeconfig context of the provider."""
    kubeconfig: NotRequired[pulumi.Input[str | None]]
    """kubeconfig content or path, as given to the provider; stored as a secret. Defaults to none
    (``$KUBECONFIG`` or ``~/.kube/config``)."""
    service: NotRequired[str | None]
    """kueue-webhook: the webhook Service whose endpoints must be ready; ``None`` checks only the dry run."""
    resource_flavor_api_version: NotRequired[str]
    """kueue-webhook: apiVersion of the dry-run ResourceFlavor. Defaults to ``kueue.x-k8s.io/v1beta2``."""
    subscription: NotRequired[str]
    """olm-csv: the Subscription whose installed CSV must reach ``Succeeded``."""
    approve_csv: NotRequired[str | None]
    """olm-csv with ``installPlanApproval: Manual``: the target CSV; the gate approves the first install's InstallPlan
    and each upgrade InstallPlan on the channel's path to it, one at a time, and refuses any other. Defaults to none
    (never approves)."""
    catalog: NotRequired[Any]
    """olm-csv with ``approve_csv``: the Subscription's package, channel and CatalogSource
    (:class:`~batchplane.operators.readiness.OlmCatalog`), whose ``PackageManifest`` entries give the channel's
    versions. Defaults to none (only the target's own InstallPlan is approved on upgrades)."""
    secret: NotRequired[str]
    """service-account-token: the ``kubernetes.io/service-account-token`` Secret that must hold a token; the gate
    then outputs ``token`` and ``caData`` (both secret)."""
    route: NotRequired[str]
    """registry-route: the Route (in ``namespace``) whose ``spec.host`` the gate waits for and outputs as
    ``host``."""
    lookup: NotRequired[dict[str, Any]]
    """olm-namespace lookups: their inputs in wire names (``package``, ``channel``, ``stackOperatorGroup``,
    ``stackOperatorGroupSpec``, ``stackSubscription``, ``adopt``). Defaults to none."""
    feature_gate: NotRequired[str]
    """feature-gate: the OpenShift feature gate that must be enabled (``ProvisioningRequestAvailable``)."""
    enabling_feature_sets: NotRequired[list[str]]
    """feature-gate: the feature sets that enable it (``DevPreviewNoUpgrade``): a cluster whose spec selects one is
    waited for while it rolls out; any other fails the gate at once. Defaults to none."""
    version: NotRequired[str]
    """The awaited install's version; changing it re-runs the gate on ``pulumi up``. Defaults to ``""``."""


class ReadinessGate(pulumi.dynamic.Resource):
    """A gate resource (type ``pulumi-python:dynamic:Resource``); depend on it to wait for readiness.

    Pass what it waits for in ``opts.depends_on`` (the Kueue release, an OLM Subscription) and put the
    gate in the ``depends_on`` of everything that needs the install serving.

    Attributes:
        token: service-account-token gates: the token, plain text (secret); unknown during a preview.
        caData: service-account-token gates: the cluster CA, base64 (secret); unknown during a preview.
        host: registry-route gates: the Route's ``spec.host``; unknown during a preview.
        operatorGroup, operatorGroupSpec, subscription: olm-namespace lookups: what the stack declares.
        checked: lookups: true when read from the cluster, false offline (the mock engine's placeholders).
    """

    token: pulumi.Output[Any]
    host: pulumi.Output[Any]
    caData: pulumi.Output[Any]  # the provider's output name
    operatorGroup: pulumi.Output[Any]
    operatorGroupSpec: pulumi.Output[Any]
    subscription: pulumi.Output[Any]
    checked: pulumi.Output[Any]

    def __init__(
        self, name: str, args: ReadinessGateArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        kubeconfig = args.get("kubeconfig")
        props: dict[str, Any] = {
            "gate": args["gate"],
            "namespace": args["namespace"],
            "timeoutSeconds": args["timeout_seconds"],
            "intervalSeconds": args["interval_seconds"],
            "context": args["context"],
            "kubeconfig": None if kubeconfig is None else pulumi.Output.secret(kubeconfig),
            "version": args.get("version", ""),
        }
        if args["gate"] == "kueue-webhook":
            props["service"] = args.get("service")
            props["resourceFlavorApiVersion"] = args.get(
                "resource_flavor_api_version", "kueue.x-k8s.io/v1beta2"
            )
        elif args["gate"] == "service-account-token":
            props["secret"] = args.get("secret")
            props["token"] = None  # outputs, filled by the provider; kept secret
            props["caData"] = None
            opts = pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["token", "caData"])
            )
        elif args["gate"] == "feature-gate":
            props["featureGate"] = args.get("feature_gate")
            props["enablingFeatureSets"] = list(args.get("enabling_feature_sets") or [])
            props["checked"] = (
                None  # output: true once read from the cluster (offline: false, nothing was read)
            )
        elif args["gate"] == "registry-route":
            props["route"] = args.get("route")
            props["host"] = None  # output, filled by the provider
        elif args["gate"] == "olm-namespace":
            props.update(args.get("lookup") or {})
            for output in ("operatorGroup", "operatorGroupSpec", "subscription", "checked"):
                props[output] = (
                    None  # outputs, filled by the provider (offline: the stack's own, checked false)
                )
        else:
            props["subscription"] = args.get("subscription")
            if args.get("approve_csv"):
                props["approveCsv"] = args.get("approve_csv")
                catalog = args.get("catalog")
                if catalog is not None:
                    props["package"] = catalog.package
                    props["channel"] = catalog.channel
                    props["catalog"] = catalog.source
                    props["catalogNamespace"] = catalog.source_namespace
        super().__init__(ReadinessGateProvider(), name, props, opts)
